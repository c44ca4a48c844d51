// Each Python environment: the command that runs it, its torch build's variant and arch
// list, and the library resolutions of its frameworks.
#include "derive/derive_parts.hpp"

#include "kb/pytorch.hpp"
#include "util/root.hpp"

namespace cd {

std::string python_cmd(const PythonEnv* env) {
  if (!env) return "python3";
  if (!env->interpreter.empty()) return env->interpreter;
  return env->prefix.empty() ? "python3" : path_join(env->prefix, "bin/python");
}

EnvModel derive_env(const Facts& f, const PythonEnv& env, const Kb& kb) {
  EnvModel m;
  m.env = &env;
  m.python = python_cmd(&env);
  if (!env.torch.version.empty()) m.torch_variant = torch_variant(kb, env.torch.version, env.torch.cuda);
  ArchList archs = torch_arch_list(env, kb);
  m.torch_arch_list = std::move(archs.archs);
  m.torch_arch_list_source = std::move(archs.source);
  for (const auto& r : f.libs.resolutions)
    if (!r.env.empty() && r.env == env.prefix) m.resolutions.push_back(&r);
  return m;
}

}  // namespace cd
