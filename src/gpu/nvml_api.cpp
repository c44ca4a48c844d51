#include "gpu/nvml_api.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>

#include "gpu/dl.hpp"

#include "kb/drivers.hpp"

namespace cd::gpu {

std::string libnvml_path() {
  return library_path("CUDA_DOCTOR_LIBNVML", "libnvidia-ml.so.1");
}

std::string loaded_path(void* handle) {
  struct link_map* map = nullptr;
  if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name) return {};
  return map->l_name;
}

bool NvmlApi::load() {
  path = libnvml_path();
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    error = e ? e : ("cannot open " + path);
    return false;
  }
  bool ok = resolve(handle, nvmlInit, {"nvmlInit_v2", "nvmlInit"}) &&
            resolve(handle, nvmlDeviceGetCount, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}) &&
            resolve(handle, nvmlDeviceGetHandleByIndex, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  if (!ok) {
    error = path + " lacks nvmlInit/nvmlDeviceGetCount (not NVIDIA's NVML)";
    return false;
  }
  resolve(handle, nvmlShutdown, {"nvmlShutdown"});
  resolve(handle, nvmlErrorString, {"nvmlErrorString"});
  resolve(handle, nvmlSystemGetDriverVersion, {"nvmlSystemGetDriverVersion"});
  resolve(handle, nvmlSystemGetCudaDriverVersion, {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  resolve(handle, nvmlDeviceGetName, {"nvmlDeviceGetName"});
  resolve(handle, nvmlDeviceGetUUID, {"nvmlDeviceGetUUID"});
  resolve(handle, nvmlDeviceGetPciInfo, {"nvmlDeviceGetPciInfo_v3"});
  resolve(handle, nvmlDeviceGetCudaComputeCapability, {"nvmlDeviceGetCudaComputeCapability"});
  resolve(handle, nvmlDeviceGetMemoryInfo, {"nvmlDeviceGetMemoryInfo"});
  resolve(handle, nvmlDeviceGetPersistenceMode, {"nvmlDeviceGetPersistenceMode"});
  resolve(handle, nvmlDeviceGetComputeMode, {"nvmlDeviceGetComputeMode"});
  resolve(handle, nvmlDeviceGetMigMode, {"nvmlDeviceGetMigMode"});
  resolve(handle, nvmlDeviceGetTotalEccErrors, {"nvmlDeviceGetTotalEccErrors"});
  resolve(handle, nvmlDeviceGetRetiredPagesPendingStatus, {"nvmlDeviceGetRetiredPagesPendingStatus"});
  resolve(handle, nvmlDeviceGetRemappedRows, {"nvmlDeviceGetRemappedRows"});
  resolve(handle, nvmlDeviceGetCurrPcieLinkGeneration, {"nvmlDeviceGetCurrPcieLinkGeneration"});
  resolve(handle, nvmlDeviceGetMaxPcieLinkGeneration, {"nvmlDeviceGetMaxPcieLinkGeneration"});
  resolve(handle, nvmlDeviceGetCurrPcieLinkWidth, {"nvmlDeviceGetCurrPcieLinkWidth"});
  resolve(handle, nvmlDeviceGetMaxPcieLinkWidth, {"nvmlDeviceGetMaxPcieLinkWidth"});
  // _v3 and _v2 both take the 24-byte struct on the drivers we know (§A4); v1 the 16-byte one.
  if (!resolve(handle, nvmlDeviceGetComputeRunningProcesses,
               {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"}))
    resolve(handle, nvmlDeviceGetComputeRunningProcesses_v1, {"nvmlDeviceGetComputeRunningProcesses"});
  // The graphics list only through the 24-byte versions: the v1 fallback is not worth a second struct path.
  resolve(handle, nvmlDeviceGetGraphicsRunningProcesses,
          {"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2"});
  resolve(handle, nvmlDeviceGetMemoryInfo_v2, {"nvmlDeviceGetMemoryInfo_v2"});
  resolve(handle, nvmlDeviceGetProcessUtilization, {"nvmlDeviceGetProcessUtilization"});
  resolve(handle, nvmlDeviceGetUtilizationRates, {"nvmlDeviceGetUtilizationRates"});
  resolve(handle, nvmlDeviceGetPowerUsage, {"nvmlDeviceGetPowerUsage"});
  resolve(handle, nvmlDeviceGetEnforcedPowerLimit, {"nvmlDeviceGetEnforcedPowerLimit"});
  resolve(handle, nvmlDeviceGetClockInfo, {"nvmlDeviceGetClockInfo"});
  resolve(handle, nvmlDeviceGetMaxClockInfo, {"nvmlDeviceGetMaxClockInfo"});
  resolve(handle, nvmlDeviceGetCurrentClocksEventReasons,
          {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  resolve(handle, nvmlDeviceGetTemperature, {"nvmlDeviceGetTemperature"});
  resolve(handle, nvmlDeviceGetPcieThroughput, {"nvmlDeviceGetPcieThroughput"});
  return true;
}

std::string NvmlApi::error_name(nvmlReturn_t r) {
  if (const NvmlErrorInfo* info = find_nvml_error(Kb::get(), r)) return info->name;
  return "nvmlReturn " + std::to_string(r);
}

std::string NvmlApi::error_string(nvmlReturn_t r) const {
  if (nvmlErrorString)
    if (const char* s = nvmlErrorString(r); s && *s) return s;
  return error_name(r);
}

}  // namespace cd::gpu
