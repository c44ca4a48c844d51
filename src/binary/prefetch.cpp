#include "binary/prefetch.hpp"

#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <optional>

#include "binary/elf_handle.hpp"
#include "binary/elf_sections.hpp"
#include "binary/fatbin.hpp"
#include "util/thread_pool.hpp"

namespace cd::bin {
namespace {

constexpr uint64_t kWrapperSize = 24;  // magic u32, version u32, data pointer u64, filename pointer u64
constexpr uint64_t kRelaSize = 24;     // Elf64_Rela: r_offset, r_info (symbol << 32 | type), r_addend
constexpr uint64_t kMaxEntries = 4096;

uint64_t page_size() {
  static const uint64_t p = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return p;
}

// The page-aligned range of memory that holds `b`.
std::pair<uintptr_t, size_t> pages_of(Bytes b) {
  uintptr_t begin = reinterpret_cast<uintptr_t>(b.data()) & ~(page_size() - 1);
  uintptr_t end = reinterpret_cast<uintptr_t>(b.data()) + b.size();
  return {begin, end - begin};
}

// Whether the page holding each offset is in memory (mincore); false when it cannot tell.
bool all_resident(Bytes section, const std::vector<uint64_t>& offsets) {
  auto [first, length] = pages_of(section);
  uintptr_t begin = first;  // clang 14 cannot capture a structured binding
  std::vector<unsigned char> in((length + page_size() - 1) / page_size());
  if (mincore(reinterpret_cast<void*>(begin), length, in.data()) != 0) return false;
  uintptr_t data = reinterpret_cast<uintptr_t>(section.data());
  return std::all_of(offsets.begin(), offsets.end(), [&](uint64_t off) { return in[(data + off - begin) / page_size()] & 1; });
}

// Touches the container at `p` as the walk reads it: its header and its entries' headers, up to
// where the walk will stop (`enough`). Returns the headers read.
uint64_t touch_container(Bytes s, uint64_t p, const Enough* enough) {
  return read_container_headers(s, p, enough, kMaxEntries);
}

// Where the walk looks for the container after the one at `p`: past its bytes, at the next
// 8-byte aligned offset of the ELF image that holds the magic, within a page of padding (a
// longer gap is left to the walk's own search). `base`: the section's offset in its image.
std::optional<uint64_t> next_container(Bytes s, uint64_t p, uint64_t base) {
  if (!fits(s.size(), p, 16)) return std::nullopt;
  uint64_t q = p + load<uint16_t>(s, p + 6) + load<uint64_t>(s, p + 8);
  if (q < p) return std::nullopt;
  q = ((base + q + 7) & ~uint64_t{7}) - base;
  for (uint64_t limit = q + 4096; fits(s.size(), q, 16) && q < limit; q += 8)
    if (load<uint32_t>(s, q) == kFatbinMagic) return q;
  return std::nullopt;
}

// The member at archive offset `at` (its ar header): reads its ELF and section headers
// through libelf (`ar` is this thread's own handle on the archive: elf_rand moves it) and
// touches the header chains of its walked fatbin sections in `file`. Returns the headers read.
uint64_t touch_member(Bytes file, int fd, Elf* ar, uint64_t at) {
  if (elf_rand(ar, at) != at) return 0;
  ElfPtr member(elf_begin(fd, ELF_C_READ, ar));
  int64_t base = member ? elf_getbase(member.get()) : -1;
  if (base < 0 || elf_kind(member.get()) != ELF_K_ELF || static_cast<uint64_t>(base) > file.size()) return 0;
  Bytes image = file.subspan(static_cast<uint64_t>(base));
  uint64_t headers = 0;
  // The sections the walk will walk (file_scan's one_elf): fatbins outside the kernel tables.
  for (const auto& [sh, name] : list_sections(member.get(), image, false).fatbin) {
    if (!fatbin_section(name) || table_section(name)) continue;
    Bytes section = image.subspan(sh.sh_offset, sh.sh_size);
    // The first container at the section's first 8-byte aligned offset in the member's image.
    std::optional<uint64_t> p = ((sh.sh_offset + 7) & ~uint64_t{7}) - sh.sh_offset;
    for (size_t n = 0; p && n < kMaxEntries; ++n, p = next_container(section, *p, sh.sh_offset))
      headers += touch_container(section, *p, nullptr);
  }
  return headers;
}

}  // namespace

std::vector<uint64_t> armap_members(Bytes file) {
  std::vector<uint64_t> out;
  constexpr uint64_t kFirst = 8;  // after "!<arch>\n"
  std::optional<uint64_t> size = ar_member_size(file, kFirst);
  if (!size) return out;
  std::string_view name(reinterpret_cast<const char*>(file.data()) + kFirst, 16);
  uint64_t width = name.starts_with("/ ") ? 4 : name.starts_with("/SYM64/ ") ? 8 : 0;
  if (width == 0) return out;
  Bytes table = fits(file.size(), kFirst + kArMemberHeader, *size) ? file.subspan(kFirst + kArMemberHeader, *size) : Bytes{};
  auto big_endian = [&](uint64_t at) {
    uint64_t v = 0;
    for (uint64_t i = 0; i < width; ++i) v = v << 8 | table[at + i];
    return v;
  };
  if (!fits(table.size(), 0, width)) return out;
  uint64_t count = big_endian(0);
  if (count > table.size() / width) return out;
  for (uint64_t i = 1; i <= count && fits(table.size(), i * width, width); ++i)
    if (uint64_t at = big_endian(i * width); at < file.size()) out.push_back(at);
  return out;
}

void advise(Bytes range, int advice) {
  if (range.empty()) return;
  auto [begin, length] = pages_of(range);
  if (advice != MADV_WILLNEED) {
    madvise(reinterpret_cast<void*>(begin), length, advice);
    return;
  }
  // The kernel reads at most one read-ahead window (read_ahead_kb) per MADV_WILLNEED and drops the
  // rest of the range (force_page_cache_ra): asked in 1 MiB steps, all of it is read, as a queue of
  // 1 MiB reads that the calls only submit.
  constexpr size_t kStep = 1 << 20;
  for (size_t at = 0; at < length; at += kStep)
    madvise(reinterpret_cast<void*>(begin + at), std::min(kStep, length - at), MADV_WILLNEED);
}

std::vector<uint64_t> registered_containers(Bytes segment, uint64_t fatbin_addr, uint64_t fatbin_size,
                                            uint64_t segment_addr, const std::vector<Bytes>& relas) {
  std::vector<uint64_t> out;
  auto keep = [&](uint64_t addr) {
    if (addr >= fatbin_addr && addr - fatbin_addr < fatbin_size) out.push_back(addr - fatbin_addr);
  };
  std::map<uint64_t, uint64_t> unwritten;  // wrapper offset -> address, for pointers only a relocation sets
  for (uint64_t w = 0; fits(segment.size(), w, kWrapperSize); w += kWrapperSize) {
    if (load<uint32_t>(segment, w) != kWrapperMagic) continue;
    uint64_t addr = load<uint64_t>(segment, w + 8);
    if (addr == 0) unwritten.emplace(w, 0);
    else keep(addr);
  }
  if (!unwritten.empty())
    for (Bytes rela : relas) {
      // One large read instead of a fault per page of a mapping marked MADV_RANDOM.
      advise(rela, MADV_WILLNEED);
      for (uint64_t r = 0; fits(rela.size(), r, kRelaSize); r += kRelaSize) {
        uint64_t where = load<uint64_t>(rela, r), info = load<uint64_t>(rela, r + 8);
        if (where < segment_addr + 8 || (info >> 32) != 0) continue;  // symbol 0: the address is the addend
        auto it = unwritten.find(where - segment_addr - 8);
        if (it != unwritten.end()) it->second = load<uint64_t>(rela, r + 16);  // the loader's last word wins
      }
    }
  for (const auto& [w, addr] : unwritten)
    if (addr != 0) keep(addr);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Prefetch prefetch_containers(Bytes section, const std::vector<uint64_t>& offsets, size_t threads, bool when_cold,
                             const Enough* enough) {
  Prefetch out;
  if (offsets.empty() || section.empty()) return out;
  if (when_cold && all_resident(section, offsets)) {
    out.resident = true;
    return out;
  }
  std::atomic<uint64_t> headers{0};
  parallel_for(offsets.size(), threads, [&](size_t i) { headers += touch_container(section, offsets[i], enough); });
  out.headers = headers;
  return out;
}

ArchivePrefetch prefetch_archive(Bytes file, int fd, size_t threads, bool when_cold) {
  ArchivePrefetch out;
  if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE) return out;
  std::vector<uint64_t> members = armap_members(file);
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  if (members.empty()) return out;
  if (when_cold && all_resident(file, members)) {
    out.resident = true;
    return out;
  }
  // One archive handle per thread; member i goes to thread i % threads.
  threads = std::min(threads, members.size());
  std::atomic<uint64_t> headers{0};
  parallel_for(threads, threads, [&](size_t t) {
    ElfPtr ar(elf_begin(fd, ELF_C_READ, nullptr));
    if (!ar) return;
    for (size_t i = t; i < members.size(); i += threads) headers += touch_member(file, fd, ar.get(), members[i]);
  });
  out.members = members.size();
  out.headers = headers;
  return out;
}

}  // namespace cd::bin
