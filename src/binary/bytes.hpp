#pragma once
// Bounds-checked little-endian reads from untrusted bytes (fatbin and ELF data).
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace cd::bin {

static_assert(std::endian::native == std::endian::little, "fatbin fields are read in host byte order");

using Bytes = std::span<const uint8_t>;

// True when [off, off+len) lies inside a buffer of `size` bytes (no overflow).
inline bool fits(uint64_t size, uint64_t off, uint64_t len) { return off <= size && len <= size - off; }

template <class T>
T load(Bytes b, uint64_t off) {  // caller checked fits(b.size(), off, sizeof(T))
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

// The NUL-terminated string at `at` (a name in an ELF string table), cut at the end of `b`;
// empty when `at` lies outside.
inline std::string_view string_at(Bytes b, uint64_t at) {
  if (at >= b.size()) return {};
  const char* p = reinterpret_cast<const char*>(b.data()) + at;
  return {p, strnlen(p, b.size() - at)};
}

}  // namespace cd::bin
