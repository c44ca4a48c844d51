#include "gpu/kernels.hpp"

#include <vector>

#include "gpu/cu_util.hpp"
#include "gpu/ptx_kernels.hpp"

namespace cd::gpu {

Kernels load_kernels(const CudaApi& api) {
  cu_need(api.cuModuleLoadDataEx, "cuModuleLoadDataEx");
  cu_need(api.cuModuleGetFunction, "cuModuleGetFunction");
  char log[4096] = {};
  int opts[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes};
  void* vals[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof log))};
  Kernels k;
  CUresult r = api.cuModuleLoadDataEx(&k.module, verify_ptx(), 2, opts, vals);
  if (r != kCudaSuccess)
    throw CuError("cuModuleLoadDataEx", r, api.error_name(r),
                  api.error_string(r) + (log[0] ? std::string("; JIT log: ") + log : ""));
  cu_check(api, api.cuModuleGetFunction(&k.copy, k.module, "cd_copy_v4"), "cuModuleGetFunction");
  cu_check(api, api.cuModuleGetFunction(&k.fill, k.module, "cd_fill"), "cuModuleGetFunction");
  cu_check(api, api.cuModuleGetFunction(&k.axpy, k.module, "cd_axpy"), "cuModuleGetFunction");
  return k;
}

void launch(const CudaApi& api, CUfunction f, unsigned grid, unsigned block, std::initializer_list<void*> args) {
  cu_need(api.cuLaunchKernel, "cuLaunchKernel");
  std::vector<void*> params(args);
  cu_check(api, api.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, nullptr, params.data(), nullptr), "cuLaunchKernel");
}

void fill_random(const CudaApi& api, const Kernels& k, CUdeviceptr p, std::uint64_t words, std::uint32_t seed,
                 std::uint32_t and_mask, std::uint32_t or_mask) {
  launch(api, k.fill, 1024, 256, {&p, &words, &seed, &and_mask, &or_mask});
}

void ctx_sync(const CudaApi& api) {
  cu_need(api.cuCtxSynchronize, "cuCtxSynchronize");
  cu_check(api, api.cuCtxSynchronize(), "cuCtxSynchronize");
}

}  // namespace cd::gpu
