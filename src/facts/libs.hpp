#pragma once
// Shared CUDA libraries: every copy on the machine and which one the loader picks
// for whom (computed by loader/, an ld.so emulation).
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

struct LibraryCopy {
  std::string name;     // "cudnn", "nccl", "cudart", "cublas"
  std::string soname;   // "libcudnn.so.9"
  std::string path;
  std::string version;  // "9.19.0" (file name or package metadata)
  std::string origin;   // "system", "toolkit:/usr/local/cuda-13.0", "wheel:nvidia-cudnn-cu13 (/opt/torch/.venv)"
};
CD_JSON(LibraryCopy, name, soname, path, version, origin)

// Which copy a given consumer (e.g. libtorch_cuda.so) resolves a soname to, and why.
struct LibraryResolution {
  std::string consumer;  // "torch (/opt/torch/.venv)"
  std::string soname;
  std::string path;      // "" = not found
  std::string via;       // "RPATH $ORIGIN/../../nvidia/cudnn/lib", "LD_LIBRARY_PATH", "ld.so.cache", "preload by torch/__init__.py"
};
CD_JSON(LibraryResolution, consumer, soname, path, via)

struct LibsFacts {
  std::vector<LibraryCopy> copies;
  std::vector<LibraryResolution> resolutions;
};
CD_JSON(LibsFacts, copies, resolutions)

}  // namespace cd
