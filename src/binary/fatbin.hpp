#pragma once
// Fat binary containers (magic 0xBA55ED50) and their entries, read from headers only.
// Layouts: the wrapper (magic 0x466243B1) as NVIDIA's public include/fatbinary_section.h
// (__fatBinC_Wrapper_t, FATBINC_MAGIC); the container and entry headers as publicly
// reverse-engineered in github.com/n-eiling/cuda-fatbin-decompression (fatbin-decompress.h:
// fat_elf_header, fat_text_header); the flag bits (LZ4, zstd, 'a', 'f') measured on nvcc 13.0
// output (tests/binary/nvcc_scan_test.cpp compiles each case with nvcc and scans it).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "binary/bytes.hpp"

namespace cd::bin {

inline constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
inline constexpr uint32_t kWrapperMagic = 0x466243B1u;  // __fatBinC_Wrapper_t in .nvFatBinSegment

// Where fatbins live in a host ELF file: .nv_fatbin (linked), __nv_relfatbin (-rdc objects),
// and the large-model data sections some big libraries keep their own kernel tables in
// (cuFFT: .ldata); .nvFatBinSegment lists the containers a library registers.
bool fatbin_section(std::string_view name);
// The large-model ones (.ldata, .lrodata): searched whole, not walked from registrations.
bool table_section(std::string_view name);
// Whether a section of this type and flags can be one of those (or .nvFatBinSegment): data
// that is neither code nor part of a COMDAT group. Only those need a name: a cuBLASLt
// object has 9,735 sections and 1.8 MB of names, 200 of them data outside a group.
bool may_hold_fatbin(uint32_t type, uint64_t flags);

enum class EntryKind { ptx, sass, nvvm_ir, unknown };
enum class Compression { none, lz4, zstd, legacy };

const char* kind_name(EntryKind k);          // "ptx" | "sass" | "nvvm_ir" | "unknown"
const char* compression_name(Compression c);  // "none" | "lz4" | "zstd" | "legacy"

struct FatbinEntry {
  uint64_t offset = 0;  // of the entry header, in the scanned buffer
  EntryKind kind = EntryKind::unknown;
  uint16_t raw_kind = 0;
  int arch = 0;          // 90 for sm_90 / compute_90
  char suffix = 0;       // 0, 'a' (arch-specific) or 'f' (family)
  int major = 0;         // PTX: ISA version; SASS: code version (1.7 ABI v1, 1.8 ABI v2)
  int minor = 0;
  Compression compression = Compression::none;
  uint64_t flags = 0;
  uint32_t header_size = 0;
  uint64_t payload_size = 0;       // padded, in the file
  uint32_t compressed_size = 0;    // exact compressed bytes; 0 when not compressed
  uint64_t uncompressed_size = 0;
  uint64_t payload_offset() const { return offset + header_size; }
  // Bytes of payload data: compressed_size when compressed, else payload_size.
  uint64_t data_size() const { return compression == Compression::none ? payload_size : compressed_size; }
};

struct FatbinContainer {
  uint64_t offset = 0;  // of the container header, in the scanned buffer
  uint64_t size = 0;    // header + entries
  std::vector<FatbinEntry> entries;
  bool answered = false;  // `enough` held after these entries
  bool cut = false;       // answered with entries left unread
};

// Whether the entries of one container read so far already answer the caller's question
// (check asks only whether the local GPUs run it: binary/verdict's native_on_all); the
// rest of that container's entries are then not read: from a cold disk each is one read.
using Enough = std::function<bool(const std::vector<FatbinEntry>&)>;

// A problem met while parsing; `offset` is relative to the scanned buffer.
struct ParseNote {
  uint64_t offset = 0;
  std::string message;
};

struct FatbinParse {
  std::vector<FatbinContainer> containers;  // each with at least one entry
  std::vector<ParseNote> notes;             // at most the `max_notes` asked for
  uint64_t notes_dropped = 0;               // problems met beyond that
  bool stopped = false;                     // `first_enough`: the walk ended at a container that answered
};

// Notes kept by one parse unless told otherwise: a hostile file can hold a bad header at
// every 8-byte position (13 million in 100 MB), and each note costs ~100 bytes.
inline constexpr size_t kMaxParseNotes = 16;

// Walks every container in `bytes` (a .nv_fatbin section or a .fatbin file) by the
// sizes in their headers, looking for the next magic at 8-byte steps in between.
// Never reads outside `bytes`; bad sizes end a container with a note. A run of magic
// numbers with bad headers at consecutive 8-byte positions is one note, and a
// container without entries is a note, not a container (memory stays proportional to
// the entries found, whatever the input).
// `base` is the file offset of bytes[0]: the magic is looked for at 8-byte aligned file offsets.
// With `enough`, each container's walk stops at the first entry after which it returns true;
// with `first_enough` too, the whole walk stops after that container (a library's own kernel
// table: one container that serves the GPUs is all its verdict needs, binary/verdict).
// `reached` is told how far the walk has come: at each container and at each MiB searched
// (binary/file_scan asks the disk for a table a window ahead of it).
using Reached = std::function<void(uint64_t offset)>;
FatbinParse parse_fatbin(Bytes bytes, uint64_t base = 0, size_t max_notes = kMaxParseNotes,
                         const Enough* enough = nullptr, bool first_enough = false, const Reached* reached = nullptr);

// The headers the walk reads of the container at `p`: its own, then its entries' until one is
// malformed, `enough` holds or `max_entries` were read; counted (0: no container starts at `p`).
// binary/prefetch reads them ahead through this, so the read-ahead reads what the walk will.
uint64_t read_container_headers(Bytes bytes, uint64_t p, const Enough* enough, size_t max_entries);

// A library's own kernel table is sorted by nothing the format promises, but in practice by
// architecture in long runs (cuFFT's 265 MiB .ldata: 393 sm_90 containers in a row at 162 MiB).
// check needs one container that serves the GPUs, so before walking a large table from its start
// it probes it: at each of `points`, the first containers that begin within `window` bytes are
// read (a container must be sound from its header through its entries to count: a probe can land
// in a payload, the walk never does). Returns the offset of the first one, by point, for which
// `enough` holds; the caller parses the table from there. `base` as for parse_fatbin.
std::optional<uint64_t> probe_fatbin(Bytes bytes, uint64_t base, const std::vector<uint64_t>& points, uint64_t window,
                                     const Enough& enough);
// Where to probe a table of `size` bytes: at most `count` points, evenly spaced.
std::vector<uint64_t> probe_points(uint64_t size, size_t count);

// The entry header at `at` (at least 64 bytes must fit in `bytes`), fields as stored.
FatbinEntry read_entry_header(Bytes bytes, uint64_t at);

// "sm_90a", "compute_100f" (kind decides the prefix).
std::string entry_arch_name(const FatbinEntry& e);

}  // namespace cd::bin
