// A fake libcuda.so.1 for verify's fault-injection tests: "device memory" is host
// memory, the three PTX kernels are emulated on the CPU by name, events report 1 ms.
// Behaviour, chosen by environment variables:
//   CD_FAKE_DEVICES=N          number of GPUs (default 1); CD_FAKE_NAME device name
//   CD_FAKE_FAIL=fn:code       fn (e.g. cuInit, cuModuleLoadDataEx) returns that CUresult
//   CD_FAKE_HANG=fn            fn never returns
//   CD_FAKE_CRASH=fn           fn dereferences a null pointer (SIGSEGV)
//   CD_FAKE_WRONG=1            cd_axpy leaves its last element unwritten
//   CD_FAKE_JIT_CACHE=1        cuInit and cuModuleLoadDataEx write $HOME/.nv/ComputeCache/index, as the
//                              real driver's JIT cache does, unless CUDA_CACHE_DISABLE=1
// Buffers above 64 MiB are reserved but never touched (copies/kernels on them are skipped),
// so "bandwidth" runs cost nothing.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace {

constexpr size_t kReal = 64u << 20;
std::map<uint64_t, size_t> g_allocs;  // address -> size (for cuMemFree)

bool is(const char* var, const char* fn) {
  const char* v = std::getenv(var);
  return v && std::strcmp(v, fn) == 0;
}

// Fault injection at the top of every entry point; returns a CUresult to return, or 0.
int fault(const char* fn) {
  if (is("CD_FAKE_HANG", fn))
    for (;;) pause();
  if (is("CD_FAKE_CRASH", fn)) {
    volatile int* p = nullptr;
    *p = 1;
  }
  if (const char* f = std::getenv("CD_FAKE_FAIL")) {
    size_t n = std::strlen(fn);
    if (std::strncmp(f, fn, n) == 0 && f[n] == ':') return std::atoi(f + n + 1);
  }
  return 0;
}

// The real driver keeps JIT results in ~/.nv/ComputeCache unless CUDA_CACHE_DISABLE=1.
void jit_cache_write() {
  const char* home = std::getenv("HOME");
  const char* off = std::getenv("CUDA_CACHE_DISABLE");
  if (!std::getenv("CD_FAKE_JIT_CACHE") || !home || (off && std::strcmp(off, "1") == 0)) return;
  std::string dir = std::string(home) + "/.nv";
  mkdir(dir.c_str(), 0700);
  dir += "/ComputeCache";
  mkdir(dir.c_str(), 0700);
  if (FILE* f = std::fopen((dir + "/index").c_str(), "a")) std::fclose(f);
}

int devices() {
  const char* v = std::getenv("CD_FAKE_DEVICES");
  return v ? std::atoi(v) : 1;
}

// Work on more than 64 MiB is skipped: mappings are MAP_NORESERVE, only touched pages cost.
bool real(uint64_t, size_t bytes) { return bytes <= kReal; }

struct Func { const char* name; };
Func g_copy{"cd_copy_v4"}, g_fill{"cd_fill"}, g_axpy{"cd_axpy"};
int g_module, g_ctx[16], g_event, g_stream;

uint32_t fill_value(uint64_t i, uint32_t seed, uint32_t a, uint32_t o) {
  uint32_t x = static_cast<uint32_t>(i) * 0x9E3779B1u + seed;
  x ^= x >> 16; x *= 0x85EBCA6Bu; x ^= x >> 13; x *= 0xC2B2AE35u; x ^= x >> 16;
  return (x & a) | o;
}

template <class T> T arg(void** params, int i) { return *static_cast<T*>(params[i]); }

}  // namespace

#define F(name) extern "C" int name
#define CHECK(name) if (int r = fault(#name)) return r

F(cuInit)(unsigned) { CHECK(cuInit); jit_cache_write(); return 0; }
F(cuDriverGetVersion)(int* v) { CHECK(cuDriverGetVersion); *v = 13000; return 0; }
F(cuDeviceGetCount)(int* n) { CHECK(cuDeviceGetCount); *n = devices(); return 0; }
F(cuDeviceGet)(int* d, int i) { CHECK(cuDeviceGet); if (i >= devices()) return 101; *d = i; return 0; }
F(cuDeviceGetName)(char* s, int len, int) {
  CHECK(cuDeviceGetName);
  const char* n = std::getenv("CD_FAKE_NAME");
  std::snprintf(s, len, "%s", n ? n : "NVIDIA Fake GPU");
  return 0;
}
F(cuDeviceGetAttribute)(int* v, int attr, int) {
  CHECK(cuDeviceGetAttribute);
  *v = attr == 75 ? 9 : attr == 76 ? 0 : attr == 16 ? 4 : 1;
  return 0;
}
F(cuDeviceTotalMem_v2)(size_t* b, int) { *b = 1ull << 30; return 0; }
F(cuDeviceGetPCIBusId)(char* s, int len, int d) { std::snprintf(s, len, "0000:%02x:00.0", 0x10 + d); return 0; }
F(cuDeviceGetUuid_v2)(unsigned char* u, int d) { std::memset(u, d, 16); return 0; }
F(cuGetErrorName)(int, const char**) { return 1; }    // unknown to the fake: the tool's table answers
F(cuGetErrorString)(int, const char**) { return 1; }
F(cuDevicePrimaryCtxRetain)(void** c, int d) { CHECK(cuDevicePrimaryCtxRetain); *c = &g_ctx[d]; return 0; }
F(cuDevicePrimaryCtxRelease_v2)(int) { return 0; }
F(cuCtxSetCurrent)(void*) { return 0; }
F(cuCtxSynchronize)() { CHECK(cuCtxSynchronize); return 0; }
F(cuCtxEnablePeerAccess)(void*, unsigned) { return 0; }
F(cuDeviceCanAccessPeer)(int* can, int, int) { *can = 1; return 0; }
F(cuModuleLoadDataEx)(void** m, const void* image, unsigned, int*, void**) {
  CHECK(cuModuleLoadDataEx);
  jit_cache_write();
  if (!std::strstr(static_cast<const char*>(image), ".entry cd_copy_v4")) return 218;
  *m = &g_module;
  return 0;
}
F(cuModuleGetFunction)(void** f, void*, const char* name) {
  CHECK(cuModuleGetFunction);
  *f = !std::strcmp(name, "cd_copy_v4") ? &g_copy : !std::strcmp(name, "cd_fill") ? &g_fill : &g_axpy;
  return 0;
}
F(cuModuleUnload)(void*) { return 0; }
F(cuLaunchKernel)(Func* f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void** p,
                  void**) {
  CHECK(cuLaunchKernel);
  if (f == &g_axpy) {
    auto out = reinterpret_cast<uint32_t*>(arg<uint64_t>(p, 0));
    auto x = reinterpret_cast<uint32_t*>(arg<uint64_t>(p, 1));
    auto y = reinterpret_cast<uint32_t*>(arg<uint64_t>(p, 2));
    uint64_t n = arg<uint64_t>(p, 3);
    uint32_t a = arg<uint32_t>(p, 4);
    if (!real(reinterpret_cast<uint64_t>(out), n * 4)) return 0;
    if (std::getenv("CD_FAKE_WRONG")) --n;
    for (uint64_t i = 0; i < n; ++i) out[i] = a * x[i] + y[i];
  } else if (f == &g_fill) {
    auto out = reinterpret_cast<uint32_t*>(arg<uint64_t>(p, 0));
    uint64_t n = arg<uint64_t>(p, 1);
    if (!real(reinterpret_cast<uint64_t>(out), n * 4)) return 0;
    for (uint64_t i = 0; i < n; ++i) out[i] = fill_value(i, arg<uint32_t>(p, 2), arg<uint32_t>(p, 3), arg<uint32_t>(p, 4));
  } else {
    uint64_t n16 = arg<uint64_t>(p, 2);
    if (real(arg<uint64_t>(p, 0), n16 * 16))
      std::memcpy(reinterpret_cast<void*>(arg<uint64_t>(p, 0)), reinterpret_cast<void*>(arg<uint64_t>(p, 1)), n16 * 16);
  }
  return 0;
}
F(cuMemGetInfo_v2)(size_t* free_b, size_t* total) { *free_b = 3ull << 30; *total = 4ull << 30; return 0; }
F(cuMemAlloc_v2)(uint64_t* p, size_t bytes) {
  CHECK(cuMemAlloc_v2);
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return 2;
  *p = reinterpret_cast<uint64_t>(m);
  g_allocs[*p] = bytes;
  return 0;
}
F(cuMemFree_v2)(uint64_t p) {
  auto it = g_allocs.find(p);
  if (it != g_allocs.end()) munmap(reinterpret_cast<void*>(p), it->second), g_allocs.erase(it);
  return 0;
}
F(cuMemHostAlloc)(void** p, size_t bytes, unsigned) { *p = std::malloc(bytes); return 0; }
F(cuMemFreeHost)(void* p) { std::free(p); return 0; }
F(cuMemsetD32_v2)(uint64_t p, unsigned v, size_t n) {
  CHECK(cuMemsetD32_v2);
  for (size_t i = 0; i < n && i < kReal / 4; ++i) reinterpret_cast<uint32_t*>(p)[i] = v;  // first 64 MiB only
  return 0;
}
F(cuMemcpyHtoD_v2)(uint64_t d, const void* h, size_t n) { if (real(d, n)) std::memcpy(reinterpret_cast<void*>(d), h, n); return 0; }
F(cuMemcpyDtoH_v2)(void* h, uint64_t d, size_t n) { if (real(d, n)) std::memcpy(h, reinterpret_cast<void*>(d), n); return 0; }
F(cuMemcpyDtoDAsync_v2)(uint64_t, uint64_t, size_t, void*) { CHECK(cuMemcpyDtoDAsync_v2); return 0; }
F(cuMemcpyHtoDAsync_v2)(uint64_t, const void*, size_t, void*) { return 0; }
F(cuMemcpyDtoHAsync_v2)(void*, uint64_t, size_t, void*) { return 0; }
F(cuMemcpyPeerAsync)(uint64_t, void*, uint64_t, void*, size_t, void*) { CHECK(cuMemcpyPeerAsync); return 0; }
F(cuStreamCreate)(void** s, unsigned) { *s = &g_stream; return 0; }
F(cuStreamDestroy_v2)(void*) { return 0; }
F(cuStreamSynchronize)(void*) { CHECK(cuStreamSynchronize); return 0; }
F(cuEventCreate)(void** e, unsigned) { *e = &g_event; return 0; }
F(cuEventDestroy_v2)(void*) { return 0; }
F(cuEventRecord)(void*, void*) { return 0; }
F(cuEventSynchronize)(void*) { CHECK(cuEventSynchronize); return 0; }
F(cuEventElapsedTime)(float* ms, void*, void*) { *ms = 1.0f; return 0; }
