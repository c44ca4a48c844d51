#pragma once
// The GPU steps of verify. Each runs inside `cuda-doctor __verify STEP …` (a child
// process with a timeout, cli/child_verify.cpp), reports through a StepSink as it
// goes, and returns 0 when everything it tried passed, 1 otherwise.
#include <string>
#include <vector>

#include "gpu/verify_sink.hpp"

namespace cd::gpu {

struct StepOptions {
  bool quick = false;
  int device = 0;                      // the GPU a per-device step uses
  std::vector<std::string> lib_dirs;   // where to look for cuBLAS/NCCL first (torch's wheels, a toolkit)
  std::vector<size_t> nccl_sizes;      // all-reduce message sizes in bytes (empty = default ladder)
};

int step_devices(StepSink& sink, const StepOptions& o);  // cuInit, every device, PCIe link (NVML)
int step_device(StepSink& sink, const StepOptions& o);   // context, PTX JIT, correctness, memory, bandwidth
int step_gemm(StepSink& sink, const StepOptions& o);     // cuBLASLt / cuBLAS GEMM: correctness and TFLOP/s
int step_p2p(StepSink& sink, const StepOptions& o);      // peer access matrix and bandwidth per pair
int step_nccl(StepSink& sink, const StepOptions& o);     // NCCL all-reduce over all GPUs (one process)

}  // namespace cd::gpu
