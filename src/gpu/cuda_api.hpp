#pragma once
// Our own minimal declarations of the CUDA driver API (no cuda.h at build time),
// loaded with dlopen("libcuda.so.1") and dlsym. Versioned names (…_v2) are resolved
// where the driver exports them (as cuda.h's #defines do: cuMemAlloc -> cuMemAlloc_v2;
// CUDA Driver API reference, docs.nvidia.com/cuda/cuda-driver-api/). We never create
// contexts: primary contexts are shared with the runtime (cuBLAS, NCCL).
//
// Call only from a child process (util/subprocess): a broken driver may hang or crash.
#include <cstddef>
#include <cstdint>
#include <string>

namespace cd::gpu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = std::uint64_t;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
struct CUuuid { unsigned char bytes[16]; };

// Values from cuda.h (§A5 attribute table).
enum CuAttr : int {
  kAttrMaxThreadsPerBlock = 1,
  kAttrClockRate = 13,
  kAttrMultiprocessorCount = 16,
  kAttrIntegrated = 18,
  kAttrComputeMode = 20,
  kAttrEccEnabled = 32,
  kAttrPciBusId = 33,
  kAttrPciDeviceId = 34,
  kAttrMemoryClockRate = 36,
  kAttrGlobalMemoryBusWidth = 37,
  kAttrL2CacheSize = 38,
  kAttrMaxThreadsPerMultiprocessor = 39,
  kAttrAsyncEngineCount = 40,
  kAttrUnifiedAddressing = 41,
  kAttrPciDomainId = 50,
  kAttrComputeCapabilityMajor = 75,
  kAttrComputeCapabilityMinor = 76,
};

constexpr CUresult kCudaSuccess = 0;
constexpr unsigned kMemHostAllocPortable = 1;
constexpr unsigned kEventDefault = 0;
constexpr unsigned kStreamNonBlocking = 1;
constexpr int kJitInfoLogBuffer = 3;            // CU_JIT_INFO_LOG_BUFFER
constexpr int kJitInfoLogBufferSizeBytes = 4;   // CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
constexpr int kJitErrorLogBuffer = 5;           // CU_JIT_ERROR_LOG_BUFFER
constexpr int kJitErrorLogBufferSizeBytes = 6;  // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES

// Function pointers; a null pointer means the driver does not export that symbol.
struct CudaApi {
  void* handle = nullptr;
  std::string path;   // what was dlopened ("libcuda.so.1" or $CUDA_DOCTOR_LIBCUDA)
  std::string error;  // dlopen/dlsym error when load() failed

  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;        // _v2
  CUresult (*cuDeviceGetPCIBusId)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetUuid)(CUuuid*, CUdevice) = nullptr;         // _v2 preferred
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;

  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;       // _v2
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuCtxEnablePeerAccess)(CUcontext, unsigned) = nullptr;
  CUresult (*cuDeviceCanAccessPeer)(int*, CUdevice, CUdevice) = nullptr;

  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void**, void**) = nullptr;

  CUresult (*cuMemGetInfo)(size_t*, size_t*) = nullptr;             // _v2
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;           // _v2
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;                     // _v2
  CUresult (*cuMemHostAlloc)(void**, size_t, unsigned) = nullptr;
  CUresult (*cuMemFreeHost)(void*) = nullptr;
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t) = nullptr;  // _v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;  // _v2
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;        // _v2
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;   // _v2
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream) = nullptr;   // _v2
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream) = nullptr;         // _v2
  CUresult (*cuMemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t,
                                CUstream) = nullptr;

  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;                  // _v2
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;                    // _v2
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;

  // dlopens libcuda (or $CUDA_DOCTOR_LIBCUDA when set) and resolves every symbol.
  // False when the library cannot be opened or lacks a symbol of the minimal
  // surface (cuInit … cuGetErrorString); `error` says which.
  bool load();
  // "CUDA_ERROR_NO_DEVICE" from the driver, else from our table, else "CUresult 123".
  std::string error_name(CUresult r) const;
  // The driver's own description, else our table's.
  std::string error_string(CUresult r) const;
  ~CudaApi();
};

// The path load() will try: $CUDA_DOCTOR_LIBCUDA or "libcuda.so.1".
std::string libcuda_path();

}  // namespace cd::gpu
