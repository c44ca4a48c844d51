// Fatbin containers are walked by the sizes in their headers; between containers the
// next magic is looked for at 8-byte aligned offsets. Hostile input is cheap to make and
// must stay cheap to read: notes are capped per parse (the rest only counted), a run of
// magic numbers with bad headers at consecutive 8-byte positions is skipped as one
// region with one note, and containers without entries are not kept, so memory grows
// with the entries found (each at least 64 bytes of input), never with the notes.
#include "binary/fatbin.hpp"

#include <elf.h>

#include <algorithm>

#include <fmt/format.h>

namespace cd::bin {
namespace {

constexpr uint64_t kContainerHeader = 16;
constexpr uint64_t kMinEntryHeader = 64;
constexpr uint64_t kFlagLz4 = 0x2000, kFlagZstd = 0x8000, kFlagLegacy = 0x1000;
constexpr uint64_t kFlagArchSpecific = 0x100000, kFlagFamily = 0x200000;

EntryKind kind_of(uint16_t raw) {
  switch (raw) {
    case 1: return EntryKind::ptx;
    case 2: return EntryKind::sass;
    case 8: return EntryKind::nvvm_ir;
    default: return EntryKind::unknown;
  }
}

Compression compression_of(uint64_t flags) {
  if (flags & kFlagZstd) return Compression::zstd;
  if (flags & kFlagLz4) return Compression::lz4;
  if (flags & kFlagLegacy) return Compression::legacy;
  return Compression::none;
}

}  // namespace

bool fatbin_section(std::string_view name) {
  for (std::string_view s : {".nv_fatbin", "__nv_relfatbin", ".ldata", ".lrodata"})
    if (name == s) return true;
  return false;
}

bool table_section(std::string_view name) { return name == ".ldata" || name == ".lrodata"; }

bool may_hold_fatbin(uint32_t type, uint64_t flags) {
  return type == SHT_PROGBITS && !(flags & (SHF_EXECINSTR | SHF_GROUP));
}

FatbinEntry read_entry_header(Bytes b, uint64_t q) {
  FatbinEntry e;
  e.offset = q;
  e.raw_kind = load<uint16_t>(b, q + 0x00);
  e.kind = kind_of(e.raw_kind);
  e.header_size = load<uint32_t>(b, q + 0x04);
  e.payload_size = load<uint64_t>(b, q + 0x08);
  e.compressed_size = load<uint32_t>(b, q + 0x10);
  e.minor = load<uint16_t>(b, q + 0x18);
  e.major = load<uint16_t>(b, q + 0x1A);
  e.arch = static_cast<int>(load<uint32_t>(b, q + 0x1C));
  e.flags = load<uint64_t>(b, q + 0x28);
  e.uncompressed_size = load<uint64_t>(b, q + 0x38);
  e.suffix = (e.flags & kFlagArchSpecific) ? 'a' : (e.flags & kFlagFamily) ? 'f' : 0;
  e.compression = compression_of(e.flags);
  return e;
}

namespace {

// Whether the container header at `p` (its magic read already) has a size that is one and fits.
bool header_holds(Bytes b, uint64_t p) {
  uint16_t header_size = load<uint16_t>(b, p + 6);
  return header_size >= kContainerHeader && fits(b.size(), p, header_size);
}

// Keeps the first `max` notes of a parse and counts the rest.
class Notes {
 public:
  Notes(FatbinParse& out, size_t max) : out_(out), max_(max) {}
  void add(uint64_t offset, std::string message) {
    if (out_.notes.size() < max_) out_.notes.push_back({offset, std::move(message)});
    else ++out_.notes_dropped;
  }

 private:
  FatbinParse& out_;
  size_t max_;
};

// Parses the entries of one container in [begin, end); returns false on a bad entry, or on
// more than `max_entries`.
bool read_entries(Bytes b, uint64_t begin, uint64_t end, FatbinContainer& c, Notes& notes, const Enough* enough,
                  size_t max_entries = SIZE_MAX) {
  uint64_t q = begin;
  while (q < end) {
    if (c.entries.size() == max_entries) return false;
    if (!fits(end, q, kMinEntryHeader)) {
      notes.add(q, fmt::format("entry header truncated ({} bytes left in container)", end - q));
      return false;
    }
    FatbinEntry e = read_entry_header(b, q);
    if (e.header_size < kMinEntryHeader || !fits(end, q, e.header_size)) {
      notes.add(q, fmt::format("bad entry header size {}", e.header_size));
      return false;
    }
    if (!fits(end, q + e.header_size, e.payload_size)) {
      notes.add(q, fmt::format("entry payload of {} bytes runs past the container end", e.payload_size));
      return false;
    }
    if (e.compression != Compression::none && e.compressed_size > e.payload_size) {
      notes.add(q, fmt::format("compressed size {} exceeds payload size {}", e.compressed_size, e.payload_size));
      return false;
    }
    c.entries.push_back(e);
    q += e.header_size + e.payload_size;
    if (enough && (*enough)(c.entries)) {
      c.answered = true;
      c.cut = q < end;
      break;
    }
  }
  return true;
}

// The container at `p`, whose magic and header size were checked (header_holds): its entries in `c`,
// read up to its end or the buffer's (a container cut short keeps the entries that are complete).
// Returns false where read_entries stopped at a bad entry or at `max_entries`.
bool read_container(Bytes b, uint64_t p, Notes& notes, const Enough* enough, FatbinContainer& c,
                    size_t max_entries = SIZE_MAX) {
  uint16_t header_size = load<uint16_t>(b, p + 6);
  uint64_t fat_size = load<uint64_t>(b, p + 8);
  uint64_t begin = p + header_size;
  uint64_t end = begin + fat_size;
  if (!fits(b.size(), begin, fat_size)) {
    notes.add(p, fmt::format("container of {} bytes runs past the end ({} bytes left)", fat_size, b.size() - begin));
    end = b.size();
  }
  c.offset = p;
  c.size = end - p;
  if (begin == end) notes.add(p, "container without entries");
  return read_entries(b, begin, end, c, notes, enough, max_entries);
}

}  // namespace

const char* kind_name(EntryKind k) {
  switch (k) {
    case EntryKind::ptx: return "ptx";
    case EntryKind::sass: return "sass";
    case EntryKind::nvvm_ir: return "nvvm_ir";
    case EntryKind::unknown: break;
  }
  return "unknown";
}

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::none: return "none";
    case Compression::lz4: return "lz4";
    case Compression::zstd: return "zstd";
    case Compression::legacy: return "legacy";
  }
  return "none";
}

std::string entry_arch_name(const FatbinEntry& e) {
  const char* prefix = e.kind == EntryKind::sass ? "sm_" : "compute_";
  return e.suffix ? fmt::format("{}{}{}", prefix, e.arch, e.suffix) : fmt::format("{}{}", prefix, e.arch);
}

uint64_t read_container_headers(Bytes b, uint64_t p, const Enough* enough, size_t max_entries) {
  if (!fits(b.size(), p, kContainerHeader) || load<uint32_t>(b, p) != kFatbinMagic) return 0;
  if (!header_holds(b, p)) return 1;
  FatbinParse scratch;
  Notes notes(scratch, 0);
  FatbinContainer c;
  read_container(b, p, notes, enough, c, max_entries);
  return 1 + c.entries.size();
}

std::vector<uint64_t> probe_points(uint64_t size, size_t count) {
  std::vector<uint64_t> out;
  if (count == 0) return out;
  uint64_t step = std::max<uint64_t>(1, size / count);
  for (uint64_t p = 0; p < size && out.size() < count; p += step) out.push_back(p);
  return out;
}

namespace {

// A container at `p` whose header and every entry read are sound (a probe may land in a payload:
// one magic number is not enough), with the entries read until `enough` held. Version 1 is the
// only one nvcc writes; a probe asks for it where the walk does not. A probe reads at most
// kProbeEntries entries of a container (a table's hold one to a few dozen), so probes that land in
// a hostile table's one huge container cost each a bounded read, not its whole walk again.
constexpr size_t kProbeEntries = 256;

std::optional<FatbinContainer> sound_container(Bytes b, uint64_t p, const Enough& enough) {
  if (!fits(b.size(), p, kContainerHeader) || load<uint32_t>(b, p) != kFatbinMagic || load<uint16_t>(b, p + 4) != 1)
    return std::nullopt;
  if (!header_holds(b, p)) return std::nullopt;
  // The walk's own read; any note it would make (no entries, cut short, a bad entry) rejects it.
  FatbinParse scratch;
  Notes notes(scratch, 1);
  FatbinContainer c;
  if (!read_container(b, p, notes, &enough, c, kProbeEntries) || !scratch.notes.empty() || c.entries.empty())
    return std::nullopt;
  for (const auto& e : c.entries)
    if (e.kind == EntryKind::unknown) return std::nullopt;
  return c;
}

}  // namespace

std::optional<uint64_t> probe_fatbin(Bytes b, uint64_t base, const std::vector<uint64_t>& points, uint64_t window,
                                     const Enough& enough) {
  for (uint64_t point : points) {
    uint64_t p = ((base + point + 7) & ~uint64_t{7}) - base;
    uint64_t end = std::min<uint64_t>(b.size(), point + window);
    while (p < end && fits(b.size(), p, kContainerHeader)) {
      auto c = sound_container(b, p, enough);
      if (!c) {
        p += 8;
        continue;
      }
      if (c->answered) return p;
      p = ((base + p + c->size + 7) & ~uint64_t{7}) - base;  // the next container, if it follows at once
    }
  }
  return std::nullopt;
}

FatbinParse parse_fatbin(Bytes b, uint64_t base, size_t max_notes, const Enough* enough, bool first_enough,
                         const Reached* reached) {
  FatbinParse out;
  Notes notes(out, max_notes);
  // Containers sit at 8-byte aligned file offsets; a section may start unaligned (.ldata).
  auto next_aligned = [base](uint64_t p) { return ((base + p + 8) & ~uint64_t{7}) - base; };
  auto bad_header = [&b](uint64_t p) { return !header_holds(b, p); };
  uint64_t p = (base % 8) ? next_aligned(0) : 0;
  uint64_t told = 0;
  if (reached) (*reached)(p);
  while (fits(b.size(), p, kContainerHeader)) {
    if (load<uint32_t>(b, p) != kFatbinMagic) {
      p = next_aligned(p);  // padding between containers
      if (reached && (p ^ told) >> 20) (*reached)(told = p);
      continue;
    }
    if (reached) (*reached)(told = p);
    if (bad_header(p)) {
      // One note for the whole run of bad headers that follows (a file of repeated magic).
      uint64_t first = p, more = 0;
      uint16_t header_size = load<uint16_t>(b, p + 6);
      for (p = next_aligned(p); fits(b.size(), p, kContainerHeader) && load<uint32_t>(b, p) == kFatbinMagic && bad_header(p);
           p = next_aligned(p))
        ++more;
      notes.add(first, more == 0 ? fmt::format("bad container header size {}", header_size)
                                 : fmt::format("bad container header size {}, and {} more fatbin magic numbers with bad "
                                               "headers follow at 8-byte steps ({} bytes skipped)",
                                               header_size, more, p - first));
      continue;
    }
    FatbinContainer c;
    read_container(b, p, notes, enough, c);
    bool stop = first_enough && c.answered;
    p += c.size;  // > 0: the header is at least 16 bytes
    if (!c.entries.empty()) out.containers.push_back(std::move(c));
    if (stop && fits(b.size(), p, kContainerHeader)) {
      out.stopped = true;
      break;
    }
  }
  return out;
}

}  // namespace cd::bin
