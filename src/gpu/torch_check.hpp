#pragma once
// The framework step: a Python script run by torch's own interpreter (child process
// with a timeout) that does the seeds' minimal verification and reports in the verify
// line protocol: is_available, a 4096^2 matmul against the CPU, one forward +
// backward + optimizer step of a tiny CNN on every GPU, the NCCL/cuDNN versions.
namespace cd::gpu {

const char* torch_check_script();

}  // namespace cd::gpu
