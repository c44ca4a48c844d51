#pragma once
// Puts the knowledge base's expected figure (and the threshold below which the rules
// complain) next to each measurement: GPU model for memory and GEMM, the PCIe link
// NVML reports for host<->device, NVLink figures for NCCL.
#include "facts/verify.hpp"
#include "kb/kb.hpp"

namespace cd::gpu {

void add_expectations(VerifyFacts& v, const Kb& kb);

}  // namespace cd::gpu
