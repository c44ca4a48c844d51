#include "binary/cubin.hpp"

#include <gelf.h>
#include <libelf.h>

#include <cstring>

#include "binary/elf_handle.hpp"

namespace cd::bin {
namespace {

constexpr uint8_t kStoCudaEntry = 0x10;
constexpr uint32_t kEfCudaAcceleratorsV1 = 0x800;
constexpr uint8_t kCompatArchSpecific = 0x09;

void init_libelf() {
  static const bool once = [] { return elf_version(EV_CURRENT) != EV_NONE; }();
  (void)once;
}

// .nv.compat: records {u8 format, u8 attribute, u16 value}; format 4 carries a
// u16 length and that many bytes of data instead.
bool compat_arch_specific(Bytes d) {
  for (uint64_t p = 0; fits(d.size(), p, 4);) {
    uint8_t format = d[p], attr = d[p + 1];
    uint16_t value = load<uint16_t>(d, p + 2);
    if (attr == kCompatArchSpecific && format != 4) return value != 0;
    p += 4 + (format == 4 ? value : 0);
  }
  return false;
}

}  // namespace

bool is_cubin(Bytes b) {
  return b.size() >= 64 && std::memcmp(b.data(), "\x7f" "ELF", 4) == 0 && b[4] == ELFCLASS64 && b[5] == ELFDATA2LSB &&
         load<uint16_t>(b, 18) == kEmCuda;
}

bool read_cubin_header(Bytes b, CubinHeader& out) {
  if (!is_cubin(b)) return false;
  out.abi_version = b[8];
  out.elf_type = load<uint16_t>(b, 16);
  out.e_flags = load<uint32_t>(b, 48);
  out.sm = out.abi_version == 7 ? static_cast<int>(out.e_flags & 0xFF) : static_cast<int>((out.e_flags >> 8) & 0xFF);
  return true;
}

bool read_cubin_details(Bytes b, CubinDetails& out, std::string& error) {
  CubinHeader h;
  if (!read_cubin_header(b, h)) {
    error = "not a cubin";
    return false;
  }
  init_libelf();
  std::vector<char> copy(b.begin(), b.end());
  ElfPtr elf(elf_memory(copy.data(), copy.size()));
  size_t shstrndx = 0;
  if (!elf || elf_getshdrstrndx(elf.get(), &shstrndx) != 0) {
    error = std::string("cubin ELF: ") + elf_errmsg(-1);
    return false;
  }
  out.arch_specific = h.abi_version == 7 && (h.e_flags & kEfCudaAcceleratorsV1);
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* name = elf_strptr(elf.get(), shstrndx, sh.sh_name);
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || !data->d_buf) continue;
    if (name && std::strcmp(name, ".nv.compat") == 0) {
      out.arch_specific |= compat_arch_specific(Bytes(static_cast<const uint8_t*>(data->d_buf), data->d_size));
    } else if (sh.sh_type == SHT_SYMTAB && sh.sh_entsize > 0) {
      size_t n = sh.sh_size / sh.sh_entsize;
      for (size_t i = 0; i < n; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym)) break;
        if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !(sym.st_other & kStoCudaEntry)) continue;
        if (const char* s = elf_strptr(elf.get(), sh.sh_link, sym.st_name); s && *s) out.kernels.emplace_back(s);
      }
    }
  }
  return true;
}

}  // namespace cd::bin
