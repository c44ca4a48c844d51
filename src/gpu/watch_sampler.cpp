// NVML per-tick readings for watch. Each getter that fails (not supported on this GPU,
// no permission) leaves its field at -1, so one missing counter never hides the others.
// Processes come from the same _v3 compute and graphics lists ps uses (24-byte structs).
#include "gpu/watch_sampler.hpp"

#include <algorithm>

namespace cd::gpu {
namespace {

void add_pids(nvmlReturn_t (*list)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*), nvmlDevice_t dev, std::vector<int>& pids) {
  if (!list) return;
  nvmlProcessInfo_t infos[256];
  unsigned n = 256;
  if (list(dev, &n, infos) != kNvmlSuccess) return;
  for (unsigned i = 0; i < n && i < 256; ++i) pids.push_back(static_cast<int>(infos[i].pid));
}

}  // namespace

bool WatchSampler::open() {
  if (!nvml_.load()) {
    error_ = "NVML: " + nvml_.error;
    return false;
  }
  nvmlReturn_t r = nvml_.nvmlInit();
  if (r != kNvmlSuccess) {
    error_ = "NVML: " + NvmlApi::error_name(r) + ": " + nvml_.error_string(r);
    return false;
  }
  unsigned count = 0;
  if ((r = nvml_.nvmlDeviceGetCount(&count)) != kNvmlSuccess) {
    error_ = "nvmlDeviceGetCount: " + NvmlApi::error_name(r);
    return false;
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t dev = nullptr;
    if (nvml_.nvmlDeviceGetHandleByIndex(i, &dev) != kNvmlSuccess) continue;
    WatchGpu g;
    g.index = static_cast<int>(i);
    char buf[96] = {};
    if (nvml_.nvmlDeviceGetName && nvml_.nvmlDeviceGetName(dev, buf, sizeof buf) == kNvmlSuccess) g.name = buf;
    if (nvml_.nvmlDeviceGetUUID && nvml_.nvmlDeviceGetUUID(dev, buf, sizeof buf) == kNvmlSuccess) g.uuid = buf;
    nvmlMemory_t mem{};
    if (nvml_.nvmlDeviceGetMemoryInfo && nvml_.nvmlDeviceGetMemoryInfo(dev, &mem) == kNvmlSuccess) g.memory_total_mib = mem.total >> 20;
    unsigned v = 0;
    if (nvml_.nvmlDeviceGetMaxClockInfo && nvml_.nvmlDeviceGetMaxClockInfo(dev, kNvmlClockSm, &v) == kNvmlSuccess)
      g.max_sm_clock_mhz = static_cast<int>(v);
    if (nvml_.nvmlDeviceGetEnforcedPowerLimit && nvml_.nvmlDeviceGetEnforcedPowerLimit(dev, &v) == kNvmlSuccess)
      g.power_limit_w = v / 1000.0;
    devices_.push_back(dev);
    gpus_.push_back(std::move(g));
  }
  if (gpus_.empty()) {
    error_ = "the NVIDIA driver reports no GPU";
    return false;
  }
  return true;
}

GpuTick WatchSampler::read(size_t i, bool pcie) {
  nvmlDevice_t dev = devices_[i];
  GpuTick t;
  t.index = gpus_[i].index;
  nvmlUtilization_t u{};
  if (nvml_.nvmlDeviceGetUtilizationRates && nvml_.nvmlDeviceGetUtilizationRates(dev, &u) == kNvmlSuccess) {
    t.util = static_cast<int>(u.gpu);
    t.mem_util = static_cast<int>(u.memory);
  }
  nvmlMemory_t mem{};
  if (nvml_.nvmlDeviceGetMemoryInfo && nvml_.nvmlDeviceGetMemoryInfo(dev, &mem) == kNvmlSuccess)
    t.mem_used_mib = static_cast<int64_t>(mem.used >> 20);
  unsigned v = 0;
  if (nvml_.nvmlDeviceGetPowerUsage && nvml_.nvmlDeviceGetPowerUsage(dev, &v) == kNvmlSuccess) t.power_w = v / 1000.0;
  if (nvml_.nvmlDeviceGetClockInfo && nvml_.nvmlDeviceGetClockInfo(dev, kNvmlClockSm, &v) == kNvmlSuccess)
    t.sm_clock_mhz = static_cast<int>(v);
  if (nvml_.nvmlDeviceGetTemperature && nvml_.nvmlDeviceGetTemperature(dev, kNvmlTemperatureGpu, &v) == kNvmlSuccess)
    t.temp_c = static_cast<int>(v);
  unsigned long long reasons = 0;
  if (nvml_.nvmlDeviceGetCurrentClocksEventReasons && nvml_.nvmlDeviceGetCurrentClocksEventReasons(dev, &reasons) == kNvmlSuccess)
    t.throttle = reasons;
  if (pcie && nvml_.nvmlDeviceGetPcieThroughput) {
    if (nvml_.nvmlDeviceGetPcieThroughput(dev, kNvmlPcieUtilRxBytes, &v) == kNvmlSuccess) t.pcie_rx_kbs = static_cast<int>(v);
    if (nvml_.nvmlDeviceGetPcieThroughput(dev, kNvmlPcieUtilTxBytes, &v) == kNvmlSuccess) t.pcie_tx_kbs = static_cast<int>(v);
  }
  add_pids(nvml_.nvmlDeviceGetComputeRunningProcesses, dev, t.pids);
  add_pids(nvml_.nvmlDeviceGetGraphicsRunningProcesses, dev, t.pids);
  std::sort(t.pids.begin(), t.pids.end());
  t.pids.erase(std::unique(t.pids.begin(), t.pids.end()), t.pids.end());
  return t;
}

std::vector<GpuTick> WatchSampler::tick(bool pcie) {
  std::vector<GpuTick> out;
  for (size_t i = 0; i < devices_.size(); ++i) out.push_back(read(i, pcie));
  return out;
}

}  // namespace cd::gpu
