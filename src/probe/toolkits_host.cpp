#include "probe/toolkits_host.hpp"

#include "probe/python_envs.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

namespace cd {

std::string compiler_kind(const std::string& resolved_path) {
  std::string name = path_basename(resolved_path);
  return contains(name, "clang") ? "clang" : "gcc";
}

namespace {

// `gcc -dumpfullversion` prints "12.2.0"; clang answers -dumpversion with its full version.
std::string ask_version(const std::string& path, const std::string& kind, std::chrono::milliseconds timeout,
                        std::string& error) {
  ProcessOptions po;
  po.timeout = std::min(timeout, std::chrono::milliseconds(5000));
  ProcessResult r = run_process({path, kind == "clang" ? "-dumpversion" : "-dumpfullversion"}, po);
  std::string v(trim(r.out));
  if (!r.ok() || v.empty()) error = fmt::format("{} {}: {}", path, kind == "clang" ? "-dumpversion" : "-dumpfullversion", r.describe());
  return v;
}

}  // namespace

std::vector<HostCompiler> probe_host_compilers(const ProbeOptions& opts) {
  const Root& root = opts.root;
  std::string path = opts.env_or("PATH");
  std::vector<std::pair<std::string, std::string>> wanted;  // (source, command)
  for (const char* var : {"CUDAHOSTCXX", "NVCC_CCBIN", "CXX", "CC"})
    if (auto v = opts.env_or(var); !v.empty()) wanted.emplace_back(var, split(v, ' ').front());
  for (const char* name : {"gcc", "clang"}) wanted.emplace_back("PATH", name);

  std::vector<HostCompiler> out;
  std::vector<std::string> seen;  // resolved paths
  for (const auto& [source, command] : wanted) {
    std::string exe = root_which(root, command, path);
    if (exe.empty()) continue;
    std::string real = root.resolve(exe).value_or(exe);
    if (std::find(seen.begin(), seen.end(), real) != seen.end()) continue;
    seen.push_back(real);
    HostCompiler hc;
    hc.path = exe;
    hc.kind = compiler_kind(real);
    hc.source = source;
    if (root.is_host()) hc.version = ask_version(exe, hc.kind, opts.timeout, hc.error);
    else hc.error = "not run under --root";
    out.push_back(std::move(hc));
  }
  return out;
}

}  // namespace cd
