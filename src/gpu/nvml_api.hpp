#pragma once
// Our own minimal declarations of NVML (no nvml.h at build time), loaded with
// dlopen("libnvidia-ml.so.1"). Names, enums and struct layouts follow nvml.h
// (NVML_API_VERSION 13; NVML API Reference, docs.nvidia.com/deploy/nvml-api/).
//
// Call only from a child process (cuda-doctor __driver): a broken driver may hang or crash.
#include <string>

namespace cd::gpu {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;

constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlErrorNotSupported = 3;
constexpr nvmlReturn_t kNvmlErrorInsufficientSize = 7;
constexpr nvmlReturn_t kNvmlErrorLibRmVersionMismatch = 18;

// nvmlComputeMode_t
constexpr unsigned kNvmlComputeDefault = 0;
constexpr unsigned kNvmlComputeExclusiveThread = 1;  // deprecated, reported as exclusive_process
constexpr unsigned kNvmlComputeProhibited = 2;
constexpr unsigned kNvmlComputeExclusiveProcess = 3;
// nvmlMemoryErrorType_t / nvmlEccCounterType_t
constexpr int kNvmlErrorCorrected = 0;
constexpr int kNvmlErrorUncorrected = 1;
constexpr int kNvmlVolatileEcc = 0;

struct nvmlMemory_t {
  unsigned long long total, free, used;
};

// nvmlPciInfo_t as the _v3 getter fills it.
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

// nvmlProcessInfo_v2_t (24 bytes): what nvmlDeviceGetComputeRunningProcesses_v3 writes on
// current drivers (measured on 580; §A4 "the _v3 struct trap"). v1 is the first 16 bytes.
struct nvmlProcessInfo_t {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};
struct nvmlProcessInfo_v1_t {
  unsigned pid;
  unsigned long long usedGpuMemory;
};

// nvmlMemory_v2_t (NVML API Reference, "nvmlMemory_v2_t"): `used` excludes `reserved`,
// the memory the driver keeps for itself. version = sizeof | 2 << 24 (nvmlMemory_v2).
struct nvmlMemory_v2_t {
  unsigned version;
  unsigned long long total, reserved, free, used;
};
constexpr unsigned kNvmlMemoryV2 = static_cast<unsigned>(sizeof(nvmlMemory_v2_t)) | (2u << 24);

// nvmlProcessUtilizationSample_t (NVML API Reference): one sample per process and
// timestamp (CPU time, µs) from the driver's buffer; utilizations in percent.
struct nvmlProcessUtilizationSample_t {
  unsigned pid;
  unsigned long long timeStamp;
  unsigned smUtil, memUtil, encUtil, decUtil;
};
constexpr nvmlReturn_t kNvmlErrorNotFound = 6;

// watch's per-tick readings (NVML API Reference: nvmlUtilization_t, nvmlClockType_t,
// nvmlTemperatureSensors_t, nvmlPcieUtilCounter_t).
struct nvmlUtilization_t {
  unsigned gpu, memory;
};
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlTemperatureGpu = 0;
constexpr int kNvmlPcieUtilTxBytes = 0;
constexpr int kNvmlPcieUtilRxBytes = 1;

// Function pointers; null means the library does not export that symbol.
struct NvmlApi {
  void* handle = nullptr;
  std::string path;   // what was dlopened ("libnvidia-ml.so.1" or $CUDA_DOCTOR_LIBNVML)
  std::string error;  // dlopen/dlsym error when load() failed

  nvmlReturn_t (*nvmlInit)() = nullptr;  // _v2
  nvmlReturn_t (*nvmlShutdown)() = nullptr;
  const char* (*nvmlErrorString)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*nvmlSystemGetDriverVersion)(char*, unsigned) = nullptr;
  nvmlReturn_t (*nvmlSystemGetCudaDriverVersion)(int*) = nullptr;  // _v2
  nvmlReturn_t (*nvmlDeviceGetCount)(unsigned*) = nullptr;         // _v2
  nvmlReturn_t (*nvmlDeviceGetHandleByIndex)(unsigned, nvmlDevice_t*) = nullptr;  // _v2
  nvmlReturn_t (*nvmlDeviceGetName)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetUUID)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPciInfo)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;  // _v3
  nvmlReturn_t (*nvmlDeviceGetCudaComputeCapability)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMemoryInfo)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPersistenceMode)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetComputeMode)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMigMode)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetTotalEccErrors)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetRetiredPagesPendingStatus)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetRemappedRows)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetCurrPcieLinkGeneration)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMaxPcieLinkGeneration)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetCurrPcieLinkWidth)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMaxPcieLinkWidth)(nvmlDevice_t, unsigned*) = nullptr;
  // Process listing: _v3 and _v2 take the 24-byte struct, the unsuffixed one the 16-byte v1.
  nvmlReturn_t (*nvmlDeviceGetComputeRunningProcesses)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetComputeRunningProcesses_v1)(nvmlDevice_t, unsigned*, nvmlProcessInfo_v1_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetGraphicsRunningProcesses)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*) = nullptr;  // _v3/_v2
  nvmlReturn_t (*nvmlDeviceGetMemoryInfo_v2)(nvmlDevice_t, nvmlMemory_v2_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetProcessUtilization)(nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned*,
                                                 unsigned long long) = nullptr;
  // watch (__sample): utilization, power, clocks, throttle reasons, temperature, PCIe throughput.
  nvmlReturn_t (*nvmlDeviceGetUtilizationRates)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPowerUsage)(nvmlDevice_t, unsigned*) = nullptr;             // mW
  nvmlReturn_t (*nvmlDeviceGetEnforcedPowerLimit)(nvmlDevice_t, unsigned*) = nullptr;     // mW
  nvmlReturn_t (*nvmlDeviceGetClockInfo)(nvmlDevice_t, int, unsigned*) = nullptr;         // MHz
  nvmlReturn_t (*nvmlDeviceGetMaxClockInfo)(nvmlDevice_t, int, unsigned*) = nullptr;      // MHz
  // nvmlDeviceGetCurrentClocksEventReasons (r535+), else the older ...ThrottleReasons name.
  nvmlReturn_t (*nvmlDeviceGetCurrentClocksEventReasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetTemperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPcieThroughput)(nvmlDevice_t, int, unsigned*) = nullptr;    // KB/s over 20 ms

  // dlopens libnvidia-ml (or $CUDA_DOCTOR_LIBNVML) and resolves the symbols; false when
  // the library cannot be opened or lacks nvmlInit / nvmlDeviceGetCount.
  bool load();
  // "NVML_ERROR_LIB_RM_VERSION_MISMATCH" from data/nvml_errors.toml; "nvmlReturn 123" when unknown.
  static std::string error_name(nvmlReturn_t r);
  // The library's own description (nvmlErrorString), else the name.
  std::string error_string(nvmlReturn_t r) const;
};

// The path load() will try: $CUDA_DOCTOR_LIBNVML or "libnvidia-ml.so.1".
std::string libnvml_path();

// The file a dlopen handle was loaded from (dlinfo link map); "" when unknown.
std::string loaded_path(void* handle);

}  // namespace cd::gpu
