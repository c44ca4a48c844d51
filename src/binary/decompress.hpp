#pragma once
// Payload bytes of a fatbin entry, decompressed when needed (LZ4 block / zstd frame).
// Only --kernels needs this: arch, kind and PTX version come from the entry header.
// The size a header claims is checked against what its compressed bytes can hold before
// anything is allocated (a zstd frame states its content size; LZ4 expands at most
// ~255:1), and the buffer is not zero-filled: only what the decompressor writes is touched.
#include <memory>
#include <optional>
#include <string>

#include "binary/bytes.hpp"
#include "binary/fatbin.hpp"

namespace cd::bin {

struct Payload {
  std::unique_ptr<uint8_t[]> owned;  // the decompressed bytes (null when the payload was stored raw)
  Bytes bytes;                       // what to read: into `owned` or into the scanned buffer
};

// Upper bound on one decompressed image, so a hostile header cannot make us allocate gigabytes.
inline constexpr uint64_t kMaxImageBytes = 512ull << 20;
// LZ4 block format: a match of L bytes costs at least L/255 bytes of input.
inline constexpr uint64_t kMaxLz4Ratio = 255;

// Bytes entry_payload will allocate for `e`: 0 when stored raw. nullopt (and `error`) when
// the entry cannot be decompressed or its claimed size is implausible. Allocates nothing.
std::optional<uint64_t> decompressed_size(Bytes buf, const FatbinEntry& e, std::string& error);

// `buf` is the buffer the entry was parsed from. On failure returns nullopt and sets `error`.
std::optional<Payload> entry_payload(Bytes buf, const FatbinEntry& e, std::string& error);

}  // namespace cd::bin
