// A fake libnvidia-ml.so.1 for fault injection. By default it answers like one NVIDIA H200
// on driver 580.159.04. Behaviour, chosen through the environment:
//   CD_FAKE_NVML_INIT=<code>        nvmlInit_v2 returns <code> (18 = NVML_ERROR_LIB_RM_VERSION_MISMATCH, 9 = driver not loaded …)
//   CD_FAKE_NVML_HANG=1             nvmlInit_v2 never returns
//   CD_FAKE_NVML_CRASH=1            nvmlInit_v2 dies with SIGSEGV
//   CD_FAKE_NVML_DRIVER=<version>   nvmlSystemGetDriverVersion (default 580.159.04)
//   CD_FAKE_NVML_GPUS=<n>           number of GPUs (default 1)
//   CD_FAKE_NVML_PROCESSES=pid:mib[:gpu][,…]  running compute processes (on GPU 0 unless :gpu);
//                                             "@FILE": that list, read from FILE at every call
//   CD_FAKE_NVML_GRAPHICS=pid:mib[:gpu][,…]   running graphics processes
//   CD_FAKE_NVML_ACTIVE=pid:sm:secs_ago[,…]   process utilization samples (SM % at now − secs_ago, GPU 0)
//   CD_FAKE_NVML_WINDOW=<secs>                the sample buffer reaches back that far (an all-zero sample)
//   CD_FAKE_NVML_USED_MIB=<n>                 memory used per GPU (default 512; the _v2 reserve is 300 more)
//   CD_FAKE_NVML_MIG=1                        MIG enabled: processes carry GPU instance 1, compute instance 0
//   CD_FAKE_NVML_ECC_UNCORRECTED=<n>, CD_FAKE_NVML_COMPUTE_MODE=<n>, CD_FAKE_NVML_PERSISTENCE=0|1
//   CD_FAKE_NVML_PCIE=gen,width,maxgen,maxwidth (default 5,16,5,16)
// watch's per-tick readings are scripted per GPU and per call: "v0,v1,…;w0,w1,…" gives GPU 0
// the values v0, v1, … on its successive calls (cycling), GPU 1 the w values; one list without
// ';' applies to every GPU:
//   CD_FAKE_NVML_UTIL (GPU %, default 0), CD_FAKE_NVML_MEM_UTIL (default 0), CD_FAKE_NVML_USED_MIB,
//   CD_FAKE_NVML_POWER_W (default 100), CD_FAKE_NVML_SM_CLOCK (MHz, default 1980),
//   CD_FAKE_NVML_THROTTLE (clock event reason mask, 0x… accepted, default 0),
//   CD_FAKE_NVML_TEMP (°C, default 45); fixed: power limit 700 W, max SM clock 1980 MHz,
//   PCIe throughput rx 1000 / tx 500 KB/s.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/time.h>
#include <vector>
#include <unistd.h>

namespace {

struct Device {
  int index;
};
Device g_devices[8] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

const char* env_str(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

int copy(char* dst, unsigned len, const std::string& s) {
  if (s.size() + 1 > len) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::memcpy(dst, s.c_str(), s.size() + 1);
  return 0;
}

int pcie(int which) {
  int v[4] = {5, 16, 5, 16};
  std::sscanf(env_str("CD_FAKE_NVML_PCIE", "5,16,5,16"), "%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3]);
  return v[which];
}

struct PciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct Memory {
  unsigned long long total, free, used;
};
struct ProcessInfo {  // nvmlProcessInfo_v2_t, what _v3 writes on current drivers
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
};

int index_of(void* dev) { return static_cast<Device*>(dev)->index; }

// The scripted value of `var` for GPU `dev` on this call (see the header). `slot` keeps one
// call counter per variable and GPU.
unsigned long long scripted(const char* var, int dev, int slot, unsigned long long fallback) {
  static unsigned long long calls[16][8];
  std::string spec = env_str(var, "");
  if (spec.empty()) return fallback;
  std::vector<std::string> per_gpu;
  for (size_t at = 0;;) {
    size_t semi = spec.find(';', at);
    per_gpu.push_back(spec.substr(at, semi == std::string::npos ? std::string::npos : semi - at));
    if (semi == std::string::npos) break;
    at = semi + 1;
  }
  const std::string& list = per_gpu.size() == 1 ? per_gpu[0] : static_cast<size_t>(dev) < per_gpu.size() ? per_gpu[static_cast<size_t>(dev)] : per_gpu.back();
  std::vector<unsigned long long> values;
  for (size_t at = 0; at < list.size();) {
    size_t comma = list.find(',', at);
    values.push_back(std::strtoull(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at).c_str(), nullptr, 0));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (values.empty()) return fallback;
  unsigned long long& n = calls[slot & 15][dev & 7];
  return values[n++ % values.size()];
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  if (env_int("CD_FAKE_NVML_HANG", 0))
    for (;;) pause();
  if (env_int("CD_FAKE_NVML_CRASH", 0)) std::raise(SIGSEGV);
  return env_int("CD_FAKE_NVML_INIT", 0);
}
int nvmlShutdown() { return 0; }
const char* nvmlErrorString(int r) {
  switch (r) {
    case 0: return "Success";
    case 9: return "Driver Not Loaded";
    case 18: return "Driver/library version mismatch";
    default: return "Unknown Error";
  }
}
int nvmlSystemGetDriverVersion(char* buf, unsigned len) { return copy(buf, len, env_str("CD_FAKE_NVML_DRIVER", "580.159.04")); }
int nvmlSystemGetCudaDriverVersion_v2(int* v) {
  *v = 13000;
  return 0;
}
int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = static_cast<unsigned>(env_int("CD_FAKE_NVML_GPUS", 1));
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** dev) {
  if (i >= 8) return 2;
  *dev = &g_devices[i];
  return 0;
}
int nvmlDeviceGetName(void*, char* buf, unsigned len) { return copy(buf, len, "NVIDIA H200"); }
int nvmlDeviceGetUUID(void* dev, char* buf, unsigned len) {
  return copy(buf, len, "GPU-fa4e0000-0000-0000-0000-00000000000" + std::to_string(index_of(dev)));
}
int nvmlDeviceGetPciInfo_v3(void* dev, PciInfo* pci) {
  std::memset(pci, 0, sizeof *pci);
  std::snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", 0x3b + index_of(dev));
  pci->pciDeviceId = 0x233510de;
  return 0;
}
int nvmlDeviceGetCudaComputeCapability(void*, int* major, int* minor) {
  *major = 9;
  *minor = 0;
  return 0;
}
int nvmlDeviceGetMemoryInfo(void* dev, Memory* m) {
  m->total = 143771ull << 20;
  m->used = scripted("CD_FAKE_NVML_USED_MIB", index_of(dev), 0, 512) << 20;
  m->free = m->total - m->used;
  return 0;
}
struct MemoryV2 {
  unsigned version;
  unsigned long long total, reserved, free, used;
};
int nvmlDeviceGetMemoryInfo_v2(void* dev, MemoryV2* m) {
  if (m->version != (static_cast<unsigned>(sizeof(MemoryV2)) | (2u << 24))) return 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  m->total = 143771ull << 20;
  m->reserved = 300ull << 20;
  m->used = scripted("CD_FAKE_NVML_USED_MIB", index_of(dev), 1, 512) << 20;
  m->free = m->total - m->used - m->reserved;
  return 0;
}
int nvmlDeviceGetPersistenceMode(void*, int* s) {
  *s = env_int("CD_FAKE_NVML_PERSISTENCE", 1);
  return 0;
}
int nvmlDeviceGetComputeMode(void*, int* m) {
  *m = env_int("CD_FAKE_NVML_COMPUTE_MODE", 0);
  return 0;
}
int nvmlDeviceGetMigMode(void*, unsigned* cur, unsigned* pending) {
  *cur = *pending = env_int("CD_FAKE_NVML_MIG", 0) ? 1u : 0u;
  return 0;
}
int nvmlDeviceGetTotalEccErrors(void*, int type, int, unsigned long long* n) {
  *n = type == 1 ? static_cast<unsigned long long>(env_int("CD_FAKE_NVML_ECC_UNCORRECTED", 0)) : 0;
  return 0;
}
int nvmlDeviceGetRetiredPagesPendingStatus(void*, int*) { return 3; }  // NOT_SUPPORTED on Hopper
int nvmlDeviceGetRemappedRows(void*, unsigned* c, unsigned* u, unsigned* p, unsigned* f) {
  *c = *u = *p = *f = 0;
  return 0;
}
int nvmlDeviceGetCurrPcieLinkGeneration(void*, unsigned* v) { return *v = static_cast<unsigned>(pcie(0)), 0; }
int nvmlDeviceGetCurrPcieLinkWidth(void*, unsigned* v) { return *v = static_cast<unsigned>(pcie(1)), 0; }
int nvmlDeviceGetMaxPcieLinkGeneration(void*, unsigned* v) { return *v = static_cast<unsigned>(pcie(2)), 0; }
int nvmlDeviceGetMaxPcieLinkWidth(void*, unsigned* v) { return *v = static_cast<unsigned>(pcie(3)), 0; }
// "@FILE": the list is read from FILE on every call (a test's command writes its own PID there).
std::string process_spec(const char* var) {
  std::string spec = env_str(var, "");
  if (spec.empty() || spec[0] != '@') return spec;
  std::string text;
  if (FILE* f = std::fopen(spec.c_str() + 1, "r")) {
    char buf[4096];
    size_t n = std::fread(buf, 1, sizeof buf, f);
    std::fclose(f);
    text.assign(buf, n);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}
int list_processes(const char* var, void* dev, unsigned* count, ProcessInfo* infos) {
  std::string spec = process_spec(var);
  bool mig = env_int("CD_FAKE_NVML_MIG", 0) != 0;
  std::vector<ProcessInfo> all;
  for (size_t at = 0; at < spec.size();) {
    size_t comma = spec.find(',', at);
    std::string item = spec.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    unsigned pid = 0;
    unsigned long long mib = 0;
    int gpu = 0;
    if (std::sscanf(item.c_str(), "%u:%llu:%d", &pid, &mib, &gpu) >= 2 && gpu == index_of(dev))
      all.push_back({pid, mib << 20, mig ? 1u : 0xFFFFFFFFu, mig ? 0u : 0xFFFFFFFFu});
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  unsigned n = static_cast<unsigned>(all.size());
  if (*count < n || !infos) {
    *count = n;
    return n ? 7 : 0;
  }
  for (unsigned i = 0; i < n; ++i) infos[i] = all[i];
  *count = n;
  return 0;
}
int nvmlDeviceGetComputeRunningProcesses_v3(void* dev, unsigned* count, ProcessInfo* infos) {
  return list_processes("CD_FAKE_NVML_PROCESSES", dev, count, infos);
}
int nvmlDeviceGetGraphicsRunningProcesses_v3(void* dev, unsigned* count, ProcessInfo* infos) {
  return list_processes("CD_FAKE_NVML_GRAPHICS", dev, count, infos);
}

struct UtilSample {  // nvmlProcessUtilizationSample_t
  unsigned pid;
  unsigned long long timeStamp;
  unsigned smUtil, memUtil, encUtil, decUtil;
};
int nvmlDeviceGetProcessUtilization(void* dev, UtilSample* out, unsigned* count, unsigned long long) {
  timeval tv{};
  gettimeofday(&tv, nullptr);
  unsigned long long now = static_cast<unsigned long long>(tv.tv_sec) * 1000000ull + static_cast<unsigned long long>(tv.tv_usec);
  std::vector<UtilSample> all;
  if (index_of(dev) == 0) {
    if (int window = env_int("CD_FAKE_NVML_WINDOW", 0)) all.push_back({0, now - static_cast<unsigned long long>(window) * 1000000ull, 0, 0, 0, 0});
    std::string spec = env_str("CD_FAKE_NVML_ACTIVE", "");
    for (size_t at = 0; at < spec.size();) {
      size_t comma = spec.find(',', at);
      std::string item = spec.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      unsigned pid = 0, sm = 0;
      unsigned long long ago = 0;
      if (std::sscanf(item.c_str(), "%u:%u:%llu", &pid, &sm, &ago) == 3) all.push_back({pid, now - ago * 1000000ull, sm, 0, 0, 0});
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  }
  unsigned n = static_cast<unsigned>(all.size());
  if (n == 0) return 6;  // NVML_ERROR_NOT_FOUND: no samples
  if (!out || *count < n) {
    *count = n;
    return 7;
  }
  for (unsigned i = 0; i < n; ++i) out[i] = all[i];
  *count = n;
  return 0;
}

struct Utilization {  // nvmlUtilization_t
  unsigned gpu, memory;
};
int nvmlDeviceGetUtilizationRates(void* dev, Utilization* u) {
  u->gpu = static_cast<unsigned>(scripted("CD_FAKE_NVML_UTIL", index_of(dev), 2, 0));
  u->memory = static_cast<unsigned>(scripted("CD_FAKE_NVML_MEM_UTIL", index_of(dev), 3, 0));
  return 0;
}
int nvmlDeviceGetPowerUsage(void* dev, unsigned* mw) {
  *mw = static_cast<unsigned>(scripted("CD_FAKE_NVML_POWER_W", index_of(dev), 4, 100) * 1000);
  return 0;
}
int nvmlDeviceGetEnforcedPowerLimit(void*, unsigned* mw) {
  *mw = 700000;
  return 0;
}
int nvmlDeviceGetClockInfo(void* dev, int type, unsigned* mhz) {
  if (type != 1) return 3;  // only SM clocks scripted
  *mhz = static_cast<unsigned>(scripted("CD_FAKE_NVML_SM_CLOCK", index_of(dev), 5, 1980));
  return 0;
}
int nvmlDeviceGetMaxClockInfo(void*, int type, unsigned* mhz) {
  if (type != 1) return 3;
  *mhz = 1980;
  return 0;
}
int nvmlDeviceGetCurrentClocksEventReasons(void* dev, unsigned long long* reasons) {
  *reasons = scripted("CD_FAKE_NVML_THROTTLE", index_of(dev), 6, 0);
  return 0;
}
int nvmlDeviceGetTemperature(void* dev, int, unsigned* c) {
  *c = static_cast<unsigned>(scripted("CD_FAKE_NVML_TEMP", index_of(dev), 7, 45));
  return 0;
}
int nvmlDeviceGetPcieThroughput(void*, int counter, unsigned* kbs) {
  *kbs = counter == 1 ? 1000 : 500;  // RX_BYTES = 1, TX_BYTES = 0
  return 0;
}

}  // extern "C"
