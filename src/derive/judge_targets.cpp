// Targets given on the command line, written as the observations derive() reads:
// a GPU's compute capability, the driver's version and CUDA.
#include "derive/judge_targets.hpp"

namespace cd {

Facts facts_for_judging(Facts base, const JudgeTargets& t, std::vector<BinaryScan> binaries) {
  Facts facts = std::move(base);
  facts.driver = DriverFacts{};
  for (const auto& target : t.gpus) {
    GpuInfo info;
    info.name = target.name;
    info.cc_major = target.sm / 10;
    info.cc_minor = target.sm % 10;
    facts.driver.gpus.push_back(info);
  }
  facts.driver.cuda_driver_version = t.driver.cuda;
  facts.driver.nvml_driver_version = t.driver.version;
  facts.binaries = std::move(binaries);
  facts.env.clear();
  return facts;
}

}  // namespace cd
