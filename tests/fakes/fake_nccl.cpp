// A fake libnccl.so.2 for verify's NCCL triage tests. Device pointers are host memory
// (see fake_cuda.cpp). Prints NCCL_DEBUG=INFO-style lines on stdout like real NCCL.
//   CD_FAKE_NCCL=hang    ncclCommInitAll hangs unless NCCL_P2P_DISABLE=1 (an ACS/IOMMU-like P2P hang)
//   CD_FAKE_NCCL=fail    ncclCommInitAll returns ncclSystemError (2) unless NCCL_SHM_DISABLE=1
//   CD_FAKE_NCCL=crash   ncclAllReduce crashes (SIGSEGV)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
struct Comm { int rank, nranks; };
Comm g_comms[16];
bool mode(const char* m) { const char* v = std::getenv("CD_FAKE_NCCL"); return v && !std::strcmp(v, m); }
bool set(const char* var) { const char* v = std::getenv(var); return v && !std::strcmp(v, "1"); }
}  // namespace

extern "C" {
int ncclGetVersion(int* v) { *v = 22803; return 0; }
const char* ncclGetErrorString(int r) { return r == 2 ? "unhandled system error (fake)" : "fake NCCL error"; }
int ncclCommInitAll(Comm** comms, int n, const int*) {
  std::printf("fake:1:1 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\n");
  if (mode("hang") && !set("NCCL_P2P_DISABLE"))
    for (;;) pause();
  if (mode("fail") && !set("NCCL_SHM_DISABLE")) {
    std::printf("fake:1:1 [0] NCCL WARN Error: failed to open shared memory segment /dev/shm/nccl-fake\n");
    std::fflush(stdout);
    return 2;
  }
  const char* via = set("NCCL_P2P_DISABLE") ? (set("NCCL_SHM_DISABLE") ? "NET/Socket/0" : "SHM/direct/direct")
                                            : "P2P/CUMEM/read";
  for (int i = 0; i < n; ++i) {
    g_comms[i] = {i, n};
    comms[i] = &g_comms[i];
    if (n > 1) std::printf("fake:1:1 [%d] NCCL INFO Channel 00/0 : %d[%d] -> %d[%d] via %s\n", i, i, i, (i + 1) % n, (i + 1) % n, via);
  }
  std::fflush(stdout);
  return 0;
}
int ncclCommDestroy(Comm*) { return 0; }
int ncclGroupStart() { return 0; }
int ncclGroupEnd() { return 0; }
int ncclAllReduce(const void* send, void* recv, size_t count, int, int, Comm* c, void*) {
  if (mode("crash")) {
    volatile int* p = nullptr;
    *p = 1;
  }
  if (count * 4 > (64u << 20)) return 0;  // big buffers are never touched (fake_cuda.cpp)
  for (size_t i = 0; i < count; ++i)
    static_cast<float*>(recv)[i] = static_cast<const float*>(send)[i] * static_cast<float>(c->nranks);
  return 0;
}
}
