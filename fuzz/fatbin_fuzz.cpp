// libFuzzer target: any bytes as a file (ELF shared object / object / archive, cubin,
// fatbin, PTX) through the whole scan, with --kernels decompression and cubin symbol
// reading. It must never crash, hang or read out of bounds (run under ASan/UBSan).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "binary/file_scan.hpp"
#include "binary/scan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> copy(data, data + size);  // libelf wants writable memory
  for (const char* name : {"input.so", "input.ptx"}) {
    cd::bin::FileScan raw = cd::bin::scan_bytes(cd::bin::Bytes(copy.data(), copy.size()),
                                                reinterpret_cast<char*>(copy.data()), name, true);
    cd::summarize(name, std::move(raw));
  }
  cd::bin::parse_fatbin(cd::bin::Bytes(data, size), 0);
  return 0;
}
