#pragma once
// The embedded PTX kernels, JIT-loaded into the current context, and their launches.
#include <initializer_list>

#include "gpu/cuda_api.hpp"

namespace cd::gpu {

struct Kernels {
  CUmodule module = nullptr;
  CUfunction copy = nullptr, fill = nullptr, axpy = nullptr;
};

// JIT-compiles verify_ptx(); a failure's CuError carries the JIT's error log.
Kernels load_kernels(const CudaApi& api);
// Launches on the legacy default stream; `args` point at each parameter's value.
void launch(const CudaApi& api, CUfunction f, unsigned grid, unsigned block, std::initializer_list<void*> args);
// Fills `words` u32 at p with cd_fill (random bits & and_mask | or_mask).
void fill_random(const CudaApi& api, const Kernels& k, CUdeviceptr p, std::uint64_t words, std::uint32_t seed,
                 std::uint32_t and_mask, std::uint32_t or_mask);
void ctx_sync(const CudaApi& api);

}  // namespace cd::gpu
