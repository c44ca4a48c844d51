#pragma once
// Layer 2: installed CUDA toolkits, what selects each, and the host compiler.
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

struct Toolkit {
  std::string root;            // /usr/local/cuda-13.0 (resolved, in-root path)
  std::string version;         // "13.0.88" or "13.0"
  std::string version_source;  // "version.json", "version.txt", "cuda.h", "nvcc --version"
  std::string nvcc;            // path of bin/nvcc, "" when absent
  std::string origin;          // "system", "conda:<env>", "pip:nvidia-cuda-nvcc", "CUDA_HOME"
  std::vector<std::string> selected_by;  // "PATH", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "/usr/local/cuda", "alternatives"
};
CD_JSON(Toolkit, root, version, version_source, nvcc, origin, selected_by)

struct HostCompiler {
  std::string kind;     // "gcc" / "clang"
  std::string path;
  std::string version;
  std::string source;   // how it was chosen: "CUDAHOSTCXX", "PATH"
};
CD_JSON(HostCompiler, kind, path, version, source)

struct ToolkitFacts {
  std::vector<Toolkit> toolkits;
  std::string path_nvcc;           // nvcc found on PATH (resolved)
  std::string cuda_home;           // CUDA_HOME or CUDA_PATH (resolved)
  std::string usr_local_cuda;      // /usr/local/cuda resolved
  std::string alternatives_cuda;   // /etc/alternatives/cuda resolved
  std::vector<std::string> ld_library_path_toolkits;  // toolkit roots reached by LD_LIBRARY_PATH
  std::vector<HostCompiler> host_compilers;
};
CD_JSON(ToolkitFacts, toolkits, path_nvcc, cuda_home, usr_local_cuda, alternatives_cuda, ld_library_path_toolkits,
        host_compilers)

}  // namespace cd
