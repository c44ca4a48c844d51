#include "binary/prefetch.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "binary/fatbin.hpp"
#include "util/thread_pool.hpp"

namespace cd::bin {
namespace {

constexpr uint64_t kWrapperSize = 24;  // magic u32, version u32, data pointer u64, filename pointer u64
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

// Touches the container header at `p` and its entry headers, as parse_fatbin reads them
// (container: header size u16 at 6, entries' bytes u64 at 8; entry: header size u32 at 4,
// payload size u64 at 8). Returns the headers read; stops at anything malformed, and where
// the walk itself will stop (`enough`).
uint64_t touch_container(Bytes s, uint64_t p, const Enough* enough) {
  if (!fits(s.size(), p, 16) || load<uint32_t>(s, p) != kFatbinMagic) return 0;
  uint64_t header = load<uint16_t>(s, p + 6), body = load<uint64_t>(s, p + 8);
  if (header < 16 || !fits(s.size(), p, header)) return 1;
  uint64_t end = fits(s.size(), p + header, body) ? p + header + body : s.size();
  uint64_t q = p + header, n = 1;
  std::vector<FatbinEntry> seen;
  for (uint64_t i = 0; i < kMaxEntries && fits(end, q, 64); ++i, ++n) {
    uint64_t eh = load<uint32_t>(s, q + 4), payload = load<uint64_t>(s, q + 8);
    if (eh < 64 || !fits(end, q, eh) || !fits(end, q + eh, payload)) break;
    if (enough) {
      seen.push_back(read_entry_header(s, q));
      if ((*enough)(seen)) return n + 1;  // this entry read, the walk stops after it
    }
    q += eh + payload;
  }
  return n;
}

}  // namespace

void advise(Bytes range, int advice) {
  if (range.empty()) return;
  auto [begin, length] = pages_of(range);
  madvise(reinterpret_cast<void*>(begin), length, advice);
}

std::vector<uint64_t> registered_containers(Bytes segment, uint64_t fatbin_addr, uint64_t fatbin_size) {
  std::vector<uint64_t> out;
  for (uint64_t w = 0; fits(segment.size(), w, kWrapperSize); w += kWrapperSize) {
    if (load<uint32_t>(segment, w) != kWrapperMagic) continue;
    uint64_t addr = load<uint64_t>(segment, w + 8);
    if (addr >= fatbin_addr && addr - fatbin_addr < fatbin_size) out.push_back(addr - fatbin_addr);
  }
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

}  // namespace cd::bin
