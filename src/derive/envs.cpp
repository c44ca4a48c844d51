// Each Python environment: the command that runs it, its torch build's variant and arch
// list, the library resolutions of its frameworks with the main libraries among them, and
// the state of JAX when --deep ran it.
#include "derive/derive_parts.hpp"

#include <set>

#include "kb/libraries.hpp"
#include "kb/pytorch.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

// The resolutions of `main` families (data/libraries.toml) by their main soname
// ("libcudnn.so.9", not "libcudnn_ops.so.9"), one per soname, in resolution order.
std::vector<MainLibrary> main_libraries(const Facts& f, const std::vector<const LibraryResolution*>& resolutions,
                                        const Kb& kb) {
  std::vector<MainLibrary> out;
  std::set<std::string> seen;
  for (const LibraryResolution* r : resolutions) {
    const LibraryFamilyRow* family = nullptr;
    for (const auto& row : library_families(kb))
      if (row.main_library && row.name == r->name) family = &row;
    if (!family || !r->soname.starts_with("lib" + family->stem + ".so") || !seen.insert(r->soname).second) continue;
    MainLibrary lib;
    lib.resolution = r;
    lib.family = r->name;
    lib.soname = r->soname;
    lib.found = !r->path.empty();
    lib.realpath = r->realpath;
    lib.via = r->via;
    if (lib.found)
      for (const auto& c : f.libs.copies)
        if (c.realpath == r->realpath && !c.version.empty()) lib.version = c.version;
    out.push_back(std::move(lib));
  }
  return out;
}

}  // namespace

const char* jax_state_name(JaxState s) {
  switch (s) {
    case JaxState::not_run: return "not_run";
    case JaxState::no_answer: return "no_answer";
    case JaxState::gpu: return "gpu";
    case JaxState::import_failed: return "import_failed";
    case JaxState::cpu_fallback: return "cpu_fallback";
    case JaxState::cpu_asked: return "cpu_asked";
    case JaxState::cpu_no_gpu: return "cpu_no_gpu";
  }
  return "not_run";
}

JaxModel derive_jax(const Facts& f, const PythonEnv& env, const PlatformModel& platform) {
  const DeepJax& j = env.deep_jax;
  JaxModel m;
  if (!j.ran) return m;
  m.version = j.version;
  m.backend = j.backend;
  m.message = j.error;
  if (j.backend.empty()) {
    m.state = j.error.empty() ? JaxState::no_answer : JaxState::import_failed;
    return m;
  }
  // With a backend, the message is the line JAX logs when it falls back: its guess at the cause.
  m.message_is_jax_guess = !j.error.empty();
  if (j.backend != "cpu") {
    m.state = JaxState::gpu;
    return m;
  }
  // JAX_PLATFORMS=cpu (or any list without cuda/gpu) asks for the CPU: no fallback then.
  const std::string* platforms = f.getenv("JAX_PLATFORMS");
  bool cpu_asked = platforms && !platforms->empty() && !contains(*platforms, "cuda") && !contains(*platforms, "gpu");
  if (cpu_asked) m.state = JaxState::cpu_asked;
  else if (!platform.machine_has_gpu || platform.cuda_sees_no_gpu) m.state = JaxState::cpu_no_gpu;
  else m.state = JaxState::cpu_fallback;
  return m;
}

std::string python_cmd(const PythonEnv* env) {
  if (!env) return "python3";
  if (!env->interpreter.empty()) return env->interpreter;
  return env->prefix.empty() ? "python3" : path_join(env->prefix, "bin/python");
}

EnvModel derive_env(const Facts& f, const PythonEnv& env, const PlatformModel& platform, const Kb& kb) {
  EnvModel m;
  m.env = &env;
  m.python = python_cmd(&env);
  if (!env.torch.version.empty()) m.torch_variant = torch_variant(kb, env.torch.version, env.torch.cuda);
  ArchList archs = torch_arch_list(env, kb);
  m.torch_arch_list = std::move(archs.archs);
  m.torch_arch_list_source = std::move(archs.source);
  for (const auto& r : f.libs.resolutions)
    if (!r.env.empty() && r.env == env.prefix) m.resolutions.push_back(&r);
  m.main_libraries = main_libraries(f, m.resolutions, kb);
  m.jax = derive_jax(f, env, platform);
  return m;
}

}  // namespace cd
