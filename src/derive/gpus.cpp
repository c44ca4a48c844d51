// Each GPU's number, architecture and label, and the distinct architectures binaries are
// judged for (two H200s are one target).
#include <algorithm>
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

std::optional<bin::ReadFocus::Question> scan_question(const DriverFacts& d, const Kb& kb) {
  std::vector<MachineGpu> gpus = derive_gpus(d);
  if (gpus.empty() || std::any_of(gpus.begin(), gpus.end(), [](const MachineGpu& g) { return g.sm <= 0; })) return {};
  std::vector<GpuTarget> targets = gpu_targets(gpus);
  bin::ReadFocus::Question q;
  for (const auto& t : targets) q.sms.push_back(t.sm);
  q.enough = native_on_all(targets, driver_target(derive_driver(d, kb)), arch_rules(kb));
  return q;
}

}  // namespace cd
