#pragma once
// Issue 12 #7, shared by the end-to-end and renderer tests: a string from input (a file
// name, a fact, a log line) carrying a clear-screen sequence, an OSC window-title sequence,
// a BEL and a newline followed by a fake shell line must reach the output escaped, in text
// with and without colours and in Markdown.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "util/subprocess.hpp"

namespace cdtest {

// ESC[2J, OSC 0 (window title) ended by BEL, then a newline and a line that looks like a command.
inline const std::string kHostile = "evil\x1b[2J\x1b]0;pwned\x07\n$ curl x | sudo sh #";
// What shown() makes of it.
inline const std::string kHostileShown = "evil\\x1b[2J\\x1b]0;pwned\\x07\\n$ curl x | sudo sh #";

// Every ESC in `out` starts one of our own colour codes (ESC [ digits ; m), there is no BEL
// and no line (indentation aside) starts with the fake command.
inline ::testing::AssertionResult no_injection(const std::string& out) {
  for (size_t i = out.find('\x1b'); i != std::string::npos; i = out.find('\x1b', i + 1)) {
    size_t j = i + 1;
    bool sgr = j < out.size() && out[j] == '[';
    for (++j; sgr && j < out.size() && (std::isdigit(static_cast<unsigned char>(out[j])) || out[j] == ';');) ++j;
    if (!sgr || j >= out.size() || out[j] != 'm')
      return ::testing::AssertionFailure() << "raw escape sequence at byte " << i << " in:\n" << out;
  }
  if (out.find('\x07') != std::string::npos) return ::testing::AssertionFailure() << "raw BEL in:\n" << out;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, 8, "$ curl x") == 0)
      return ::testing::AssertionFailure() << "injected line \"" << line << "\" in:\n" << out;
  }
  return ::testing::AssertionSuccess();
}

struct Output {
  int code = -1;
  std::string out, err;
};

// The built cuda-doctor with `args` as given (no shell: names keep their newlines) and `env` added.
inline Output run_doctor(std::vector<std::string> args, const std::map<std::string, std::string>& env = {}) {
  cd::ProcessOptions o;
  o.timeout = std::chrono::seconds(120);
  o.env_set = env;
  if (!env.count("NO_COLOR")) o.env_unset.push_back("NO_COLOR");  // the modes choose colours themselves
  args.insert(args.begin(), CD_BINARY);
  cd::ProcessResult p = cd::run_process(args, o);
  return {p.exit_code, p.out, p.err};
}

// The three ways a person reads the text: plain (NO_COLOR), --no-color, forced colours; and
// --markdown. Each entry: a label, the extra arguments, the environment.
struct Mode {
  std::string name;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
};
inline std::vector<Mode> text_modes() {
  return {{"NO_COLOR", {}, {{"NO_COLOR", "1"}}},
          {"--no-color", {"--no-color"}, {{"CLICOLOR_FORCE", "1"}}},
          {"colours", {}, {{"CLICOLOR_FORCE", "1"}}},
          {"--markdown", {"--markdown"}, {{"CLICOLOR_FORCE", "1"}}}};
}

}  // namespace cdtest
