#include "loader/elf_dyn.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "util/errors.hpp"
#include "util/regular_file.hpp"

namespace cd {
namespace {

constexpr uint64_t kMaxDynStrings = 64u << 20;

[[noreturn]] void bad(const std::string& name, std::string_view why) {
  throw InputError(fmt::format("{}: {}", name, why));
}

void init_libelf() {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

struct Segment {
  uint64_t vaddr, offset, filesz;
};

// File offset of a virtual address, through the PT_LOAD segments (as ld.so maps them).
bool vaddr_to_offset(const std::vector<Segment>& loads, uint64_t vaddr, uint64_t* off) {
  for (const auto& s : loads)
    if (vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz) {
      *off = vaddr - s.vaddr + s.offset;
      return true;
    }
  return false;
}

struct DynEntry {
  int64_t tag;
  uint64_t val;
};

std::vector<DynEntry> dynamic_entries(Elf* e, int cls, const Segment& dyn, const std::string& name) {
  Elf_Data* d = elf_getdata_rawchunk(e, static_cast<int64_t>(dyn.offset), dyn.filesz, ELF_T_DYN);
  if (!d) bad(name, "dynamic segment lies outside the file");
  std::vector<DynEntry> out;
  size_t n = d->d_size / (cls == ELFCLASS64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn));
  for (size_t i = 0; i < n; ++i) {
    DynEntry de;
    if (cls == ELFCLASS64) {
      auto* p = static_cast<const Elf64_Dyn*>(d->d_buf) + i;
      de = {p->d_tag, p->d_un.d_val};
    } else {
      auto* p = static_cast<const Elf32_Dyn*>(d->d_buf) + i;
      de = {p->d_tag, p->d_un.d_val};
    }
    if (de.tag == DT_NULL) break;
    out.push_back(de);
  }
  return out;
}

ElfDyn read_elf(Elf* e, const std::string& name) {
  if (!e || elf_kind(e) != ELF_K_ELF) bad(name, "not an ELF file");
  GElf_Ehdr eh;
  if (!gelf_getehdr(e, &eh)) bad(name, "invalid ELF header");
  ElfDyn out;
  out.elf_class = gelf_getclass(e);
  out.machine = eh.e_machine;
  out.data = eh.e_ident[EI_DATA];
  size_t phnum = 0;
  if (elf_getphdrnum(e, &phnum) != 0 || phnum == 0) bad(name, "no program headers (not a loadable object)");

  std::vector<Segment> loads;
  std::optional<Segment> dyn, interp;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(e, static_cast<int>(i), &ph)) bad(name, "program headers lie outside the file");
    Segment s{ph.p_vaddr, ph.p_offset, ph.p_filesz};
    if (ph.p_type == PT_LOAD) loads.push_back(s);
    if (ph.p_type == PT_DYNAMIC) dyn = s;
    if (ph.p_type == PT_INTERP) interp = s;
  }
  if (interp && interp->filesz > 0 && interp->filesz < 4096) {
    if (Elf_Data* d = elf_getdata_rawchunk(e, static_cast<int64_t>(interp->offset), interp->filesz, ELF_T_BYTE))
      out.interp = std::string(static_cast<const char*>(d->d_buf), strnlen(static_cast<const char*>(d->d_buf), d->d_size));
  }
  if (!dyn) return out;  // statically linked: needs nothing

  auto entries = dynamic_entries(e, out.elf_class, *dyn, name);
  uint64_t strtab = 0, strsz = 0;
  bool have_strtab = false;
  for (const auto& de : entries) {
    if (de.tag == DT_STRTAB) strtab = de.val, have_strtab = true;
    if (de.tag == DT_STRSZ) strsz = de.val;
    if (de.tag == DT_FLAGS_1 && (de.val & DF_1_NODEFLIB)) out.nodeflib = true;
  }
  if (!have_strtab) {
    for (const auto& de : entries)
      if (de.tag == DT_NEEDED || de.tag == DT_SONAME || de.tag == DT_RPATH || de.tag == DT_RUNPATH)
        bad(name, "dynamic segment has names but no DT_STRTAB");
    return out;
  }
  uint64_t stroff = 0;
  if (!vaddr_to_offset(loads, strtab, &stroff)) bad(name, "DT_STRTAB is not inside a loaded segment");
  // Real dynamic string tables are kilobytes (libtorch_cuda.so's: 2 MB); a lying DT_STRSZ must
  // not make us read (and allocate) most of a hostile file.
  if (strsz > kMaxDynStrings) bad(name, fmt::format("DT_STRSZ {} is larger than any real library's", strsz));
  Elf_Data* sd = elf_getdata_rawchunk(e, static_cast<int64_t>(stroff), strsz, ELF_T_BYTE);
  if (!sd || strsz == 0) bad(name, "string table lies outside the file");
  std::string_view strings(static_cast<const char*>(sd->d_buf), sd->d_size);
  auto str = [&](uint64_t off) {
    if (off >= strings.size()) bad(name, fmt::format("dynamic string offset {} outside DT_STRSZ {}", off, strsz));
    auto end = strings.find('\0', off);
    if (end == std::string_view::npos) bad(name, "unterminated dynamic string");
    return std::string(strings.substr(off, end - off));
  };
  for (const auto& de : entries) {
    switch (de.tag) {
      case DT_NEEDED: out.needed.push_back(str(de.val)); break;
      case DT_SONAME: out.soname = str(de.val); break;
      case DT_RPATH: out.rpath = str(de.val), out.has_rpath = true; break;
      case DT_RUNPATH: out.runpath = str(de.val), out.has_runpath = true; break;
      default: break;
    }
  }
  return out;
}

struct ElfHandle {
  Elf* e = nullptr;
  ~ElfHandle() {
    if (e) elf_end(e);
  }
};

}  // namespace

namespace {

ElfDyn read_elf_file(const RegularFile& file, const std::string& name) {
  init_libelf();
  if (!file.ok()) bad(name, file.error());
  ElfHandle h;
  // ELF_C_READ reads the headers and the dynamic strings with pread: a mapping would make the
  // first page fault read a whole readahead window (megabytes per library on a cold cache).
  h.e = elf_begin(file.fd(), ELF_C_READ, nullptr);
  return read_elf(h.e, name);
}

}  // namespace

ElfDyn read_elf_dyn(const std::string& host_path) {
  return read_elf_file(RegularFile(host_path), host_path);  // never blocks on a FIFO; only regular files
}

ElfDyn read_elf_dyn(const Root& root, const std::string& path) {
  return read_elf_file(RegularFile(root, path), root.host_path(path));
}

ElfDyn read_elf_dyn_memory(std::string_view bytes, const std::string& name) {
  init_libelf();
  std::string copy(bytes);  // elf_memory wants a mutable buffer
  ElfHandle h;
  h.e = elf_memory(copy.data(), copy.size());
  return read_elf(h.e, name);
}

}  // namespace cd
