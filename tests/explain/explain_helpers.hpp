#pragma once
// Shared by the explain stage tests: the corpus manifest and small scanners.
#include <string>
#include <vector>

#include "explain/explain.hpp"

namespace cd::test {

struct CorpusCase {
  std::string file;     // under tests/fixtures/logs
  std::string primary;  // expected first finding id, "-" = nothing
  std::vector<std::string> also;
};

// tests/fixtures/logs/expected.tsv
std::vector<CorpusCase> corpus();
std::string corpus_path(const std::string& file);
std::string read_file(const std::string& path);

// Ids of the events of a scan.
std::vector<std::string> event_ids(const LogFacts& f);
const Matcher& kb_matcher();

}  // namespace cd::test
