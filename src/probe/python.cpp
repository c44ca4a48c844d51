// Layer 4 probe: every Python environment and the CUDA-relevant packages in it, read
// from files (works when `import torch` crashes); --deep also runs each interpreter.
#include <algorithm>
#include <future>
#include <set>

#include "probe/probe.hpp"
#include "probe/python_deep.hpp"
#include "probe/python_envs.hpp"
#include "probe/python_packages.hpp"
#include "util/strings.hpp"

namespace cd {

namespace {

// A METADATA that is not a regular file (a FIFO planted in a shared venv) is not read; the
// note says so in Facts, so `check -v` and snapshots show why a package has no version pins.
PythonEnv read_env(const Root& root, const EnvLocation& loc, bool packages, std::vector<ProbeNote>& notes) {
  PythonEnv env;
  env.interpreter = loc.interpreter;
  env.version = loc.version;
  env.version_source = loc.version_source;
  env.prefix = loc.prefix;
  env.kind = loc.kind;
  env.found_by = join(loc.found_by, ", ");
  env.is_default = loc.is_default;
  env.site_packages = loc.site_packages;
  if (!packages) return env;
  std::set<std::string> seen;  // the first site dir on sys.path wins, as in Python
  for (const auto& dir : loc.site_packages) {
    std::vector<std::string> site_notes;
    for (auto& pkg : scan_site_packages(root, dir, &site_notes))
      if (seen.insert(pkg.name).second) env.packages.push_back(std::move(pkg));
    // Two envs can share a site dir (include-system-site-packages): one note per file.
    for (auto& n : site_notes)
      if (std::none_of(notes.begin(), notes.end(), [&](const ProbeNote& o) { return o.message == n; }))
        notes.push_back({"python", std::move(n)});
    if (env.torch.version.empty() && (seen.count("torch") || root.is_file(path_join(dir, "torch/version.py"))))
      env.torch = read_torch_version_py(root, dir);
  }
  return env;
}

// jax with a CUDA plugin (jax-cuda12-plugin, jax-cuda13-plugin) or an old CUDA jaxlib
// ("0.4.20+cuda12.cudnn89"): the environments where JAX is meant to use the GPU.
bool jax_with_cuda(const PythonEnv& env) {
  auto has = [&](auto pred) { return std::any_of(env.packages.begin(), env.packages.end(), pred); };
  return has([](const PythonPackage& p) { return p.name == "jax"; }) &&
         has([](const PythonPackage& p) {
           return (p.name.rfind("jax-cuda", 0) == 0 && p.name.ends_with("-plugin")) ||
                  (p.name == "jaxlib" && contains(p.version, "+cuda"));
         });
}

}  // namespace

void probe_pythons(Facts& facts, const ProbeOptions& opts) { probe_pythons(facts, opts, find_python_envs(opts)); }

void probe_pythons(Facts& facts, const ProbeOptions& opts, const std::vector<EnvLocation>& envs) {
  for (const auto& loc : envs) facts.pythons.push_back(read_env(opts.root, loc, opts.python_packages, facts.notes));
  if (!opts.deep) return;
  if (!opts.root.is_host()) {
    facts.notes.push_back({"python", "--deep skipped: interpreters are not run under --root"});
    return;
  }
  // Imports take seconds each: run the interpreters side by side.
  std::vector<std::future<DeepCheck>> runs;
  std::vector<std::future<DeepJax>> jax_runs;
  for (const auto& env : facts.pythons) {
    bool has_torch = !env.torch.version.empty();
    runs.push_back(std::async(std::launch::async, [&env, &opts, has_torch] {
      return has_torch && !env.interpreter.empty() ? run_deep_check(env.interpreter, opts.timeout) : DeepCheck{};
    }));
    bool has_jax_cuda = jax_with_cuda(env);
    jax_runs.push_back(std::async(std::launch::async, [&env, &opts, has_jax_cuda] {
      return has_jax_cuda && !env.interpreter.empty() ? run_deep_jax(env.interpreter, opts.timeout) : DeepJax{};
    }));
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    PythonEnv& env = facts.pythons[i];
    env.deep_jax = jax_runs[i].get();
    env.deep = runs[i].get();
  }
}

}  // namespace cd
