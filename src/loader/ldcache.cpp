#include "loader/ldcache.hpp"

#include <cstring>

#include <fmt/format.h>

#include "util/errors.hpp"

namespace cd {
namespace {

constexpr std::string_view kOldMagic = "ld.so-1.7.0";           // 11 bytes, nlibs at offset 12
constexpr std::string_view kNewMagic = "glibc-ld.so.cache1.1";  // magic[17] + version[3]
constexpr size_t kOldHeader = 16;  // magic (11), pad (1), nlibs (4) at offset 12
constexpr size_t kOldEntry = 12;   // int flags; unsigned key, value
constexpr size_t kNewHeader = 48;
constexpr size_t kNewEntry = 24;   // int flags; unsigned key, value, osversion; uint64 hwcap

[[noreturn]] void bad(const std::string& why) { throw InputError("ld.so.cache: " + why); }

template <typename T>
T load(std::string_view data, size_t off) {
  if (off > data.size() || data.size() - off < sizeof(T)) bad(fmt::format("truncated at offset {}", off));
  T v;
  std::memcpy(&v, data.data() + off, sizeof(T));
  return v;
}

// A NUL-terminated string at `off` inside `strings`.
std::string string_at(std::string_view strings, uint32_t off) {
  if (off >= strings.size()) bad(fmt::format("string offset {} outside the file", off));
  auto end = strings.find('\0', off);
  if (end == std::string_view::npos) bad(fmt::format("unterminated string at offset {}", off));
  return std::string(strings.substr(off, end - off));
}

// The new format starting at data[0]; key/value offsets count from its header.
std::vector<LdCacheEntry> parse_new(std::string_view data) {
  uint32_t nlibs = load<uint32_t>(data, 20);
  uint8_t flags = load<uint8_t>(data, 28);
  if ((flags & 3) == 3) bad("big-endian cache (not supported)");
  if ((data.size() - kNewHeader) / kNewEntry < nlibs)
    bad(fmt::format("{} entries do not fit in {} bytes", nlibs, data.size()));
  std::vector<LdCacheEntry> out;
  out.reserve(nlibs);
  for (uint32_t i = 0; i < nlibs; ++i) {
    size_t e = kNewHeader + size_t{i} * kNewEntry;
    LdCacheEntry entry;
    entry.flags = load<int32_t>(data, e);
    entry.key = string_at(data, load<uint32_t>(data, e + 4));
    entry.value = string_at(data, load<uint32_t>(data, e + 8));
    entry.hwcap = load<uint64_t>(data, e + 16);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

LdCache parse_ld_so_cache(std::string_view data) {
  LdCache cache;
  if (data.substr(0, kNewMagic.size()) == kNewMagic) {
    if (data.size() < kNewHeader) bad("truncated header");
    cache.format = "new";
    cache.entries = parse_new(data);
    return cache;
  }
  if (data.substr(0, kOldMagic.size()) != kOldMagic) bad("not an ld.so.cache file (unknown magic)");
  uint32_t nlibs = load<uint32_t>(data, 12);
  if ((data.size() - kOldHeader) / kOldEntry < nlibs)
    bad(fmt::format("{} entries do not fit in {} bytes", nlibs, data.size()));
  size_t old_end = kOldHeader + size_t{nlibs} * kOldEntry;
  // glibc prefers a new-format table appended after the old entries (8-byte aligned).
  size_t new_at = (old_end + 7) & ~size_t{7};
  if (new_at < data.size() && data.substr(new_at, kNewMagic.size()) == kNewMagic) {
    if (data.size() - new_at < kNewHeader) bad("truncated appended header");
    cache.format = "old+new";
    cache.entries = parse_new(data.substr(new_at));
    return cache;
  }
  cache.format = "old";
  std::string_view strings = data.substr(old_end);  // old offsets count from the end of the table
  for (uint32_t i = 0; i < nlibs; ++i) {
    size_t e = kOldHeader + size_t{i} * kOldEntry;
    LdCacheEntry entry;
    entry.flags = load<int32_t>(data, e);
    entry.key = string_at(strings, load<uint32_t>(data, e + 4));
    entry.value = string_at(strings, load<uint32_t>(data, e + 8));
    cache.entries.push_back(std::move(entry));
  }
  return cache;
}

const LdCacheEntry* LdCache::find(std::string_view soname, int32_t want_flags) const {
  // glibc takes the first entry (in file order) with this key whose flags are
  // plain ELF (1) or the platform's default id; entries for glibc-hwcaps
  // subdirectories (hwcap extension bit 62) only win on matching CPUs: skip them.
  constexpr uint64_t kHwcapExtension = uint64_t{1} << 62;
  for (const auto& e : entries)
    if (e.key == soname && (e.flags == 1 || e.flags == want_flags) && !(e.hwcap & kHwcapExtension)) return &e;
  return nullptr;
}

int32_t cache_flags_for_machine(int e_machine, int elf_class) {
  constexpr int32_t libc6 = 3;
  switch (e_machine) {
    case 62: return libc6 | (elf_class == 1 ? 0x0800 : 0x0300);  // EM_X86_64 (ELFCLASS32 = x32)
    case 183: return libc6 | 0x0a00;                              // EM_AARCH64
    case 21: return libc6 | 0x0500;                               // EM_PPC64
    case 22: return libc6 | (elf_class == 2 ? 0x0400 : 0);        // EM_S390
    case 243: return libc6 | (elf_class == 2 ? 0x1000 : 0);       // EM_RISCV (lp64d)
    default: return libc6;                                        // i386 and other 32-bit ABIs
  }
}

std::string cache_flags_name(int32_t flags) {
  std::string type = (flags & 0xff) == 3 ? "libc6" : (flags & 0xff) == 1 ? "ELF" : fmt::format("type {}", flags & 0xff);
  switch (flags & 0xff00) {
    case 0: return type;
    case 0x0300: return type + ",x86-64";
    case 0x0800: return type + ",x32";
    case 0x0a00: return type + ",AArch64";
    case 0x0500: return type + ",64bit";
    default: return fmt::format("{},arch 0x{:04x}", type, flags & 0xff00);
  }
}

}  // namespace cd
