#include "loader/elf_symbols.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "util/errors.hpp"
#include "util/regular_file.hpp"

namespace cd {
namespace {

struct Handle {
  Elf* e = nullptr;
  ~Handle() {
    if (e) elf_end(e);
  }
};

// Version index → file name, from .gnu.version_r.
std::map<unsigned, std::string> verneed_files(Elf* e, Elf_Scn* scn, const GElf_Shdr& sh) {
  std::map<unsigned, std::string> out;
  Elf_Data* d = elf_getdata(scn, nullptr);
  if (!d) return out;
  size_t off = 0;
  for (size_t n = 0; n < sh.sh_info && off < d->d_size; ++n) {
    GElf_Verneed vn;
    if (!gelf_getverneed(d, static_cast<int>(off), &vn)) break;
    const char* file = elf_strptr(e, sh.sh_link, vn.vn_file);
    size_t aux = off + vn.vn_aux;
    for (unsigned i = 0; i < vn.vn_cnt && aux < d->d_size; ++i) {
      GElf_Vernaux va;
      if (!gelf_getvernaux(d, static_cast<int>(aux), &va)) break;
      if (file) out[va.vna_other & 0x7fff] = file;
      if (va.vna_next == 0) break;
      aux += va.vna_next;
    }
    if (vn.vn_next == 0) break;
    off += vn.vn_next;
  }
  return out;
}

}  // namespace

ElfSymbols read_elf_symbols(const std::string& host_path) {
  elf_version(EV_CURRENT);
  RegularFile file(host_path);  // never blocks on a FIFO; only regular files
  if (!file.ok()) throw InputError(fmt::format("{}: {}", host_path, file.error()));
  Handle h;
  h.e = elf_begin(file.fd(), ELF_C_READ, nullptr);  // pread: only the sections asked for
  if (!h.e || elf_kind(h.e) != ELF_K_ELF) throw InputError(host_path + ": not an ELF file");

  Elf_Scn *dynsym = nullptr, *versym = nullptr;
  GElf_Shdr dynsym_sh{};
  std::map<unsigned, std::string> files;
  for (Elf_Scn* scn = elf_nextscn(h.e, nullptr); scn; scn = elf_nextscn(h.e, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == SHT_DYNSYM) dynsym = scn, dynsym_sh = sh;
    if (sh.sh_type == SHT_GNU_versym) versym = scn;
    if (sh.sh_type == SHT_GNU_verneed) files = verneed_files(h.e, scn, sh);
  }
  ElfSymbols out;
  if (!dynsym) return out;
  Elf_Data* syms = elf_getdata(dynsym, nullptr);
  Elf_Data* vers = versym ? elf_getdata(versym, nullptr) : nullptr;
  if (!syms || dynsym_sh.sh_entsize == 0) return out;
  size_t n = syms->d_size / dynsym_sh.sh_entsize;
  for (size_t i = 1; i < n; ++i) {
    GElf_Sym s;
    if (!gelf_getsym(syms, static_cast<int>(i), &s)) break;
    const char* name = elf_strptr(h.e, dynsym_sh.sh_link, s.st_name);
    if (!name || !*name) continue;
    if (s.st_shndx != SHN_UNDEF) {
      out.defines.insert(name);
      continue;
    }
    if (GELF_ST_BIND(s.st_info) == STB_WEAK) continue;  // optional: a miss is not an error
    GElf_Versym v;
    if (!vers || !gelf_getversym(vers, static_cast<int>(i), &v)) continue;
    auto f = files.find(v & 0x7fff);
    if (f != files.end()) out.needs[f->second].push_back(name);
  }
  return out;
}

std::vector<std::string> missing_symbols(const ElfSymbols& user, const std::string& soname, const ElfSymbols& provider,
                                         size_t limit) {
  std::vector<std::string> out;
  auto it = user.needs.find(soname);
  if (it == user.needs.end()) return out;
  for (const auto& s : it->second)
    if (!provider.defines.count(s) && out.size() < limit) out.push_back(s);
  return out;
}

}  // namespace cd
