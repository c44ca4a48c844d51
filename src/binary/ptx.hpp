#pragma once
// The header of PTX text: `.version X.Y`, `.target sm_XY[a|f]`, and the `.entry` names.
#include <string>
#include <string_view>
#include <vector>

namespace cd::bin {

struct PtxInfo {
  int major = 0, minor = 0;  // .version
  int arch = 0;              // .target sm_90a -> 90
  char suffix = 0;           // 'a' / 'f' / 0
  std::vector<std::string> entries;  // kernels (only when asked)
  std::string problem;               // a .version or .target that is not a version or an sm_XY
  bool ok() const { return major > 0 && arch > 0; }
};

// Reads PTX text; stops after the header unless `entries` is wanted. Trailing NULs are fine.
PtxInfo parse_ptx(std::string_view text, bool entries);

}  // namespace cd::bin
