#pragma once
// Our own declarations of the few cuBLAS / cuBLASLt entry points verify's GEMM needs
// (values from cublas_api.h / cublasLt.h / library_types.h of CUDA 13.0), loaded with
// dlopen from the environment: torch's nvidia wheels, a toolkit, or the loader path.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/cuda_api.hpp"

namespace cd::gpu {

using cublasStatus = int;
using cublasHandle = struct cublasContext*;
using cublasLtHandle = struct cublasLtContext*;
struct LtOpaque { std::uint64_t data[32]; };
using cublasLtDesc = LtOpaque*;      // matmul desc, layouts, preference: opaque pointers
struct LtAlgo { std::uint64_t data[8]; };
struct LtHeuristic {                 // cublasLtMatmulHeuristicResult_t
  LtAlgo algo;
  size_t workspace_size;
  cublasStatus state;
  float waves_count;
  int reserved[4];
};

enum : int { kR32F = 0, kR16F = 2, kR16BF = 14 };  // cudaDataType
enum : int { kCompute32F = 68, kCompute32FFastTf32 = 77 };  // cublasComputeType_t
enum : int { kOpN = 0, kOpT = 1 };
enum : int { kLtDescTransA = 3, kLtDescTransB = 4, kLtPrefMaxWorkspace = 1 };
constexpr int kGemmDefault = -1;

struct CublasApi {
  std::string cublas_path, cublaslt_path;  // files loaded ("" when not)
  std::string error;

  // cuBLASLt
  size_t (*cublasLtGetVersion)() = nullptr;
  cublasStatus (*cublasLtCreate)(cublasLtHandle*) = nullptr;
  cublasStatus (*cublasLtDestroy)(cublasLtHandle) = nullptr;
  cublasStatus (*cublasLtMatmulDescCreate)(cublasLtDesc*, int, int) = nullptr;
  cublasStatus (*cublasLtMatmulDescDestroy)(cublasLtDesc) = nullptr;
  cublasStatus (*cublasLtMatmulDescSetAttribute)(cublasLtDesc, int, const void*, size_t) = nullptr;
  cublasStatus (*cublasLtMatrixLayoutCreate)(cublasLtDesc*, int, std::uint64_t, std::uint64_t, std::int64_t) = nullptr;
  cublasStatus (*cublasLtMatrixLayoutDestroy)(cublasLtDesc) = nullptr;
  cublasStatus (*cublasLtMatmulPreferenceCreate)(cublasLtDesc*) = nullptr;
  cublasStatus (*cublasLtMatmulPreferenceDestroy)(cublasLtDesc) = nullptr;
  cublasStatus (*cublasLtMatmulPreferenceSetAttribute)(cublasLtDesc, int, const void*, size_t) = nullptr;
  cublasStatus (*cublasLtMatmulAlgoGetHeuristic)(cublasLtHandle, cublasLtDesc, cublasLtDesc, cublasLtDesc,
                                                 cublasLtDesc, cublasLtDesc, cublasLtDesc, int, LtHeuristic*,
                                                 int*) = nullptr;
  cublasStatus (*cublasLtMatmul)(cublasLtHandle, cublasLtDesc, const void*, const void*, cublasLtDesc, const void*,
                                 cublasLtDesc, const void*, const void*, cublasLtDesc, void*, cublasLtDesc,
                                 const LtAlgo*, void*, size_t, CUstream) = nullptr;
  // cuBLAS
  cublasStatus (*cublasCreate)(cublasHandle*) = nullptr;   // _v2
  cublasStatus (*cublasDestroy)(cublasHandle) = nullptr;   // _v2
  cublasStatus (*cublasGemmEx)(cublasHandle, int, int, int, int, int, const void*, const void*, int, int, const void*,
                               int, int, const void*, void*, int, int, int, int) = nullptr;

  bool has_lt() const { return cublasLtCreate && cublasLtMatmul && cublasLtMatmulAlgoGetHeuristic; }
  bool has_gemm_ex() const { return cublasCreate && cublasGemmEx; }

  // Looks in `dirs` first (libcublasLt.so.13/.12, libcublas.so.13/.12), then the
  // loader's path. True when at least one of the two APIs is usable.
  bool load(const std::vector<std::string>& dirs);
};

// "CUBLAS_STATUS_NOT_INITIALIZED" for the statuses of cublas_api.h (data/library_status.toml).
std::string cublas_status_name(cublasStatus s);

}  // namespace cd::gpu
