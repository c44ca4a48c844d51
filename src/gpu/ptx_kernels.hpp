#pragma once
// The PTX kernels verify JIT-loads (no nvcc needed at run time, proves the driver's JIT).
#include <cstdint>

namespace cd::gpu {

// NUL-terminated PTX text with the entries cd_copy_v4, cd_fill and cd_axpy.
const char* verify_ptx();

// What cd_fill writes at index i (for checking every element on the host).
std::uint32_t host_fill_value(std::uint64_t i, std::uint32_t seed, std::uint32_t and_mask, std::uint32_t or_mask);

}  // namespace cd::gpu
