// Python environments are found by probe_pythons (under --root); the library directories
// are the wheel layouts torch uses: nvidia/cu13/lib (CUDA 13), nvidia/<lib>/lib (12.x).
#include "probe/verify_env.hpp"

#include "util/subprocess.hpp"

namespace cd {

VerifyEnvironment find_verify_environment(const ProbeOptions& opts) {
  VerifyEnvironment out;
  const Root& root = opts.root;
  if (const std::string* dir = opts.getenv("CUDA_DOCTOR_LIB_DIR"); dir && !dir->empty()) out.lib_dirs.push_back(*dir);
  Facts facts;
  try {
    probe_pythons(facts, opts);
  } catch (const std::exception&) {
    // no Python facts: python3 on PATH below
  }
  for (const PythonEnv& env : facts.pythons) {
    if (env.torch.version.empty() || env.interpreter.empty()) continue;
    if (out.python.empty() && !env.torch.cuda.empty()) out.python = root.host_path(env.interpreter);
    for (const std::string& sp : env.site_packages)
      for (const char* sub : {"nvidia/cu13/lib", "nvidia/cublas/lib", "nvidia/nccl/lib"})
        if (std::string dir = path_join(sp, sub); root.is_dir(dir)) out.lib_dirs.push_back(root.host_path(dir));
  }
  if (out.python.empty() && root.is_host()) out.python = which("python3", opts.env_or("PATH"));
  if (const std::string* py = opts.getenv("CUDA_DOCTOR_PYTHON")) out.python = *py;
  for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"})
    if (root.is_dir(dir)) out.lib_dirs.push_back(root.host_path(dir));
  return out;
}

}  // namespace cd
