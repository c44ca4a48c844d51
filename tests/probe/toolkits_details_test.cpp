// What `toolkits` and `use` read beyond the check probe, in hermetic --root trees built here:
// a runfile install (lib64, stubs, compat), a conda env (targets/x86_64-linux/lib), a pip-wheel
// toolkit (nvidia/cu13/lib), a toolkit named by CUDA_DOCTOR_TOOLKITS; PATH entries through the
// /usr/local/cuda link; and why a named path is not a toolkit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "probe/probe.hpp"

namespace fs = std::filesystem;

namespace cd {
namespace {

void file(const std::string& path, const std::string& text = "x") {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

// One tree per test: ctest runs this file's tests as processes side by side, and a tree shared
// by name was removed under one test by the other (CI saw map::at on a half-built tree).
std::string tree() {
  std::string r = std::string(CD_BUILD_DIR) + "/test-tmp/toolkit_layouts_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(r);
  // runfile: /usr/local/cuda-12.4 with the /usr/local/cuda link.
  file(r + "/usr/local/cuda-12.4/version.json", R"({"cuda": {"version": "12.4.1"}})");
  file(r + "/usr/local/cuda-12.4/bin/nvcc");
  file(r + "/usr/local/cuda-12.4/include/cuda_runtime.h");
  file(r + "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127", std::string(4096, 'c'));
  file(r + "/usr/local/cuda-12.4/lib64/libcublas.so.12");
  file(r + "/usr/local/cuda-12.4/lib64/libnvrtc.so.12");
  file(r + "/usr/local/cuda-12.4/lib64/stubs/libcuda.so");
  file(r + "/usr/local/cuda-12.4/compat/libcuda.so.550.54.15");
  fs::create_directory_symlink("cuda-12.4", r + "/usr/local/cuda");
  // conda env: nvcc and the runtime in targets/x86_64-linux.
  std::string env = r + "/opt/conda/envs/cu121";
  file(env + "/conda-meta/cuda-nvcc-12.1.105-0.json", "{}");
  file(env + "/bin/nvcc");
  file(env + "/bin/python3");
  file(env + "/targets/x86_64-linux/lib/libcudart.so.12");
  file(env + "/targets/x86_64-linux/include/cuda_runtime.h");
  // a toolkit kept in a home directory.
  file(r + "/home/u/toolkits/cuda-11.8/version.txt", "CUDA Version 11.8.89\n");
  file(r + "/home/u/toolkits/cuda-11.8/bin/nvcc");
  file(r + "/home/u/toolkits/cuda-11.8/lib64/libcudart_static.a");
  file(r + "/home/u/not-a-toolkit/README");
  fs::create_directory_symlink("/home/u/gone", r + "/home/u/broken");
  return r;
}

ProbeOptions options(const std::string& root, std::map<std::string, std::string> env, bool details) {
  ProbeOptions o;
  o.root = Root(root);
  o.env = std::move(env);
  o.toolkit_details = details;
  return o;
}

const Toolkit* find(const ToolkitFacts& t, const std::string& root) {
  for (const auto& tk : t.toolkits)
    if (tk.root == root) return &tk;
  return nullptr;
}

TEST(ToolkitLayouts, LibDirsComponentsAndSize) {
  std::string r = tree();
  Facts f;
  probe_toolkits(f, options(r, {{"PATH", "/usr/local/cuda/bin:/usr/bin"}, {"CONDA_PREFIX", "/opt/conda/envs/cu121"},
                                {"CUDA_DOCTOR_TOOLKITS", "/home/u/toolkits/cuda-11.8:/nonexistent"}},
                                true));
  const Toolkit* runfile = find(f.toolkit, "/usr/local/cuda-12.4");
  const Toolkit* conda = find(f.toolkit, "/opt/conda/envs/cu121");
  const Toolkit* home = find(f.toolkit, "/home/u/toolkits/cuda-11.8");
  ASSERT_TRUE(runfile && conda && home) << f.toolkit.toolkits.size();
  EXPECT_EQ(runfile->lib_dir, "/usr/local/cuda-12.4/lib64");
  EXPECT_EQ(runfile->components,
            (std::vector<std::string>{"nvcc", "headers", "cudart", "cublas", "nvrtc", "stubs", "compat"}));
  EXPECT_GE(runfile->size_bytes, 4096u);
  EXPECT_EQ(conda->lib_dir, "/opt/conda/envs/cu121/targets/x86_64-linux/lib");
  EXPECT_EQ(conda->components, (std::vector<std::string>{"nvcc", "headers", "cudart"}));
  EXPECT_EQ(home->origin, "CUDA_DOCTOR_TOOLKITS");
  EXPECT_EQ(home->version, "11.8.89");
  EXPECT_EQ(home->lib_dir, "/home/u/toolkits/cuda-11.8/lib64");  // the static runtime counts
  EXPECT_EQ(f.toolkit.resolved_dirs.at("/usr/local/cuda/bin"), "/usr/local/cuda-12.4/bin");
  EXPECT_EQ(f.toolkit.resolved_dirs.count("/usr/bin"), 0u);

  Facts plain;  // check's probe: no details
  probe_toolkits(plain, options(r, {{"PATH", "/usr/bin"}}, false));
  ASSERT_TRUE(find(plain.toolkit, "/usr/local/cuda-12.4"));
  EXPECT_TRUE(find(plain.toolkit, "/usr/local/cuda-12.4")->components.empty());
  EXPECT_EQ(find(plain.toolkit, "/usr/local/cuda-12.4")->size_bytes, 0u);
}

TEST(ToolkitLayouts, NamedPathsAndWhyNot) {
  std::string r = tree();
  auto o = options(r, {}, false);
  std::string why;
  auto tk = probe_toolkit_at("/usr/local/cuda", o, &why);
  ASSERT_TRUE(tk) << why;
  EXPECT_EQ(tk->root, "/usr/local/cuda-12.4");
  EXPECT_EQ(tk->version, "12.4.1");
  EXPECT_FALSE(probe_toolkit_at("/home/u/not-a-toolkit", o, &why));
  EXPECT_EQ(why, "not a CUDA toolkit (no bin/nvcc, version.json, version.txt or include/cuda.h)");
  EXPECT_FALSE(probe_toolkit_at("/home/u/broken", o, &why));
  EXPECT_EQ(why, "a broken symbolic link to /home/u/gone");
  EXPECT_FALSE(probe_toolkit_at("/nowhere", o, &why));
  EXPECT_EQ(why, "no such directory");
  EXPECT_FALSE(probe_toolkit_at("/home/u/toolkits/cuda-11.8/version.txt", o, &why));
  EXPECT_EQ(why, "not a directory");
}

}  // namespace
}  // namespace cd
