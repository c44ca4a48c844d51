#pragma once
// Where a verify child reports what it did, as it happens: the child process writes
// each item as one JSON line (gpu/verify_protocol), so whatever was reported before a
// crash or hang survives it, and `begin` names the step that was running.
#include <string>

#include "facts/verify.hpp"

namespace cd::gpu {

class StepSink {
 public:
  virtual ~StepSink() = default;
  virtual void begin(const std::string& what) = 0;  // about to run `what`
  virtual void step(const VerifyStep& s) = 0;
  virtual void measurement(const Measurement& m) = 0;
  virtual void gpu(const VerifyGpu& g) = 0;
  // Loose facts: "libcuda", "driver_cuda_version", "cublas", "nccl_version", "p2p" …
  virtual void value(const std::string& key, const std::string& v) = 0;
};

}  // namespace cd::gpu
