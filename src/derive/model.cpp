// derive(): the model of one machine, part by part (derive_parts.hpp). Verdicts are judged
// here, for the GPUs and driver of these facts with this knowledge base, so a replayed
// snapshot and a live run give the same layer-3 table and arch findings.
#include "derive/model.hpp"

#include "derive/derive_parts.hpp"
#include "kb/arch.hpp"

namespace cd {

Model derive(const Facts& facts, const Kb& kb) {
  Model m(facts);
  m.driver = derive_driver(facts.driver, kb);
  m.gpus = derive_gpus(facts.driver);
  m.targets = gpu_targets(m.gpus);
  m.driver_target = driver_target(m.driver);
  m.verdicts = judge_all(facts.binaries, m.targets, m.driver_target, arch_rules(kb));
  m.platform = derive_platform(facts);
  m.distro = derive_distro(facts, kb);
  for (const auto& env : facts.pythons) m.envs.push_back(derive_env(facts, env, m.platform, kb));
  m.measurements = derive_measurements(facts.verify);
  m.processes = derive_processes(facts, m.gpus);
  m.gpu_memory = derive_gpu_memory(facts, m.gpus, kb);
  m.holders_without_context = holders_without_context(facts.driver);
  return m;
}

const EnvModel& Model::env(const PythonEnv& py) const {
  return envs.at(static_cast<size_t>(&py - facts.pythons.data()));
}

const EnvModel* Model::env_for_path(const std::string& path) const {
  const EnvModel* best = nullptr;
  size_t best_len = 0;
  for (const auto& e : envs)
    for (const auto& sp : e.env->site_packages)
      if (sp.size() > best_len && path.starts_with(sp + "/")) best = &e, best_len = sp.size();
  return best;
}

nlohmann::json facts_json(const Model& m) {
  nlohmann::json j = m.facts;
  auto& bins = j["binaries"];
  for (size_t i = 0; i < bins.size() && i < m.verdicts.size(); ++i) bins[i]["verdicts"] = m.verdicts[i];
  // The arch list torch was built for, where the facts schema has always carried it.
  auto& pys = j["pythons"];
  for (size_t i = 0; i < pys.size() && i < m.envs.size(); ++i) {
    pys[i]["torch"]["arch_list"] = m.envs[i].torch_arch_list;
    pys[i]["torch"]["arch_list_source"] = m.envs[i].torch_arch_list_source;
  }
  return j;
}

}  // namespace cd
