#include "gpu/cuda_api.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include "gpu/dl.hpp"

#include "kb/cuda_errors.hpp"

namespace cd::gpu {

std::string libcuda_path() {
  return library_path("CUDA_DOCTOR_LIBCUDA", "libcuda.so.1");
}

CudaApi::~CudaApi() {
  // Never dlclose libcuda: the driver registers atexit handlers and thread-local state.
}

bool CudaApi::load() {
  path = libcuda_path();
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    error = e ? e : ("cannot open " + path);
    return false;
  }
  std::string missing;
  auto need = [&](bool ok, const char* name) {
    if (!ok) missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
  // The minimal surface other parts rely on.
  need(resolve(handle, cuInit, {"cuInit"}), "cuInit");
  need(resolve(handle, cuDriverGetVersion, {"cuDriverGetVersion"}), "cuDriverGetVersion");
  need(resolve(handle, cuDeviceGetCount, {"cuDeviceGetCount"}), "cuDeviceGetCount");
  need(resolve(handle, cuDeviceGet, {"cuDeviceGet"}), "cuDeviceGet");
  need(resolve(handle, cuDeviceGetName, {"cuDeviceGetName"}), "cuDeviceGetName");
  need(resolve(handle, cuDeviceGetAttribute, {"cuDeviceGetAttribute"}), "cuDeviceGetAttribute");
  need(resolve(handle, cuDeviceTotalMem, {"cuDeviceTotalMem_v2", "cuDeviceTotalMem"}),
       "cuDeviceTotalMem_v2");
  need(resolve(handle, cuGetErrorName, {"cuGetErrorName"}), "cuGetErrorName");
  need(resolve(handle, cuGetErrorString, {"cuGetErrorString"}), "cuGetErrorString");
  // Optional: callers check the pointer before use.
  resolve(handle, cuDeviceGetPCIBusId, {"cuDeviceGetPCIBusId"});
  resolve(handle, cuDeviceGetUuid, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"});
  resolve(handle, cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"});
  resolve(handle, cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"});
  resolve(handle, cuCtxSetCurrent, {"cuCtxSetCurrent"});
  resolve(handle, cuCtxSynchronize, {"cuCtxSynchronize"});
  resolve(handle, cuCtxEnablePeerAccess, {"cuCtxEnablePeerAccess"});
  resolve(handle, cuDeviceCanAccessPeer, {"cuDeviceCanAccessPeer"});
  resolve(handle, cuModuleLoadDataEx, {"cuModuleLoadDataEx"});
  resolve(handle, cuModuleGetFunction, {"cuModuleGetFunction"});
  resolve(handle, cuModuleUnload, {"cuModuleUnload"});
  resolve(handle, cuLaunchKernel, {"cuLaunchKernel"});
  resolve(handle, cuMemGetInfo, {"cuMemGetInfo_v2", "cuMemGetInfo"});
  resolve(handle, cuMemAlloc, {"cuMemAlloc_v2", "cuMemAlloc"});
  resolve(handle, cuMemFree, {"cuMemFree_v2", "cuMemFree"});
  resolve(handle, cuMemHostAlloc, {"cuMemHostAlloc"});
  resolve(handle, cuMemFreeHost, {"cuMemFreeHost"});
  resolve(handle, cuMemsetD32, {"cuMemsetD32_v2", "cuMemsetD32"});
  resolve(handle, cuMemcpyHtoD, {"cuMemcpyHtoD_v2", "cuMemcpyHtoD"});
  resolve(handle, cuMemcpyDtoH, {"cuMemcpyDtoH_v2", "cuMemcpyDtoH"});
  resolve(handle, cuMemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync"});
  resolve(handle, cuMemcpyHtoDAsync, {"cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync"});
  resolve(handle, cuMemcpyDtoHAsync, {"cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync"});
  resolve(handle, cuMemcpyPeerAsync, {"cuMemcpyPeerAsync"});
  resolve(handle, cuStreamCreate, {"cuStreamCreate"});
  resolve(handle, cuStreamDestroy, {"cuStreamDestroy_v2", "cuStreamDestroy"});
  resolve(handle, cuStreamSynchronize, {"cuStreamSynchronize"});
  resolve(handle, cuEventCreate, {"cuEventCreate"});
  resolve(handle, cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"});
  resolve(handle, cuEventRecord, {"cuEventRecord"});
  resolve(handle, cuEventSynchronize, {"cuEventSynchronize"});
  resolve(handle, cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
  if (!missing.empty()) {
    error = path + " lacks " + missing + " (not an NVIDIA driver library, or a very old one)";
    return false;
  }
  return true;
}

std::string CudaApi::error_name(CUresult r) const {
  const char* s = nullptr;
  if (cuGetErrorName && cuGetErrorName(r, &s) == kCudaSuccess && s) return s;
  if (const CudaErrorInfo* info = find_cuda_error(Kb::get(), r)) return info->name;
  return "CUresult " + std::to_string(r);
}

std::string CudaApi::error_string(CUresult r) const {
  const char* s = nullptr;
  if (cuGetErrorString && cuGetErrorString(r, &s) == kCudaSuccess && s) return s;
  if (const CudaErrorInfo* info = find_cuda_error(Kb::get(), r)) return info->meaning;
  return "unknown error";
}

}  // namespace cd::gpu
