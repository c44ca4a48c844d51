#include <gtest/gtest.h>

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
