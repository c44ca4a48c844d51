#pragma once
// explain's entry points: scan a file descriptor or a string with the signatures
// of the knowledge base.
#include <string>
#include <string_view>
#include <vector>

#include "explain/matcher.hpp"
#include "explain/scanner.hpp"
#include "facts/binary.hpp"
#include "facts/log.hpp"
#include "kb/kb.hpp"

namespace cd {

// The matcher over the knowledge base's signatures, compiled once per Kb.
const Matcher& matcher_for(const Kb& kb);

// Reads `fd` to its end in large chunks. Throws InputError when reading fails. `head`, when
// given, receives the first limits.keep_head bytes (for the report parsers).
LogFacts scan_fd(int fd, const std::string& source, const Matcher& matcher, ScanLimits limits = {},
                 std::string* head = nullptr);
// Opens and scans a file ("-" = standard input). Throws InputError when unreadable.
LogFacts scan_file(const std::string& path, const Matcher& matcher, ScanLimits limits = {}, std::string* head = nullptr);
LogFacts scan_text(std::string_view text, const Matcher& matcher, ScanLimits limits = {});

// Binaries a kernel-image error names — a library path in the matched line, or the compiled
// module of the traceback frame — that are not among `known` (at most 8, in log order): the
// arch rules show their images and verdicts once they are scanned (explain/named_binaries.cpp).
std::vector<std::string> binaries_named(const LogFacts& log, const std::vector<BinaryScan>& known);

}  // namespace cd
