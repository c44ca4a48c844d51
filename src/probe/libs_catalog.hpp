#pragma once
// The CUDA libraries the libs probe tracks, how their files are named, and which
// pip wheel / toolkit component ships each (NVIDIA's PyPI package names; the CUDA
// toolkit's version.json component keys): the table is data/libraries.toml.
#include <string>
#include <string_view>
#include <vector>

namespace cd {

struct CudaLibFamily {
  std::string name;         // "cudnn"
  std::string stem;         // file name stem after "lib": libcudnn.so.9 → "cudnn"
  bool sublibs = false;     // libcudnn_ops.so.9 etc. belong to the family
  std::vector<std::string> companions;  // other stems whose files belong to it: "nvrtc-builtins"
  std::string wheel;        // pip package name prefix: "nvidia-cudnn" (matches nvidia-cudnn-cu13)
  std::string toolkit_key;  // version.json key ("libcublas"); "" when not part of the toolkit
};

const std::vector<CudaLibFamily>& cuda_lib_families();
// The family a file name belongs to: "libcudnn_ops.so.9.14.0", "libcudart-1a2b3c4d.so.12"
// (a torch-bundled, hash-renamed copy), "libnvrtc-builtins.so.13.0" (a companion); nullptr
// for anything else ("libcufftw.so.12").
const CudaLibFamily* cuda_lib_family(std::string_view filename);
// The version a file name carries after ".so.": "libcudnn.so.9.14.0" → "9.14.0", "libcudnn.so.9" → "9".
std::string version_from_filename(std::string_view filename);

}  // namespace cd
