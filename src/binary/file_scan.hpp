#pragma once
// One file -> its fatbin containers: ELF shared objects, executables and objects
// (sections .nv_fatbin / __nv_relfatbin, via libelf), static archives (each member),
// bare .cubin, .fatbin and .ptx files. Anything else is "not CUDA" at the first bytes.
#include <string>
#include <string_view>
#include <vector>

#include "binary/bytes.hpp"
#include "binary/fatbin.hpp"

namespace cd::bin {

struct FoundContainer {
  uint64_t file_offset = 0;  // of the container header in the file
  // Found in a large-model data section (.ldata): a library's own kernel table that it
  // dispatches per GPU at run time (cuFFT), not a module the CUDA runtime registers.
  bool dispatch_table = false;
  std::vector<FatbinEntry> entries;
  std::vector<std::string> kernels;  // --kernels
};

struct FileScan {
  std::string format;  // "" (not CUDA-capable), "shared library", "executable", "object", "archive", "cubin", "fatbin", "ptx"
  std::vector<FoundContainer> containers;
  std::vector<std::string> notes;  // "malformed fatbin in FILE at offset X: …"
  std::string error;               // the file could not be read
};

// Scans bytes already in memory. `writable` may be null (then libelf gets a private
// copy only for ELF input). `name` is used in notes and to recognise .ptx files.
FileScan scan_bytes(Bytes bytes, char* writable, std::string_view name, bool kernels);

// mmaps `path` and scans it.
FileScan scan_path(const std::string& path, bool kernels);

}  // namespace cd::bin
