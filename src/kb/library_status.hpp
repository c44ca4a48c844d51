#pragma once
// Status codes of cuBLAS and NCCL → name and finding id (data/library_status.toml).
#include <string>
#include <vector>

#include "kb/kb.hpp"

namespace cd {

struct LibraryStatus {
  int code = 0;
  std::string name;     // "CUBLAS_STATUS_ARCH_MISMATCH", "ncclSystemError"
  std::string finding;  // finding id a failure with it maps to, empty when none
  std::string source;
};

// The rows of one library's table: "cublas" or "nccl".
const std::vector<LibraryStatus>& library_statuses(const Kb& kb, const std::string& library);
// The row for `code`, or nullptr when the table does not know it.
const LibraryStatus* find_library_status(const Kb& kb, const std::string& library, int code);

}  // namespace cd
