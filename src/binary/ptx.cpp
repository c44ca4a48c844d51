#include "binary/ptx.hpp"

#include <charconv>

#include <fmt/format.h>

#include "util/strings.hpp"

namespace cd::bin {
namespace {

int to_int(std::string_view s) {
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// All of `s` is a number below 1000 (a PTX ISA component or an SM number).
bool small_number(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size() && v < 1000;
}

// The identifier after `.entry` up to '(' or whitespace.
std::string entry_name(std::string_view line, size_t at) {
  size_t b = line.find_first_not_of(" \t", at + 6);
  if (b == std::string_view::npos) return {};
  size_t e = line.find_first_of(" \t(", b);
  return std::string(line.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
}

}  // namespace

PtxInfo parse_ptx(std::string_view text, bool entries) {
  PtxInfo info;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = trim(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line.starts_with(".version ")) {
      std::string_view v = trim(line.substr(9));
      v = v.substr(0, v.find_first_of(" \t/"));  // a trailing comment
      size_t dot = v.find('.');
      if (dot != std::string_view::npos && small_number(v.substr(0, dot)) && small_number(v.substr(dot + 1))) {
        info.major = to_int(v.substr(0, dot));
        info.minor = to_int(v.substr(dot + 1));
      } else if (info.problem.empty()) {
        info.problem = fmt::format("bad .version \"{}\" (expected major.minor)", v.substr(0, 40));
      }
    } else if (line.starts_with(".target ")) {
      std::string_view t = trim(line.substr(8));
      t = t.substr(0, t.find_first_of(", \t"));
      if (t.starts_with("sm_")) {
        t.remove_prefix(3);
        size_t digits = 0;
        while (digits < t.size() && t[digits] >= '0' && t[digits] <= '9') ++digits;
        info.arch = small_number(t.substr(0, digits)) ? to_int(t.substr(0, digits)) : 0;
        if (digits < t.size() && (t[digits] == 'a' || t[digits] == 'f')) info.suffix = t[digits];
        if (info.arch == 0 && info.problem.empty()) info.problem = fmt::format("bad .target \"sm_{}\"", t.substr(0, 40));
      }
      if (!entries) break;  // the header ends with .target
    } else if (entries) {
      size_t at = line.find(".entry");
      if (at != std::string_view::npos && (at == 0 || line[at - 1] == ' ' || line[at - 1] == '\t'))
        if (auto name = entry_name(line, at); !name.empty()) info.entries.push_back(std::move(name));
    }
  }
  return info;
}

}  // namespace cd::bin
