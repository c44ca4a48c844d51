#include "explain/clean.hpp"

#include <algorithm>
#include <cstring>

namespace cd {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Length of the digits at s[i..]; 0 when none.
size_t digits_at(std::string_view s, size_t i) {
  size_t n = 0;
  while (i + n < s.size() && is_digit(s[i + n])) ++n;
  return n;
}

}  // namespace

void strip_ansi(std::string_view in, std::string& out) {
  out.clear();
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    const void* esc = std::memchr(in.data() + i, '\x1b', in.size() - i);
    size_t at = esc ? static_cast<size_t>(static_cast<const char*>(esc) - in.data()) : in.size();
    out.append(in.substr(i, at - i));  // the plain run up to the escape
    if (at + 1 >= in.size()) break;
    char kind = in[at + 1];
    size_t j = at + 2;
    if (kind == '[') {  // CSI: parameters, intermediates, one final byte
      while (j < in.size() && static_cast<unsigned char>(in[j]) >= 0x20 && static_cast<unsigned char>(in[j]) <= 0x3f) ++j;
      while (j < in.size() && static_cast<unsigned char>(in[j]) >= 0x20 && static_cast<unsigned char>(in[j]) <= 0x2f) ++j;
      i = j + 1;  // skip the final byte too
    } else if (kind == ']') {  // OSC: until BEL or ESC '\'
      while (j < in.size() && in[j] != '\a' && !(in[j] == '\x1b' && j + 1 < in.size() && in[j + 1] == '\\')) ++j;
      i = j < in.size() && in[j] == '\x1b' ? j + 2 : j + 1;
    } else {
      i = at + 2;  // two-byte escape (ESC c, ESC =, …)
    }
  }
}

std::string_view split_rank_prefix(std::string_view line, std::string_view& rank) {
  rank = {};
  if (line.empty() || line[0] != '[') return line;
  // [rankN]: / [defaultN]:  (torchrun --tee / log prefixes)
  for (std::string_view word : {std::string_view("rank"), std::string_view("default")}) {
    if (line.substr(1, word.size()) != word) continue;
    size_t start = 1 + word.size();
    size_t n = digits_at(line, start);
    if (n == 0 || line.substr(start + n, 2) != "]:") return line;
    rank = line.substr(start, n);
    std::string_view rest = line.substr(start + n + 2);
    return !rest.empty() && rest[0] == ' ' ? rest.substr(1) : rest;
  }
  // [jobid,rank]<stdout>: / <stderr>:  (OpenMPI --tag-output)
  size_t job = digits_at(line, 1);
  if (job == 0 || 1 + job >= line.size() || line[1 + job] != ',') return line;
  size_t start = 2 + job;
  size_t n = digits_at(line, start);
  if (n == 0 || line.substr(start + n, 2) != "]<") return line;
  size_t close = line.find(">:", start + n);
  if (close == std::string_view::npos || close > start + n + 10) return line;
  rank = line.substr(start, n);
  std::string_view rest = line.substr(close + 2);
  return !rest.empty() && rest[0] == ' ' ? rest.substr(1) : rest;
}

CleanLine clean_line(std::string_view raw, std::string& storage) {
  CleanLine out;
  std::string_view text = raw;
  if (std::memchr(raw.data(), '\x1b', raw.size()) != nullptr) {
    strip_ansi(raw, storage);
    text = storage;
  }
  out.text = split_rank_prefix(text, out.rank);
  return out;
}

std::string_view traceback_frame_file(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line.substr(i, 6) != "File \"") return {};
  size_t end = line.find('"', i + 6);
  if (end == std::string_view::npos) return {};
  return line.substr(i + 6, end - i - 6);
}

std::string to_valid_utf8(std::string_view s, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(s.size(), max_bytes));
  size_t i = 0;
  while (i < s.size() && out.size() < max_bytes) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (ok && len == 2) ok = c >= 0xc2;  // no overlong forms
    if (ok && len == 3) {
      auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);  // overlong, surrogates
    }
    if (ok && len == 4) {
      auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = c <= 0xf4 && !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
    }
    if (!ok) {
      out += '?';
      ++i;
      continue;
    }
    if (out.size() + len > max_bytes) break;
    if (len == 1 && c < 0x20 && c != '\t') out += ' ';  // control characters
    else out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

}  // namespace cd
