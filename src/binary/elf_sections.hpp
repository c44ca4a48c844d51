#pragma once
// The sections of a host ELF image (a file, or an archive member) that hold or locate fatbins,
// listed once for the walk (binary/file_scan) and for the read-ahead of archive members
// (binary/prefetch), so both read the same sections. A section's name is a read from a cold
// disk: only data sections outside COMDAT groups are named (fatbin.hpp may_hold_fatbin).
#include <gelf.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "binary/bytes.hpp"

namespace cd::bin {

struct ElfSection {
  GElf_Shdr sh;
  std::string_view name;  // in the image's section name table
};

struct ElfSections {
  std::vector<ElfSection> fatbin;  // fatbin sections and .nvFatBinSegment, in header order
  std::vector<Bytes> relas;        // allocated SHT_RELA sections of a linked image (the loader applies them)
  std::optional<ElfSection> cut;   // the first section that runs past the image's end (skipped)
  std::string error;               // set: no section name table to read names from
};

// `elf` is the image's libelf handle, `image` its bytes (from its first byte to the file's end).
ElfSections list_sections(Elf* elf, Bytes image, bool linked);

}  // namespace cd::bin
