// verify step "device": on one GPU, prove the primary context, the PTX JIT, kernel
// correctness (random inputs, poisoned outputs, every element compared), a large
// allocation, and measure device-memory and host<->device bandwidth.
#include <cstdlib>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "gpu/cu_util.hpp"
#include "gpu/kernels.hpp"
#include "gpu/ptx_kernels.hpp"
#include "gpu/verify_steps.hpp"

namespace cd::gpu {

namespace {

constexpr unsigned kPoison = 0xDEADBEEFu;

void sync(const CudaApi& api) { ctx_sync(api); }

void poison(const CudaApi& api, CUdeviceptr p, size_t words) {
  cu_check(api, api.cuMemsetD32(p, kPoison, words), "cuMemsetD32_v2");
}

std::vector<std::uint32_t> download(const CudaApi& api, CUdeviceptr p, size_t words) {
  std::vector<std::uint32_t> v(words);
  cu_check(api, api.cuMemcpyDtoH(v.data(), p, words * 4), "cuMemcpyDtoH_v2");
  return v;
}

// Index of the first element that differs, or -1. (Every element is compared.)
template <class Expected>
long long first_mismatch(const std::vector<std::uint32_t>& got, Expected expected) {
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != expected(i)) return static_cast<long long>(i);
  return -1;
}

std::string mismatch_text(const char* kernel, long long i, std::uint32_t got, std::uint32_t want) {
  return fmt::format("{}: element {} is {:#010x}, expected {:#010x}{}", kernel, i, got, want,
                     got == kPoison ? " (never written: the kernel did not run there)" : "");
}

// Three kernels on random inputs into poisoned outputs; every element checked.
std::string check_kernels(const CudaApi& api, const Kernels& k, size_t n, unsigned grid) {
  std::vector<std::uint32_t> x(n), y(n);
  std::mt19937 rng(12345);
  for (size_t i = 0; i < n; ++i) x[i] = rng(), y[i] = rng();
  DeviceBuffer dx(api, n * 4), dy(api, n * 4), dout(api, n * 4);
  cu_check(api, api.cuMemcpyHtoD(dx.ptr(), x.data(), n * 4), "cuMemcpyHtoD_v2");
  cu_check(api, api.cuMemcpyHtoD(dy.ptr(), y.data(), n * 4), "cuMemcpyHtoD_v2");
  std::uint64_t n64 = n, n16 = n / 4;
  std::uint32_t a = 2654435761u, seed = 777, and_mask = 0xFFFFFFFFu, or_mask = 0;
  CUdeviceptr out = dout.ptr(), px = dx.ptr(), py = dy.ptr();

  poison(api, out, n);
  launch(api, k.axpy, grid, 256, {&out, &px, &py, &n64, &a});
  sync(api);
  auto got = download(api, out, n);
  long long bad = first_mismatch(got, [&](size_t i) { return a * x[i] + y[i]; });
  if (bad >= 0) return mismatch_text("cd_axpy", bad, got[bad], a * x[bad] + y[bad]);

  poison(api, out, n);
  launch(api, k.fill, grid, 256, {&out, &n64, &seed, &and_mask, &or_mask});
  sync(api);
  got = download(api, out, n);
  bad = first_mismatch(got, [&](size_t i) { return host_fill_value(i, seed, and_mask, or_mask); });
  if (bad >= 0) return mismatch_text("cd_fill", bad, got[bad], host_fill_value(bad, seed, and_mask, or_mask));

  poison(api, out, n);
  launch(api, k.copy, grid, 256, {&out, &px, &n16});
  sync(api);
  got = download(api, out, n);
  bad = first_mismatch(got, [&](size_t i) { return x[i]; });
  if (bad >= 0) return mismatch_text("cd_copy_v4", bad, got[bad], x[bad]);
  return "";
}

Measurement bandwidth(std::string name, int dev, double bytes_per_iter, int iters, double ms, std::string note) {
  Measurement m;
  m.name = std::move(name);
  m.gpu = gpu_label(dev);
  m.value = bytes_per_iter * iters / (ms / 1e3) / 1e9;
  m.unit = "GB/s";
  m.note = std::move(note);
  return m;
}

// Copy kernel over `bytes`: a few launch shapes, best kept (read + write counted).
Measurement copy_kernel_bandwidth(const CudaApi& api, const Kernels& k, CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                  int sms, int iters, bool quick, StepSink& sink, int dev) {
  struct Shape { unsigned blocks_per_sm, threads; };
  std::vector<Shape> shapes = quick ? std::vector<Shape>{{8, 512}}
                                    : std::vector<Shape>{{4, 512}, {8, 512}, {16, 256}, {32, 512}};
  std::uint64_t n16 = bytes / 16;
  EventTimer timer(api);
  Measurement best;
  bool trials = std::getenv("CD_VERIFY_COPY_TRIALS") != nullptr;  // bench: report every shape
  for (Shape s : shapes) {
    unsigned grid = s.blocks_per_sm * static_cast<unsigned>(sms);
    launch(api, k.copy, grid, s.threads, {&dst, &src, &n16});  // warm-up
    timer.start();
    for (int i = 0; i < iters; ++i) launch(api, k.copy, grid, s.threads, {&dst, &src, &n16});
    double ms = timer.stop_ms();
    Measurement m = bandwidth("dtod_copy_kernel", dev, 2.0 * bytes, iters, ms,
                              fmt::format("PTX copy kernel, bytes read + written counted, {} MiB, {}x{} threads",
                                          bytes >> 20, grid, s.threads));
    if (trials) sink.measurement(m);
    if (m.value > best.value) best = m;
  }
  return best;
}

Measurement memcpy_bandwidth(const CudaApi& api, CUdeviceptr dst, CUdeviceptr src, size_t bytes, int iters, int dev) {
  cu_need(api.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  EventTimer timer(api);
  cu_check(api, api.cuMemcpyDtoDAsync(dst, src, bytes, nullptr), "cuMemcpyDtoDAsync_v2");
  timer.start();
  for (int i = 0; i < iters; ++i)
    cu_check(api, api.cuMemcpyDtoDAsync(dst, src, bytes, nullptr), "cuMemcpyDtoDAsync_v2");
  double ms = timer.stop_ms();
  return bandwidth("dtod_memcpy", dev, 2.0 * bytes, iters, ms,
                   fmt::format("cuMemcpyDtoDAsync (copy engine), bytes read + written counted, {} MiB", bytes >> 20));
}

// Pinned host memory to and from the GPU, each direction alone.
std::vector<Measurement> host_bandwidth(const CudaApi& api, CUdeviceptr dev_buf, size_t bytes, int iters, int dev) {
  cu_need(api.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  cu_need(api.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  PinnedBuffer host(api, bytes);
  std::memset(host.ptr(), 0x5a, bytes);
  EventTimer timer(api);
  std::vector<Measurement> out(2);
  for (bool to_device : {true, false, true, false}) {  // two rounds, best kept: the first copies map the pages
    auto copy = [&] {
      CUresult r = to_device ? api.cuMemcpyHtoDAsync(dev_buf, host.ptr(), bytes, nullptr)
                             : api.cuMemcpyDtoHAsync(host.ptr(), dev_buf, bytes, nullptr);
      cu_check(api, r, to_device ? "cuMemcpyHtoDAsync_v2" : "cuMemcpyDtoHAsync_v2");
    };
    copy();  // warm-up
    timer.start();
    for (int i = 0; i < iters; ++i) copy();
    double ms = timer.stop_ms();
    Measurement m = bandwidth(to_device ? "htod_pinned" : "dtoh_pinned", dev, static_cast<double>(bytes), iters, ms,
                              fmt::format("pinned host memory, {} MiB per copy, best of 2 rounds", bytes >> 20));
    Measurement& best = out[to_device ? 0 : 1];
    if (m.value > best.value) best = m;
  }
  return out;
}

// Runs `fn` as one named step: pass with its detail, or fail with the CUresult.
template <class Fn>
bool run_step(StepSink& sink, const char* layer, const char* name, int dev, Fn fn) {
  sink.begin(name);
  Stopwatch t;
  try {
    std::string detail = fn();
    sink.step(passed_step(layer, name, gpu_label(dev), detail, t.seconds()));
    return true;
  } catch (const CuError& e) {
    sink.step(failed_step(layer, name, gpu_label(dev), e, t.seconds()));
    return false;
  }
}

}  // namespace

int step_device(StepSink& sink, const StepOptions& o) {
  CudaApi api;
  const int dev = o.device;
  std::unique_ptr<PrimaryContext> ctx;
  int sms = 0;
  size_t free_bytes = 0, total_bytes = 0;
  bool ok = run_step(sink, "device", "context", dev, [&] {
    cu_init(api);
    ctx = std::make_unique<PrimaryContext>(api, dev);
    cu_check(api, api.cuDeviceGetAttribute(&sms, kAttrMultiprocessorCount, ctx->device()), "cuDeviceGetAttribute");
    cu_need(api.cuMemGetInfo, "cuMemGetInfo_v2");
    cu_check(api, api.cuMemGetInfo(&free_bytes, &total_bytes), "cuMemGetInfo_v2");
    return fmt::format("primary context; {:.1f} of {:.1f} GiB free", free_bytes / 1073741824.0,
                       total_bytes / 1073741824.0);
  });
  if (!ok) return 1;

  Kernels k;
  ok = run_step(sink, "device", "PTX JIT", dev, [&] {
    k = load_kernels(api);
    return std::string("driver JIT-compiled the embedded PTX (ISA 7.0) for this GPU");
  });
  if (!ok) return 1;

  const unsigned grid = 4u * static_cast<unsigned>(sms);
  const size_t check_words = o.quick ? (4u << 20) : (16u << 20);
  ok = run_step(sink, "device", "kernel correctness", dev, [&]() -> std::string {
    std::string bad = check_kernels(api, k, check_words, grid);
    if (!bad.empty()) throw CuError("result check", 0, "WRONG_RESULT", bad);
    return fmt::format("3 kernels, {} M elements each, every element matches", check_words >> 20);
  });
  if (!ok) return 1;

  // Bandwidth first: the large allocation's free makes the driver busy for a while
  // (measured on the H200: copies right after it ran ~10% slower).
  const size_t bw_bytes = o.quick ? (512ull << 20) : (2ull << 30);
  std::unique_ptr<DeviceBuffer> src, dst;
  try {
    src = std::make_unique<DeviceBuffer>(api, bw_bytes);
    dst = std::make_unique<DeviceBuffer>(api, bw_bytes);
  } catch (const CuError& e) {
    sink.step(failed_step("device", "memory bandwidth", gpu_label(dev), e, 0));
    return 1;
  }

  ok = run_step(sink, "device", "memory bandwidth", dev, [&] {
    std::uint64_t words = bw_bytes / 4;
    std::uint32_t seed = 1, all = 0xFFFFFFFFu, none = 0;
    CUdeviceptr s = src->ptr();
    launch(api, k.fill, 8u * sms, 256, {&s, &words, &seed, &all, &none});
    int iters = o.quick ? 5 : 20;
    Measurement kern = copy_kernel_bandwidth(api, k, dst->ptr(), src->ptr(), bw_bytes, sms, iters, o.quick, sink, dev);
    Measurement ce = memcpy_bandwidth(api, dst->ptr(), src->ptr(), bw_bytes, iters, dev);
    sink.measurement(kern);
    sink.measurement(ce);
    return fmt::format("copy kernel {:.0f} GB/s, cuMemcpyDtoD {:.0f} GB/s (read + write)", kern.value, ce.value);
  });

  ok &= run_step(sink, "device", "host bandwidth", dev, [&] {
    size_t bytes = o.quick ? (64ull << 20) : (256ull << 20);
    auto ms = host_bandwidth(api, dst->ptr(), bytes, o.quick ? 5 : 10, dev);
    for (const Measurement& m : ms) sink.measurement(m);
    return fmt::format("host->device {:.1f} GB/s, device->host {:.1f} GB/s (pinned)", ms[0].value, ms[1].value);
  });
  ok &= run_step(sink, "device", "memory allocation", dev, [&] {
    size_t now_free = 0, total = 0;
    cu_check(api, api.cuMemGetInfo(&now_free, &total), "cuMemGetInfo_v2");
    size_t big = static_cast<size_t>(static_cast<double>(now_free) * 0.9) & ~size_t{0xFFFFF};
    Stopwatch t;
    DeviceBuffer large(api, big);
    poison(api, large.ptr(), big / 4);  // touch every page
    sync(api);
    return fmt::format("allocated and wrote {:.1f} GiB (90% of free) in {:.2f} s", big / 1073741824.0, t.seconds());
  });
  return ok ? 0 : 1;
}

}  // namespace cd::gpu
