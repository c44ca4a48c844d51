// verify step "nccl": one process drives every GPU (ncclCommInitAll) and times
// all-reduce (sum, float32) at a ladder of sizes. algbw = bytes / time and
// busbw = algbw * 2(n-1)/n, as nccl-tests define them (reference §A1); host
// wall-clock around `iters` collectives, like nccl-tests. The first size's result is
// checked element by element (every rank sends 1.0, so every element must be n).
#include <chrono>

#include <fmt/format.h>

#include "gpu/cu_util.hpp"
#include "gpu/nccl_api.hpp"
#include "gpu/verify_steps.hpp"

namespace cd::gpu {

namespace {

struct NcclError : CuError {
  NcclError(const NcclApi& api, const char* call, ncclResult r)
      : CuError(call, r, nccl_result_name(r),
                api.ncclGetErrorString ? api.ncclGetErrorString(r) : "NCCL returned an error") {}
};

void nccl_check(const NcclApi& api, ncclResult r, const char* call) {
  if (r != 0) throw NcclError(api, call, r);
}

struct Rank {
  std::unique_ptr<PrimaryContext> ctx;
  std::unique_ptr<DeviceBuffer> send, recv;
  CUstream stream = nullptr;
  ncclComm comm = nullptr;
};

std::string size_text(size_t bytes) {
  if (bytes >= (1u << 30)) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (1u << 20)) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} KiB", bytes >> 10);
}

}  // namespace

int step_nccl(StepSink& sink, const StepOptions& o) {
  CudaApi cu;
  NcclApi nccl;
  std::vector<Rank> ranks;
  sink.begin("NCCL init");
  Stopwatch t;
  int n = 0;
  try {
    cu_init(cu);
    cu_check(cu, cu.cuDeviceGetCount(&n), "cuDeviceGetCount");
  } catch (const CuError& e) {
    sink.step(failed_step("nccl", "NCCL init", "all", e, t.seconds()));
    return 1;
  }
  if (!nccl.load(o.lib_dirs)) {
    sink.step(skipped_step("nccl", "NCCL init", "all",
                           "no usable libnccl.so.2 (torch's nvidia-nccl wheel, a system package or the loader path)" +
                               (nccl.error.empty() ? std::string() : " — " + nccl.error)));
    return 0;
  }
  int version = 0;
  nccl.ncclGetVersion(&version);
  sink.value("nccl_library", nccl.path);
  sink.value("nccl_version", nccl_version_text(version));
  sink.value("nccl_ranks", std::to_string(n));

  std::vector<size_t> sizes = o.nccl_sizes;
  if (sizes.empty()) sizes = {1u << 20, 16u << 20, 256u << 20, 1u << 30};
  size_t max_bytes = *std::max_element(sizes.begin(), sizes.end());
  try {
    ranks.resize(n);
    std::vector<ncclComm> comms(n);
    std::vector<int> devs(n);
    for (int i = 0; i < n; ++i) {
      devs[i] = i;
      ranks[i].ctx = std::make_unique<PrimaryContext>(cu, i);
      ranks[i].send = std::make_unique<DeviceBuffer>(cu, max_bytes);
      ranks[i].recv = std::make_unique<DeviceBuffer>(cu, max_bytes);
      cu_check(cu, cu.cuMemsetD32(ranks[i].send->ptr(), 0x3F800000u, max_bytes / 4), "cuMemsetD32_v2");  // 1.0f
      cu_check(cu, cu.cuStreamCreate(&ranks[i].stream, kStreamNonBlocking), "cuStreamCreate");
    }
    nccl_check(nccl, nccl.ncclCommInitAll(comms.data(), n, devs.data()), "ncclCommInitAll");
    for (int i = 0; i < n; ++i) ranks[i].comm = comms[i];
  } catch (const CuError& e) {
    VerifyStep s = failed_step("nccl", "NCCL init", "all", e, t.seconds());
    if (dynamic_cast<const NcclError*>(&e)) s.finding = nccl_result_finding(e.code);
    sink.step(s);
    return 1;
  }
  sink.step(passed_step("nccl", "NCCL init", "all",
                        fmt::format("NCCL {} ({}), {} rank{} in one process", nccl_version_text(version), nccl.path, n,
                                    n == 1 ? "" : "s"),
                        t.seconds()));

  auto all_reduce = [&](size_t bytes) {
    nccl_check(nccl, nccl.ncclGroupStart(), "ncclGroupStart");
    for (Rank& r : ranks) {
      cu_check(cu, cu.cuCtxSetCurrent(r.ctx->get()), "cuCtxSetCurrent");
      nccl_check(nccl,
                 nccl.ncclAllReduce(reinterpret_cast<const void*>(r.send->ptr()), reinterpret_cast<void*>(r.recv->ptr()),
                                    bytes / 4, kNcclFloat32, kNcclSum, r.comm, r.stream),
                 "ncclAllReduce");
    }
    nccl_check(nccl, nccl.ncclGroupEnd(), "ncclGroupEnd");
  };
  auto wait_all = [&] {
    for (Rank& r : ranks) cu_check(cu, cu.cuStreamSynchronize(r.stream), "cuStreamSynchronize");
  };

  sink.begin("NCCL all-reduce");
  Stopwatch t2;
  bool ok = true;
  try {
    // Correctness on the smallest size: every element of every rank's result must be n.
    size_t check_bytes = *std::min_element(sizes.begin(), sizes.end());
    all_reduce(check_bytes);
    wait_all();
    for (int i = 0; i < n; ++i) {
      std::vector<float> got(check_bytes / 4);
      cu_check(cu, cu.cuCtxSetCurrent(ranks[i].ctx->get()), "cuCtxSetCurrent");
      cu_check(cu, cu.cuMemcpyDtoH(got.data(), ranks[i].recv->ptr(), check_bytes), "cuMemcpyDtoH_v2");
      for (size_t j = 0; j < got.size(); ++j)
        if (got[j] != static_cast<float>(n))
          throw CuError("all-reduce result check", 0, "WRONG_RESULT",
                        fmt::format("rank {} element {} is {}, expected {}", i, j, got[j], n));
    }
    std::string detail = "sum of 1.0 from every rank correct";
    for (size_t bytes : sizes) {
      int iters = bytes >= (256u << 20) ? 5 : 20;
      all_reduce(bytes);  // warm-up
      wait_all();
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) all_reduce(bytes);
      wait_all();
      double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
      double algbw = static_cast<double>(bytes) / 1e9 / sec;
      double busbw = algbw * 2.0 * (n - 1) / n;
      Measurement m;
      m.name = n > 1 ? "nccl_allreduce_busbw" : "nccl_allreduce_algbw";
      m.gpu = fmt::format("{} GPU{}, {}", n, n == 1 ? "" : "s", size_text(bytes));
      m.value = n > 1 ? busbw : algbw;
      m.unit = "GB/s";
      m.note = fmt::format("float32 sum, {:.1f} us, algbw {:.1f} GB/s, busbw {:.1f} GB/s (nccl-tests definitions{})",
                           sec * 1e6, algbw, busbw, n == 1 ? "; busbw is 0 on one rank" : "");
      sink.measurement(m);
      if (bytes == max_bytes) detail += fmt::format("; {} busbw {:.1f} GB/s, algbw {:.1f} GB/s", size_text(bytes), busbw, algbw);
    }
    sink.step(passed_step("nccl", "NCCL all-reduce", "all", detail, t2.seconds()));
  } catch (const CuError& e) {
    VerifyStep s = failed_step("nccl", "NCCL all-reduce", "all", e, t2.seconds());
    if (dynamic_cast<const NcclError*>(&e)) s.finding = nccl_result_finding(e.code);
    sink.step(s);
    ok = false;
  }
  for (Rank& r : ranks)
    if (r.comm && nccl.ncclCommDestroy) nccl.ncclCommDestroy(r.comm);
  return ok ? 0 : 1;
}

}  // namespace cd::gpu
