#include "gpu/driver_query.hpp"

#include <algorithm>
#include <thread>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <climits>
#include <cstdio>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

// One NVML process list (compute or graphics) into `out`. The 24-byte struct for _v3/_v2,
// the 16-byte one for the unsuffixed v1 (nvmlProcessInfo_v1_t vs nvmlProcessInfo_t, NVML API
// Reference): reading one through the other misplaces every entry after the first.
template <typename Info, typename Fn>
void list_processes(Fn fn, nvmlDevice_t dev, const std::string& uuid, const char* type, DriverFacts& out) {
  unsigned count = 0;
  nvmlReturn_t r = fn(dev, &count, nullptr);
  if (r != kNvmlSuccess && r != kNvmlErrorInsufficientSize) return;
  std::vector<Info> infos(count * 2 + 5);  // room for processes that start between the calls
  count = static_cast<unsigned>(infos.size());
  if (fn(dev, &count, infos.data()) != kNvmlSuccess) return;
  for (unsigned i = 0; i < count && i < infos.size(); ++i) {
    GpuProcess p;
    p.pid = static_cast<int>(infos[i].pid);
    p.gpu_uuid = uuid;
    p.type = type;
    unsigned long long used = infos[i].usedGpuMemory;
    p.used_mib = used == ULLONG_MAX ? 0 : used >> 20;  // ULLONG_MAX: not available (WDDM)
    if constexpr (sizeof(Info) == sizeof(nvmlProcessInfo_t)) {
      if (infos[i].gpuInstanceId != 0xFFFFFFFFu) p.gpu_instance_id = static_cast<int>(infos[i].gpuInstanceId);
      if (infos[i].computeInstanceId != 0xFFFFFFFFu) p.compute_instance_id = static_cast<int>(infos[i].computeInstanceId);
    }
    out.processes.push_back(p);
  }
}

void query_processes(const NvmlApi& nvml, nvmlDevice_t dev, const std::string& uuid, DriverFacts& out) {
  if (nvml.nvmlDeviceGetComputeRunningProcesses)
    list_processes<nvmlProcessInfo_t>(nvml.nvmlDeviceGetComputeRunningProcesses, dev, uuid, "compute", out);
  else if (nvml.nvmlDeviceGetComputeRunningProcesses_v1)
    list_processes<nvmlProcessInfo_v1_t>(nvml.nvmlDeviceGetComputeRunningProcesses_v1, dev, uuid, "compute", out);
  if (nvml.nvmlDeviceGetGraphicsRunningProcesses)
    list_processes<nvmlProcessInfo_t>(nvml.nvmlDeviceGetGraphicsRunningProcesses, dev, uuid, "graphics", out);
}

// NVML's buffer of per-process utilization samples: for each listed process of this GPU
// the newest sample with activity, and how far back the buffer reaches.
void query_process_samples(const NvmlApi& nvml, nvmlDevice_t dev, GpuInfo& gpu, DriverFacts& out) {
  if (!nvml.nvmlDeviceGetProcessUtilization) return;
  unsigned count = 0;
  nvmlReturn_t r = nvml.nvmlDeviceGetProcessUtilization(dev, nullptr, &count, 0);
  if ((r != kNvmlSuccess && r != kNvmlErrorInsufficientSize) || count == 0) return;
  std::vector<nvmlProcessUtilizationSample_t> samples(count + 8);
  count = static_cast<unsigned>(samples.size());
  if (nvml.nvmlDeviceGetProcessUtilization(dev, samples.data(), &count, 0) != kNvmlSuccess) return;
  for (unsigned i = 0; i < count && i < samples.size(); ++i) {
    const auto& s = samples[i];
    if (gpu.process_samples_from_us == 0 || s.timeStamp < gpu.process_samples_from_us) gpu.process_samples_from_us = s.timeStamp;
    if (s.smUtil == 0 && s.memUtil == 0) continue;
    for (auto& p : out.processes)
      if (p.gpu_uuid == gpu.uuid && p.pid == static_cast<int>(s.pid) && s.timeStamp > p.last_active_us) {
        p.last_active_us = s.timeStamp;
        p.sm_util = static_cast<int>(s.smUtil);
      }
  }
}

// health: ECC, retired pages, remapped rows and the PCIe link — check's questions, 4 ms of
// the driver's time on an H100 (the uncorrected-ECC count alone 3.3 ms), not ps's or scan's.
GpuInfo query_nvml_gpu(const NvmlApi& nvml, unsigned index, nvmlDevice_t dev, bool health) {
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
  nvmlMemory_v2_t mem2{};
  mem2.version = kNvmlMemoryV2;
  nvmlMemory_t mem{};
  if (nvml.nvmlDeviceGetMemoryInfo_v2 && nvml.nvmlDeviceGetMemoryInfo_v2(dev, &mem2) == kNvmlSuccess) {
    g.memory_total_mib = mem2.total >> 20;
    g.memory_used_mib = mem2.used >> 20;
    g.memory_free_mib = mem2.free >> 20;
    g.memory_reserved_mib = mem2.reserved >> 20;
  } else if (nvml.nvmlDeviceGetMemoryInfo && nvml.nvmlDeviceGetMemoryInfo(dev, &mem) == kNvmlSuccess) {
    g.memory_total_mib = mem.total >> 20;
    g.memory_used_mib = mem.used >> 20;
    g.memory_free_mib = mem.free >> 20;
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
  if (!health) return g;
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

void query_nvml(DriverFacts& out, bool health) {
  NvmlApi nvml;
  if (!nvml.load()) {
    out.nvml_error = nvml.error;
    return;
  }
  out.nvml_library = loaded_path(nvml.handle);
  out.queried_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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
    out.gpus.push_back(query_nvml_gpu(nvml, i, dev, health));
    trace("per-GPU queries");
    size_t before = out.processes.size();
    query_processes(nvml, dev, out.gpus.back().uuid, out);
    trace("process lists");
    // The samples say when each listed process last used the GPU: nothing to ask without one.
    if (out.processes.size() > before) query_process_samples(nvml, dev, out.gpus.back(), out);
    trace("processes");
  }
  // No nvmlShutdown: this runs only in the __driver child, which exits right after its
  // answer; the kernel closes the GPUs' device files then, while the parent goes on
  // (detaching the GPUs here would be waited for).
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

namespace {

// After a failed NVML or cuInit: which /dev/nvidia* nodes cannot be opened, and why. A
// container whose cgroup lost its device rules gets EPERM here although the nodes exist.
std::vector<std::string> device_open_errors() {
  std::vector<std::string> out;
  DIR* dir = opendir("/dev");
  if (!dir) return out;
  std::vector<std::string> names;
  while (dirent* e = readdir(dir))
    if (std::strncmp(e->d_name, "nvidia", 6) == 0 && names.size() < 64) names.emplace_back(e->d_name);
  closedir(dir);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string path = "/dev/" + n;
    if (n == "nvidia-caps" || n == "nvidia-uvm-tools") continue;
    int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
    else out.push_back(path + ": " + std::strerror(errno));
  }
  return out;
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
    query_nvml(out, /*health=*/false);
    bool enough = out.nvml_status == 0 && !out.gpus.empty() && out.nvml_cuda_driver_version > 0 &&
                  std::all_of(out.gpus.begin(), out.gpus.end(), [](const GpuInfo& g) { return g.cc_major > 0; });
    if (enough) {
      out.cuda_driver_version = out.nvml_cuda_driver_version;
      partial();
      return out;
    }
  }
  std::thread cuda_thread([&] { query_cuda(cuda); });
  if (!nvml_first) query_nvml(out, /*health=*/true);
  partial();
  stage("cuInit");
  cuda_thread.join();
  merge_cuda(out, std::move(cuda));
  partial();
  if (out.nvml_status > 0 || out.cu_init_status > 0) {
    stage("device files");
    out.device_open_errors = device_open_errors();
    partial();
  }
  return out;
}

}  // namespace cd::gpu
