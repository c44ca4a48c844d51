// libFuzzer target for the facts JSON writer and reader over arbitrary bytes (issue 12
// #8, #13). Two properties:
//  1. Writing: the bytes become strings of a Facts (paths, kernel names, an env key and
//     value, the GPU name); facts_to_json_text never throws, its output reads back, is
//     valid UTF-8, and writing what was read gives the same text. When the bytes are
//     valid UTF-8 they come back unchanged.
//  2. Reading: the bytes as a facts file either parse or throw InputError (one line);
//     what parses writes and reads back to the same text.
// Anything else (a nlohmann exception escaping, a crash, a mismatch) aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "facts/facts.hpp"
#include "util/errors.hpp"

namespace {

bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : 9;
    if (n == 9 || i + n >= s.size()) return false;
    uint32_t cp = n == 0 ? c : n == 1 ? (c & 0x1F) : n == 2 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k <= n; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 0x2) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n + 1;
  }
  return true;
}

[[noreturn]] void bug(const char* what, const std::string& detail) {
  std::fprintf(stderr, "facts_json_fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

void write_arbitrary_strings(const std::string& bytes) {
  cd::Facts f;
  cd::BinaryScan b;
  b.path = bytes;
  b.notes = {bytes, "malformed fatbin in " + bytes};
  cd::ContainerGroup g;
  g.kernels = {bytes};
  b.groups.push_back(g);
  f.binaries.push_back(b);
  f.env[bytes] = bytes;
  cd::GpuInfo gpu;
  gpu.name = bytes;
  f.driver.gpus.push_back(gpu);
  std::string text;
  try {
    text = cd::facts_to_json_text(f);
  } catch (const std::exception& e) {
    bug("writing threw", e.what());
  }
  if (!valid_utf8(text)) bug("wrote invalid UTF-8", text);
  cd::Facts back;
  try {
    back = cd::facts_from_json_text(text, "written");
  } catch (const std::exception& e) {
    bug("what we wrote does not read back", e.what());
  }
  if (cd::facts_to_json_text(back) != text) bug("write(read(write(x))) != write(x)", text);
  if (valid_utf8(bytes) && (back.binaries.at(0).path != bytes || back.driver.gpus.at(0).name != bytes ||
                            back.env.count(bytes) != 1 || back.binaries.at(0).groups.at(0).kernels.at(0) != bytes))
    bug("valid UTF-8 did not round-trip", bytes);
}

void read_arbitrary_file(const std::string& bytes) {
  cd::Facts f;
  try {
    f = cd::facts_from_json_text(bytes, "fuzz.json");
  } catch (const cd::InputError& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) bug("error is not one line", e.what());
    return;
  } catch (const std::exception& e) {
    bug("reading threw something other than InputError", e.what());
  }
  std::string text = cd::facts_to_json_text(f);
  try {
    if (cd::facts_to_json_text(cd::facts_from_json_text(text, "again")) != text) bug("read facts do not round-trip", text);
  } catch (const cd::InputError& e) {
    bug("what we wrote does not read back", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  write_arbitrary_strings(bytes);
  read_arbitrary_file(bytes);
  return 0;
}
