// The driver's version and its newest CUDA, each from the best source the facts have.
// Version: NVML, else the kernel module, else the linked libcuda's file name, else any
// real libcuda. CUDA: cuDriverGetVersion, else NVML (it answers when cuInit fails), else
// the knowledge base's branch table applied to the version.
#include "derive/derive_parts.hpp"

#include <fmt/format.h>

#include "kb/drivers.hpp"
#include "kb/plan.hpp"

namespace cd {

DriverModel derive_driver(const DriverFacts& d, const Kb& kb) {
  DriverModel s;
  s.found = d.module_loaded || !d.libraries.empty() || !d.gpus.empty();
  auto take = [&](const std::string& v, const std::string& source) {
    if (!s.version.empty() || v.empty()) return;
    if (auto parsed = Version::parse(v); parsed && !parsed->empty()) {
      s.version = *parsed;
      s.version_source = source;
    }
  };
  take(d.nvml_driver_version, "NVML");
  take(d.module_version, d.module_version_source);
  for (const auto& lib : d.libraries)
    if (!lib.stub && !lib.compat && lib.kind == "libcuda" && lib.linked) take(lib.version, lib.path);
  for (const auto& lib : d.libraries)
    if (!lib.stub && !lib.compat && lib.kind == "libcuda") take(lib.version, lib.path);
  if (d.cuda_driver_version > 0) {
    s.cuda = Version::from_cuda_int(d.cuda_driver_version);
    s.cuda_source = "cuDriverGetVersion";
  } else if (d.nvml_cuda_driver_version > 0) {
    s.cuda = Version::from_cuda_int(d.nvml_cuda_driver_version);
    s.cuda_source = "nvmlSystemGetCudaDriverVersion";
  } else if (auto b = s.version.empty() ? std::nullopt : cuda_for_driver(drivers_kb(kb), s.version)) {
    s.cuda = b->cuda;
    s.cuda_source = "knowledge base: driver branch " + std::to_string(s.version.major()) + " -> CUDA " +
                    b->cuda.major_minor() + (b->exact ? "" : " (nearest known branch)") + " (data/cuda_drivers.toml)";
  }
  return s;
}

DriverTarget driver_target(const DriverModel& d) { return {d.cuda_int(), d.version.text}; }

DriverPackage driver_package(const Kb& kb, int branch, const std::vector<int>& sms, const std::string& stem) {
  const PlanKb& pk = plan_kb(kb);
  DriverPackage p;
  int oldest = 0;
  for (int sm : sms)
    if (sm > 0 && (!oldest || sm < oldest)) oldest = sm;
  if (branch > 0 && branch < pk.open_module_first_branch) {
    p.note = fmt::format("the proprietary module: -open packages start with R{}", pk.open_module_first_branch);
    p.source = pk.open_module_first_branch_source;
  } else if (oldest && oldest < pk.open_module_min_sm) {
    p.note = fmt::format("the proprietary module: the open kernel modules drive sm_{} and newer, not sm_{}",
                         pk.open_module_min_sm, oldest);
    p.source = pk.open_module_source;
  } else {
    p.open = true;
  }
  p.name = fmt::format("{}-{}{}", stem, branch, p.open ? "-open" : "");
  return p;
}

std::vector<int> gpu_sms(const std::vector<MachineGpu>& gpus) {
  std::vector<int> out;
  for (const auto& g : gpus) out.push_back(g.sm);
  return out;
}

}  // namespace cd
