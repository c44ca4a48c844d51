#pragma once
// Turns one raw log line into the text the signatures see: ANSI escapes removed,
// the launcher's rank prefix ("[rank3]:", "[default3]:", "[1,3]<stderr>:") split off.
#include <string>
#include <string_view>

namespace cd {

struct CleanLine {
  std::string_view text;  // points into `storage` or into the raw line
  std::string_view rank;  // "3", or empty
};

// `storage` is scratch space reused between calls; the result may point into it.
CleanLine clean_line(std::string_view raw, std::string& storage);

// Removes ANSI/VT100 escape sequences (CSI, OSC, two-byte escapes).
void strip_ansi(std::string_view in, std::string& out);

// Splits a launcher rank prefix off the front; returns the rest.
std::string_view split_rank_prefix(std::string_view line, std::string_view& rank);

// The file of a Python traceback frame line ('  File "/x/y.py", line 3, in f'), or empty.
std::string_view traceback_frame_file(std::string_view line);

// A copy that is valid UTF-8 (invalid bytes become '?'), at most max_bytes long.
std::string to_valid_utf8(std::string_view s, size_t max_bytes);

}  // namespace cd
