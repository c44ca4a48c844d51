// End-to-end: the built binary, its flags, exit codes and output formats.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_helpers.hpp"

using cdtest::doctor;

namespace {
bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == s.size() - 1; }
}  // namespace

TEST(Cli, VersionAndHelp) {
  auto v = doctor({"--version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find("cuda-doctor 0."), std::string::npos);
  auto h = doctor({"--help"});
  EXPECT_EQ(h.code, 0);
  for (const char* sub : {"check", "snapshot", "scan", "explain", "verify", "bench"})
    EXPECT_NE(h.out.find(sub), std::string::npos) << sub;
}

TEST(Cli, BadArgumentsExit3) {
  auto r = doctor({"check", "--no-such-flag"});
  EXPECT_EQ(r.code, 3);
  auto root = doctor({"--root", "/no/such/dir"});
  EXPECT_EQ(root.code, 3);
  EXPECT_TRUE(one_line(root.err)) << root.err;
  EXPECT_NE(root.err.find("not a directory"), std::string::npos);
}

TEST(Cli, GarbageFactsFileIsAOneLineErrorExit3) {
  std::string dir = cdtest::temp_dir("garbage");
  cdtest::write_file(dir + "/bad.json", "\x7f\x45LF garbage {{{");
  auto r = doctor({"check", "--facts", dir + "/bad.json"});
  EXPECT_EQ(r.code, 3);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos);
  auto missing = doctor({"check", "--facts", dir + "/absent.json"});
  EXPECT_EQ(missing.code, 3);
  EXPECT_NE(missing.err.find(": cannot read: No such file"), std::string::npos);
}

TEST(Cli, SnapshotReplaysThroughFacts) {
  std::string dir = cdtest::temp_dir("snapshot");
  auto snap = doctor({"snapshot", "--root", dir});
  ASSERT_EQ(snap.code, 0) << snap.err;
  auto j = nlohmann::json::parse(snap.out);
  EXPECT_EQ(j["schema"], "cuda-doctor/facts/v1");
  EXPECT_EQ(j["root"], dir);
  cdtest::write_file(dir + "/facts.json", snap.out);
  auto check = doctor({"check", "--json", "--facts", dir + "/facts.json"});
  auto cj = nlohmann::json::parse(check.out);
  EXPECT_EQ(cj["schema"], "cuda-doctor/check/v1");
  EXPECT_EQ(cj["facts"]["root"], dir);
}

TEST(Cli, DefaultSubcommandIsCheck) {
  std::string dir = cdtest::temp_dir("default");
  auto a = doctor({"--json", "--root", dir});
  auto b = doctor({"check", "--json", "--root", dir});
  auto ja = nlohmann::json::parse(a.out);
  auto jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja["schema"], "cuda-doctor/check/v1");
  EXPECT_EQ(ja["findings"], jb["findings"]);
}

TEST(Cli, ColorOnlyWhenAllowed) {
  std::string dir = cdtest::temp_dir("color");
  auto forced = doctor({"--root", dir}, {{"CLICOLOR_FORCE", "1"}, {"NO_COLOR", "\x01"}});
  EXPECT_NE(forced.out.find("\033["), std::string::npos);
  auto no_color = doctor({"--root", dir}, {{"CLICOLOR_FORCE", "1"}, {"NO_COLOR", "1"}});
  EXPECT_EQ(no_color.out.find("\033["), std::string::npos);
  auto piped = doctor({"--root", dir}, {{"CLICOLOR_FORCE", "\x01"}, {"NO_COLOR", "\x01"}});
  EXPECT_EQ(piped.out.find("\033["), std::string::npos);
}

TEST(Cli, MarkdownForBugReports) {
  std::string dir = cdtest::temp_dir("markdown");
  auto r = doctor({"--markdown", "--root", dir});
  EXPECT_NE(r.out.find("## cuda-doctor check"), std::string::npos);
  EXPECT_NE(r.out.find("| layer | state |"), std::string::npos);
}
