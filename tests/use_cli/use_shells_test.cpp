// `use` evaluated by real bash, zsh and fish with the machine's real CUDA 13.0 and a real CUDA
// 11.8 (Debian's binaries, unpacked into a directory whose name has spaces): the variables
// before and after, nvcc --version through the switched PATH, idempotence, --off, unrelated
// entries kept in order, unset and empty variables.
#include <gtest/gtest.h>

#include "toolkit_helpers.hpp"

namespace cdtest {
namespace {

const std::vector<std::string> kVars = {"PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH"};
const std::string kUnrelated = "/opt/my tools/bin:/opt/it's/bin";  // a space and a quote, kept as they are

class UseShells : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!have_shell(GetParam())) GTEST_SKIP() << GetParam() << " is not installed (scripts/bootstrap.sh installs it)";
    tk118 = cuda118();
    tk130 = cuda130();
    if (tk118.empty()) GTEST_SKIP() << kNo118;
    if (tk130.empty()) GTEST_SKIP() << "no /usr/local/cuda-13.0 on this machine";
    env = {{"HOME", "/tmp"},
           {"PATH", "/usr/local/cuda/bin:" + kUnrelated + ":/usr/bin:/bin"},
           {"LD_LIBRARY_PATH", "/usr/local/cuda/lib64:/opt/x/lib"},
           {"CUDA_DOCTOR_TOOLKITS", tk118}};
  }
  ShellResult run(const std::string& script) { return in_shell(GetParam(), script, env); }
  std::string vars() { return print_vars(GetParam(), kVars); }

  std::string tk118, tk130;
  std::map<std::string, std::string> env;
};

TEST_P(UseShells, SwitchesTo118AndNvccSaysSo) {
  auto r = run(use_line(GetParam(), "11.8") + vars() + "nvcc --version\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("PATH=" + tk118 + "/bin:" + kUnrelated + ":/usr/bin:/bin\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LD_LIBRARY_PATH=" + tk118 + "/lib64:/opt/x/lib\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CUDA_HOME=" + tk118 + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CUDA_PATH=" + tk118 + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("release 11.8, V11.8.89"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("removed /usr/local/cuda/bin"), std::string::npos) << r.err;
}

TEST_P(UseShells, SwitchesBackTo130AndNothingPilesUp) {
  auto r = run(use_line(GetParam(), "11.8") + use_line(GetParam(), "13") + use_line(GetParam(), "13.0") + vars() +
               "nvcc --version\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("PATH=" + tk130 + "/bin:" + kUnrelated + ":/usr/bin:/bin\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LD_LIBRARY_PATH=" + tk130 + "/lib64:/opt/x/lib\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CUDA_HOME=" + tk130 + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("release 13.0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(tk118), std::string::npos) << r.out;
}

TEST_P(UseShells, IsIdempotent) {
  auto once = run(use_line(GetParam(), "11.8") + vars());
  auto twice = run(use_line(GetParam(), "11.8") + use_line(GetParam(), "11.8") + use_line(GetParam(), "'" + tk118 + "'") + vars());
  ASSERT_EQ(once.code, 0) << once.err;
  ASSERT_EQ(twice.code, 0) << twice.err;
  EXPECT_EQ(once.out, twice.out);
}

TEST_P(UseShells, OffRestoresWhatWasThere) {
  auto before = run(vars());
  auto r = run(use_line(GetParam(), "11.8") + use_line(GetParam(), "13.0") + use_line(GetParam(), "--off") + vars() +
               "env | grep -c _CUDA_DOCTOR_ || true\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, before.out + "0\n");
  EXPECT_NE(before.out.find("CUDA_HOME unset"), std::string::npos);
}

TEST_P(UseShells, OffKeepsWhatTheUserAddedSince) {
  std::string add = GetParam() == "fish" ? "set -gx PATH /added/bin $PATH\n" : "export PATH=/added/bin:$PATH\n";
  auto r = run(use_line(GetParam(), "11.8") + add + use_line(GetParam(), "--off") + vars());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("PATH=/added/bin:" + kUnrelated + ":/usr/bin:/bin\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("PATH changed since"), std::string::npos) << r.err;
}

TEST_P(UseShells, UnsetAndEmptyVariables) {
  env.erase("LD_LIBRARY_PATH");
  env["CUDA_HOME"] = "";
  auto before = run(vars());
  auto r = run(use_line(GetParam(), "11.8") + vars() + use_line(GetParam(), "--off") + vars());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(before.out.find("LD_LIBRARY_PATH unset"), std::string::npos);
  EXPECT_NE(r.out.find("LD_LIBRARY_PATH=" + tk118 + "/lib64\n"), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.size() > before.out.size() && r.out.compare(r.out.size() - before.out.size(), before.out.size(), before.out) == 0)
      << "after --off:\n" << r.out << "\nbefore:\n" << before.out;
}

TEST_P(UseShells, BadRequestChangesNothing) {
  for (std::string bad : {"99.1", "twelve", "/nonexistent/cuda", "torch"}) {
    auto before = run(vars());
    auto r = run(use_line(GetParam(), bad) + vars());
    EXPECT_EQ(r.out, before.out) << bad;
    EXPECT_NE(r.err.find("cuda-doctor"), std::string::npos) << bad << ": " << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Shells, UseShells, ::testing::Values("bash", "zsh", "fish"));

}  // namespace
}  // namespace cdtest
