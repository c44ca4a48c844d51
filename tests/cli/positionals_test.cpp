// Every option takes one value per use and never swallows the positional after it
// (issue 11 part 3: `scan --gpu H100 ext.so` read ext.so as a second GPU). For each
// subcommand, each of its options is written before a positional in both spellings,
// `--opt V` and `--opt=V`; subcommands without positionals must name the stray word.
#include <gtest/gtest.h>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/cli_helpers.hpp"

using cdtest::doctor;

namespace {

const std::string kH200 = std::string(CD_FIXTURES) + "/h200/facts.json";
const std::string kLib = "/usr/local/cuda/lib64/libcudart.so";  // a real NVIDIA library (CUDA toolkit)

// `--opt V` and `--opt=V`, each followed by `rest`.
std::vector<std::vector<std::string>> both_spellings(const std::string& sub, const std::string& opt, const std::string& value,
                                                     const std::vector<std::string>& rest) {
  std::vector<std::string> a = {sub, opt, value}, b = {sub, opt + "=" + value};
  a.insert(a.end(), rest.begin(), rest.end());
  b.insert(b.end(), rest.begin(), rest.end());
  return {a, b};
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + " ";
  return s;
}

}  // namespace

TEST(Positionals, ScanGpuDoesNotSwallowThePath) {
  std::string so = kLib;
  if (access(so.c_str(), R_OK) != 0) GTEST_SKIP() << so << " missing";
  for (const auto& [opt, value] : std::vector<std::pair<std::string, std::string>>{
           {"--gpu", "H100"}, {"--driver", "580.65"}, {"--threads", "1"}, {"--ignore", "arch.jit_only"}, {"--timeout", "5"}}) {
    for (auto args : both_spellings("scan", opt, value, {so, "--json"})) {
      if (opt != "--gpu") args.insert(args.end(), {"--gpu", "sm_90"});
      auto r = doctor(args);
      ASSERT_EQ(r.code, 0) << joined(args) << "\n" << r.err;
      auto j = nlohmann::json::parse(r.out);
      ASSERT_EQ(j["binaries"].size(), 1u) << joined(args) << ": the path after " << opt << " must be scanned";
      EXPECT_EQ(j["binaries"][0]["path"], so);
    }
  }
}

TEST(Positionals, ScanGpuRepeatsOrTakesACommaList) {
  std::string so = kLib;
  if (access(so.c_str(), R_OK) != 0) GTEST_SKIP() << so << " missing";
  for (const auto& args : std::vector<std::vector<std::string>>{{"scan", "--gpu", "H100", "--gpu", "sm_80", so, "--json"},
                                                                {"scan", "--gpu", "H100,sm_80", so, "--json"},
                                                                {"scan", "--gpu=H100,sm_80", so, "--json"}}) {
    auto r = doctor(args);
    ASSERT_EQ(r.code, 0) << joined(args) << "\n" << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["gpus"].size(), 2u) << joined(args) << "\n" << r.out.substr(0, 400);
  }
}

TEST(Positionals, ExplainLogAfterEveryOption) {
  std::string dir = cdtest::temp_dir("positionals-explain");
  std::string log = dir + "/fail.log";
  cdtest::write_file(log, "RuntimeError: CUDA error: no kernel image is available for execution on the device\n");
  for (const auto& [opt, value] : std::vector<std::pair<std::string, std::string>>{
           {"--ignore", "memory.*"}, {"--facts", kH200}, {"--timeout", "5"}, {"--root", dir}}) {
    for (auto args : both_spellings("explain", opt, value, {log, "--json"})) {
      if (opt != "--facts") args.push_back("--no-probe");
      auto r = doctor(args);
      ASSERT_TRUE(r.code == 0 || r.code == 2) << joined(args) << "\n" << r.err;
      auto j = nlohmann::json::parse(r.out);
      EXPECT_EQ(j["log"]["source"], log) << joined(args);
    }
  }
}

// check, snapshot, verify and bench take no positionals: a word after an option's value is
// named as unexpected (exit 3), never read as a second value.
TEST(Positionals, NoPositionalSubcommandsNameTheStrayWord) {
  for (const std::string sub : {"check", "snapshot", "verify", "bench"}) {
    std::vector<std::pair<std::string, std::string>> opts = {{"--ignore", "driver.*"}, {"--timeout", "5"}, {"--facts", kH200}};
    if (sub == "verify" || sub == "bench") opts.push_back({"--step-timeout", "5"});
    for (const auto& [opt, value] : opts)
      for (const auto& args : both_spellings(sub, opt, value, {"stray-word"})) {
        auto r = doctor(args);
        EXPECT_EQ(r.code, 3) << joined(args) << "\n" << r.out.substr(0, 300);
        EXPECT_NE(r.err.find("stray-word"), std::string::npos) << joined(args) << "\n" << r.err;
      }
  }
}

TEST(Positionals, CheckIgnoreTakesOneValuePerUse) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"check", "--ignore", "libs.*", "--ignore", "arch.*", "--facts", kH200, "--json"},
           {"check", "--ignore=libs.*,arch.*", "--facts", kH200, "--json"},
           {"--ignore", "libs.*,arch.*", "check", "--json", "--facts=" + kH200}}) {
    auto r = doctor(args);
    ASSERT_TRUE(r.code == 0 || r.code == 2) << joined(args) << "\n" << r.err;
    auto j = nlohmann::json::parse(r.out);
    for (const auto& f : j["findings"]) {
      std::string id = f["id"];
      EXPECT_FALSE(id.starts_with("libs.") || id.starts_with("arch.")) << joined(args) << ": " << id;
    }
  }
}

// A parse error is one line on stderr with what the user typed escaped (a terminal escape in an
// argument must not reach the terminal), and exit 3; --help still succeeds.
TEST(Positionals, ParseErrorsAreOneEscapedLine) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"check", "--no-such-option"},
           {"scan", "--gpu"},
           {"check", "--timeout", "soon"},
           {"check", "--bogus=\x1b]0;owned\x07"}}) {
    auto r = doctor(args);
    EXPECT_EQ(r.code, 3) << joined(args);
    EXPECT_TRUE(r.out.empty()) << joined(args) << "\n" << r.out;
    ASSERT_FALSE(r.err.empty()) << joined(args);
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << joined(args) << "\n" << r.err;
    EXPECT_TRUE(r.err.starts_with("cuda-doctor: ")) << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  }
  auto help = doctor({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("check"), std::string::npos);
}
