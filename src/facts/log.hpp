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
  std::string text;       // the matched line (cleaned, truncated)
  std::map<std::string, std::string> captures;
};
CD_JSON(LogEvent, id, signature, line, rank, text, captures)

struct LogFacts {
  std::string source;  // file name, "-" or the command
  uint64_t lines = 0;
  uint64_t bytes = 0;
  std::vector<LogEvent> events;
  int command_exit = -1;  // explain -- CMD
};
CD_JSON(LogFacts, source, lines, bytes, events, command_exit)

}  // namespace cd
