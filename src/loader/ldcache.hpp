#pragma once
// /etc/ld.so.cache, parsed the way glibc's loader reads it (sysdeps/generic/dl-cache.h):
// the new "glibc-ld.so.cache1.1" format, the old "ld.so-1.7.0" format, or old+new
// appended. Offsets and counts are bounds-checked; bad input throws InputError.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cd {

struct LdCacheEntry {
  std::string key;     // the soname ldconfig registered ("libcudnn.so.9")
  std::string value;   // the path it maps to ("/usr/lib/x86_64-linux-gnu/libcudnn.so.9")
  int32_t flags = 0;   // type (low byte, 3 = libc6) | arch requirement (0xff00: 0x0300 x86-64)
  uint64_t hwcap = 0;
};

struct LdCache {
  std::string format;  // "new", "old", "old+new"
  std::vector<LdCacheEntry> entries;  // in file order (glibc's lookup order for equal keys)

  // First entry for `soname` whose flags suit an object with these cache flags
  // (see cache_flags_for_machine); nullptr when none.
  const LdCacheEntry* find(std::string_view soname, int32_t want_flags) const;
};

// Parses the bytes of an ld.so.cache file. Throws InputError("ld.so.cache: ...").
LdCache parse_ld_so_cache(std::string_view data);

// The cache flags glibc accepts for an ELF object of this e_machine / ELF class
// (_dl_cache_check_flags): e.g. EM_X86_64 → 0x0303 (libc6, x86-64).
int32_t cache_flags_for_machine(int e_machine, int elf_class);
// "libc6,x86-64" as `ldconfig -p` prints it (for evidence strings).
std::string cache_flags_name(int32_t flags);

}  // namespace cd
