#pragma once
// Layer 3: kernel images found inside binaries (src/binary scan), kept small: the
// distinct images of each binary and the distinct container shapes ("groups"), so
// the verdict per container can be computed from facts alone (derive/, binary/verdict.hpp).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

struct KernelImage {
  std::string kind;         // "sass" | "ptx" | "nvvm_ir" | "unknown"
  int arch = 0;             // 90 for sm_90 / compute_90
  std::string suffix;       // "" | "a" | "f"
  int ptx_major = 0;        // PTX ISA version (PTX entries); SASS: 0
  int ptx_minor = 0;
  std::string compression;  // "none" | "lz4" | "zstd" | "legacy"
  int count = 0;                   // entries with this identity (one per container at most)
  uint64_t size = 0;               // bytes in the file, all entries
  uint64_t uncompressed_size = 0;  // all entries (0 when stored uncompressed)

  // "sm_90a" / "compute_90"
  std::string name() const {
    return (kind == "sass" ? "sm_" : "compute_") + std::to_string(arch) + suffix;
  }
};
CD_JSON(KernelImage, kind, arch, suffix, ptx_major, ptx_minor, compression, count, size, uncompressed_size)

// Containers (one per translation unit, loaded as one module) that hold the same images.
struct ContainerGroup {
  int count = 0;                     // containers of this shape
  std::vector<int> images;           // indices into BinaryScan::images
  std::vector<std::string> kernels;  // --kernels: kernel names in these containers
};
CD_JSON(ContainerGroup, count, images, kernels)

struct BinaryScan {
  std::string path;
  std::string package;  // "torch", "nvidia/cublas", "CUDA toolkit", "" when unknown
  std::string format;   // "shared library" | "executable" | "object" | "archive" | "cubin" | "fatbin" | "ptx"
  uint64_t file_size = 0;
  std::string error;               // could not read it at all
  std::vector<std::string> notes;  // "malformed fatbin in FILE at offset X: …" (at most 16, then "N more")
  int problems = 0;                // malformed regions found (corrupt input), noted or not
  int containers = 0;
  std::vector<KernelImage> images;     // distinct images over all containers
  std::vector<ContainerGroup> groups;  // distinct container shapes
  // A library's own per-GPU kernel table in .ldata (cuFFT): counted apart, since the
  // runtime never loads those containers as modules (cuobjdump does not list them).
  int dispatch_containers = 0;
  std::vector<KernelImage> dispatch_images;
  // check reads a container's entries only until SASS that runs natively on every local GPU
  // (cut_for) is found: images after it are not in `images`/`groups` (`scan` reads them all).
  int containers_cut = 0;
  bool dispatch_cut = false;  // its own kernel table read only until a container served those GPUs (or not at all:
                              // a module served them already)
  std::vector<int> cut_for;
  // Not read: a copy of this file (the same size and GNU build-id), whose answer it has.
  std::string same_build_as;
};
CD_JSON(BinaryScan, path, package, format, file_size, error, notes, problems, containers, images, groups,
        dispatch_containers, dispatch_images, containers_cut, dispatch_cut, cut_for, same_build_as)

}  // namespace cd
