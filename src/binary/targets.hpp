#pragma once
// The verdict targets of a machine: its GPUs (one per distinct architecture) and its driver.
#include <vector>

#include "binary/verdict.hpp"
#include "facts/facts.hpp"

namespace cd {

std::vector<GpuTarget> gpu_targets_of(const Facts& facts);
DriverTarget driver_target_of(const Facts& facts);

}  // namespace cd
