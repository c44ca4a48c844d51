#pragma once
// Turns one raw log line into the text the signatures see: ANSI escapes removed,
// the launcher's rank prefix ("[rank3]:", "[default3]:", "[1,3]<stderr>:") split off.
#include <string>
#include <string_view>

namespace cd {

struct CleanLine {
  std::string_view text;    // points into `storage` or into the raw line
  std::string_view rank;    // "3", or empty
  std::string_view source;  // a log aggregator's service or unit ("vllm-1", "kernel:"), or empty
};

// `storage` is scratch space reused between calls; the result may point into it.
CleanLine clean_line(std::string_view raw, std::string& storage);

// Removes ANSI/VT100 escape sequences (CSI, OSC, two-byte escapes).
void strip_ansi(std::string_view in, std::string& out);

// Splits a log aggregator's per-line prefix off the front and returns the rest: docker
// compose ("vllm-1  | "), journald/syslog ("Oct 04 13:19:39 host unit[394]: "), a bare
// "kernel: ". `source` names the service or unit (lines of different sources never join).
std::string_view split_aggregator_prefix(std::string_view line, std::string_view& source);

// Splits a launcher rank prefix off the front; returns the rest.
std::string_view split_rank_prefix(std::string_view line, std::string_view& rank);

// The file of a Python traceback frame line ('  File "/x/y.py", line 3, in f'), or empty.
std::string_view traceback_frame_file(std::string_view line);

// Replaces the typographic and full-width punctuation that pasted or localised logs carry
// (’ ‘ “ ” ： （ ） ， 。 and no-break space) with the ASCII the signatures are written in
// ("couldn‘t", "Fatal error： cuda_runtime.h：No such file"). False when `in` has none (out untouched).
bool normalize_punctuation(std::string_view in, std::string& out);

// How a line continues the one before it, when it does: a message wrapped by a terminal
// at a fixed width, an indented continuation (CMake, TensorFlow, NGC banners, pip), or a
// kernel log record split over several "NVRM:" lines.
enum class Continuation { none, glued, spaced };
// `prev` and `cur` are cleaned lines; `prev_prev_size` is the length of the line before
// `prev` (equal lengths mark a block wrapped at the terminal width).
Continuation continuation_of(std::string_view prev, std::string_view cur, size_t prev_prev_size);
// The part of a continuation line that is appended to the joined message.
std::string_view continuation_text(std::string_view cur, std::string_view prev);

// A copy that is valid UTF-8 (invalid bytes become '?'), at most max_bytes long.
std::string to_valid_utf8(std::string_view s, size_t max_bytes);

}  // namespace cd
