#pragma once
// What `verify` runs the GPU steps with: the interpreter of the first Python environment
// with a CUDA build of torch, and the library directories its wheels bring (cuBLAS,
// NCCL), then a toolkit's. Paths are host paths (the children dlopen them), read under --root.
#include <string>
#include <vector>

#include "probe/probe.hpp"

namespace cd {

struct VerifyEnvironment {
  std::string python;                 // "" when none: the framework step is skipped
  std::vector<std::string> lib_dirs;  // first wins
};

// CUDA_DOCTOR_LIB_DIR adds a first directory; CUDA_DOCTOR_PYTHON overrides the interpreter
// ("" disables the torch step).
VerifyEnvironment find_verify_environment(const ProbeOptions& opts);

}  // namespace cd
