#pragma once
// Our own declarations of the NCCL entry points verify needs (nccl.h of NCCL 2.x,
// github.com/NVIDIA/nccl src/nccl.h.in: stable since 2.0), loaded with dlopen("libnccl.so.2").
#include <string>
#include <vector>

#include "gpu/cuda_api.hpp"

namespace cd::gpu {

using ncclResult = int;
using ncclComm = struct ncclComm_st*;
enum : int { kNcclFloat32 = 7 };
enum : int { kNcclSum = 0 };

struct NcclApi {
  std::string path;   // file loaded
  std::string error;
  ncclResult (*ncclGetVersion)(int*) = nullptr;
  ncclResult (*ncclCommInitAll)(ncclComm*, int, const int*) = nullptr;
  ncclResult (*ncclCommDestroy)(ncclComm) = nullptr;
  ncclResult (*ncclAllReduce)(const void*, void*, size_t, int, int, ncclComm, CUstream) = nullptr;
  ncclResult (*ncclGroupStart)() = nullptr;
  ncclResult (*ncclGroupEnd)() = nullptr;
  const char* (*ncclGetErrorString)(ncclResult) = nullptr;

  // dirs/libnccl.so.2 first, then the loader's path (or $CUDA_DOCTOR_LIBNCCL).
  bool load(const std::vector<std::string>& dirs);
};

// "ncclUnhandledCudaError" … and the finding id a result maps to (data/library_status.toml).
std::string nccl_result_name(ncclResult r);
std::string nccl_result_finding(ncclResult r);
// 22803 → "2.28.3" (NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9).
std::string nccl_version_text(int code);

}  // namespace cd::gpu
