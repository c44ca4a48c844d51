#pragma once
// CUDA toolkit -> host compilers nvcc accepts and SM targets it compiles (data/toolkits.toml).
#include <optional>
#include <string>
#include <vector>

#include "kb/kb.hpp"
#include "util/version.hpp"

namespace cd {

struct ToolkitSupport {
  std::string cuda;       // "13.0" (the row; also serves later minors of the same major)
  int max_gcc = 0;        // highest gcc major accepted (0 = unknown)
  int min_gcc = 0;
  int max_clang = 0;
  int sm_min = 0;         // compute capability x 10
  int sm_max = 0;
  std::vector<std::string> archs;  // exact list where measured
  std::string source;
};

const std::vector<ToolkitSupport>& toolkit_table(const Kb& kb);
// The row for `cuda`: same major.minor, else the nearest lower row of the same major.
std::optional<ToolkitSupport> toolkit_support(const Kb& kb, const Version& cuda);

}  // namespace cd
