// The signature table: complete, well-formed, and every finding id covered by a
// signature and by a corpus case.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "explain_helpers.hpp"
#include "kb/errors.hpp"

namespace cd {
namespace {

std::set<std::string> documented_ids() {
  std::string text = test::read_file(std::string(CD_SOURCE_DIR) + "/docs/findings.md");
  std::set<std::string> ids;
  std::regex row(R"(^\| ([a-z]+\.[a-z_]+) \|([^\n]*))", std::regex::multiline);
  // Rows marked "no log signature" are states of the live machine (ps, check) that no log shows.
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator(); ++it)
    if ((*it)[2].str().find("no log signature") == std::string::npos) ids.insert((*it)[1]);
  return ids;
}

TEST(Signatures, AtLeastEightyAndAllCompile) {
  const auto& sigs = error_signatures(Kb::get());
  EXPECT_GE(sigs.size(), 80u);
  EXPECT_EQ(test::kb_matcher().size(), sigs.size());
  std::set<std::string> names;
  for (const auto& s : sigs) {
    EXPECT_TRUE(names.insert(s.name).second) << "duplicate signature " << s.name;
    EXPECT_FALSE(s.source.empty()) << s.name;
    if (s.role != SignatureRole::context) {
      EXPECT_FALSE(s.explanation.empty()) << s.name;
    }
  }
}

TEST(Signatures, IdsAreDocumentedAndEveryIdIsCovered) {
  auto ids = documented_ids();
  ASSERT_GE(ids.size(), 40u);
  std::set<std::string> covered;
  for (const auto& s : error_signatures(Kb::get())) {
    EXPECT_TRUE(ids.count(s.id)) << s.name << " maps to undocumented id " << s.id;
    covered.insert(s.id);
  }
  for (const auto& id : ids) EXPECT_TRUE(covered.count(id)) << "no signature for " << id;
}

TEST(Signatures, EveryIdHasACorpusCase) {
  std::set<std::string> cased;
  for (const auto& c : test::corpus()) {
    cased.insert(c.primary);
    cased.insert(c.also.begin(), c.also.end());
  }
  for (const auto& id : documented_ids()) EXPECT_TRUE(cased.count(id)) << "no tests/fixtures/logs case for " << id;
}

TEST(Signatures, TemplatesFillCapturesAndLeaveBracesOfShellAlone) {
  EXPECT_EQ(fill_template("GPU {gpu} has {free}", {{"gpu", "0"}, {"free", "1 GiB"}}), "GPU 0 has 1 GiB");
  EXPECT_EQ(fill_template("${LD_LIBRARY_PATH:+x} {missing}!", {}), "${LD_LIBRARY_PATH:+x} !");
  EXPECT_EQ(fill_template("{ not a name }", {}), "{ not a name }");
}

// A {name} nothing fills becomes "" (fill_template): every one must be a capture of the
// signature's patterns, or in a fix line one of the machine's commands (rules/log.cpp).
TEST(Signatures, EveryPlaceholderIsFilled) {
  const std::regex group(R"(\(\?P<([a-z0-9_]+)>)"), placeholder(R"(\{([a-z0-9_]+)\})");
  auto names = [](const std::string& text, const std::regex& re) {
    std::set<std::string> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) out.insert((*it)[1]);
    return out;
  };
  int machine = 0;
  for (const auto& s : error_signatures(Kb::get())) {
    std::set<std::string> captures = names(s.pattern + s.repeat, group);
    for (const auto& n : names(s.title + s.explanation, placeholder)) EXPECT_TRUE(captures.count(n)) << s.name << ": {" << n << "}";
    for (const auto& line : s.fix)
      for (const auto& n : names(line, placeholder)) {
        bool is_machine = n == "kernel_headers" || n == "hold_driver";
        machine += is_machine;
        EXPECT_TRUE(captures.count(n) || is_machine) << s.name << ": {" << n << "} in " << line;
      }
  }
  EXPECT_GE(machine, 3);
}

TEST(Signatures, XidTable) {
  const XidInfo* x79 = find_xid(Kb::get(), 79);
  ASSERT_NE(x79, nullptr);
  EXPECT_TRUE(x79->hardware);
  const XidInfo* x31 = find_xid(Kb::get(), 31);
  ASSERT_NE(x31, nullptr);
  EXPECT_FALSE(x31->hardware);
  EXPECT_EQ(find_xid(Kb::get(), 99999), nullptr);
}

TEST(Signatures, BadPatternIsAOneLineError) {
  std::vector<ErrorSignature> sigs(1);
  sigs[0].name = "broken";
  sigs[0].pattern = "(unclosed";
  try {
    Matcher m(sigs);
    FAIL() << "expected InputError";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("broken"), std::string::npos);
  }
}

// Each corpus log yields an event of its expected id (ranking is tested end to end).
TEST(Corpus, EveryCaseMatchesItsId) {
  for (const auto& c : test::corpus()) {
    LogFacts f = scan_file(test::corpus_path(c.file), test::kb_matcher());
    auto ids = test::event_ids(f);
    if (c.primary == "-") {
      EXPECT_TRUE(ids.empty()) << c.file;
      continue;
    }
    EXPECT_NE(std::find(ids.begin(), ids.end(), c.primary), ids.end()) << c.file << " lacks " << c.primary;
  }
}

}  // namespace
}  // namespace cd
