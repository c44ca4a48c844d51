#include "binary/file_scan.hpp"

#include <gelf.h>
#include <libelf.h>

#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "binary/cubin.hpp"
#include "binary/decompress.hpp"
#include "binary/mapped_file.hpp"
#include "binary/ptx.hpp"

namespace cd::bin {
namespace {

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

// Where fatbins live: .nv_fatbin (linked), __nv_relfatbin (-rdc objects), and the
// large-model data sections some big libraries register their modules from (cuFFT: .ldata).
bool fatbin_section(const char* name) {
  for (const char* s : {".nv_fatbin", "__nv_relfatbin", ".ldata", ".lrodata"})
    if (std::strcmp(name, s) == 0) return true;
  return false;
}

class Scanner {
 public:
  Scanner(std::string_view name, bool kernels, FileScan& out) : name_(name), kernels_(kernels), out_(out) {}

  void any(Bytes b, char* writable) {
    if (b.size() >= 4 && std::memcmp(b.data(), "\x7f" "ELF", 4) == 0) return elf_file(b, writable);
    if (b.size() >= 8 && std::memcmp(b.data(), "!<arch>\n", 8) == 0) return elf_file(b, writable);
    if (b.size() >= 16 && load<uint32_t>(b, 0) == kFatbinMagic) {
      out_.format = "fatbin";
      return region(b, 0);
    }
    if (name_.ends_with(".ptx")) return ptx_file(b);
  }

 private:
  void note(uint64_t offset, std::string_view what) {
    out_.notes.push_back(fmt::format("malformed fatbin in {} at offset {:#x}: {}", name_, offset, what));
  }

  // libelf reads headers in place when it can; it gets a private copy when we have no writable view.
  void elf_file(Bytes b, char* writable) {
    static const bool init = elf_version(EV_CURRENT) != EV_NONE;
    std::vector<char> copy;
    if (!writable) {
      copy.assign(b.begin(), b.end());
      writable = copy.data();
    }
    ElfPtr elf(init ? elf_memory(writable, b.size()) : nullptr);
    if (!elf) {
      out_.error = fmt::format("{}: not a readable ELF file ({})", name_, elf_errmsg(-1));
      return;
    }
    if (elf_kind(elf.get()) == ELF_K_AR) return archive(elf.get(), b);
    one_elf(elf.get(), b, 0);
  }

  void archive(Elf* ar, Bytes file) {
    out_.format = "archive";
    Elf_Cmd cmd = ELF_C_READ_MMAP;
    while (Elf* raw = elf_begin(-1, cmd, ar)) {
      ElfPtr member(raw);
      if (elf_kind(member.get()) == ELF_K_ELF) {
        int64_t base = elf_getbase(member.get());
        if (base >= 0 && static_cast<uint64_t>(base) <= file.size())
          one_elf(member.get(), file.subspan(static_cast<uint64_t>(base)), static_cast<uint64_t>(base));
      }
      cmd = elf_next(member.get());
    }
  }

  // A host ELF (or archive member) whose bytes start at file offset `base`.
  void one_elf(Elf* elf, Bytes b, uint64_t base) {
    GElf_Ehdr eh;
    if (!gelf_getehdr(elf, &eh)) {
      note(base, fmt::format("bad ELF header: {}", elf_errmsg(-1)));
      return;
    }
    if (eh.e_machine == kEmCuda) return cubin(b, base);
    if (out_.format.empty())
      out_.format = eh.e_type == ET_REL ? "object" : eh.e_type == ET_EXEC ? "executable" : "shared library";
    size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0) return;
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS) continue;
      const char* sname = elf_strptr(elf, shstrndx, sh.sh_name);
      if (!sname || !fatbin_section(sname)) continue;
      // A linked binary keeps its -rdc inputs in __nv_relfatbin, but the runtime loads the
      // device-linked image in .nv_fatbin (cuobjdump lists only that one too).
      if (eh.e_type != ET_REL && std::strcmp(sname, "__nv_relfatbin") == 0) continue;
      if (!fits(b.size(), sh.sh_offset, sh.sh_size)) {
        note(base + sh.sh_offset, fmt::format("section {} runs past the end of the file", sname));
        continue;
      }
      region(b.subspan(sh.sh_offset, sh.sh_size), base + sh.sh_offset, sh.sh_offset, sname[1] == 'l');
    }
  }

  // Containers in `b`, which starts at file offset `base` and at `align_base` within its ELF image.
  void region(Bytes b, uint64_t base, uint64_t align_base = 0, bool dispatch_table = false) {
    FatbinParse parse = parse_fatbin(b, align_base);
    for (const auto& n : parse.notes) note(base + n.offset, n.message);
    for (auto& c : parse.containers) {
      FoundContainer fc{base + c.offset, dispatch_table, std::move(c.entries), {}};
      if (kernels_) fc.kernels = kernel_names(b, fc, base);
      out_.containers.push_back(std::move(fc));
    }
  }

  // Kernels of a container, read from one image (all images of a container come
  // from the same translation unit): the first SASS, else the first PTX.
  std::vector<std::string> kernel_names(Bytes b, const FoundContainer& c, uint64_t base) {
    for (EntryKind want : {EntryKind::sass, EntryKind::ptx})
      for (const auto& e : c.entries) {
        if (e.kind != want) continue;
        std::string error;
        auto payload = entry_payload(b, e, error);
        if (!payload) {
          note(base + e.offset, fmt::format("{} image: {}", entry_arch_name(e), error));
          continue;
        }
        if (want == EntryKind::ptx) {
          std::string_view text(reinterpret_cast<const char*>(payload->bytes.data()), payload->bytes.size());
          return parse_ptx(text, true).entries;
        }
        CubinDetails d;
        if (read_cubin_details(payload->bytes, d, error)) return d.kernels;
        note(base + e.offset, fmt::format("{} image: {}", entry_arch_name(e), error));
      }
    return {};
  }

  // A bare cubin: one container holding one SASS image.
  void cubin(Bytes b, uint64_t base) {
    CubinHeader h;
    if (!read_cubin_header(b, h)) return note(base, "truncated cubin header");
    if (out_.format.empty()) out_.format = "cubin";
    FatbinEntry e;
    e.kind = EntryKind::sass;
    e.raw_kind = 2;
    e.arch = h.sm;
    e.major = 1;
    e.minor = h.abi_version;
    e.payload_size = b.size();
    CubinDetails d;
    std::string error;
    if (read_cubin_details(b, d, error) && d.arch_specific) e.suffix = 'a';
    FoundContainer fc{base, false, {e}, {}};
    if (kernels_) fc.kernels = std::move(d.kernels);
    out_.containers.push_back(std::move(fc));
  }

  void ptx_file(Bytes b) {
    std::string_view text(reinterpret_cast<const char*>(b.data()), b.size());
    PtxInfo info = parse_ptx(text, kernels_);
    if (!info.ok()) return note(0, "PTX without .version/.target");
    out_.format = "ptx";
    FatbinEntry e;
    e.kind = EntryKind::ptx;
    e.raw_kind = 1;
    e.arch = info.arch;
    e.suffix = info.suffix;
    e.major = info.major;
    e.minor = info.minor;
    e.payload_size = b.size();
    out_.containers.push_back({0, false, {e}, std::move(info.entries)});
  }

  std::string_view name_;
  bool kernels_;
  FileScan& out_;
};

}  // namespace

FileScan scan_bytes(Bytes bytes, char* writable, std::string_view name, bool kernels) {
  FileScan out;
  Scanner(name, kernels, out).any(bytes, writable);
  return out;
}

FileScan scan_path(const std::string& path, bool kernels) {
  MappedFile file(path);
  if (!file.ok()) {
    FileScan out;
    out.error = fmt::format("{}: {}", path, file.error());
    return out;
  }
  return scan_bytes(file.bytes(), file.writable(), path, kernels);
}

}  // namespace cd::bin
