#pragma once
// The driver query that runs inside the isolated child (`cuda-doctor __driver`):
// NVML for driver version and per-GPU state, the driver API for the CUDA version the
// driver supports and the CUDA device order. Never call it in the main process.
#include <functional>
#include <string>
#include <string_view>

#include "facts/driver.hpp"

namespace cd::gpu {

// Called before each stage ("nvml", "cuInit") and after each with the facts so far,
// so a parent that kills a hung child still knows what was learned and where it hung.
struct QueryProgress {
  std::function<void(std::string_view stage)> stage;
  std::function<void(const DriverFacts&)> partial;
};

// Fills the query fields of DriverFacts (nvml_*, cuda_driver_version, cu_init_*,
// libcuda_loaded, cuda_device_count, gpus, processes); the file fields stay empty.
// nvml_first: answer from NVML alone when it knows the GPUs (their compute capability
// and the driver's CUDA version), skipping cuInit's ~0.1 s; `scan` needs no more.
DriverFacts query_driver(const QueryProgress& progress = {}, bool nvml_first = false);

// "00000000:3B:00.0" (NVML) / "0000:3b:00.0" (sysfs, CUDA) -> "0000:3b:00.0".
std::string normalize_bus_id(std::string_view id);

}  // namespace cd::gpu
