// The host probe: OS, kernel, glibc, and the environment variables a diagnosis needs,
// kept by exact name and with credentials redacted (snapshots are shared).
#include <sys/utsname.h>
#include <unistd.h>

#include <gnu/libc-version.h>

#include "probe/probe.hpp"
#include "util/redact.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace cd {
namespace {

// The variables a diagnosis uses (the rules read CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER,
// NVIDIA_VISIBLE_DEVICES/_DRIVER_CAPABILITIES/_REQUIRE_CUDA, LD_LIBRARY_PATH,
// TORCH_CUDA_ARCH_LIST, JAX_PLATFORMS) and the settings of the CUDA stack a person reading
// a snapshot needs, by exact name: a prefix (NVIDIA_, VLLM_, TF_, CONDA…) also keeps
// NVIDIA_API_KEY, VLLM_API_KEY, TF_TOKEN_* and channel tokens. CUDA_* and NCCL_* are the
// two families kept whole (the CUDA runtime's and NCCL's documented settings); every
// value kept still goes through redact_variable.
bool is_relevant_variable(std::string_view name) {
  static constexpr std::string_view families[] = {"CUDA_", "NCCL_"};
  static constexpr std::string_view exact[] = {
      // loader, compilers, Python
      "PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "LIBRARY_PATH", "CPATH", "CC", "CXX", "CUDAHOSTCXX", "NVCC_CCBIN",
      "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "HOME", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME",
      "PYTHONNOUSERSITE", "PYENV_ROOT", "PYENV_VERSION", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_EXE",
      "CONDA_PYTHON_EXE", "CONDA_SHLVL", "CONDARC", "CONDA_ENVS_PATH", "CONDA_ENVS_DIRS", "CONDA_OVERRIDE_CUDA",
      // container runtimes and platforms
      "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA", "NVIDIA_DISABLE_REQUIRE",
      "NVIDIA_MIG_CONFIG_DEVICES", "NVIDIA_MIG_MONITOR_DEVICES", "NVIDIA_TF32_OVERRIDE", "container",
      "KUBERNETES_SERVICE_HOST", "WSL_DISTRO_NAME", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
      // frameworks
      "TORCH_CUDA_ARCH_LIST", "TORCH_USE_CUDA_DSA", "TORCH_NCCL_BLOCKING_WAIT", "TORCH_NCCL_ASYNC_ERROR_HANDLING",
      "TORCH_EXTENSIONS_DIR", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NVML_BASED_CUDA_CHECK",
      "PYTORCH_NO_CUDA_MEMORY_CACHING", "CUBLAS_WORKSPACE_CONFIG", "CUBLASLT_LOG_LEVEL", "CUDNN_LOGINFO_DBG",
      "CUDNN_LOGDEST_DBG", "JAX_PLATFORMS", "JAX_PLATFORM_NAME", "XLA_FLAGS", "XLA_PYTHON_CLIENT_PREALLOCATE",
      "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR", "TF_FORCE_GPU_ALLOW_GROWTH",
      "TF_GPU_ALLOCATOR", "TF_CPP_MIN_LOG_LEVEL", "VLLM_ATTENTION_BACKEND", "CUPY_CUDA_PATH", "CUPY_ACCELERATORS"};
  for (auto f : families)
    if (name.substr(0, f.size()) == f) return true;
  for (auto e : exact)
    if (name == e) return true;
  return false;
}

// /etc/os-release is KEY=value lines, values optionally quoted (os-release(5)).
void read_os_release(const Root& root, HostFacts& h) {
  auto text = root.read("/etc/os-release");
  if (!text) return;
  const std::pair<const char*, std::string*> keys[] = {
      {"PRETTY_NAME", &h.os}, {"ID", &h.os_id}, {"ID_LIKE", &h.os_like}, {"VERSION_ID", &h.os_version}, {"VERSION_CODENAME", &h.os_codename}};
  for (const auto& line : split(*text, '\n')) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string v = line.substr(eq + 1);
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
    for (const auto& [key, field] : keys)
      if (line.compare(0, eq, key) == 0) *field = v;
  }
}

}  // namespace

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

void probe_host(Facts& facts, const ProbeOptions& opts) {
  facts.root = opts.root.is_host() ? "/" : opts.root.prefix();
  read_os_release(opts.root, facts.host);
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0) facts.host.hostname = name;
  struct utsname u;
  if (uname(&u) == 0) {
    facts.host.kernel = u.release;
    facts.host.arch = u.machine;
  }
  if (auto osrel = opts.root.read("/proc/sys/kernel/osrelease"); osrel && !opts.root.is_host())
    facts.host.kernel = std::string(trim(*osrel));
  facts.host.glibc = gnu_get_libc_version();
}

void probe_env(Facts& facts, const ProbeOptions& opts) {
  for (const auto& [k, v] : opts.env)
    if (is_relevant_variable(k)) facts.env[k] = redact_variable(k, v);
}

}  // namespace cd
