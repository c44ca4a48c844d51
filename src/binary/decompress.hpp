#pragma once
// Payload bytes of a fatbin entry, decompressed when needed (LZ4 block / zstd frame).
// Only --kernels needs this: arch, kind and PTX version come from the entry header.
#include <optional>
#include <string>
#include <vector>

#include "binary/bytes.hpp"
#include "binary/fatbin.hpp"

namespace cd::bin {

struct Payload {
  std::vector<uint8_t> owned;  // the decompressed bytes (empty when the payload was stored raw)
  Bytes bytes;                 // what to read: into `owned` or into the scanned buffer
};

// Upper bound on one decompressed image, so a hostile header cannot make us allocate gigabytes.
inline constexpr uint64_t kMaxImageBytes = 512ull << 20;

// `buf` is the buffer the entry was parsed from. On failure returns nullopt and sets `error`.
std::optional<Payload> entry_payload(Bytes buf, const FatbinEntry& e, std::string& error);

}  // namespace cd::bin
