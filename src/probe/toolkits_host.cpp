#include "probe/toolkits_host.hpp"

#include <future>

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

// gcc's version from its installation, without running it: cc1/cc1plus live in
// <prefix>/lib/gcc/<target>/<version>/ (Debian: the major, "12") or
// <prefix>/libexec/gcc/<target>/<version>/ (upstream and conda: "13.2.0"). A suffixed
// binary (x86_64-linux-gnu-gcc-12, gcc-13) names its version; otherwise the version
// must be the only one installed under that prefix. Empty when it cannot tell (several
// versions, a wrapper such as ccache, another layout): the caller then asks gcc.
std::string gcc_version_from_layout(const Root& root, const std::string& resolved, std::string* dir_out) {
  std::string name = path_basename(resolved);
  auto dash = name.rfind('-');
  std::string suffix = dash == std::string::npos ? "" : name.substr(dash + 1);
  if (suffix.empty() || !std::isdigit(static_cast<unsigned char>(suffix[0])) ||
      suffix.find_first_not_of("0123456789.") != std::string::npos)
    suffix.clear();
  if (!suffix.empty() && !contains(name, "gcc") && !contains(name, "g++")) return {};
  std::string prefix = path_dirname(path_dirname(resolved));
  std::vector<std::string> versions, dirs;
  for (const char* sub : {"/lib/gcc", "/libexec/gcc"})
    for (const auto& target : root.list(prefix + sub))
      for (const auto& version : root.list(prefix + sub + "/" + target)) {
        std::string dir = prefix + sub + "/" + target + "/" + version;
        if (!std::isdigit(static_cast<unsigned char>(version[0]))) continue;
        if (!root.exists(dir + "/cc1plus") && !root.exists(dir + "/cc1")) continue;
        bool matches = suffix.empty() || version == suffix || version.starts_with(suffix + ".");
        if (matches && std::find(versions.begin(), versions.end(), version) == versions.end()) {
          versions.push_back(version);
          dirs.push_back(dir);
        }
      }
  if (versions.size() != 1) return {};
  if (dir_out) *dir_out = dirs.front();
  return versions.front();
}

// Debian/Ubuntu install clang as /usr/lib/llvm-N/bin/clang: the major is in the path, and
// the major is all nvcc checks. Saves ~150 ms of clang start-up for a compiler nvcc
// does not use by default.
static std::string major_from_path(const std::string& resolved) {
  auto at = resolved.find("/llvm-");
  if (at == std::string::npos) return {};
  std::string digits;
  for (size_t i = at + 6; i < resolved.size() && std::isdigit(static_cast<unsigned char>(resolved[i])); ++i)
    digits.push_back(resolved[i]);
  return digits;
}

std::vector<HostCompiler> probe_host_compilers(const ProbeOptions& opts) {
  const Root& root = opts.root;
  std::string path = opts.env_or("PATH");
  std::vector<std::pair<std::string, std::string>> wanted;  // (source, command)
  for (const char* var : {"CUDAHOSTCXX", "NVCC_CCBIN", "CXX", "CC"})
    if (auto v = opts.env_or(var); !v.empty()) wanted.emplace_back(var, split(v, ' ').front());
  for (const char* name : {"gcc", "clang"}) wanted.emplace_back("PATH", name);

  std::vector<HostCompiler> out;
  std::vector<std::string> seen;  // resolved paths
  std::vector<std::future<std::pair<std::string, std::string>>> asks;  // (version, error), in `out` order
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
    std::string from_path = source == "PATH" && hc.kind == "clang" ? major_from_path(real) : "";
    if (!from_path.empty()) hc.version_from = real;
    if (from_path.empty() && hc.kind == "gcc" && opts.compiler_version_from_layout)
      from_path = gcc_version_from_layout(root, real, &hc.version_from);
    if (!from_path.empty()) {
      hc.version = from_path;
      asks.push_back(std::async(std::launch::deferred, [v = from_path] { return std::pair<std::string, std::string>(v, ""); }));
    } else if (!root.is_host()) {
      hc.error = "not run under --root";
      asks.push_back(std::async(std::launch::deferred, [] { return std::pair<std::string, std::string>(); }));
    } else {
      asks.push_back(std::async(std::launch::async, [exe, kind = hc.kind, timeout = opts.timeout] {
        std::string error;
        std::string v = ask_version(exe, kind, timeout, error);
        return std::pair<std::string, std::string>(v, error);
      }));
    }
    out.push_back(std::move(hc));
  }
  for (size_t i = 0; i < out.size(); ++i) {
    auto [version, error] = asks[i].get();
    if (!version.empty()) out[i].version = version;
    if (!error.empty()) out[i].error = error;
  }
  return out;
}

}  // namespace cd
