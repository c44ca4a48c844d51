#pragma once
// Layer 3: kernel images found inside binaries (scan), and the verdict per GPU.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

struct KernelImage {
  std::string kind;         // "sass" | "ptx"
  int arch = 0;             // 90 for sm_90 / compute_90
  std::string suffix;       // "" | "a" | "f"
  int ptx_major = 0;        // PTX ISA version (PTX entries)
  int ptx_minor = 0;
  std::string compression;  // "none" | "lz4" | "zstd"
  uint64_t size = 0;               // bytes in the file
  uint64_t uncompressed_size = 0;
  std::vector<std::string> kernels;  // --kernels only
};
CD_JSON(KernelImage, kind, arch, suffix, ptx_major, ptx_minor, compression, size, uncompressed_size, kernels)

struct GpuVerdict {
  std::string gpu;      // "sm_90" (and the GPU's name when known)
  std::string verdict;  // native | jit | no_kernel_image | ptx_too_new | compression_unsupported | no_cuda_code
  std::string detail;   // "needs sm_90 SASS or compute_≤90 PTX; has sm_75"
  int containers_failing = 0;  // containers that cannot serve this GPU
};
CD_JSON(GpuVerdict, gpu, verdict, detail, containers_failing)

struct BinaryScan {
  std::string path;
  std::string package;  // "torch", "nvidia-cublas", "" when unknown
  std::string error;    // "malformed fatbin in FILE at offset X: …"
  int containers = 0;
  std::vector<KernelImage> images;  // distinct images (all containers); per container with -v
  std::vector<GpuVerdict> verdicts;
};
CD_JSON(BinaryScan, path, package, error, containers, images, verdicts)

}  // namespace cd
