#pragma once
// `scan` judges binaries for GPUs and a driver that may come from the command line
// (--gpu, --driver) rather than from this machine. These turn such targets into facts,
// so the same derive() and arch rules judge them: one verdict path for check and scan.
#include <string>
#include <vector>

#include "binary/verdict.hpp"
#include "derive/model.hpp"
#include "facts/facts.hpp"
#include "kb/kb.hpp"

namespace cd {

struct JudgeTargets {
  std::vector<GpuTarget> gpus;
  std::string gpu_source;     // "this machine", "--gpu"
  DriverTarget driver;
  std::string driver_source;  // "this machine", "--driver", ""
};

// --gpu NAME… (sm_89, 8.9, "RTX 4090", H100) and --driver V (550.54 a driver version, 12.4 a
// CUDA version, 12040 as cuDriverGetVersion says it); empty parts when not given. An unknown
// GPU or a malformed version is a UsageError (exit 3).
JudgeTargets targets_from_flags(const std::vector<std::string>& gpus, const std::string& driver, const Kb& kb);
// Whether this machine has to be asked: no --gpu given.
bool needs_this_machine(const JudgeTargets& t);
// This machine's GPUs and driver (`machine`, derived from its driver facts) fill what the
// flags left open. The driver only when neither flag was given: a --gpu question is about
// that GPU, not this machine's driver.
void add_this_machine(JudgeTargets& t, const Model& machine);

// `base` (its Python environments and toolkits, for the fixes) with the driver part replaced
// by exactly these GPUs and this driver, and these binaries. The environment is dropped:
// TORCH_CUDA_ARCH_LIST is check's concern, not scan's.
Facts facts_for_judging(Facts base, const JudgeTargets& t, std::vector<BinaryScan> binaries);

}  // namespace cd
