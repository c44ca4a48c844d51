// verify step "p2p": which GPU pairs can access each other (cuDeviceCanAccessPeer)
// and the unidirectional copy bandwidth of every capable pair (cuMemcpyPeerAsync
// timed with events, 256 MiB × iterations; bytes moved once, not read + write).
#include <fmt/format.h>

#include "gpu/cu_util.hpp"
#include "gpu/verify_steps.hpp"

namespace cd::gpu {

int step_p2p(StepSink& sink, const StepOptions& o) {
  CudaApi cu;
  sink.begin("P2P access");
  Stopwatch t;
  int n = 0;
  std::vector<std::unique_ptr<PrimaryContext>> ctx;
  std::string matrix;  // "1,0;0,1" rows per GPU
  try {
    cu_init(cu);
    cu_check(cu, cu.cuDeviceGetCount(&n), "cuDeviceGetCount");
    cu_need(cu.cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer");
    for (int i = 0; i < n; ++i) ctx.push_back(std::make_unique<PrimaryContext>(cu, i));
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        int can = i == j ? 1 : 0;
        if (i != j) cu_check(cu, cu.cuDeviceCanAccessPeer(&can, ctx[i]->device(), ctx[j]->device()), "cuDeviceCanAccessPeer");
        matrix += fmt::format("{}{}", j ? "," : "", can);
      }
      matrix += i + 1 < n ? ";" : "";
    }
  } catch (const CuError& e) {
    sink.step(failed_step("device", "P2P access", "all", e, t.seconds()));
    return 1;
  }
  sink.value("p2p", matrix);
  if (n < 2) {
    sink.step(skipped_step("device", "P2P access", "all", "one GPU: no peer to reach"));
    return 0;
  }
  sink.step(passed_step("device", "P2P access", "all", "matrix " + matrix, t.seconds()));

  sink.begin("P2P bandwidth");
  Stopwatch t2;
  const size_t bytes = o.quick ? (64u << 20) : (256u << 20);
  const int iters = o.quick ? 3 : 10;
  std::string detail;
  try {
    cu_need(cu.cuMemcpyPeerAsync, "cuMemcpyPeerAsync");
    std::vector<std::unique_ptr<DeviceBuffer>> buf;
    for (int i = 0; i < n; ++i) {
      cu_check(cu, cu.cuCtxSetCurrent(ctx[i]->get()), "cuCtxSetCurrent");
      buf.push_back(std::make_unique<DeviceBuffer>(cu, bytes));
    }
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        int can = 0;
        if (i == j || cu.cuDeviceCanAccessPeer(&can, ctx[i]->device(), ctx[j]->device()) != kCudaSuccess || !can)
          continue;
        cu_check(cu, cu.cuCtxSetCurrent(ctx[i]->get()), "cuCtxSetCurrent");
        CUresult r = cu.cuCtxEnablePeerAccess ? cu.cuCtxEnablePeerAccess(ctx[j]->get(), 0) : 0;
        if (r != kCudaSuccess && r != 704) cu_check(cu, r, "cuCtxEnablePeerAccess");  // 704: already enabled
        EventTimer timer(cu);
        auto copy = [&] {
          cu_check(cu, cu.cuMemcpyPeerAsync(buf[j]->ptr(), ctx[j]->get(), buf[i]->ptr(), ctx[i]->get(), bytes, nullptr),
                   "cuMemcpyPeerAsync");
        };
        copy();
        timer.start();
        for (int k = 0; k < iters; ++k) copy();
        double ms = timer.stop_ms();
        Measurement m;
        m.name = "p2p_copy";
        m.gpu = fmt::format("{}->{}", i, j);
        m.value = static_cast<double>(bytes) * iters / (ms / 1e3) / 1e9;
        m.unit = "GB/s";
        m.note = fmt::format("cuMemcpyPeerAsync {} MiB, unidirectional", bytes >> 20);
        sink.measurement(m);
        detail += fmt::format("{}{}->{} {:.0f}", detail.empty() ? "GB/s: " : ", ", i, j, m.value);
      }
    }
  } catch (const CuError& e) {
    sink.step(failed_step("device", "P2P bandwidth", "all", e, t2.seconds()));
    return 1;
  }
  sink.step(passed_step("device", "P2P bandwidth", "all", detail.empty() ? "no peer-capable pair" : detail, t2.seconds()));
  return 0;
}

}  // namespace cd::gpu
