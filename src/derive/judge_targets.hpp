#pragma once
// `scan` judges binaries for GPUs and a driver that may come from the command line
// (--gpu, --driver) rather than from this machine. These turn such targets into facts,
// so the same derive() and arch rules judge them: one verdict path for check and scan.
#include <string>
#include <vector>

#include "binary/verdict.hpp"
#include "facts/facts.hpp"

namespace cd {

struct JudgeTargets {
  std::vector<GpuTarget> gpus;
  std::string gpu_source;     // "this machine", "--gpu"
  DriverTarget driver;
  std::string driver_source;  // "this machine", "--driver", ""
};

// `base` (its Python environments and toolkits, for the fixes) with the driver part replaced
// by exactly these GPUs and this driver, and these binaries. The environment is dropped:
// TORCH_CUDA_ARCH_LIST is check's concern, not scan's.
Facts facts_for_judging(Facts base, const JudgeTargets& t, std::vector<BinaryScan> binaries);

}  // namespace cd
