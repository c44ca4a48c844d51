// A fake libcublasLt.so.13 for verify's GEMM tests. Device pointers are host memory
// (fake_cuda.cpp). cublasLtMatmul really computes the small bf16 x bf16 -> fp32 case
// (D = A^T B) the correctness check uses; bigger or other-typed GEMMs do nothing.
//   CD_FAKE_CUBLAS_STATUS=N  cublasLtCreate returns N (e.g. 1 = NOT_INITIALIZED)
//   CD_FAKE_CUBLAS_WRONG=1   the result's first element is off by one
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {
struct Layout { int type; uint64_t rows, cols; int64_t ld; };
int g_handle, g_desc, g_pref;
float bf16(uint16_t v) { uint32_t b = static_cast<uint32_t>(v) << 16; float f; std::memcpy(&f, &b, 4); return f; }
}  // namespace

extern "C" {
size_t cublasLtGetVersion() { return 130000; }
int cublasLtCreate(void** h) {
  const char* s = std::getenv("CD_FAKE_CUBLAS_STATUS");
  if (s && std::atoi(s)) return std::atoi(s);
  *h = &g_handle;
  return 0;
}
int cublasLtDestroy(void*) { return 0; }
int cublasLtMatmulDescCreate(void** d, int, int) { *d = &g_desc; return 0; }
int cublasLtMatmulDescDestroy(void*) { return 0; }
int cublasLtMatmulDescSetAttribute(void*, int, const void*, size_t) { return 0; }
int cublasLtMatrixLayoutCreate(Layout** l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  *l = new Layout{type, rows, cols, ld};
  return 0;
}
int cublasLtMatrixLayoutDestroy(Layout* l) { delete l; return 0; }
int cublasLtMatmulPreferenceCreate(void** p) { *p = &g_pref; return 0; }
int cublasLtMatmulPreferenceDestroy(void*) { return 0; }
int cublasLtMatmulPreferenceSetAttribute(void*, int, const void*, size_t) { return 0; }
int cublasLtMatmulAlgoGetHeuristic(void*, void*, void*, void*, void*, void*, void*, int, void* results, int* found) {
  std::memset(results, 0, 96);
  *found = 1;
  return 0;
}
int cublasLtMatmul(void*, void*, const void*, const void* A, Layout* a, const void* B, Layout*, const void*,
                   const void*, Layout*, void* D, Layout* d, const void*, void*, size_t, void*) {
  if (d->type != 0 || a->type != 14 || a->rows > 512) return 0;  // only the small exact check is computed
  uint64_t k = a->rows, m = a->cols, n = d->cols;
  auto a16 = static_cast<const uint16_t*>(A), b16 = static_cast<const uint16_t*>(B);
  auto out = static_cast<float*>(D);
  for (uint64_t j = 0; j < n; ++j)
    for (uint64_t i = 0; i < m; ++i) {
      float s = 0;
      for (uint64_t l = 0; l < k; ++l) s += bf16(a16[i * k + l]) * bf16(b16[j * k + l]);
      out[j * m + i] = s;
    }
  if (std::getenv("CD_FAKE_CUBLAS_WRONG")) out[0] += 1;
  return 0;
}
}
