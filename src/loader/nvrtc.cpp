#include "loader/nvrtc.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "util/regular_file.hpp"

namespace cd {

std::string nvrtc_builtins_name(const Root& root, const std::string& path) {
  RegularFile file(root, path);
  if (!file.ok()) return "";
  elf_version(EV_CURRENT);
  Elf* e = elf_begin(file.fd(), ELF_C_READ, nullptr);  // pread: the section headers only
  if (!e) return "";
  uint64_t off = 0, size = 0;
  size_t shstrndx = 0;
  if (elf_kind(e) == ELF_K_ELF && elf_getshdrstrndx(e, &shstrndx) == 0)
    for (Elf_Scn* scn = elf_nextscn(e, nullptr); scn; scn = elf_nextscn(e, scn)) {
      GElf_Shdr sh;
      const char* name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : nullptr;
      if (name && std::strcmp(name, ".rodata") == 0 && sh.sh_type == SHT_PROGBITS) off = sh.sh_offset, size = sh.sh_size;
    }
  elf_end(e);
  // The name lies a few MiB into .rodata (2.2 MiB in 13.0's 13 MiB): read in chunks and stop
  // at the first hit, overlapping chunks by the name's length.
  static const std::string needle = "libnvrtc-builtins.so.";
  const size_t chunk = 1u << 20, keep = needle.size() + 32;
  size = std::min<uint64_t>(size, file.size() > off ? file.size() - off : 0);
  std::string buf;
  for (uint64_t at = 0; at < size;) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(chunk, size - at));
    size_t old = buf.size();
    buf.resize(old + want);
    ssize_t got = pread(file.fd(), buf.data() + old, want, static_cast<off_t>(off + at));
    if (got <= 0) return "";
    buf.resize(old + static_cast<size_t>(got));
    at += static_cast<uint64_t>(got);
    for (size_t p = buf.find(needle); p != std::string::npos; p = buf.find(needle, p + 1)) {
      size_t end = p + needle.size();
      while (end < buf.size() && (std::isdigit(static_cast<unsigned char>(buf[end])) || buf[end] == '.')) ++end;
      if (end == buf.size() && at < size) break;  // cut by the chunk: read on
      std::string name = buf.substr(p, end - p);
      while (name.back() == '.') name.pop_back();  // "… libnvrtc-builtins.so.13.0." ends a sentence
      if (name.size() > needle.size()) return name;
    }
    if (buf.size() > keep) buf.erase(0, buf.size() - keep);
  }
  return "";
}

int load_nvrtc_builtins(Process& proc) {
  for (size_t i = 0; i < proc.objects().size(); ++i) {
    const LoadedObject& o = proc.objects()[i];
    if (o.unloaded || o.soname.rfind("libnvrtc.so.", 0) != 0) continue;
    std::string name = nvrtc_builtins_name(proc.system().root(), o.path);
    return name.empty() ? -1 : proc.dlopen(name, static_cast<int>(i), LoadTime::on_demand);
  }
  return -1;
}

}  // namespace cd
