#pragma once
// CUresult codes → name, plain-English cause and finding id (data/cuda_errors.toml).
#include <string>
#include <vector>

#include "kb/kb.hpp"

namespace cd {

struct CudaErrorInfo {
  int code = 0;
  std::string name;     // "CUDA_ERROR_NO_DEVICE"
  std::string meaning;  // plain-English cause
  std::string finding;  // finding id it maps to, empty when none
  std::string source;
};

const std::vector<CudaErrorInfo>& cuda_errors(const Kb& kb);
// The row for `code`, or nullptr when the table does not know it.
const CudaErrorInfo* find_cuda_error(const Kb& kb, int code);

}  // namespace cd
