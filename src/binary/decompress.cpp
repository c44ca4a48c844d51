#include "binary/decompress.hpp"

#include <lz4.h>
#include <zstd.h>

#include <cstdint>

#include <fmt/format.h>

namespace cd::bin {

std::optional<uint64_t> decompressed_size(Bytes buf, const FatbinEntry& e, std::string& error) {
  if (!fits(buf.size(), e.payload_offset(), e.data_size())) {
    error = "payload outside the buffer";
    return std::nullopt;
  }
  if (e.compression == Compression::none) return 0;
  if (e.compression == Compression::legacy) {
    error = "legacy compression (flag 0x1000) is not supported";
    return std::nullopt;
  }
  uint64_t claimed = e.uncompressed_size;
  if (claimed == 0 || claimed > kMaxImageBytes) {
    error = fmt::format("implausible uncompressed size {}", claimed);
    return std::nullopt;
  }
  Bytes src = buf.subspan(e.payload_offset(), e.data_size());
  if (e.compression == Compression::lz4) {
    if (src.size() > static_cast<uint64_t>(INT32_MAX)) {
      error = fmt::format("LZ4 block of {} bytes is larger than LZ4 allows", src.size());
      return std::nullopt;
    }
    if (claimed > src.size() * kMaxLz4Ratio + 64) {
      error = fmt::format("uncompressed size {} is more than LZ4 can make of {} bytes", claimed, src.size());
      return std::nullopt;
    }
    return claimed;
  }
  unsigned long long framed = ZSTD_getFrameContentSize(src.data(), src.size());
  if (framed == ZSTD_CONTENTSIZE_ERROR) {
    error = "zstd: not a zstd frame";
    return std::nullopt;
  }
  // A frame that states its size must agree with the header (nvcc's frames do).
  if (framed != ZSTD_CONTENTSIZE_UNKNOWN && framed != claimed) {
    error = fmt::format("zstd frame holds {} bytes, the entry header says {}", framed, claimed);
    return std::nullopt;
  }
  return claimed;
}

std::optional<Payload> entry_payload(Bytes buf, const FatbinEntry& e, std::string& error) {
  auto size = decompressed_size(buf, e, error);
  if (!size) return std::nullopt;
  Bytes src = buf.subspan(e.payload_offset(), e.data_size());
  Payload out;
  if (*size == 0) {
    out.bytes = src;
    return out;
  }
  out.owned = std::make_unique_for_overwrite<uint8_t[]>(*size);
  size_t n = 0;
  if (e.compression == Compression::lz4) {
    int got = LZ4_decompress_safe(reinterpret_cast<const char*>(src.data()), reinterpret_cast<char*>(out.owned.get()),
                                  static_cast<int>(src.size()), static_cast<int>(*size));
    if (got < 0) {
      error = "LZ4 data is corrupt";
      return std::nullopt;
    }
    n = static_cast<size_t>(got);
  } else {
    n = ZSTD_decompress(out.owned.get(), *size, src.data(), src.size());
    if (ZSTD_isError(n)) {
      error = fmt::format("zstd: {}", ZSTD_getErrorName(n));
      return std::nullopt;
    }
  }
  out.bytes = Bytes(out.owned.get(), n);
  return out;
}

}  // namespace cd::bin
