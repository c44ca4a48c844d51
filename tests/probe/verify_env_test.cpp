// verify's environment is read under --root: the interpreter and library directories of
// the root's torch environment, never this host's (it ignored --root when it lived in cli/).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "probe/verify_env.hpp"

namespace cd {
namespace {

namespace fs = std::filesystem;

TEST(VerifyEnvironment, ReadsTheRootNotTheHost) {
  fs::path root = fs::temp_directory_path() / ("cd_verify_env_" + std::to_string(::getpid()));
  fs::path venv = root / "opt/torch/.venv";
  fs::path site = venv / "lib/python3.12/site-packages";
  fs::create_directories(venv / "bin");
  fs::create_directories(site / "torch");
  fs::create_directories(site / "nvidia/cu13/lib");
  fs::create_directories(root / "usr/local/cuda/lib64");
  std::ofstream(venv / "pyvenv.cfg") << "home = /usr/bin\nversion = 3.12.3\n";
  std::ofstream(venv / "bin/python3") << "";
  std::ofstream(site / "torch/version.py") << "__version__ = '2.11.0+cu130'\ncuda = '13.0'\n";
  ProbeOptions opts;
  opts.root = Root(root.string());
  opts.env = {{"PATH", "/opt/torch/.venv/bin:/usr/bin"}, {"HOME", "/root"}};
  VerifyEnvironment env = find_verify_environment(opts);
  EXPECT_EQ(env.python, (venv / "bin/python3").string());
  EXPECT_EQ(env.lib_dirs, (std::vector<std::string>{(site / "nvidia/cu13/lib").string(), (root / "usr/local/cuda/lib64").string()}));
  opts.env["CUDA_DOCTOR_PYTHON"] = "";  // disables the torch step
  EXPECT_EQ(find_verify_environment(opts).python, "");
  fs::remove_all(root);
}

}  // namespace
}  // namespace cd
