#include "binary/build_id.hpp"

#include <gelf.h>
#include <libelf.h>

#include <memory>

#include <fmt/format.h>

#include "binary/elf_handle.hpp"

namespace cd::bin {
namespace {

constexpr uint64_t kMaxNotes = 1 << 16;  // a note segment is a few hundred bytes; more is not read

}  // namespace

std::string gnu_build_id(int fd) {
  if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE) return "";
  ElfPtr elf(elf_begin(fd, ELF_C_READ, nullptr));
  size_t count = 0;
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF || elf_getphdrnum(elf.get(), &count) != 0) return "";
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf.get(), static_cast<int>(i), &ph) || ph.p_type != PT_NOTE || ph.p_filesz > kMaxNotes) continue;
    Elf_Data* data = elf_getdata_rawchunk(elf.get(), static_cast<int64_t>(ph.p_offset), ph.p_filesz,
                                          ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
    if (!data) continue;
    GElf_Nhdr note;
    size_t at = 0, name = 0, desc = 0;
    while ((at = gelf_getnote(data, at, &note, &name, &desc)) > 0) {
      const char* base = static_cast<const char*>(data->d_buf);
      if (note.n_type != NT_GNU_BUILD_ID || note.n_namesz != 4 || std::string_view(base + name, 4) != std::string_view("GNU\0", 4) ||
          note.n_descsz == 0)
        continue;
      std::string hex;
      for (size_t k = 0; k < note.n_descsz; ++k) hex += fmt::format("{:02x}", static_cast<unsigned char>(base[desc + k]));
      return hex;
    }
  }
  return "";
}

}  // namespace cd::bin
