// Escaping for terminal and Markdown output (issue 12 #7). A file name such as
// "a\n$ curl x | sudo sh" must not add a line to a fix block, and "\e]0;title\a" or
// "\e[2J" must not reach the terminal, with colours or without (--no-color, --markdown and
// pipes are read on terminals too). The string is walked as UTF-8: a well-formed code point
// is kept unless it is a control (U+0000–U+001F, U+007F, U+0080–U+009F); anything else —
// controls and bytes outside a valid sequence (a lone 0x9b is CSI to 8-bit terminals) —
// becomes a backslash escape, so the text stays readable and nothing is silently dropped.
#include "util/escape.hpp"

#include <fmt/format.h>

namespace cd {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629: no overlongs, no
// surrogates, ≤ U+10FFFF), 0 when the byte does not start one.
size_t utf8_length(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && b(i + 1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(i + 1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && b(i + 1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(i + 1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::string shown(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = utf8_length(s, i);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", c);
      i += 1;
    } else if (c == '\n') {
      out += "\\n", i += 1;
    } else if (c == '\t') {
      out += "\\t", i += 1;
    } else if (c == '\r') {
      out += "\\r", i += 1;
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c), i += 1;
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {  // U+0080–U+009F (C1)
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1])), i += 2;
    } else {
      out.append(s.substr(i, n)), i += n;
    }
  }
  return out;
}

std::vector<std::string> shown(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const auto& s : v) out.push_back(shown(s));
  return out;
}

}  // namespace cd
