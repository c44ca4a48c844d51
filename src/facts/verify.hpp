#pragma once
// Results of verify/bench on the real GPUs.
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

struct Measurement {
  std::string name;      // "dtod_copy_kernel", "htod_pinned", "gemm_bf16_8192"
  std::string gpu;       // "GPU 0" or "0->1"
  double value = 0;
  std::string unit;      // "GB/s", "TFLOP/s"
  double expected = 0;   // from the knowledge base, 0 when unknown
  std::string expected_source;
  std::string note;      // "bytes read + written counted"
};
CD_JSON(Measurement, name, gpu, value, unit, expected, expected_source, note)

struct VerifyStep {
  std::string layer;   // "driver", "device", "libs", "nccl", "framework"
  std::string name;    // "cuInit", "PTX JIT", "kernel correctness", "cuBLAS GEMM"
  std::string status;  // "pass" | "fail" | "skip"
  std::string detail;
  double seconds = 0;
};
CD_JSON(VerifyStep, layer, name, status, detail, seconds)

struct VerifyFacts {
  bool ran = false;
  std::vector<VerifyStep> steps;
  std::vector<Measurement> measurements;
};
CD_JSON(VerifyFacts, ran, steps, measurements)

}  // namespace cd
