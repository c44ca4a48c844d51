// Golden output: recorded facts (tests/fixtures/h200, tests/fixtures/cpu) replayed through
// `check --facts` must print exactly the files in tests/fixtures/golden/. They pin the whole
// pipeline (facts loading, knowledge base, rules, renderers), so a refactor that changes one
// character of the report fails here and shows the first differing line.
//
// After an intended change, regenerate and review the diff:
//   CD_UPDATE_GOLDENS=1 ./dev.sh test -R Golden && git diff tests/fixtures/golden
// (or CD_UPDATE_GOLDENS=1 ctest --test-dir build -R Golden in a configured build).
// Anything that differs between runs or checkouts (this build's paths) is replaced by a
// placeholder before comparing; the recorded facts themselves carry no live times.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/cli_helpers.hpp"

using cdtest::doctor;

namespace {

const std::string kGolden = std::string(CD_FIXTURES) + "/golden/";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); !from.empty() && at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// The checkout's and build's paths differ per machine; nothing else in a --facts replay should.
std::string normalise(std::string s) {
  s = replace_all(std::move(s), CD_BUILD_DIR, "<build>");
  return replace_all(std::move(s), CD_SOURCE_DIR, "<src>");
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "line N: expected … / got …" for the first difference, so a failure reads without a diff tool.
std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int n = 1;; ++n) {
    bool ea = !std::getline(a, la), eb = !std::getline(b, lb);
    if (ea && eb) return "identical";
    if (ea || eb || la != lb)
      return "line " + std::to_string(n) + ":\n  golden: " + (ea ? "<end>" : la) + "\n  now:    " + (eb ? "<end>" : lb);
  }
}

void expect_golden(const std::string& name, const std::vector<std::string>& args) {
  auto r = doctor(args, {{"NO_COLOR", "1"}, {"CLICOLOR_FORCE", "\x01"}, {"COLUMNS", "\x01"}});
  ASSERT_TRUE(r.code == 0 || r.code == 1 || r.code == 2) << r.err;
  std::string got = normalise(r.out);
  const char* update = std::getenv("CD_UPDATE_GOLDENS");
  if (update && *update && std::string(update) != "0") {
    std::ofstream(kGolden + name, std::ios::binary) << got;
    GTEST_SKIP() << "rewrote " << name;
  }
  std::string want = read(kGolden + name);
  ASSERT_FALSE(want.empty()) << kGolden + name << " missing: run CD_UPDATE_GOLDENS=1 ctest --test-dir build -R Golden";
  EXPECT_TRUE(want == got) << name << " differs from the golden file, " << first_difference(want, got)
                           << "\n(intended? CD_UPDATE_GOLDENS=1 ctest --test-dir build -R Golden, then review git diff)";
}

const std::string kH200 = std::string(CD_FIXTURES) + "/h200/facts.json";
const std::string kCpu = std::string(CD_FIXTURES) + "/cpu/facts.json";

}  // namespace

TEST(Golden, H200CheckText) { expect_golden("h200-check.txt", {"check", "--facts", kH200}); }
TEST(Golden, H200CheckVerboseText) { expect_golden("h200-check-v.txt", {"check", "-v", "--facts", kH200}); }
TEST(Golden, H200CheckMarkdown) { expect_golden("h200-check.md", {"check", "--markdown", "--facts", kH200}); }
TEST(Golden, H200CheckJson) { expect_golden("h200-check.json", {"check", "--json", "--facts", kH200}); }
TEST(Golden, CpuCheckText) { expect_golden("cpu-check.txt", {"check", "--facts", kCpu}); }
TEST(Golden, CpuCheckMarkdown) { expect_golden("cpu-check.md", {"check", "--markdown", "--facts", kCpu}); }
TEST(Golden, CpuCheckJson) { expect_golden("cpu-check.json", {"check", "--json", "--facts", kCpu}); }
