#include "explain/clean.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

#include "util/strings.hpp"

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

namespace {

// UTF-8 sequences of the punctuation pasted or localised logs use, and their ASCII.
struct Punct {
  std::string_view utf8;
  char ascii;
};
constexpr Punct kPunct[] = {
    {"\xe2\x80\x98", '\''}, {"\xe2\x80\x99", '\''}, {"\xe2\x80\x9c", '"'}, {"\xe2\x80\x9d", '"'},
    {"\xef\xbc\x9a", ':'},  {"\xef\xbc\x88", '('},  {"\xef\xbc\x89", ')'}, {"\xef\xbc\x8c", ','},
    {"\xe3\x80\x82", '.'},  {"\xc2\xa0", ' '},
};

// The punctuation at s[i..], or nullptr.
const Punct* punct_at(std::string_view s, size_t i) {
  if (i + 1 >= s.size()) return nullptr;
  auto second = static_cast<unsigned char>(s[i + 1]);  // 0x80, 0xbc or 0xa0 for all of them
  if (second != 0x80 && second != 0xbc && second != 0xa0) return nullptr;
  for (const auto& p : kPunct)
    if (s.substr(i, p.utf8.size()) == p.utf8) return &p;
  return nullptr;
}

bool lead_byte(char c) {
  auto u = static_cast<unsigned char>(c);
  return u == 0xe2 || u == 0xef || u == 0xe3 || u == 0xc2;
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

// Any byte >= 0x80, eight bytes at a time (most log lines are ASCII; this runs on all of them).
bool has_non_ascii(std::string_view s) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (w & 0x8080808080808080ull) return true;
  }
  for (; i < s.size(); ++i)
    if (static_cast<unsigned char>(s[i]) >= 0x80) return true;
  return false;
}

std::string_view ltrim(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return s.substr(i);
}

// Widths terminals and paste boxes commonly wrap at.
bool common_width(size_t n) {
  for (size_t w : {80u, 100u, 120u, 128u, 132u, 136u, 140u, 150u, 160u, 180u, 200u, 240u, 256u})
    if (n == w) return true;
  return false;
}

}  // namespace

bool normalize_punctuation(std::string_view in, std::string& out) {
  size_t i = 0;
  bool any = false;
  while (i < in.size()) {
    const char* p = std::find_if(in.data() + i, in.data() + in.size(), lead_byte);
    size_t at = static_cast<size_t>(p - in.data());
    if (at >= in.size()) break;
    if (const Punct* m = punct_at(in, at)) {
      if (!any) out.assign(in.substr(0, at));
      else out.append(in.substr(i, at - i));
      out += m->ascii;
      any = true;
      i = at + m->utf8.size();
      continue;
    }
    if (any) out.append(in.substr(i, at + 1 - i));
    i = at + 1;
  }
  if (any) out.append(in.substr(std::min(i, in.size())));
  return any;
}

Continuation continuation_of(std::string_view prev, std::string_view cur, size_t prev_prev_size) {
  // Runs on every line: the common case (neither indented nor "NVRM:" nor after a long
  // line) returns after a few byte tests.
  if (prev.empty() || cur.empty()) return Continuation::none;
  char first = cur[0];
  if (!is_space(first)) {
    // A kernel log record continued on lines of its own ("NVRM: was loaded and obtained...").
    if (first == 'N' && cur.starts_with("NVRM: ") && contains(prev, "NVRM: ")) return Continuation::spaced;
    if (prev.size() < 64) return Continuation::none;
    // A block wrapped at the terminal width: the previous line was cut at a common width,
    // or at the width of the line before it, inside a word or right after a space
    // ("unsatisfied condi" + "tion:", "Out " + "of memory"). Records that merely have equal
    // lengths end otherwise or start a new record (upper case, digit, punctuation).
    char last = prev.back();
    bool mid_word = (std::isalpha(static_cast<unsigned char>(last)) || last == ' ') && first >= 'a' && first <= 'z';
    if (mid_word && (common_width(prev.size()) || prev.size() == prev_prev_size)) return Continuation::glued;
    return Continuation::none;
  }
  std::string_view body = ltrim(cur);
  if (body.empty()) return Continuation::none;
  // "[ 1843.30] NVRM: The NVIDIA GPU 0000:b3:00.0" + "       NVRM: (PCI ID: ...) installed ..."
  if (body.starts_with("NVRM: ") && contains(prev, "NVRM: ")) return Continuation::spaced;
  // Python tracebacks are indented too, but their lines are not one message.
  std::string_view pbody = ltrim(prev);
  if (body.starts_with("File \"") || pbody.starts_with("File \"") || body[0] == '^' || body[0] == '~')
    return Continuation::none;
  return Continuation::spaced;  // an indented continuation
}

std::string_view continuation_text(std::string_view cur, std::string_view prev) {
  std::string_view body = ltrim(cur);
  if (body.starts_with("NVRM: ") && contains(prev, "NVRM: ")) body.remove_prefix(6);
  return body;
}

namespace {

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// "vllm-1  | rest": a service name, spaces, "| ".
std::string_view compose_prefix(std::string_view line, std::string_view& source) {
  size_t i = 0;
  while (i < line.size() && i < 64 && (is_alnum(line[i]) || line[i] == '_' || line[i] == '.' || line[i] == '-')) ++i;
  if (i == 0 || !is_alnum(line[0])) return line;
  size_t j = i;
  while (j < line.size() && line[j] == ' ') ++j;
  if (j == i || j >= line.size() || line[j] != '|') return line;
  source = line.substr(0, i);
  std::string_view rest = line.substr(j + 1);
  return !rest.empty() && rest[0] == ' ' ? rest.substr(1) : rest;
}

// "Oct 04 13:19:39 host unit[394]: rest" (journalctl, syslog).
std::string_view syslog_prefix(std::string_view line, std::string_view& source) {
  if (line.size() < 20 || !std::isupper(static_cast<unsigned char>(line[0])) || line[3] != ' ') return line;
  size_t i = 4;
  if (line[i] == ' ') ++i;  // a space-padded day
  size_t d = digits_at(line, i);
  if (d == 0 || d > 2) return line;
  i += d;
  if (line.substr(i, 1) != " " || digits_at(line, i + 1) != 2 || line.substr(i + 3, 1) != ":" || digits_at(line, i + 4) != 2 ||
      line.substr(i + 6, 1) != ":" || digits_at(line, i + 7) != 2 || line.substr(i + 9, 1) != " ")
    return line;
  size_t host_end = line.find(' ', i + 10);
  if (host_end == std::string_view::npos) return line;
  size_t tag_end = line.find(": ", host_end + 1);
  if (tag_end == std::string_view::npos || tag_end - host_end > 64 || line.substr(host_end + 1, tag_end - host_end - 1).find(' ') != std::string_view::npos)
    return line;
  source = line.substr(host_end + 1, tag_end - host_end);
  return line.substr(tag_end + 2);
}

}  // namespace

std::string_view split_aggregator_prefix(std::string_view line, std::string_view& source) {
  source = {};
  if (line.empty()) return line;
  if (line.starts_with("kernel: ")) {
    source = line.substr(0, 7);
    return line.substr(8);
  }
  std::string_view rest = syslog_prefix(line, source);
  if (!source.empty()) return rest;
  return compose_prefix(line, source);
}

CleanLine clean_line(std::string_view raw, std::string& storage) {
  CleanLine out;
  std::string_view text = raw;
  if (std::memchr(raw.data(), '\x1b', raw.size()) != nullptr) {
    strip_ansi(raw, storage);
    text = storage;
  }
  text = split_aggregator_prefix(text, out.source);
  text = split_rank_prefix(text, out.rank);
  // Typographic punctuation: rare, so only lines with a non-ASCII byte are looked at.
  if (has_non_ascii(text)) {
    std::string normalized;
    if (normalize_punctuation(text, normalized)) {
      storage = std::move(normalized);
      text = storage;
    }
  }
  out.text = text;
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
