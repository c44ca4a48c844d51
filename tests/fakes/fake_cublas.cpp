// A fake libcublas.so.13: present so verify never falls through to a real cuBLAS
// while running on fake_cuda; its GemmEx path is unused when fake_cublaslt loads.
extern "C" {
int cublasCreate_v2(void**) { return 1; }  // CUBLAS_STATUS_NOT_INITIALIZED
int cublasDestroy_v2(void*) { return 0; }
int cublasGemmEx(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                 const void*, void*, int, int, int, int) { return 1; }
}
