#pragma once
// What the readers of host ELF files and ar archives share: a libelf handle that ends itself,
// and the one check of an ar member header (binary/file_scan walks members, binary/prefetch
// reads the symbol table's member offsets).
#include <libelf.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "binary/bytes.hpp"

namespace cd::bin {

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

inline constexpr uint64_t kArMemberHeader = 60;

// The member size an ar member header at `at` states: a decimal field (bytes 48-57, space
// padded) and "`\n" at 58; nullopt when the 60 bytes are not such a header.
inline std::optional<uint64_t> ar_member_size(Bytes file, uint64_t at) {
  if (!fits(file.size(), at, kArMemberHeader) || file[at + 58] != '`' || file[at + 59] != '\n') return std::nullopt;
  uint64_t size = 0;
  bool digits = false, ended = false;
  for (uint64_t i = at + 48; i < at + 58; ++i) {
    if (file[i] >= '0' && file[i] <= '9' && !ended) {
      digits = true;
      size = size * 10 + (file[i] - '0');
    } else if (file[i] == ' ' && digits) {
      ended = true;
    } else {
      return std::nullopt;
    }
  }
  if (!digits) return std::nullopt;
  return size;
}

}  // namespace cd::bin
