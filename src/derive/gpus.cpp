// Each GPU's number, architecture and label, and the distinct architectures binaries are
// judged for (two H200s are one target).
#include <set>

#include "derive/derive_parts.hpp"

namespace cd {

std::vector<MachineGpu> derive_gpus(const DriverFacts& d) {
  std::vector<MachineGpu> out;
  for (const auto& g : d.gpus) {
    MachineGpu m;
    m.info = &g;
    m.index = g.cuda_index >= 0 ? g.cuda_index : g.nvml_index;
    m.sm = g.cc_major * 10 + g.cc_minor;
    m.label = GpuTarget{m.sm, g.name}.label();
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<GpuTarget> gpu_targets(const std::vector<MachineGpu>& gpus) {
  std::vector<GpuTarget> out;
  std::set<int> seen;
  for (const auto& g : gpus)
    if (g.sm > 0 && seen.insert(g.sm).second) out.push_back({g.sm, g.info ? g.info->name : std::string()});
  return out;
}

}  // namespace cd
