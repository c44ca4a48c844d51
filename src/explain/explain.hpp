#pragma once
// explain's entry points: scan a file descriptor or a string with the signatures
// of the knowledge base.
#include <string>
#include <string_view>

#include "explain/matcher.hpp"
#include "explain/scanner.hpp"
#include "facts/log.hpp"
#include "kb/kb.hpp"

namespace cd {

// The matcher over the knowledge base's signatures, compiled once per Kb.
const Matcher& matcher_for(const Kb& kb);

// Reads `fd` to its end in large chunks. Throws InputError when reading fails.
LogFacts scan_fd(int fd, const std::string& source, const Matcher& matcher, ScanLimits limits = {});
// Opens and scans a file ("-" = standard input). Throws InputError when unreadable.
LogFacts scan_file(const std::string& path, const Matcher& matcher, ScanLimits limits = {});
LogFacts scan_text(std::string_view text, const Matcher& matcher, ScanLimits limits = {});

}  // namespace cd
