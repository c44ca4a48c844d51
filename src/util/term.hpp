#pragma once
// Terminal styling. Color only on a terminal and never when NO_COLOR is set.
#include <string>
#include <string_view>

namespace cd {

enum class Color { none, red, yellow, green, blue, cyan, gray, bold };

class Style {
 public:
  // Decides once from isatty(fd), NO_COLOR, CLICOLOR_FORCE and TERM=dumb.
  static Style for_fd(int fd);
  static Style plain() { return Style(false); }
  explicit Style(bool enabled) : enabled_(enabled) {}

  bool enabled() const { return enabled_; }
  std::string paint(std::string_view text, Color c) const;

 private:
  bool enabled_;
};

// Display width of UTF-8 text (code points; good enough for the symbols we print).
size_t display_width(std::string_view s);

// The text of a progress line: "LABEL DONE/TOTAL ITEM" (or "LABEL ITEM" without a total),
// the item escaped with shown() (it is a file name: a name holding ESC[2J or a newline must
// not reach the terminal) and the whole cut to `max_width` columns at a character boundary.
std::string progress_line(std::string_view label, size_t done, size_t total, std::string_view item, size_t max_width = 100);

// A one-line progress indicator on stderr, shown only on a terminal and only
// once the work has taken more than a second.
class Progress {
 public:
  explicit Progress(std::string label);
  ~Progress();
  void update(size_t done, size_t total, std::string_view item = {});
  void finish();

 private:
  std::string label_;
  bool tty_;
  bool shown_ = false;
  double start_;
  double last_ = 0;
};

}  // namespace cd
