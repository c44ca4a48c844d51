// The default `check` report is one screen (issue 11): a checklist with ✓ / ▲ / ✖ per item,
// each error and warning as a title and its first fix, info counted; -v and --explain ID
// show everything. Replays the recorded machines (tests/fixtures/h200, tests/fixtures/cpu).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_helpers.hpp"

using cdtest::doctor;
using nlohmann::json;

namespace {

const std::string kH200 = std::string(CD_FIXTURES) + "/h200/facts.json";
const std::string kCpu = std::string(CD_FIXTURES) + "/cpu/facts.json";
const std::map<std::string, std::string> kPlain = {{"NO_COLOR", "1"}};

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// The report line that starts (after its indent) with `prefix`; "" when none does.
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.find_first_not_of(' ') != std::string::npos && l.substr(l.find_first_not_of(' ')).starts_with(prefix)) return l;
  return "";
}

std::string replay(const json& facts, const std::string& name, std::vector<std::string> extra = {}) {
  std::string path = cdtest::temp_dir("summary-" + name) + "/facts.json";
  cdtest::write_file(path, facts.dump());
  std::vector<std::string> args = {"check", "--facts", path};
  args.insert(args.end(), extra.begin(), extra.end());
  return doctor(args, kPlain).out;
}

json h200() {
  std::ifstream in(kH200);
  return json::parse(in);
}

}  // namespace

TEST(CheckSummary, HealthyH200FitsOneScreenAndReadsHealthy) {
  auto r = doctor({"check", "--facts", kH200}, kPlain);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_LE(lines(r.out), 40u) << r.out;
  EXPECT_NE(line_starting(r.out, "✓ driver").find("580.159.04"), std::string::npos) << r.out;
  EXPECT_NE(line_starting(r.out, "✓ GPU 0").find("sm_90"), std::string::npos) << r.out;
  EXPECT_NE(line_starting(r.out, "✓ toolkit").find("/usr/local/cuda-13.0"), std::string::npos) << r.out;
  EXPECT_NE(line_starting(r.out, "✓ python").find("/opt/torch/.venv"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("torch 2.11.0+cu130"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no problems found"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 errors, 0 warnings, 10 info"), std::string::npos) << r.out;
  // Info findings are counted, not printed: their evidence is for -v.
  EXPECT_EQ(r.out.find("evidence"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libs.duplicate_copies"), std::string::npos) << r.out;
}

TEST(CheckSummary, CpuMachineFitsFifteenLinesWithTheErrorAndItsFix) {
  auto r = doctor({"check", "--facts", kCpu}, kPlain);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_LE(lines(r.out), 15u) << r.out;
  EXPECT_FALSE(line_starting(r.out, "✖ driver").empty()) << r.out;
  std::string title = line_starting(r.out, "✖ No NVIDIA driver");
  EXPECT_NE(title.find("driver.missing"), std::string::npos) << r.out;
  // The finding's first command follows its title; the comments and the rest are for -v.
  size_t at = r.out.find(title);
  std::string next = r.out.substr(at + title.size() + 1, r.out.find('\n', at + title.size() + 1) - at - title.size() - 1);
  EXPECT_NE(next.find("$ sudo ubuntu-drivers install"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("$ sudo reboot"), std::string::npos) << r.out;
}

TEST(CheckSummary, AWarningMarksTheEnvironmentItBelongsTo) {
  json facts = h200();
  for (auto& py : facts["pythons"]) {  // jaxlib without its CUDA plugin: a framework.cpu_build warning
    json keep = json::array();
    for (auto& p : py["packages"])
      if (!p["name"].get<std::string>().starts_with("jax-cuda")) keep.push_back(p);
    py["packages"] = keep;
  }
  std::string out = replay(facts, "jax-warning");
  EXPECT_FALSE(line_starting(out, "▲ python").empty()) << out;
  EXPECT_FALSE(line_starting(out, "✓ driver").empty()) << out;
  EXPECT_NE(line_starting(out, "▲ jaxlib").find("framework.cpu_build"), std::string::npos) << out;
  EXPECT_NE(out.find("0 errors, 1 warning"), std::string::npos) << out;
}

TEST(CheckSummary, VerboseKeepsEveryFindingInFull) {
  auto r = doctor({"check", "-v", "--facts", kH200}, kPlain);
  EXPECT_NE(r.out.find("1. Driver and GPUs"), std::string::npos);
  EXPECT_NE(r.out.find("libs.duplicate_copies"), std::string::npos);
  EXPECT_NE(r.out.find("evidence"), std::string::npos);
  EXPECT_GT(lines(r.out), 100u);
}

TEST(CheckSummary, ExplainPrintsOneFindingInFullInBothSpellings) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"check", "--explain", "framework.cpu_build", "--facts", kH200},
           {"check", "--facts=" + kH200, "--explain=framework.cpu_build"}}) {
    auto r = doctor(args, kPlain);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("onnxruntime 1.30.0 is a CPU-only build"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("evidence"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("$ /opt/torch/.venv/bin/python3 -m pip install onnxruntime-gpu"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("libs.duplicate_copies"), std::string::npos) << "only the finding asked for";
  }
  auto prefix = doctor({"check", "--facts", kH200, "--explain", "libs.*"}, kPlain);
  EXPECT_NE(prefix.out.find("2 copies of cudnn"), std::string::npos) << prefix.out;
}

TEST(CheckSummary, ExplainOfAFindingThisMachineDoesNotHaveSaysSo) {
  auto r = doctor({"check", "--facts", kH200, "--explain", "driver.missing"}, kPlain);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no finding driver.missing on this machine"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("libs.duplicate_copies"), std::string::npos) << "lists the ids it has: " << r.out;
}

// Issue 12 #7: strings from input (host name, GPU name, toolkit path, package version) reach no
// terminal or Markdown reader as control sequences or extra lines, in every check output.
TEST(CheckSummary, InputCannotForgeLinesOrEscapesInAnyCheckOutput) {
  json facts = h200();
  facts["host"]["hostname"] = "box\x1b]0;pwned\x07";
  facts["driver"]["gpus"][0]["name"] = "NVIDIA H200\n      $ curl x | sudo sh";
  facts["toolkit"]["toolkits"][0]["root"] = "/usr/local/cuda-13.0\x1b[2J|`x`";
  facts["pythons"][0]["packages"][0]["version"] = "1.0\r\n$ rm -rf ~";
  for (const auto& extra : std::vector<std::vector<std::string>>{{}, {"-v"}, {"--markdown"}}) {
    std::string out = replay(facts, "hostile", extra);
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
    EXPECT_EQ(out.find('\r'), std::string::npos) << out;
    EXPECT_TRUE(line_starting(out, "$ curl").empty()) << out;
    EXPECT_TRUE(line_starting(out, "$ rm").empty()) << out;
    EXPECT_NE(out.find("\\x1b"), std::string::npos) << "escaped, not dropped: " << out;
  }
}
