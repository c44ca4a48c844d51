#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "loader/elf_fixtures.hpp"
#include "loader/ldconf.hpp"

namespace cd {
namespace {

TEST(LdConf, IncludesGlobsAndOddLines) {
  Root root(std::string(CD_FIXTURES) + "/roots/libs_ldconf");
  std::vector<std::string> errors;
  auto dirs = read_ld_so_conf(root, &errors);
  std::vector<std::string> got;
  for (const auto& d : dirs) got.push_back(d.dir);
  EXPECT_EQ(got, (std::vector<std::string>{"/usr/local/nvidia/lib", "/usr/local/nvidia/lib64", "/usr/local/lib",
                                           "/usr/local/cuda-13.0/targets/x86_64-linux/lib", "/usr/local/cuda/lib64",
                                           "/opt/extra/lib"}));
  EXPECT_EQ(dirs[0].file, "/etc/ld.so.conf.d/000_nvidia.conf");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("relative"), std::string::npos);
}

TEST(LdConf, RealSystemAgreesWithLdconfig) {
  // `ldconfig -v -N` prints "DIR: (from FILE:LINE)" for each configured directory that exists.
  auto r = cd::testing::sh("ldconfig -v -N -X 2>/dev/null | grep -F '(from '");
  if (r.rc != 0 || r.out.empty()) GTEST_SKIP() << "ldconfig -v unavailable";
  Root host;
  auto dirs = read_ld_so_conf(host);
  std::map<std::string, std::string> ours;
  for (const auto& d : dirs) ours[d.dir] = d.file;
  int checked = 0;
  std::string line;
  for (char c : r.out + "\n") {
    if (c != '\n') { line += c; continue; }
    auto colon = line.find(": (from ");
    if (colon != std::string::npos) {
      std::string dir = line.substr(0, colon);
      std::string file = line.substr(colon + 8, line.rfind(':') - colon - 8);
      if (file.empty() || file[0] == '<') { line.clear(); continue; }  // ldconfig's built-in trusted dirs
      EXPECT_EQ(ours[dir], file) << dir;
      ++checked;
    }
    line.clear();
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

// Bounds of the one ld.so.conf reader (issue 12 #5): each file once, nesting, file and
// include counts capped with one note.
class LdConfBounds : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() /
            ("cd_ldconf_" + std::to_string(getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(base_);
  }
  void TearDown() override { std::filesystem::remove_all(base_); }
  void write(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((base_ / rel).parent_path());
    std::ofstream(base_ / rel) << text;
  }
  std::filesystem::path base_;
};

TEST_F(LdConfBounds, MutualIncludesReadEachFileOnce) {
  write("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n/top\n");
  for (int i = 0; i < 8; ++i)
    write("etc/ld.so.conf.d/" + std::to_string(i) + ".conf", "include *.conf\ninclude /etc/ld.so.conf\n/l" + std::to_string(i) + "\n");
  std::vector<std::string> errors;
  auto dirs = read_ld_so_conf(Root(base_.string()), &errors);
  EXPECT_EQ(dirs.size(), 9u);
  EXPECT_EQ(dirs.back().dir, "/top");
  EXPECT_TRUE(errors.empty()) << errors[0];
}

TEST_F(LdConfBounds, DeepNestingStopsWithOneNote) {
  write("etc/ld.so.conf", "include n0.conf\n");
  for (int i = 0; i < 40; ++i)
    write("etc/n" + std::to_string(i) + ".conf", "/d" + std::to_string(i) + "\ninclude n" + std::to_string(i + 1) + ".conf\n");
  std::vector<std::string> errors;
  auto dirs = read_ld_so_conf(Root(base_.string()), &errors);
  EXPECT_EQ(dirs.size(), static_cast<size_t>(kLdConfMaxDepth));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("nested deeper than 16"), std::string::npos) << errors[0];
}

TEST_F(LdConfBounds, ManyFilesStopWithOneNote) {
  write("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  for (int i = 0; i < kLdConfMaxFiles + 50; ++i) write("etc/ld.so.conf.d/" + std::to_string(1000 + i) + ".conf", "/x\n");
  std::vector<std::string> errors;
  read_ld_so_conf(Root(base_.string()), &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("more than 256 ld.so.conf files"), std::string::npos) << errors[0];
}

TEST_F(LdConfBounds, ManyIncludeLinesStopWithOneNote) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "include /etc/missing-" + std::to_string(i % 3) + "/*.conf\n";
  write("etc/ld.so.conf", text + "/after\n");
  std::vector<std::string> errors;
  auto dirs = read_ld_so_conf(Root(base_.string()), &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("more than 1024 includes"), std::string::npos) << errors[0];
  EXPECT_TRUE(dirs.empty());  // reading stopped: later lines are not trusted either
}

}  // namespace
}  // namespace cd
