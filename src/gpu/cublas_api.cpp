#include "gpu/cublas_api.hpp"

#include "gpu/dl.hpp"
#include "kb/library_status.hpp"

namespace cd::gpu {

bool CublasApi::load(const std::vector<std::string>& dirs) {
  // cuBLASLt first, like torch: libcublas then finds the same copy already loaded.
  Opened lt = open_first(library_tries(dirs, {"libcublasLt.so.13", "libcublasLt.so.12"}), "cublasLtCreate");
  cublaslt_path = lt.path;
  error = lt.error;
  if (lt.handle) {
    resolve(lt.handle, cublasLtGetVersion, {"cublasLtGetVersion"});
    resolve(lt.handle, cublasLtCreate, {"cublasLtCreate"});
    resolve(lt.handle, cublasLtDestroy, {"cublasLtDestroy"});
    resolve(lt.handle, cublasLtMatmulDescCreate, {"cublasLtMatmulDescCreate"});
    resolve(lt.handle, cublasLtMatmulDescDestroy, {"cublasLtMatmulDescDestroy"});
    resolve(lt.handle, cublasLtMatmulDescSetAttribute, {"cublasLtMatmulDescSetAttribute"});
    resolve(lt.handle, cublasLtMatrixLayoutCreate, {"cublasLtMatrixLayoutCreate"});
    resolve(lt.handle, cublasLtMatrixLayoutDestroy, {"cublasLtMatrixLayoutDestroy"});
    resolve(lt.handle, cublasLtMatmulPreferenceCreate, {"cublasLtMatmulPreferenceCreate"});
    resolve(lt.handle, cublasLtMatmulPreferenceDestroy, {"cublasLtMatmulPreferenceDestroy"});
    resolve(lt.handle, cublasLtMatmulPreferenceSetAttribute, {"cublasLtMatmulPreferenceSetAttribute"});
    resolve(lt.handle, cublasLtMatmulAlgoGetHeuristic, {"cublasLtMatmulAlgoGetHeuristic"});
    resolve(lt.handle, cublasLtMatmul, {"cublasLtMatmul"});
  }
  Opened blas = open_first(library_tries(dirs, {"libcublas.so.13", "libcublas.so.12"}), "cublasCreate_v2");
  cublas_path = blas.path;
  if (error.empty()) error = blas.error;
  if (blas.handle) {
    resolve(blas.handle, cublasCreate, {"cublasCreate_v2"});
    resolve(blas.handle, cublasDestroy, {"cublasDestroy_v2"});
    resolve(blas.handle, cublasGemmEx, {"cublasGemmEx"});
  }
  return has_lt() || has_gemm_ex();
}

std::string cublas_status_name(cublasStatus s) {
  const LibraryStatus* row = find_library_status(Kb::get(), "cublas", s);
  return row ? row->name : "cublasStatus " + std::to_string(s);
}

}  // namespace cd::gpu
