// verify step "gemm": a GEMM through the cuBLASLt/cuBLAS found in the environment.
// First a small exact check (small integers: every product and sum is exact in fp32),
// then 8192^3 throughput per precision, timed with events after a warm-up.
#include <cstring>

#include <fmt/format.h>

#include "gpu/cu_util.hpp"
#include "gpu/cublas_api.hpp"
#include "gpu/kernels.hpp"
#include "gpu/verify_steps.hpp"

namespace cd::gpu {

namespace {

struct CublasError : CuError {
  CublasError(const std::string& call, cublasStatus s)
      : CuError(call, s, cublas_status_name(s), "cuBLAS returned an error") {}
};

void blas_check(cublasStatus s, const char* call) {
  if (s != 0) throw CublasError(call, s);
}

struct Precision {
  const char* name;      // "bf16"
  int in_type, out_type, compute;
  size_t elem;           // bytes per input element
  std::uint32_t and_mask, or_mask;  // random values in ±[0.5, 1) for the fill kernel
};

const Precision kBf16{"bf16", kR16BF, kR16BF, kCompute32F, 2, 0x807F807Fu, 0x3F003F00u};
const Precision kFp16{"fp16", kR16F, kR16F, kCompute32F, 2, 0x83FF83FFu, 0x38003800u};
const Precision kTf32{"tf32", kR32F, kR32F, kCompute32FFastTf32, 4, 0x807FFFFFu, 0x3F000000u};
const Precision kFp32{"fp32", kR32F, kR32F, kCompute32F, 4, 0x807FFFFFu, 0x3F000000u};

// One GEMM D = A^T B (A k×m, B k×n, D m×n, column-major) through cuBLASLt with a
// workspace and the heuristic's first algorithm, or cublasGemmEx when Lt is missing.
class Gemm {
 public:
  Gemm(const CublasApi& blas, const CudaApi& cu, const Precision& p, int out_type, int m, int n, int k)
      : blas_(blas), p_(p), m_(m), n_(n), k_(k), out_type_(out_type) {
    if (blas.has_lt()) {
      use_lt_ = true;
      blas_check(blas.cublasLtCreate(&lt_), "cublasLtCreate");
      blas_check(blas.cublasLtMatmulDescCreate(&desc_, p.compute, kR32F), "cublasLtMatmulDescCreate");
      int ta = kOpT, tb = kOpN;
      blas_check(blas.cublasLtMatmulDescSetAttribute(desc_, kLtDescTransA, &ta, sizeof ta), "cublasLtMatmulDescSetAttribute");
      blas_check(blas.cublasLtMatmulDescSetAttribute(desc_, kLtDescTransB, &tb, sizeof tb), "cublasLtMatmulDescSetAttribute");
      blas_check(blas.cublasLtMatrixLayoutCreate(&a_, p.in_type, k, m, k), "cublasLtMatrixLayoutCreate");
      blas_check(blas.cublasLtMatrixLayoutCreate(&b_, p.in_type, k, n, k), "cublasLtMatrixLayoutCreate");
      blas_check(blas.cublasLtMatrixLayoutCreate(&c_, out_type, m, n, m), "cublasLtMatrixLayoutCreate");
      blas_check(blas.cublasLtMatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate");
      workspace_ = std::make_unique<DeviceBuffer>(cu, kWorkspace);
      size_t ws = kWorkspace;
      blas_check(blas.cublasLtMatmulPreferenceSetAttribute(pref_, kLtPrefMaxWorkspace, &ws, sizeof ws),
                 "cublasLtMatmulPreferenceSetAttribute");
      int found = 0;
      blas_check(blas.cublasLtMatmulAlgoGetHeuristic(lt_, desc_, a_, b_, c_, c_, pref_, 1, &heur_, &found),
                 "cublasLtMatmulAlgoGetHeuristic");
      if (found < 1) throw CublasError("cublasLtMatmulAlgoGetHeuristic (no algorithm)", 15);
    } else {
      blas_check(blas.cublasCreate(&handle_), "cublasCreate_v2");
    }
  }
  ~Gemm() {
    if (use_lt_) {
      if (pref_) blas_.cublasLtMatmulPreferenceDestroy(pref_);
      for (cublasLtDesc d : {a_, b_, c_})
        if (d) blas_.cublasLtMatrixLayoutDestroy(d);
      if (desc_) blas_.cublasLtMatmulDescDestroy(desc_);
      if (lt_) blas_.cublasLtDestroy(lt_);
    } else if (handle_) {
      blas_.cublasDestroy(handle_);
    }
  }
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  void run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr d) {
    float alpha = 1, beta = 0;
    auto A = reinterpret_cast<const void*>(a), B = reinterpret_cast<const void*>(b);
    auto D = reinterpret_cast<void*>(d);
    if (use_lt_) {
      blas_check(blas_.cublasLtMatmul(lt_, desc_, &alpha, A, a_, B, b_, &beta, D, c_, D, c_, &heur_.algo,
                                      reinterpret_cast<void*>(workspace_->ptr()), kWorkspace, nullptr),
                 "cublasLtMatmul");
    } else {
      blas_check(blas_.cublasGemmEx(handle_, kOpT, kOpN, m_, n_, k_, &alpha, A, p_.in_type, k_, B, p_.in_type, k_,
                                    &beta, D, out_type_, m_, p_.compute, kGemmDefault),
                 "cublasGemmEx");
    }
  }
  const char* api_name() const { return use_lt_ ? "cublasLtMatmul" : "cublasGemmEx"; }

 private:
  static constexpr size_t kWorkspace = 32u << 20;
  const CublasApi& blas_;
  Precision p_;
  int m_, n_, k_, out_type_;
  bool use_lt_ = false;
  cublasLtHandle lt_ = nullptr;
  cublasHandle handle_ = nullptr;
  cublasLtDesc desc_ = nullptr, a_ = nullptr, b_ = nullptr, c_ = nullptr, pref_ = nullptr;
  LtHeuristic heur_{};
  std::unique_ptr<DeviceBuffer> workspace_;
};

std::uint16_t to_bf16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<std::uint16_t>(bits >> 16);  // exact for the small integers used here
}

// 256^3 bf16 with entries in {-2..2} and an fp32 result: every element must be exact.
std::string check_gemm(const CublasApi& blas, const CudaApi& cu) {
  const int n = 256;
  std::vector<float> a(n * n), b(n * n);
  std::vector<std::uint16_t> a16(n * n), b16(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>((i * 7 + 3) % 5 - 2);
    b[i] = static_cast<float>((i * 11 + 1) % 5 - 2);
    a16[i] = to_bf16(a[i]);
    b16[i] = to_bf16(b[i]);
  }
  DeviceBuffer da(cu, n * n * 2), db(cu, n * n * 2), dd(cu, n * n * 4);
  cu_check(cu, cu.cuMemcpyHtoD(da.ptr(), a16.data(), n * n * 2), "cuMemcpyHtoD_v2");
  cu_check(cu, cu.cuMemcpyHtoD(db.ptr(), b16.data(), n * n * 2), "cuMemcpyHtoD_v2");
  cu_check(cu, cu.cuMemsetD32(dd.ptr(), 0x7FC00000u, n * n), "cuMemsetD32_v2");  // NaN poison
  Gemm g(blas, cu, kBf16, kR32F, n, n, n);
  g.run(da.ptr(), db.ptr(), dd.ptr());
  ctx_sync(cu);
  std::vector<float> d(n * n);
  cu_check(cu, cu.cuMemcpyDtoH(d.data(), dd.ptr(), n * n * 4), "cuMemcpyDtoH_v2");
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      float want = 0;
      for (int l = 0; l < n; ++l) want += a[i * n + l] * b[j * n + l];  // A^T: column i of A^T is row i of A (k-major)
      if (d[j * n + i] != want)
        return fmt::format("{}: D[{},{}] = {}, expected {}", g.api_name(), i, j, d[j * n + i], want);
    }
  return "";
}

Measurement gemm_throughput(const CublasApi& blas, const CudaApi& cu, const Kernels& k, const Precision& p, int size,
                            int warmup, int iters, int dev) {
  size_t bytes = static_cast<size_t>(size) * size * p.elem;
  DeviceBuffer a(cu, bytes), b(cu, bytes), d(cu, bytes);
  fill_random(cu, k, a.ptr(), bytes / 4, 11, p.and_mask, p.or_mask);
  fill_random(cu, k, b.ptr(), bytes / 4, 22, p.and_mask, p.or_mask);
  Gemm g(blas, cu, p, p.out_type, size, size, size);
  for (int i = 0; i < warmup; ++i) g.run(a.ptr(), b.ptr(), d.ptr());
  EventTimer t(cu);
  t.start();
  for (int i = 0; i < iters; ++i) g.run(a.ptr(), b.ptr(), d.ptr());
  double ms = t.stop_ms();
  Measurement m;
  m.name = fmt::format("gemm_{}_{}", p.name, size);
  m.gpu = gpu_label(dev);
  m.value = 2.0 * size * size * size * iters / (ms / 1e3) / 1e12;
  m.unit = "TFLOP/s";
  m.note = fmt::format("{} {}^3, fp32 accumulate, {} iterations after {} warm-up", g.api_name(), size, iters, warmup);
  return m;
}

}  // namespace

int step_gemm(StepSink& sink, const StepOptions& o) {
  const int dev = o.device;
  CudaApi cu;
  std::unique_ptr<PrimaryContext> ctx;
  CublasApi blas;
  sink.begin("cuBLAS");
  Stopwatch t;
  try {
    cu_init(cu);
    ctx = std::make_unique<PrimaryContext>(cu, dev);
  } catch (const CuError& e) {
    sink.step(failed_step("device", "cuBLAS", gpu_label(dev), e, t.seconds()));
    return 1;
  }
  if (!blas.load(o.lib_dirs)) {
    sink.step(skipped_step("libs", "cuBLAS", gpu_label(dev),
                           "no libcublasLt.so.13/.12 or libcublas.so found (torch's nvidia wheels, a CUDA toolkit or "
                           "the loader path); GEMM not measured" +
                               (blas.error.empty() ? std::string() : " — " + blas.error)));
    return 0;
  }
  sink.value("cublas", blas.has_lt() ? blas.cublaslt_path : blas.cublas_path);

  bool ok = true;
  auto run = [&](const char* name, auto fn) {
    sink.begin(name);
    Stopwatch st;
    try {
      std::string detail = fn();
      sink.step(passed_step("libs", name, gpu_label(dev), detail, st.seconds()));
      return true;
    } catch (const CuError& e) {
      VerifyStep s = failed_step("libs", name, gpu_label(dev), e, st.seconds());
      if (e.call.rfind("cublas", 0) == 0) s.finding = "";  // cuBLAS statuses are not CUresults
      sink.step(s);
      ok = false;
      return false;
    }
  };
  bool correct = run("GEMM correctness", [&]() -> std::string {
    std::string bad = check_gemm(blas, cu);
    if (!bad.empty()) throw CuError("GEMM result check", 0, "WRONG_RESULT", bad);
    return "bf16 256^3 through " + std::string(blas.has_lt() ? "cuBLASLt" : "cuBLAS") + ": every element exact";
  });
  if (!correct) return 1;

  run("GEMM throughput", [&]() -> std::string {
    Kernels k = load_kernels(cu);
    std::vector<std::pair<const Precision*, int>> plan;
    if (o.quick) plan = {{&kBf16, 4096}};
    else plan = {{&kBf16, 8192}, {&kFp16, 8192}, {&kTf32, 8192}, {&kFp32, 8192}};
    std::string detail;
    for (auto [p, size] : plan) {
      bool slow = p->compute == kCompute32F && p->elem == 4;  // fp32 on CUDA cores: ~15x slower
      Measurement m = gemm_throughput(blas, cu, k, *p, size, slow ? 1 : 5, slow ? 3 : (o.quick ? 10 : 30), dev);
      sink.measurement(m);
      detail += fmt::format("{}{} {:.0f} TFLOP/s", detail.empty() ? "" : ", ", p->name, m.value);
    }
    return detail;
  });
  return ok ? 0 : 1;
}

}  // namespace cd::gpu
