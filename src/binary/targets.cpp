#include "binary/targets.hpp"

#include <set>

namespace cd {

std::vector<GpuTarget> gpu_targets_of(const Facts& facts) {
  std::vector<GpuTarget> out;
  std::set<int> seen;
  for (const auto& g : facts.driver.gpus) {
    int sm = g.cc_major * 10 + g.cc_minor;
    if (sm > 0 && seen.insert(sm).second) out.push_back({sm, g.name});
  }
  return out;
}

DriverTarget driver_target_of(const Facts& facts) {
  DriverTarget d;
  d.cuda = facts.driver.cuda_driver_version;
  d.version = !facts.driver.nvml_driver_version.empty() ? facts.driver.nvml_driver_version : facts.driver.module_version;
  return d;
}

}  // namespace cd
