#pragma once
// watch's GPU side: NVML readings per GPU, one tick at a time. Runs only in the long-lived
// `cuda-doctor __sample` child (cli/child_sample.cpp), never in the main process: a sick
// driver may hang or crash NVML, and the watcher must go on running and reporting.
#include <string>
#include <vector>

#include "facts/watch.hpp"
#include "gpu/nvml_api.hpp"

namespace cd::gpu {

class WatchSampler {
 public:
  // Loads NVML, initialises it, finds the GPUs. False with error() set when there is no
  // driver or NVML fails (the parent prints it as its one line).
  bool open();
  const std::string& error() const { return error_; }
  const std::vector<WatchGpu>& gpus() const { return gpus_; }
  // Every GPU's readings now. PCIe throughput costs 20 ms of sampling per call and
  // direction inside NVML, so it is asked only when `pcie` is set (about once a second).
  std::vector<GpuTick> tick(bool pcie);

 private:
  GpuTick read(size_t i, bool pcie);
  NvmlApi nvml_;
  std::vector<nvmlDevice_t> devices_;
  std::vector<WatchGpu> gpus_;
  std::string error_;
};

}  // namespace cd::gpu
