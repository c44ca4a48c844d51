#include "binary/decompress.hpp"

#include <lz4.h>
#include <zstd.h>

#include <fmt/format.h>

namespace cd::bin {

std::optional<Payload> entry_payload(Bytes buf, const FatbinEntry& e, std::string& error) {
  if (!fits(buf.size(), e.payload_offset(), e.data_size())) {
    error = "payload outside the buffer";
    return std::nullopt;
  }
  Bytes src = buf.subspan(e.payload_offset(), e.data_size());
  Payload out;
  if (e.compression == Compression::none) {
    out.bytes = src;
    return out;
  }
  if (e.uncompressed_size == 0 || e.uncompressed_size > kMaxImageBytes) {
    error = fmt::format("implausible uncompressed size {}", e.uncompressed_size);
    return std::nullopt;
  }
  out.owned.resize(e.uncompressed_size);
  if (e.compression == Compression::lz4) {
    int n = LZ4_decompress_safe(reinterpret_cast<const char*>(src.data()), reinterpret_cast<char*>(out.owned.data()),
                                static_cast<int>(src.size()), static_cast<int>(out.owned.size()));
    if (n < 0) {
      error = "LZ4 data is corrupt";
      return std::nullopt;
    }
    out.owned.resize(static_cast<size_t>(n));
  } else if (e.compression == Compression::zstd) {
    size_t n = ZSTD_decompress(out.owned.data(), out.owned.size(), src.data(), src.size());
    if (ZSTD_isError(n)) {
      error = fmt::format("zstd: {}", ZSTD_getErrorName(n));
      return std::nullopt;
    }
    out.owned.resize(n);
  } else {
    error = "legacy compression (flag 0x1000) is not supported";
    return std::nullopt;
  }
  out.bytes = Bytes(out.owned.data(), out.owned.size());
  return out;
}

}  // namespace cd::bin
