#include "gpu/cublas_api.hpp"

#include <dlfcn.h>

namespace cd::gpu {

namespace {

template <class Fn>
void sym(void* h, Fn& fn, const char* name) {
  fn = h ? reinterpret_cast<Fn>(dlsym(h, name)) : nullptr;
}

// The first of dirs/<soname>, then <soname> through the loader; records the path.
void* open_first(const std::vector<std::string>& dirs, std::initializer_list<const char*> sonames, std::string& path,
                 std::string& error) {
  std::vector<std::string> tries;
  for (const std::string& d : dirs)
    for (const char* so : sonames) tries.push_back(d + "/" + so);
  for (const char* so : sonames) tries.push_back(so);
  for (const std::string& t : tries) {
    if (void* h = dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      Dl_info info{};
      void* any = dlsym(h, "cublasLtCreate") ? dlsym(h, "cublasLtCreate") : dlsym(h, "cublasCreate_v2");
      path = any && dladdr(any, &info) && info.dli_fname ? info.dli_fname : t;
      return h;
    }
    if (const char* e = dlerror(); e && error.empty()) error = e;
  }
  return nullptr;
}

}  // namespace

bool CublasApi::load(const std::vector<std::string>& dirs) {
  // cuBLASLt first, like torch: libcublas then finds the same copy already loaded.
  void* lt = open_first(dirs, {"libcublasLt.so.13", "libcublasLt.so.12"}, cublaslt_path, error);
  sym(lt, cublasLtGetVersion, "cublasLtGetVersion");
  sym(lt, cublasLtCreate, "cublasLtCreate");
  sym(lt, cublasLtDestroy, "cublasLtDestroy");
  sym(lt, cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate");
  sym(lt, cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy");
  sym(lt, cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
  sym(lt, cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
  sym(lt, cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  sym(lt, cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
  sym(lt, cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  sym(lt, cublasLtMatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
  sym(lt, cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
  sym(lt, cublasLtMatmul, "cublasLtMatmul");
  void* blas = open_first(dirs, {"libcublas.so.13", "libcublas.so.12"}, cublas_path, error);
  sym(blas, cublasCreate, "cublasCreate_v2");
  sym(blas, cublasDestroy, "cublasDestroy_v2");
  sym(blas, cublasGemmEx, "cublasGemmEx");
  return has_lt() || has_gemm_ex();
}

std::string cublas_status_name(cublasStatus s) {
  switch (s) {
    case 0: return "CUBLAS_STATUS_SUCCESS";
    case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7: return "CUBLAS_STATUS_INVALID_VALUE";
    case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case 16: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "cublasStatus " + std::to_string(s);
  }
}

}  // namespace cd::gpu
