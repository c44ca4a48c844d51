// The real-log corpus of issue 17 (tests/corpus): failure logs from public issue threads,
// each with the root cause the thread established, split once by thread into a development
// and a validation set, and healthy logs that must give no error or warning. The same
// scoring as scripts/explain_corpus.py, run in-process: scan the excerpt, derive, run the
// log rules with no machine facts (`explain --no-probe`).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "derive/model.hpp"
#include "explain/explain.hpp"
#include "explain/report.hpp"
#include "kb/kb.hpp"
#include "rules/report.hpp"
#include "rules/rules.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

namespace fs = std::filesystem;
const fs::path kCorpus = fs::path(CD_FIXTURES).parent_path() / "corpus";

// Floors of the recorded scores (docs/BENCHMARKS.md, "explain: real-log corpus"): a change
// that loses cases fails here; raise them when the mechanism improves.
constexpr double kDevFloor = 0.99;
// The validation floor went from 0.93 to 0.92 on 2026-12-08 (second round): eight new validation
// threads were added, two of them still misses (no change is written against validation logs),
// so the whole validation set scores 135/146 = 92.5 %.
constexpr double kValFloor = 0.92;

struct Case {
  std::string name;
  std::map<std::string, std::string> head;  // "#: key: value" lines
  std::string body;
  std::string at(const std::string& key) const {
    auto it = head.find(key);
    return it == head.end() ? std::string() : it->second;
  }
};

Case read_case(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  Case c;
  c.name = p.filename().string();
  std::string text = ss.str();
  size_t pos = 0;
  while (text.compare(pos, 3, "#: ") == 0) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos + 3, end - pos - 3);
    size_t colon = line.find(':');
    c.head[std::string(trim(line.substr(0, colon)))] = std::string(trim(line.substr(colon + 1)));
    pos = end + 1;
  }
  c.body = text.substr(pos);
  return c;
}

std::vector<Case> cases(const std::string& sub) {
  std::vector<Case> out;
  for (const auto& e : fs::directory_iterator(kCorpus / sub)) out.push_back(read_case(e.path()));
  std::sort(out.begin(), out.end(), [](const Case& a, const Case& b) { return a.name < b.name; });
  return out;
}

std::map<std::string, std::string> split_of_threads() {
  std::map<std::string, std::string> m;
  std::ifstream in(kCorpus / "split.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto cols = split(line, '\t', true);
    m[cols.at(0)] = cols.at(1);
  }
  return m;
}

// As `explain --no-probe`: pasted environment reports become the facts (explain/report.hpp).
Findings explain_text(const std::string& text) {
  const Kb& kb = Kb::get();
  ReportFacts reports = parse_reports(text, kb);
  Facts facts = reports.facts;
  facts.log = scan_text(text, matcher_for(kb));
  return explain_rules(derive(facts, kb), kb, reports.reports, reports.sources);
}

std::set<std::string> finding_ids() {
  std::ifstream in(std::string(CD_SOURCE_DIR) + "/docs/findings.md");
  std::set<std::string> ids;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| ", 0) != 0) continue;
    std::string id(trim(line.substr(2, line.find('|', 2) - 2)));
    if (id.find('.') != std::string::npos && id.find(' ') == std::string::npos) ids.insert(id);
  }
  return ids;
}

TEST(ExplainCorpus, EveryCaseNamesItsThreadCauseAndAKnownFindingAndIsSplitOnce) {
  auto ids = finding_ids();
  auto split = split_of_threads();
  std::set<std::string> threads, val_threads;
  for (const auto& c : cases("failures")) {
    for (const char* k : {"thread", "producer", "expected", "cause", "excerpt"})
      EXPECT_FALSE(c.at(k).empty()) << c.name << " lacks #: " << k;
    EXPECT_TRUE(ids.count(c.at("expected"))) << c.name << ": unknown finding id " << c.at("expected");
    EXPECT_EQ(c.at("thread").rfind("https://", 0), 0u) << c.name;
    ASSERT_TRUE(split.count(c.at("thread"))) << c.name << ": thread not in split.tsv";
    const std::string& s = split[c.at("thread")];
    EXPECT_TRUE(s == "dev" || s == "val") << c.name;
    EXPECT_FALSE(trim(c.body).empty()) << c.name;
    threads.insert(c.at("thread"));
    if (s == "val") val_threads.insert(c.at("thread"));
  }
  EXPECT_GE(cases("failures").size(), 300u);
  EXPECT_GE(cases("healthy").size(), 50u);
  // The issue asks for a validation set of at least a third, split by thread.
  EXPECT_GE(3 * val_threads.size(), threads.size());
}

TEST(ExplainCorpus, TopOneOnDevelopmentAndValidationStaysAboveTheRecordedFloor) {
  auto split = split_of_threads();
  std::map<std::string, std::pair<int, int>> score;  // split -> (right, total)
  std::vector<std::string> dev_misses;
  for (const auto& c : cases("failures")) {
    Findings f = explain_text(c.body);
    std::string got = f.empty() ? "-" : f.front().id;
    const std::string& s = split[c.at("thread")];
    bool ok = got == c.at("expected");
    score[s].first += ok;
    score[s].second += 1;
    // Only development misses are shown: signatures are never written against validation.
    if (!ok && s == "dev") dev_misses.push_back(c.name + ": expected " + c.at("expected") + ", got " + got);
  }
  auto rate = [&](const std::string& s) { return double(score[s].first) / std::max(1, score[s].second); };
  std::cout << "dev top-1 " << score["dev"].first << "/" << score["dev"].second << ", validation top-1 "
            << score["val"].first << "/" << score["val"].second << "\n";
  EXPECT_GE(rate("dev"), kDevFloor) << join(dev_misses, "\n");
  EXPECT_GE(rate("val"), kValFloor);
}

TEST(ExplainCorpus, HealthyLogsGiveNoErrorOrWarning) {
  for (const auto& c : cases("healthy")) {
    EXPECT_EQ(c.at("expected"), "-") << c.name;
    for (const auto& f : explain_text(c.body))
      EXPECT_TRUE(f.severity != Severity::error && f.severity != Severity::warning)
          << c.name << ": false alarm " << f.id << " (" << f.title << ")";
  }
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

// Context clues of the log become evidence of the cause: where it ran and, without this
// machine's driver, the driver its own nvidia-smi header shows.
TEST(ExplainContext, PlatformEnvironmentAndLoggedDriverAreEvidence) {
  Findings f = explain_text(
      "(base) root@098b49afe624:/# nvidia-smi\n"
      "| NVIDIA-SMI 410.72       Driver Version: 410.72       CUDA Version: 10.0     |\n"
      "  File \"/home/u/miniconda3/envs/py-dl/lib/python3.6/site-packages/tensorflow/python/client/session.py\", line 1511\n"
      "cudaGetDevice() failed. Status: CUDA driver version is insufficient for CUDA runtime version\n"
      "LD_LIBRARY_PATH=/usr/lib/wsl/lib\n");
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "driver.too_old");
  std::string all;
  for (const auto& e : f.front().evidence) all += e.fact + "\n";
  EXPECT_NE(all.find("nvidia-smi in the log (line 2): driver 410.72, supports CUDA up to 10.0"), std::string::npos) << all;
  EXPECT_NE(all.find("the log comes from a container (root@098b49afe624:) (line 1)"), std::string::npos) << all;
  EXPECT_NE(all.find("the program ran in conda environment py-dl (line 3)"), std::string::npos) << all;
  EXPECT_NE(all.find("the log comes from WSL2 (/usr/lib/wsl/lib) (line 5)"), std::string::npos) << all;
  // Context alone is no finding.
  EXPECT_TRUE(explain_text("root@098b49afe624:/# ls /usr/lib/wsl/lib\n").empty());
}

}  // namespace
}  // namespace cd
