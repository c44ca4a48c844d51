// One pass over the section headers through libelf (read with pread from a file's descriptor):
// the section name table is located first and must lie inside the image; then each section that
// is not NOBITS is checked to fit, relocation sections of linked images are kept, and names are
// read only for sections that may hold a fatbin.
#include "binary/elf_sections.hpp"

#include <fmt/format.h>

#include "binary/fatbin.hpp"

namespace cd::bin {

ElfSections list_sections(Elf* elf, Bytes image, bool linked) {
  ElfSections out;
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
    out.error = fmt::format("no section name table: {}", elf_errmsg(-1));
    return out;
  }
  GElf_Shdr names;
  if (!gelf_getshdr(elf_getscn(elf, shstrndx), &names) || !fits(image.size(), names.sh_offset, names.sh_size)) {
    out.error = "the section name table lies outside the file";
    return out;
  }
  Bytes name_table = image.subspan(names.sh_offset, names.sh_size);
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS) continue;
    if (!fits(image.size(), sh.sh_offset, sh.sh_size)) {
      if (!out.cut) out.cut = ElfSection{sh, string_at(name_table, sh.sh_name)};
      continue;
    }
    if (linked && sh.sh_type == SHT_RELA && (sh.sh_flags & SHF_ALLOC)) out.relas.push_back(image.subspan(sh.sh_offset, sh.sh_size));
    if (!may_hold_fatbin(sh.sh_type, sh.sh_flags)) continue;  // code and groups: no name read
    std::string_view name = string_at(name_table, sh.sh_name);
    if (name == ".nvFatBinSegment" || fatbin_section(name)) out.fatbin.push_back({sh, name});
  }
  return out;
}

}  // namespace cd::bin
