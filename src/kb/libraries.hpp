#pragma once
// The CUDA library families the libs probe tracks (data/libraries.toml).
#include <string>
#include <vector>

#include "kb/kb.hpp"

namespace cd {

struct LibraryFamilyRow {
  std::string name;         // "cudnn"
  std::string stem;         // after "lib" in the file name
  bool sublibs = false;     // libcudnn_ops.so.9 belongs to cudnn
  std::vector<std::string> companions;  // other stems of the family: "nvrtc-builtins"
  std::string wheel;        // PyPI name prefix: "nvidia-cudnn"
  std::string toolkit_key;  // version.json key; "" when the toolkit does not ship it
  std::string source;
  bool main_library = false;  // `main = true`: shown per environment by check
  std::string main_source;    // why it is one of those
};

const std::vector<LibraryFamilyRow>& library_families(const Kb& kb);

}  // namespace cd
