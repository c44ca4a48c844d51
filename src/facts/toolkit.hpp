#pragma once
// Layer 2: installed CUDA toolkits, what selects each, and the host compiler.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

struct Toolkit {
  std::string root;            // /usr/local/cuda-13.0 (resolved, in-root path)
  std::string version;         // "13.0.88" or "13.0"
  std::string version_source;  // "version.json", "version.txt", "dist-info nvidia-cuda-nvcc", "cuda.h", "nvcc --version"
  std::string nvcc;            // path of bin/nvcc, "" when absent
  std::string origin;          // "system", "conda:<env>", "pip:nvidia-cuda-nvcc (<env>)", "CUDA_HOME", "PATH"
  std::vector<std::string> selected_by;  // "PATH", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "/usr/local/cuda", "alternatives"
  // The toolkit's own host-compiler limits, read from include/crt/host_config.h
  // (`#if __GNUC__ > N`, `__clang_major__ >= N+1`); 0 = not found there.
  int host_gcc_max = 0;
  int host_clang_max = 0;
  std::string host_config;     // the header they were read from
  std::string lib_dir;         // the directory holding its libcudart (lib64, lib, targets/*/lib); "" when none
  // Filled by `toolkits` only (ProbeOptions::toolkit_details): what it contains and its size.
  std::vector<std::string> components;  // "nvcc", "headers", "cudart", "cublas", "cudnn", "nccl", "nvrtc", "stubs", "compat"
  uint64_t size_bytes = 0;              // every regular file below root, each inode once; 0 = not measured
};
CD_JSON(Toolkit, root, version, version_source, nvcc, origin, selected_by, host_gcc_max, host_clang_max, host_config,
        lib_dir, components, size_bytes)

struct HostCompiler {
  std::string kind;     // "gcc" / "clang"
  std::string path;
  std::string version;  // "12.2.0"; "" when it could not be asked (--root, timeout)
  std::string source;   // how it was chosen: "CUDAHOSTCXX", "NVCC_CCBIN", "CXX", "CC", "PATH"
  std::string error;    // why the version is missing
  // Where the version was read: "" = the compiler was asked (-dumpfullversion / -dumpversion),
  // else the installation directory that names it (gcc's cc1 dir, clang's /usr/lib/llvm-N).
  std::string version_from;
};
CD_JSON(HostCompiler, kind, path, version, source, error, version_from)

struct ToolkitFacts {
  std::vector<Toolkit> toolkits;
  std::string path_nvcc;           // nvcc found on PATH (resolved; wrapper scripts followed)
  std::string cuda_home;           // CUDA_HOME or CUDA_PATH (resolved)
  std::string cuda_home_var;       // which of the two was set: "CUDA_HOME" / "CUDA_PATH"
  std::string usr_local_cuda;      // /usr/local/cuda resolved
  std::string alternatives_cuda;   // /etc/alternatives/cuda resolved
  std::vector<std::string> ld_library_path_toolkits;  // toolkit roots reached by LD_LIBRARY_PATH
  std::vector<HostCompiler> host_compilers;
  // PATH and LD_LIBRARY_PATH entries (and those of the values `use` saved, _CUDA_DOCTOR_*_WAS) whose real
  // path differs (/usr/local/cuda/bin -> /usr/local/cuda-13.0/bin): `use` drops an entry that leads into a
  // toolkit however it is spelled.
  std::map<std::string, std::string> resolved_dirs;
};
CD_JSON(ToolkitFacts, toolkits, path_nvcc, cuda_home, cuda_home_var, usr_local_cuda, alternatives_cuda,
        ld_library_path_toolkits, host_compilers, resolved_dirs)

}  // namespace cd
