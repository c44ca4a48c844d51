#pragma once
// What explain found in a log: matched signatures, with their captures and place.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

struct LogEvent {
  std::string id;         // finding id the signature maps to
  std::string signature;  // signature name in data/errors.toml
  uint64_t line = 0;      // 1-based line number in the log
  std::string rank;       // "3" for "[rank3]:" lines
  std::string text;       // the matched line (cleaned, truncated, valid UTF-8)
  std::map<std::string, std::string> captures;
  std::string frame;      // innermost Python traceback frame file seen before this line ("" when none)
};
CD_JSON(LogEvent, id, signature, line, rank, text, captures, frame)

struct LogFacts {
  std::string source;  // file name, "-" or the command
  uint64_t lines = 0;
  uint64_t bytes = 0;
  std::vector<LogEvent> events;  // in log order; at most a few per signature (see counts)
  std::map<std::string, uint64_t> counts;  // signature name -> lines it matched
  uint64_t events_dropped = 0;   // matches beyond the per-signature cap
  uint64_t long_lines = 0;       // lines cut at the line-length limit
  std::vector<std::string> ranks;  // distinct rank prefixes seen
  std::vector<std::string> command;  // explain -- CMD ARGS
  int command_exit = -1;   // its exit status (-1: not a command, or it did not exit normally)
  int command_signal = 0;  // signal that ended it
  std::string command_error;  // could not start / timed out
};
CD_JSON(LogFacts, source, lines, bytes, events, counts, events_dropped, long_lines, ranks, command, command_exit,
        command_signal, command_error)

}  // namespace cd
