// `use` and `toolkits` as commands: exit codes, the one-line errors, the install commands
// for a version that is not installed, the checks on stderr, real compiles with each toolkit
// through the switched environment, and the listing of both real toolkits.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "toolkit_helpers.hpp"

namespace cdtest {
namespace {

std::map<std::string, std::string> base_env(const std::string& tk118) {
  return {{"HOME", "/tmp"}, {"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"}, {"CUDA_DOCTOR_TOOLKITS", tk118}};
}

std::string tmp_dir(const std::string& name) {
  auto p = std::filesystem::path(CD_BUILD_DIR) / "test-tmp" / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

TEST(UseCli, UnknownRequestIsOneLineAndExit3) {
  auto r = in_shell("bash", "$D use twelve", base_env(""));
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("unknown toolkit 'twelve'"), std::string::npos) << r.err;
}

TEST(UseCli, NotInstalledVersionGetsInstallCommands) {
  auto r = in_shell("bash", "$D use 12.4", base_env(""));
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("CUDA 12.4 is not installed; nothing changed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cuda_12.4.0_550.54.14_linux.run --silent --toolkit --toolkitpath=/usr/local/cuda-12.4"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--driver"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sudo apt-get install cuda-toolkit-12-4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nvidia-cuda-nvcc-cu12==12.4.*"), std::string::npos) << r.err;
}

// No install command for a CUDA that NVIDIA never released (12.7: 12.6 was followed by 12.8) or
// one newer than every release the knowledge base knows: they would name packages that do not exist.
TEST(UseCli, VersionNeverReleasedGetsNoInstallCommands) {
  auto never = in_shell("bash", "$D use 12.7", base_env(""));
  EXPECT_EQ(never.code, 3);
  EXPECT_EQ(never.out, "");
  EXPECT_NE(never.err.find("CUDA 12.7 was never released (the releases nearest to it: 12.6 and 12.8); nothing changed"),
            std::string::npos) << never.err;
  EXPECT_EQ(never.err.find("apt-get"), std::string::npos) << never.err;
  auto future = in_shell("bash", "$D use 99.9", base_env(""));
  EXPECT_EQ(future.code, 3);
  EXPECT_NE(future.err.find("CUDA 99.9 is newer than any release cuda-doctor knows"), std::string::npos) << future.err;
  EXPECT_EQ(future.err.find("cuda-toolkit-99-9"), std::string::npos) << future.err;
  auto old = in_shell("bash", "$D use 1", base_env(""));  // CUDA 1.0 existed: not "never released"
  EXPECT_EQ(old.code, 3);
  EXPECT_NE(old.err.find("CUDA 1 is older than any release cuda-doctor knows"), std::string::npos) << old.err;
  auto major = in_shell("bash", "$D use 10", base_env(""));  // a released major, not installed: commands follow
  EXPECT_EQ(major.code, 3);
  EXPECT_NE(major.err.find("CUDA 10 is not installed"), std::string::npos) << major.err;
}

TEST(UseCli, PathThatIsNotAToolkit) {
  std::string dir = tmp_dir("not-a-toolkit");
  auto r = in_shell("bash", "$D use '" + dir + "'", base_env(""));
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("not a CUDA toolkit"), std::string::npos) << r.err;
}

TEST(UseCli, BrokenSymlink) {
  std::string dir = tmp_dir("broken-link");
  std::filesystem::create_symlink("/nonexistent/cuda-12.4", dir + "/cuda");
  auto r = in_shell("bash", "$D use '" + dir + "/cuda'", base_env(""));
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("a broken symbolic link to /nonexistent/cuda-12.4"), std::string::npos) << r.err;
}

TEST(UseCli, OffWithoutUseIsANoOp) {
  auto r = in_shell("bash", "$D use --off", base_env(""));
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("nothing to undo"), std::string::npos) << r.err;
}

TEST(UseCli, ShellCodeFollowsTheParentShell) {
  if (cuda130().empty()) GTEST_SKIP() << "no /usr/local/cuda-13.0";
  if (!have_shell("fish")) GTEST_SKIP() << "fish is not installed";
  auto bash = in_shell("bash", "$D use 13.0 | cat", base_env(""));  // parent: bash (the pipeline's child is forked from it)
  auto fish = in_shell("fish", "$D use 13.0 | cat", base_env(""));
  EXPECT_NE(bash.out.find("export CUDA_HOME='/usr/local/cuda-13.0';"), std::string::npos) << bash.out;
  EXPECT_NE(bash.out.find("hash -r;"), std::string::npos) << bash.out;
  EXPECT_NE(fish.out.find("set -gx CUDA_HOME '/usr/local/cuda-13.0';"), std::string::npos) << fish.out;
  auto forced = in_shell("bash", "$D use 13.0 --shell fish", base_env(""));
  EXPECT_NE(forced.out.find("set -gx PATH '/usr/local/cuda-13.0/bin' '/usr/bin' '/bin';"), std::string::npos) << forced.out;
}

TEST(UseCli, Warns118WithGcc12AndTheFixCompiles) {
  std::string tk118 = cuda118();
  if (tk118.empty()) GTEST_SKIP() << kNo118;
  std::string dir = tmp_dir("compile118");
  std::ofstream(dir + "/k.cu") << "__global__ void k(float* x) { x[threadIdx.x] *= 2; }\nint main() { return 0; }\n";
  // gcc 12 is the default here; 11.8 accepts gcc <= 11: `use` says so, with the compiler to take.
  auto r = in_shell("bash", "cd '" + dir + "' && " + use_line("bash", "11.8") + "nvcc -c k.cu -o k.o; echo rc=$?", base_env(tk118));
  EXPECT_NE(r.err.find("toolkit.host_compiler_unsupported"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("newer than CUDA 11.8 supports (gcc ≤ 11)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("rc=1"), std::string::npos) << r.out << r.err;  // nvcc 11.8 refuses gcc 12 for real
  // The fix it prints is the one nvcc 11.8 reads (it ignores NVCC_CCBIN).
  EXPECT_NE(r.err.find("$ export NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-11'"), std::string::npos) << r.err;
  if (!std::filesystem::exists("/usr/bin/g++-11")) GTEST_SKIP() << "g++-11 is not installed (scripts/bootstrap.sh installs it)";
  std::filesystem::remove(dir + "/k.o");
  auto fixed = in_shell("bash", "cd '" + dir + "' && " + use_line("bash", "11.8") +
                                    "export NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-11'; nvcc -arch=sm_80 -c k.cu -o k.o; "
                                    "echo rc=$? && ls -l k.o",
                        base_env(tk118));
  EXPECT_NE(fixed.out.find("rc=0"), std::string::npos) << fixed.out << fixed.err;
  ASSERT_TRUE(std::filesystem::exists(dir + "/k.o")) << fixed.err;
  EXPECT_GT(std::filesystem::file_size(dir + "/k.o"), 1000u) << fixed.err;
}

TEST(UseCli, Compiles130ThroughTheSwitchedEnvironment) {
  std::string tk130 = cuda130();
  if (tk130.empty()) GTEST_SKIP() << "no /usr/local/cuda-13.0";
  std::string dir = tmp_dir("compile130");
  std::ofstream(dir + "/k.cu") << "#include <cuda_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] *= 2; }\n"
                                  "int main() { float* p; return cudaMalloc(&p, 4) == cudaSuccess ? 0 : 1; }\n";
  auto r = in_shell("bash", "cd '" + dir + "' && " + use_line("bash", "13.0") + "nvcc -arch=sm_90 k.cu -o k && echo built",
                    {{"HOME", "/tmp"}, {"PATH", "/usr/bin:/bin"}});
  EXPECT_NE(r.out.find("built"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.err.find("toolkit.host_compiler_unsupported"), std::string::npos) << r.err;
}

TEST(UseCli, SystemPrintsMachineWideCommandsAndChangesNothing) {
  if (cuda130().empty()) GTEST_SKIP() << "no /usr/local/cuda-13.0";
  auto r = in_shell("bash", "$D use 13.0 --system", base_env(""));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("sudo tee /etc/profile.d/cuda.sh >/dev/null <<'EOF'\nexport CUDA_HOME=/usr/local/cuda\n"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sudo ln -sfn /usr/local/cuda-13.0 /usr/local/cuda"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Not root's ~/.bashrc"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("export PATH=/usr/local/cuda/bin:$PATH ;; esac"), r.out.rfind("export PATH=/usr/local/cuda/bin:$PATH ;; esac"));
  // The profile it prints works in a real login-style shell: PATH gets the bin once, even when sourced twice.
  std::string dir = tmp_dir("profile");
  std::string profile = r.out.substr(r.out.find("<<'EOF'\n") + 8);
  profile = profile.substr(0, profile.find("EOF\n"));
  std::ofstream(dir + "/cuda.sh") << profile;
  auto sh = in_shell("bash", ". '" + dir + "/cuda.sh'; . '" + dir + "/cuda.sh'; echo \"$PATH|$CUDA_HOME\"; nvcc --version | tail -2",
                     {{"PATH", "/usr/bin:/bin"}});
  EXPECT_NE(sh.out.find("/usr/local/cuda/bin:/usr/bin:/bin|/usr/local/cuda\n"), std::string::npos) << sh.out << sh.err;
  EXPECT_NE(sh.out.find("release 13.0"), std::string::npos) << sh.out;
}

TEST(ToolkitsCli, ListsBothRealToolkits) {
  std::string tk118 = cuda118();
  if (tk118.empty() || cuda130().empty()) GTEST_SKIP() << kNo118;
  auto r = in_shell("bash", "$D toolkits --json", base_env(tk118));
  ASSERT_LE(r.code, 2) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "cuda-doctor/toolkits/v1");
  std::map<std::string, nlohmann::json> by_root;
  for (const auto& t : j["toolkits"]) by_root[t["root"]] = t;
  ASSERT_TRUE(by_root.count(tk118)) << r.out;
  ASSERT_TRUE(by_root.count("/usr/local/cuda-13.0")) << r.out;
  const auto& old = by_root[tk118];
  EXPECT_EQ(old["version"], "11.8");
  EXPECT_EQ(old["gcc_max"], 11);
  EXPECT_EQ(old["origin"], "CUDA_DOCTOR_TOOLKITS");
  EXPECT_GT(old["size_bytes"].get<uint64_t>(), 100u << 20);
  for (const char* c : {"nvcc", "headers", "cudart"})
    EXPECT_NE(std::find(old["components"].begin(), old["components"].end(), c), old["components"].end()) << c;
  const auto& cur = by_root["/usr/local/cuda-13.0"];
  EXPECT_NE(std::find(cur["selected_by"].begin(), cur["selected_by"].end(), "PATH"), cur["selected_by"].end());
  auto text = in_shell("bash", "$D toolkits --no-color", base_env(tk118));
  EXPECT_NE(text.out.find("2 CUDA toolkits"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("11.8       " + tk118 + "  selected by nothing"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace cdtest
