#include "util/term.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "util/escape.hpp"

namespace cd {
namespace {
double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Style Style::for_fd(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return Style(false);
  const char* force = std::getenv("CLICOLOR_FORCE");
  if (force && *force && std::string_view(force) != "0") return Style(true);
  const char* term = std::getenv("TERM");
  if (term && std::string_view(term) == "dumb") return Style(false);
  return Style(isatty(fd) == 1);
}

std::string Style::paint(std::string_view text, Color c) const {
  if (!enabled_ || c == Color::none) return std::string(text);
  const char* code = "";
  switch (c) {
    case Color::red: code = "\033[31m"; break;
    case Color::yellow: code = "\033[33m"; break;
    case Color::green: code = "\033[32m"; break;
    case Color::blue: code = "\033[34m"; break;
    case Color::cyan: code = "\033[36m"; break;
    case Color::gray: code = "\033[90m"; break;
    case Color::bold: code = "\033[1m"; break;
    case Color::none: break;
  }
  return fmt::format("{}{}\033[0m", code, text);
}

size_t display_width(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string progress_line(std::string_view label, size_t done, size_t total, std::string_view item, size_t max_width) {
  std::string line = total ? fmt::format("{} {}/{} {}", shown(label), done, total, shown(item))
                           : fmt::format("{} {}", shown(label), shown(item));
  // Cut before the first byte of the character that would pass max_width: never half a UTF-8 sequence.
  size_t width = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
    if (++width > max_width) return line.substr(0, i);
  }
  return line;
}

Progress::Progress(std::string label) : label_(std::move(label)), tty_(isatty(2) == 1), start_(now_seconds()) {}

Progress::~Progress() { finish(); }

void Progress::update(size_t done, size_t total, std::string_view item) {
  if (!tty_) return;
  double t = now_seconds();
  if (t - start_ < 1.0 || t - last_ < 0.1) return;
  last_ = t;
  shown_ = true;
  std::string line = progress_line(label_, done, total, item);
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

void Progress::finish() {
  if (shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }
}

}  // namespace cd
