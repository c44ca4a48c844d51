// Layer 2 probe: every CUDA toolkit on the machine, its version, and which one each
// selector (PATH's nvcc, CUDA_HOME/CUDA_PATH, LD_LIBRARY_PATH, /usr/local/cuda,
// update-alternatives) picks. Files only; nvcc runs only when nothing else says its version.
// Where: /usr/local/cuda-*, /opt/*cuda*, the NVIDIA HPC SDK, CUDA_HOME / CUDA_PATH, PATH's nvcc,
// the directories of CUDA_DOCTOR_TOOLKITS (colon-separated, for toolkits kept elsewhere),
// conda envs and pip wheels. `toolkits` adds each one's components and size (read_toolkit_details).
#include <fmt/format.h>

#include "probe/driver_probe.hpp"
#include "probe/probe.hpp"
#include "probe/python_envs.hpp"
#include "probe/toolkits_host.hpp"
#include "probe/toolkits_read.hpp"
#include "util/strings.hpp"

namespace cd {

namespace {

struct Collector {
  const ProbeOptions& opts;
  const Root& root;
  std::vector<Toolkit> toolkits;

  Toolkit* find(const std::string& resolved) {
    for (auto& t : toolkits)
      if (t.root == resolved) return &t;
    return nullptr;
  }

  // Adds the toolkit at `dir` (any path; resolved here) unless known; returns it.
  Toolkit* add(const std::string& dir, const std::string& origin) {
    if (dir.empty()) return nullptr;
    auto resolved = root.resolve(dir);
    if (!resolved || !root.is_dir(*resolved) || !looks_like_toolkit(root, *resolved)) return nullptr;
    if (Toolkit* known = find(*resolved)) return known;
    Toolkit tk;
    tk.root = *resolved;
    tk.origin = origin;
    std::string nvcc = path_join(tk.root, "bin/nvcc");
    if (present(root, nvcc)) tk.nvcc = nvcc;
    read_toolkit_version(root, tk, opts.timeout);
    // A toolkit unpacked from pip wheels keeps their dist-info (this is how some images ship CUDA).
    if (origin == "system" && root.is_dir(path_join(tk.root, "dist-info"))) tk.origin = "system (from pip wheels)";
    read_host_config(root, tk);
    tk.lib_dir = find_lib_dir(root, tk.root);
    if (opts.toolkit_details) read_toolkit_details(root, tk);
    toolkits.push_back(std::move(tk));
    return &toolkits.back();
  }

  void select(Toolkit* tk, const std::string& by) {
    if (tk && std::find(tk->selected_by.begin(), tk->selected_by.end(), by) == tk->selected_by.end())
      tk->selected_by.push_back(by);
  }

  // conda envs: cuda-nvcc / cuda-toolkit / cudatoolkit packages install into the env prefix.
  void from_conda(const EnvLocation& env) {
    std::string meta = path_join(env.prefix, "conda-meta");
    for (const char* pkg : {"cuda-nvcc", "cuda-toolkit", "cudatoolkit"}) {
      auto files = root.glob(meta, std::string(pkg) + "-[0-9]*.json");
      if (files.empty()) continue;
      std::string conda_version = split(path_basename(files.front()).substr(std::string(pkg).size() + 1), '-').front();
      bool has_nvcc = present(root, path_join(env.prefix, "bin/nvcc"));
      Toolkit* tk = nullptr;
      if (has_nvcc || looks_like_toolkit(root, env.prefix)) {
        tk = add(env.prefix, "conda:" + env.prefix);
      } else {
        // cudatoolkit (runtime libraries only): still a CUDA the env carries.
        Toolkit lib_only;
        lib_only.root = env.prefix;
        lib_only.origin = "conda:" + env.prefix;
        lib_only.lib_dir = find_lib_dir(root, env.prefix);
        if (opts.toolkit_details) read_toolkit_details(root, lib_only);
        toolkits.push_back(lib_only);
        tk = &toolkits.back();
      }
      if (tk && (tk->version_source.empty() || contains(tk->version_source, "cuda.h"))) {
        tk->version = conda_version;
        tk->version_source = files.front();
      }
      return;
    }
  }

  // pip: nvidia-cuda-nvcc(-cu12) puts nvcc in nvidia/cuda_nvcc/bin; CUDA 13 wheels in nvidia/cu13/bin.
  void from_pip(const EnvLocation& env) {
    for (const auto& site : env.site_packages)
      for (const char* sub : {"nvidia/cuda_nvcc", "nvidia/cu13", "nvidia/cu12"})
        if (present(root, path_join(site, std::string(sub) + "/bin/nvcc")))
          add(path_join(site, sub), fmt::format("pip:nvidia-cuda-nvcc ({})", env.prefix));
  }
};

// The toolkit a path inside it belongs to (longest matching root).
Toolkit* owner(std::vector<Toolkit>& toolkits, const std::string& path) {
  Toolkit* best = nullptr;
  for (auto& t : toolkits)
    if ((path == t.root || path.rfind(t.root + "/", 0) == 0) && (!best || t.root.size() > best->root.size())) best = &t;
  return best;
}

}  // namespace

void probe_toolkits(Facts& facts, const ProbeOptions& opts) { probe_toolkits(facts, opts, find_python_envs(opts)); }

void probe_toolkits(Facts& facts, const ProbeOptions& opts, const std::vector<EnvLocation>& envs) {
  const Root& root = opts.root;
  Collector c{opts, root, {}};
  ToolkitFacts& out = facts.toolkit;

  for (const auto& dir : root.glob("/usr/local", "cuda-*")) c.add(dir, "system");
  c.add("/usr/local/cuda", "system");
  for (const auto& dir : root.glob("/opt", "*cuda*")) c.add(dir, "system");
  for (const auto& dir : root.glob("/opt/nvidia/hpc_sdk/Linux_x86_64", "*"))
    for (const auto& tk : root.glob(path_join(dir, "cuda"), "[0-9]*")) c.add(tk, "nvhpc");

  for (const auto& dir : split(opts.env_or("CUDA_DOCTOR_TOOLKITS"), ':')) c.add(dir, "CUDA_DOCTOR_TOOLKITS");

  // Environment variables and PATH.
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    std::string value = opts.env_or(var);
    if (value.empty()) continue;
    auto resolved = root.resolve(value);
    if (out.cuda_home.empty()) {
      out.cuda_home = resolved.value_or(value);
      out.cuda_home_var = var;
    }
    c.select(c.add(value, var), var);
  }
  std::string nvcc = root_which(root, "nvcc", opts.env_or("PATH"));
  if (!nvcc.empty()) {
    std::string real = follow_wrapper(root, nvcc, "nvcc");
    out.path_nvcc = root.resolve(real).value_or(real);
    c.select(c.add(path_dirname(path_dirname(out.path_nvcc)), "PATH"), "PATH");
  }

  // Toolkits inside Python environments (conda packages, pip wheels).
  for (const auto& env : envs) {
    if (env.kind == "conda") c.from_conda(env);
    c.from_pip(env);
  }

  // What the system-wide links select.
  if (present(root, "/usr/local/cuda")) {
    out.usr_local_cuda = root.resolve("/usr/local/cuda").value_or("");
    c.select(c.find(out.usr_local_cuda), "/usr/local/cuda");
  }
  if (root.is_symlink("/etc/alternatives/cuda")) {
    out.alternatives_cuda = root.resolve("/etc/alternatives/cuda").value_or("");
    c.select(c.find(out.alternatives_cuda), "alternatives");
  }
  for (const auto& dir : split(opts.env_or("LD_LIBRARY_PATH"), ':')) {
    auto resolved = root.resolve(dir);
    if (!resolved || !root.is_dir(*resolved)) continue;
    if (Toolkit* tk = owner(c.toolkits, *resolved)) {
      c.select(tk, "LD_LIBRARY_PATH");
      if (std::find(out.ld_library_path_toolkits.begin(), out.ld_library_path_toolkits.end(), tk->root) ==
          out.ld_library_path_toolkits.end())
        out.ld_library_path_toolkits.push_back(tk->root);
    }
  }
  // Also the values `use` saved before its first switch (derive/toolkits.hpp): `use --off` compares
  // what `use` would make of them with the variables now.
  for (const char* var : {"PATH", "LD_LIBRARY_PATH", "_CUDA_DOCTOR_PATH_WAS", "_CUDA_DOCTOR_LD_LIBRARY_PATH_WAS"})
    for (const auto& dir : split(opts.env_or(var), ':')) {
      if (dir.empty() || dir.front() != '/') continue;
      auto resolved = root.resolve(dir);
      if (resolved && *resolved != path_normalize(dir)) out.resolved_dirs[dir] = *resolved;
    }
  for (const auto& tk : c.toolkits)
    if (tk.version.empty()) facts.notes.push_back({"toolkits", "no version found for the toolkit at " + tk.root});
  out.toolkits = std::move(c.toolkits);
  if (opts.toolkit_compilers) out.host_compilers = probe_host_compilers(opts);
}

Facts probe_toolkits_machine(const ProbeOptions& opts, bool pythons) {
  Facts facts;
  probe_host(facts, opts);
  probe_env(facts, opts);
  std::vector<std::string> module_notes;
  probe_driver_module(facts.driver, opts.root, &module_notes);
  for (auto& n : module_notes) facts.notes.push_back({"driver", std::move(n)});
  probe_driver_libraries(facts.driver, opts.root, opts.env);
  probe_toolkits(facts, opts);
  if (pythons) probe_pythons(facts, opts);
  return facts;
}

std::optional<Toolkit> probe_toolkit_at(const std::string& dir, const ProbeOptions& opts, std::string* why) {
  const Root& root = opts.root;
  auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (!root.exists(dir)) {
    if (root.is_symlink(dir)) return fail("a broken symbolic link to " + root.readlink(dir).value_or("?"));
    return fail("no such directory");
  }
  if (!root.is_dir(dir)) return fail("not a directory");
  Collector c{opts, root, {}};
  if (!c.add(dir, "named")) return fail("not a CUDA toolkit (no bin/nvcc, version.json, version.txt or include/cuda.h)");
  return std::move(c.toolkits.front());
}

}  // namespace cd
