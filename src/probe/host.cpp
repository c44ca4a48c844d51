#include <sys/utsname.h>
#include <unistd.h>

#include <gnu/libc-version.h>

#include "probe/probe.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace cd {
namespace {

// Variables that change how the CUDA stack behaves; recorded as facts so a saved
// machine can be diagnosed elsewhere.
bool is_relevant_variable(std::string_view name) {
  static constexpr std::string_view prefixes[] = {"CUDA", "NVIDIA_", "NCCL_", "TORCH_", "CUDNN_", "CUBLAS", "XLA_",
                                                  "JAX_", "TF_", "CONDA", "PYTORCH_", "VLLM_", "CUPY_", "NV_"};
  static constexpr std::string_view exact[] = {"PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "LIBRARY_PATH", "VIRTUAL_ENV",
                                               "PYTHONPATH", "PYTHONHOME", "CC", "CXX", "CUDAHOSTCXX", "HOME",
                                               "PYENV_ROOT", "WSL_DISTRO_NAME", "KUBERNETES_SERVICE_HOST",
                                               "container", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"};
  for (auto p : prefixes)
    if (name.substr(0, p.size()) == p) return true;
  for (auto e : exact)
    if (name == e) return true;
  return false;
}

std::string os_pretty_name(const Root& root) {
  auto text = root.read("/etc/os-release");
  if (!text) return {};
  for (const auto& line : split(*text, '\n')) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string v = line.substr(12);
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) v = v.substr(1, v.size() - 2);
    return v;
  }
  return {};
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
  facts.host.os = os_pretty_name(opts.root);
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
    if (is_relevant_variable(k)) facts.env[k] = v;
}

}  // namespace cd
