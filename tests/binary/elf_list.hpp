#pragma once
// The sections of an ELF file, listed through libelf on its own — not through the scanner's
// listing (binary/elf_sections), which is what the tests check. Shared by tests/binary.
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

namespace fx {

struct NamedSection {
  std::string name;
  GElf_Shdr sh;
};

inline std::vector<NamedSection> elf_sections_of(const std::string& path) {
  std::vector<NamedSection> out;
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  Elf* e = elf_begin(fd, ELF_C_READ, nullptr);
  size_t strndx = 0;
  if (e && elf_getshdrstrndx(e, &strndx) == 0)
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(e, scn));) {
      GElf_Shdr sh;
      const char* n = gelf_getshdr(scn, &sh) ? elf_strptr(e, strndx, sh.sh_name) : nullptr;
      if (n) out.push_back({n, sh});
    }
  if (e) elf_end(e);
  close(fd);
  return out;
}

inline const GElf_Shdr* find_section(const std::vector<NamedSection>& all, std::string_view name) {
  for (const auto& s : all)
    if (s.name == name) return &s.sh;
  return nullptr;
}

}  // namespace fx
