// verify step "devices": the driver loads and initialises, and every visible GPU
// answers the basic queries. PCIe link generation/width come from NVML when present.
#include <dlfcn.h>

#include <cctype>

#include "gpu/cu_util.hpp"
#include "gpu/nvml_api.hpp"
#include "gpu/verify_steps.hpp"

namespace cd::gpu {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "0000:19:00.0" and "00000000:19:00.0" name the same GPU: compare after the domain.
std::string bus_key(const std::string& id) {
  size_t colon = id.find(':');
  return lower(colon == std::string::npos ? id : id.substr(colon + 1));
}

std::string uuid_text(const CUuuid& u) {
  static const char* hex = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += hex[u.bytes[i] >> 4];
    s += hex[u.bytes[i] & 15];
  }
  return s;
}

VerifyGpu query_gpu(const CudaApi& api, int index) {
  VerifyGpu g;
  g.index = index;
  CUdevice dev = 0;
  cu_check(api, api.cuDeviceGet(&dev, index), "cuDeviceGet");
  char name[256] = {};
  cu_check(api, api.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
  g.name = name;
  int major = 0, minor = 0;
  cu_check(api, api.cuDeviceGetAttribute(&major, kAttrComputeCapabilityMajor, dev), "cuDeviceGetAttribute");
  cu_check(api, api.cuDeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, dev), "cuDeviceGetAttribute");
  g.cc = std::to_string(major) + "." + std::to_string(minor);
  cu_check(api, api.cuDeviceGetAttribute(&g.sm_count, kAttrMultiprocessorCount, dev), "cuDeviceGetAttribute");
  size_t total = 0;
  cu_check(api, api.cuDeviceTotalMem(&total, dev), "cuDeviceTotalMem_v2");
  g.total_mem_gib = static_cast<double>(total) / (1ull << 30);
  char bus[64] = {};
  if (api.cuDeviceGetPCIBusId && api.cuDeviceGetPCIBusId(bus, sizeof bus, dev) == kCudaSuccess) g.pci_bus_id = bus;
  CUuuid uuid{};
  if (api.cuDeviceGetUuid && api.cuDeviceGetUuid(&uuid, dev) == kCudaSuccess) g.uuid = uuid_text(uuid);
  return g;
}

// Fills pcie_* from NVML, matching GPUs by PCI bus id (CUDA and NVML may order them
// differently). Quietly leaves zeros when NVML is absent.
void add_pcie_links(std::vector<VerifyGpu>& gpus) {
  NvmlApi nvml;
  if (!nvml.load() || nvml.nvmlInit() != 0) return;
  unsigned count = 0;
  if (nvml.nvmlDeviceGetCount(&count) == 0 && nvml.nvmlDeviceGetHandleByIndex && nvml.nvmlDeviceGetPciInfo) {
    for (unsigned i = 0; i < count; ++i) {
      nvmlDevice_t d = nullptr;
      nvmlPciInfo_t pci{};
      if (nvml.nvmlDeviceGetHandleByIndex(i, &d) != 0 || nvml.nvmlDeviceGetPciInfo(d, &pci) != 0) continue;
      for (VerifyGpu& g : gpus) {
        if (g.pci_bus_id.empty() || bus_key(g.pci_bus_id) != bus_key(pci.busId)) continue;
        auto get = [&](auto fn, int& out) {
          unsigned v = 0;
          if (fn && fn(d, &v) == 0) out = static_cast<int>(v);
        };
        get(nvml.nvmlDeviceGetCurrPcieLinkGeneration, g.pcie_gen);
        get(nvml.nvmlDeviceGetCurrPcieLinkWidth, g.pcie_width);
        get(nvml.nvmlDeviceGetMaxPcieLinkGeneration, g.pcie_max_gen);
        get(nvml.nvmlDeviceGetMaxPcieLinkWidth, g.pcie_max_width);
      }
    }
  }
  if (nvml.nvmlShutdown) nvml.nvmlShutdown();
}

std::string library_file(void* symbol, const std::string& fallback) {
  Dl_info info{};
  if (symbol && dladdr(symbol, &info) && info.dli_fname) return info.dli_fname;
  return fallback;
}

}  // namespace

int step_devices(StepSink& sink, const StepOptions&) {
  CudaApi api;
  Stopwatch t;
  sink.begin("cuInit");
  try {
    cu_init(api);
  } catch (const CuError& e) {
    sink.value("libcuda", api.path);
    sink.step(failed_step("driver", "cuInit", "", e, t.seconds()));
    return 1;
  }
  sink.value("libcuda", library_file(reinterpret_cast<void*>(api.cuInit), api.path));
  int version = 0;
  api.cuDriverGetVersion(&version);
  sink.value("driver_cuda_version", std::to_string(version));
  sink.step(passed_step("driver", "cuInit", "",
                        "driver supports CUDA " + std::to_string(version / 1000) + "." +
                            std::to_string(version % 1000 / 10),
                        t.seconds()));

  Stopwatch t2;
  sink.begin("devices");
  std::vector<VerifyGpu> gpus;
  try {
    int count = 0;
    cu_check(api, api.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0) throw CuError("cuDeviceGetCount", 100, "CUDA_ERROR_NO_DEVICE", "the driver reports 0 devices");
    for (int i = 0; i < count; ++i) gpus.push_back(query_gpu(api, i));
  } catch (const CuError& e) {
    sink.step(failed_step("device", "devices", "", e, t2.seconds()));
    return 1;
  }
  add_pcie_links(gpus);
  for (const VerifyGpu& g : gpus) sink.gpu(g);
  std::string detail = std::to_string(gpus.size()) + " GPU" + (gpus.size() == 1 ? "" : "s") + ": " + gpus[0].name;
  sink.step(passed_step("device", "devices", "all", detail, t2.seconds()));
  return 0;
}

}  // namespace cd::gpu
