// shell-init's hook in real bash, zsh and fish: .cuda-version found up the tree switches the
// toolkit, leaving switches back, editing the file switches again, a garbage file says one
// line and changes nothing, and a prompt where nothing changed starts no process (the
// cuda-doctor the hook runs is deleted: any start would fail loudly).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "toolkit_helpers.hpp"

namespace fs = std::filesystem;

namespace cdtest {
namespace {

class ShellInit : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!have_shell(GetParam())) GTEST_SKIP() << GetParam() << " is not installed (scripts/bootstrap.sh installs it)";
    tk118 = cuda118();
    if (tk118.empty()) GTEST_SKIP() << kNo118;
    if (cuda130().empty()) GTEST_SKIP() << "no /usr/local/cuda-13.0";
    // One directory per test process (ctest runs the tests of one shell side by side).
    dir = (fs::path(CD_BUILD_DIR) / "test-tmp" / ("shell init " + GetParam() + " " + std::to_string(getpid()))).string();
    fs::remove_all(dir);
    fs::create_directories(dir + "/old/src/deep");
    fs::create_directories(dir + "/new");
    fs::create_directories(dir + "/plain");
    std::ofstream(dir + "/old/.cuda-version") << "11.8\n";
    std::ofstream(dir + "/new/.cuda-version") << "  13.0  \n";
    env = {{"HOME", "/tmp"}, {"PATH", "/usr/bin:/bin"}, {"CUDA_DOCTOR_TOOLKITS", tk118}};
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
  std::string init() {
    return GetParam() == "fish" ? "$D shell-init fish | source\n" : "eval \"$($D shell-init " + GetParam() + ")\"\n";
  }
  std::string cd_hook(const std::string& to) { return "cd '" + to + "'\n_cuda_doctor_hook\n"; }
  // fish: an unset variable empties the whole word, so quote it ("CUDA_HOME=" when unset).
  std::string home() { return GetParam() == "fish" ? "echo CUDA_HOME=\"$CUDA_HOME\"\n" : "echo CUDA_HOME=${CUDA_HOME-unset}\n"; }

  std::string tk118, dir;
  std::map<std::string, std::string> env;
};

TEST_P(ShellInit, SwitchesInAndOutOfTrees) {
  auto r = in_shell(GetParam(),
                    init() + cd_hook(dir + "/old/src/deep") + home() + "nvcc --version | tail -2 | head -1\n" +
                        cd_hook(dir + "/new") + home() + cd_hook(dir + "/plain") + home(),
                    env);
  ASSERT_EQ(r.code, 0) << r.err;
  std::string want = "CUDA_HOME=" + tk118 + "\nCuda compilation tools, release 11.8, V11.8.89\nCUDA_HOME=/usr/local/cuda-13.0\n";
  want += GetParam() == "fish" ? "CUDA_HOME=\n" : "CUDA_HOME=unset\n";
  EXPECT_EQ(r.out, want) << r.err;
}

TEST_P(ShellInit, EditedFileSwitchesAgainAndGarbageChangesNothing) {
  std::string edit = "echo 13.0 > '" + dir + "/old/.cuda-version'\n_cuda_doctor_hook\n";
  std::string garbage = "echo 'rm -rf /' > '" + dir + "/old/.cuda-version'\n_cuda_doctor_hook\n";
  auto r = in_shell(GetParam(), init() + cd_hook(dir + "/old") + home() + edit + home() + garbage + home(), env);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "CUDA_HOME=" + tk118 + "\nCUDA_HOME=/usr/local/cuda-13.0\nCUDA_HOME=/usr/local/cuda-13.0\n") << r.err;
  EXPECT_NE(r.err.find("unknown toolkit 'rm'"), std::string::npos) << r.err;
}

TEST_P(ShellInit, NoProcessWhenNothingChanged) {
  std::string copy = dir + "/cd-copy";
  fs::copy_file(CD_BINARY, copy);
  std::string setup = GetParam() == "fish" ? "'" + copy + "' shell-init fish | source\n"
                                           : "eval \"$('" + copy + "' shell-init " + GetParam() + ")\"\n";
  std::string gone = "rm '" + copy + "'\necho removed >&2\n";
  auto r = in_shell(GetParam(),
                    setup + cd_hook(dir + "/old") + gone + "_cuda_doctor_hook\n_cuda_doctor_hook\n" +
                        cd_hook(dir + "/old/src") + home() + cd_hook(dir + "/plain"),
                    env);
  EXPECT_NE(r.out.find("CUDA_HOME=" + tk118), std::string::npos) << r.out << r.err;
  std::string after = r.err.substr(r.err.find("removed\n") + 8);
  // Prompts in /old and below ran no process; leaving the tree had to, and the binary is gone.
  // One failed start (bash/zsh: "…/cd-copy: No such file", fish: "Unknown command: …/cd-copy" with the
  // line quoted), and it was `use --off`, never a `use --from` of a prompt inside /old.
  std::string marker = GetParam() == "fish" ? "Unknown command" : "cd-copy";
  size_t starts = 0;
  for (size_t at = after.find(marker); at != std::string::npos; at = after.find(marker, at + 1)) ++starts;
  EXPECT_EQ(starts, 1u) << after;
  EXPECT_EQ(after.find("--from"), std::string::npos) << after;
}

INSTANTIATE_TEST_SUITE_P(Shells, ShellInit, ::testing::Values("bash", "zsh", "fish"));

}  // namespace
}  // namespace cdtest
