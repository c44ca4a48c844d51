#include "explain_helpers.hpp"

#include <fstream>
#include <sstream>

#include "kb/kb.hpp"
#include "util/strings.hpp"

namespace cd::test {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string corpus_path(const std::string& file) { return std::string(CD_FIXTURES) + "/logs/" + file; }

std::vector<CorpusCase> corpus() {
  std::vector<CorpusCase> out;
  for (const auto& line : split(read_file(corpus_path("expected.tsv")), '\n')) {
    if (line.empty() || line[0] == '#') continue;
    auto cols = split(line, '\t', true);
    CorpusCase c;
    c.file = cols.at(0);
    c.primary = cols.at(1);
    if (cols.size() > 2) c.also = split(cols[2], ',');
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> event_ids(const LogFacts& f) {
  std::vector<std::string> ids;
  for (const auto& e : f.events) ids.push_back(e.id);
  return ids;
}

const Matcher& kb_matcher() { return matcher_for(Kb::get()); }

}  // namespace cd::test
