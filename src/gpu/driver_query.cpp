#include "gpu/driver_query.hpp"

#include <algorithm>
#include <thread>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <climits>
#include <cstdio>
#include <vector>

#include "gpu/cuda_api.hpp"
#include "gpu/nvml_api.hpp"
#include "util/strings.hpp"
#include "util/trace.hpp"

namespace cd::gpu {
namespace {

std::string on_off(int state) { return state ? "on" : "off"; }

std::string compute_mode_name(int mode) {
  switch (mode) {
    case kNvmlComputeDefault: return "default";
    case kNvmlComputeExclusiveThread:
    case kNvmlComputeExclusiveProcess: return "exclusive_process";
    case kNvmlComputeProhibited: return "prohibited";
    default: return "unknown(" + std::to_string(mode) + ")";
  }
}

// Running compute processes; the 24-byte struct for _v3/_v2, 16-byte for v1 (§A4).
void query_processes(const NvmlApi& nvml, nvmlDevice_t dev, const std::string& uuid, DriverFacts& out) {
  auto add = [&](unsigned pid, unsigned long long used) {
    GpuProcess p;
    p.pid = static_cast<int>(pid);
    p.gpu_uuid = uuid;
    p.used_mib = used == ULLONG_MAX ? 0 : used >> 20;  // ULLONG_MAX: not available (WDDM)
    out.processes.push_back(p);
  };
  unsigned count = 0;
  if (nvml.nvmlDeviceGetComputeRunningProcesses) {
    nvmlReturn_t r = nvml.nvmlDeviceGetComputeRunningProcesses(dev, &count, nullptr);
    if (r != kNvmlSuccess && r != kNvmlErrorInsufficientSize) return;
    std::vector<nvmlProcessInfo_t> infos(count * 2 + 5);
    count = static_cast<unsigned>(infos.size());
    if (nvml.nvmlDeviceGetComputeRunningProcesses(dev, &count, infos.data()) != kNvmlSuccess) return;
    for (unsigned i = 0; i < count && i < infos.size(); ++i) add(infos[i].pid, infos[i].usedGpuMemory);
  } else if (nvml.nvmlDeviceGetComputeRunningProcesses_v1) {
    nvmlReturn_t r = nvml.nvmlDeviceGetComputeRunningProcesses_v1(dev, &count, nullptr);
    if (r != kNvmlSuccess && r != kNvmlErrorInsufficientSize) return;
    std::vector<nvmlProcessInfo_v1_t> infos(count * 2 + 5);
    count = static_cast<unsigned>(infos.size());
    if (nvml.nvmlDeviceGetComputeRunningProcesses_v1(dev, &count, infos.data()) != kNvmlSuccess) return;
    for (unsigned i = 0; i < count && i < infos.size(); ++i) add(infos[i].pid, infos[i].usedGpuMemory);
  }
}

GpuInfo query_nvml_gpu(const NvmlApi& nvml, unsigned index, nvmlDevice_t dev) {
  GpuInfo g;
  g.nvml_index = static_cast<int>(index);
  char buf[256] = {};
  if (nvml.nvmlDeviceGetName && nvml.nvmlDeviceGetName(dev, buf, sizeof buf) == kNvmlSuccess) g.name = buf;
  buf[0] = 0;
  if (nvml.nvmlDeviceGetUUID && nvml.nvmlDeviceGetUUID(dev, buf, sizeof buf) == kNvmlSuccess) g.uuid = buf;
  nvmlPciInfo_t pci{};
  if (nvml.nvmlDeviceGetPciInfo && nvml.nvmlDeviceGetPciInfo(dev, &pci) == kNvmlSuccess) {
    pci.busId[sizeof pci.busId - 1] = 0;
    g.pci_bus_id = normalize_bus_id(pci.busId);
  }
  int major = 0, minor = 0;
  if (nvml.nvmlDeviceGetCudaComputeCapability && nvml.nvmlDeviceGetCudaComputeCapability(dev, &major, &minor) == kNvmlSuccess) {
    g.cc_major = major;
    g.cc_minor = minor;
  }
  nvmlMemory_t mem{};
  if (nvml.nvmlDeviceGetMemoryInfo && nvml.nvmlDeviceGetMemoryInfo(dev, &mem) == kNvmlSuccess) {
    g.memory_total_mib = mem.total >> 20;
    g.memory_used_mib = mem.used >> 20;
  }
  int state = 0;
  if (nvml.nvmlDeviceGetPersistenceMode && nvml.nvmlDeviceGetPersistenceMode(dev, &state) == kNvmlSuccess)
    g.persistence_mode = on_off(state);
  if (nvml.nvmlDeviceGetComputeMode && nvml.nvmlDeviceGetComputeMode(dev, &state) == kNvmlSuccess)
    g.compute_mode = compute_mode_name(state);
  unsigned current = 0, pending = 0;
  if (nvml.nvmlDeviceGetMigMode && nvml.nvmlDeviceGetMigMode(dev, &current, &pending) == kNvmlSuccess)
    g.mig_mode = current ? "enabled" : "disabled";
  unsigned long long ecc = 0;
  trace("name/uuid/pci/cc/memory/modes");
  if (nvml.nvmlDeviceGetTotalEccErrors) {
    if (nvml.nvmlDeviceGetTotalEccErrors(dev, kNvmlErrorUncorrected, kNvmlVolatileEcc, &ecc) == kNvmlSuccess)
      g.ecc_uncorrected_volatile = static_cast<int64_t>(ecc);
    if (nvml.nvmlDeviceGetTotalEccErrors(dev, kNvmlErrorCorrected, kNvmlVolatileEcc, &ecc) == kNvmlSuccess)
      g.ecc_corrected_volatile = static_cast<int64_t>(ecc);
  }
  if (nvml.nvmlDeviceGetRetiredPagesPendingStatus && nvml.nvmlDeviceGetRetiredPagesPendingStatus(dev, &state) == kNvmlSuccess)
    g.retired_pages_pending = state;
  unsigned corr = 0, unc = 0, is_pending = 0, failed = 0;
  if (nvml.nvmlDeviceGetRemappedRows && nvml.nvmlDeviceGetRemappedRows(dev, &corr, &unc, &is_pending, &failed) == kNvmlSuccess) {
    g.remapped_rows_pending = is_pending ? 1 : 0;
    g.remapping_failed = failed ? 1 : 0;
  }
  trace("ecc/retired/remapped");
  unsigned v = 0;
  if (nvml.nvmlDeviceGetCurrPcieLinkGeneration && nvml.nvmlDeviceGetCurrPcieLinkGeneration(dev, &v) == kNvmlSuccess) g.pcie_gen_current = static_cast<int>(v);
  if (nvml.nvmlDeviceGetMaxPcieLinkGeneration && nvml.nvmlDeviceGetMaxPcieLinkGeneration(dev, &v) == kNvmlSuccess) g.pcie_gen_max = static_cast<int>(v);
  if (nvml.nvmlDeviceGetCurrPcieLinkWidth && nvml.nvmlDeviceGetCurrPcieLinkWidth(dev, &v) == kNvmlSuccess) g.pcie_width_current = static_cast<int>(v);
  if (nvml.nvmlDeviceGetMaxPcieLinkWidth && nvml.nvmlDeviceGetMaxPcieLinkWidth(dev, &v) == kNvmlSuccess) g.pcie_width_max = static_cast<int>(v);
  return g;
}

void query_nvml(DriverFacts& out) {
  NvmlApi nvml;
  if (!nvml.load()) {
    out.nvml_error = nvml.error;
    return;
  }
  out.nvml_library = loaded_path(nvml.handle);
  trace("nvml loaded");
  nvmlReturn_t r = nvml.nvmlInit();
  trace("nvmlInit");
  out.nvml_status = r;
  if (r != kNvmlSuccess) {
    out.nvml_error = nvml.error_name(r) + ": " + nvml.error_string(r);
    return;
  }
  char version[96] = {};
  if (nvml.nvmlSystemGetDriverVersion && nvml.nvmlSystemGetDriverVersion(version, sizeof version) == kNvmlSuccess)
    out.nvml_driver_version = version;
  int cuda = 0;
  if (nvml.nvmlSystemGetCudaDriverVersion && nvml.nvmlSystemGetCudaDriverVersion(&cuda) == kNvmlSuccess)
    out.nvml_cuda_driver_version = cuda;
  unsigned count = 0;
  if ((r = nvml.nvmlDeviceGetCount(&count)) != kNvmlSuccess) {
    out.nvml_error = "nvmlDeviceGetCount: " + nvml.error_name(r) + ": " + nvml.error_string(r);
    count = 0;
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t dev = nullptr;
    if ((r = nvml.nvmlDeviceGetHandleByIndex(i, &dev)) != kNvmlSuccess) {
      out.nvml_error = "GPU " + std::to_string(i) + ": " + nvml.error_name(r) + ": " + nvml.error_string(r);
      continue;
    }
    trace("nvmlDeviceGetHandleByIndex");
    out.gpus.push_back(query_nvml_gpu(nvml, i, dev));
    trace("per-GPU queries");
    query_processes(nvml, dev, out.gpus.back().uuid, out);
    trace("processes");
  }
  if (nvml.nvmlShutdown) nvml.nvmlShutdown();
}

// The GPU NVML already knows at this bus id, or a new entry.
GpuInfo& gpu_for_bus(DriverFacts& out, const std::string& bus) {
  for (auto& g : out.gpus)
    if (!bus.empty() && g.pci_bus_id == bus) return g;
  out.gpus.emplace_back();
  out.gpus.back().pci_bus_id = bus;
  return out.gpus.back();
}

void query_cuda_device(const CudaApi& cu, int ordinal, DriverFacts& out) {
  CUdevice dev = 0;
  if (cu.cuDeviceGet(&dev, ordinal) != kCudaSuccess) return;
  char bus[64] = {};
  std::string bus_id;
  if (cu.cuDeviceGetPCIBusId && cu.cuDeviceGetPCIBusId(bus, sizeof bus, dev) == kCudaSuccess) bus_id = normalize_bus_id(bus);
  GpuInfo& g = gpu_for_bus(out, bus_id);
  g.cuda_index = ordinal;
  auto attr = [&](int a) {
    int v = 0;
    return cu.cuDeviceGetAttribute(&v, a, dev) == kCudaSuccess ? v : 0;
  };
  g.cc_major = attr(kAttrComputeCapabilityMajor);
  g.cc_minor = attr(kAttrComputeCapabilityMinor);
  g.multiprocessors = attr(kAttrMultiprocessorCount);
  if (g.name.empty()) {
    char name[256] = {};
    if (cu.cuDeviceGetName(name, sizeof name, dev) == kCudaSuccess) g.name = name;
  }
  size_t total = 0;
  if (g.memory_total_mib == 0 && cu.cuDeviceTotalMem(&total, dev) == kCudaSuccess) g.memory_total_mib = total >> 20;
}

void query_cuda(DriverFacts& out) {
  CudaApi cu;
  if (!cu.load()) {
    out.cu_init_error = cu.error;
    return;
  }
  out.libcuda_loaded = loaded_path(cu.handle);
  int version = 0;
  if (cu.cuDriverGetVersion(&version) == kCudaSuccess) out.cuda_driver_version = version;  // works before cuInit
  trace("libcuda loaded");
  CUresult r = cu.cuInit(0);
  trace("cuInit");
  out.cu_init_status = r;
  if (r != kCudaSuccess) {
    out.cu_init_error = cu.error_name(r) + ": " + cu.error_string(r);
    return;
  }
  int count = 0;
  if (cu.cuDeviceGetCount(&count) != kCudaSuccess) count = 0;
  out.cuda_device_count = count;
  for (int i = 0; i < count; ++i) query_cuda_device(cu, i, out);
}

}  // namespace

std::string normalize_bus_id(std::string_view id) {
  std::string s = to_lower(trim(id));
  auto colon = s.find(':');
  if (colon != std::string::npos && s.find(':', colon + 1) != std::string::npos) {
    std::string domain = s.substr(0, colon);
    if (domain.size() > 4) domain = domain.substr(domain.size() - 4);
    while (domain.size() < 4) domain.insert(domain.begin(), '0');
    s = domain + s.substr(colon);
  } else if (!s.empty()) {
    s = "0000:" + s;  // "3b:00.0"
  }
  return s;
}

namespace {

// Folds the driver API's answer into NVML's, GPU by GPU (matched by PCI bus id).
void merge_cuda(DriverFacts& out, DriverFacts&& cuda) {
  out.libcuda_loaded = std::move(cuda.libcuda_loaded);
  out.cuda_driver_version = cuda.cuda_driver_version;
  out.cu_init_status = cuda.cu_init_status;
  out.cu_init_error = std::move(cuda.cu_init_error);
  out.cuda_device_count = cuda.cuda_device_count;
  for (auto& c : cuda.gpus) {
    GpuInfo& g = gpu_for_bus(out, c.pci_bus_id);
    g.cuda_index = c.cuda_index;
    if (g.cc_major == 0) {
      g.cc_major = c.cc_major;
      g.cc_minor = c.cc_minor;
    }
    if (c.multiprocessors) g.multiprocessors = c.multiprocessors;
    if (g.name.empty()) g.name = std::move(c.name);
    if (g.memory_total_mib == 0) g.memory_total_mib = c.memory_total_mib;
  }
}

}  // namespace

DriverFacts query_driver(const QueryProgress& progress, bool nvml_first) {
  DriverFacts out;
  auto stage = [&](std::string_view s) {
    if (progress.stage) progress.stage(s);
  };
  auto partial = [&] {
    if (progress.partial) progress.partial(out);
  };
  // cuInit (about 0.1 s on an H200) runs beside the NVML queries: the two are
  // independent until their GPUs are matched by bus id, and check waits on both.
  DriverFacts cuda;
  stage("nvml");
  if (nvml_first) {
    query_nvml(out);
    bool enough = out.nvml_status == 0 && !out.gpus.empty() && out.nvml_cuda_driver_version > 0 &&
                  std::all_of(out.gpus.begin(), out.gpus.end(), [](const GpuInfo& g) { return g.cc_major > 0; });
    if (enough) {
      out.cuda_driver_version = out.nvml_cuda_driver_version;
      partial();
      return out;
    }
  }
  std::thread cuda_thread([&] { query_cuda(cuda); });
  if (!nvml_first) query_nvml(out);
  partial();
  stage("cuInit");
  cuda_thread.join();
  merge_cuda(out, std::move(cuda));
  partial();
  return out;
}

}  // namespace cd::gpu
