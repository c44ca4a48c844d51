#pragma once
// cubin: the device ELF (e_machine EM_CUDA) inside a SASS entry or a .cubin file.
// Header decoding measured on nvcc output (ABI v1: SM in e_flags bits 0-7; ABI v2 since
// CUDA 13: bits 8-15, e.g. `nvcc 13.0 -cubin -arch=sm_90a` gives e_flags 0x6005a04, 0x5a = 90).
#include <string>
#include <vector>

#include "binary/bytes.hpp"

namespace cd::bin {

inline constexpr uint16_t kEmCuda = 190;

struct CubinHeader {
  int sm = 0;            // 90 for sm_90 / sm_90a
  int abi_version = 0;   // EI_ABIVERSION: 7 (v1) or 8 (v2)
  int elf_type = 0;      // 1 = ET_REL (-rdc), 2 = ET_EXEC
  uint32_t e_flags = 0;
};

// True when `b` starts with an ELF64 little-endian header for EM_CUDA.
bool is_cubin(Bytes b);
// Decodes the 64-byte header; false when `b` is not a cubin.
bool read_cubin_header(Bytes b, CubinHeader& out);

struct CubinDetails {
  std::vector<std::string> kernels;  // entry functions (symbols flagged STO_CUDA_ENTRY)
  bool arch_specific = false;        // 'a' target: .nv.compat attribute 9 (v2) / EF_CUDA_ACCELERATORS (v1)
};
// Reads the symbol table and .nv.compat through libelf (copies `b`: libelf wants writable memory).
bool read_cubin_details(Bytes b, CubinDetails& out, std::string& error);

}  // namespace cd::bin
