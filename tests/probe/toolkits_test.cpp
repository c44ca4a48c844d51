// Toolkit probe against hermetic --root trees (tests/fixtures/roots/toolkit_multi: CUDA 11.8 with
// version.txt, 12.4 with version.json + host_config.h, 13.0 from pip wheels (dist-info + cuda.h),
// a conda env with cuda-nvcc 12.1, a venv with the nvidia/cu13 wheel layout, /usr/local/cuda ->
// /etc/alternatives/cuda -> cuda-12.4) and against this machine's real toolkit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "probe/probe.hpp"
#include "probe/toolkits_host.hpp"
#include "probe/toolkits_read.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

const std::string kMulti = std::string(CD_FIXTURES) + "/roots/toolkit_multi";

ProbeOptions options(const std::string& root, std::map<std::string, std::string> env) {
  ProbeOptions o;
  o.root = Root(root);
  o.env = std::move(env);
  return o;
}

const Toolkit* find(const ToolkitFacts& t, const std::string& root) {
  for (const auto& tk : t.toolkits)
    if (tk.root == root) return &tk;
  return nullptr;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(ToolkitsProbe, FindsEveryToolkitWithItsVersionSource) {
  Facts f;
  probe_toolkits(f, options(kMulti, {{"PATH", "/usr/bin"}, {"HOME", "/root"}}));
  const auto& t = f.toolkit;
  const Toolkit* tk118 = find(t, "/usr/local/cuda-11.8");
  const Toolkit* tk124 = find(t, "/usr/local/cuda-12.4");
  const Toolkit* tk130 = find(t, "/usr/local/cuda-13.0");
  const Toolkit* conda = find(t, "/root/miniconda3/envs/cu121");
  const Toolkit* pip = find(t, "/opt/app/.venv/lib/python3.12/site-packages/nvidia/cu13");
  ASSERT_TRUE(tk118 && tk124 && tk130 && conda && pip) << t.toolkits.size() << " toolkits";
  EXPECT_EQ(t.toolkits.size(), 5u);
  EXPECT_EQ(tk118->version, "11.8.89");
  EXPECT_EQ(tk118->version_source, "/usr/local/cuda-11.8/version.txt");
  EXPECT_EQ(tk124->version, "12.4.1");
  EXPECT_EQ(tk124->version_source, "/usr/local/cuda-12.4/version.json");
  EXPECT_EQ(tk130->version, "13.0.88");  // the nvcc wheel's dist-info beats cuda.h's 13.0
  EXPECT_NE(tk130->version_source.find("nvidia_cuda_nvcc-13.0.88.dist-info"), std::string::npos);
  EXPECT_EQ(conda->version, "12.1.105");
  EXPECT_EQ(conda->origin, "conda:/root/miniconda3/envs/cu121");
  EXPECT_EQ(pip->version, "13.0.88");
  EXPECT_EQ(pip->origin, "pip:nvidia-cuda-nvcc (/opt/app/.venv)");
  EXPECT_EQ(tk124->nvcc, "/usr/local/cuda-12.4/bin/nvcc");
  EXPECT_EQ(tk124->origin, "system");
  EXPECT_EQ(tk130->origin, "system (from pip wheels)");
}

TEST(ToolkitsProbe, RecordsWhatEachSelectorPicks) {
  Facts f;
  probe_toolkits(f, options(kMulti, {{"PATH", "/usr/local/cuda-11.8/bin:/usr/bin"},
                                     {"CUDA_HOME", "/usr/local/cuda-13.0"},
                                     {"LD_LIBRARY_PATH", "/usr/local/cuda/lib64:/nonexistent"},
                                     {"HOME", "/root"}}));
  const auto& t = f.toolkit;
  EXPECT_EQ(t.path_nvcc, "/usr/local/cuda-11.8/bin/nvcc");
  EXPECT_EQ(t.cuda_home, "/usr/local/cuda-13.0");
  EXPECT_EQ(t.cuda_home_var, "CUDA_HOME");
  EXPECT_EQ(t.usr_local_cuda, "/usr/local/cuda-12.4");
  EXPECT_EQ(t.alternatives_cuda, "/usr/local/cuda-12.4");
  EXPECT_EQ(t.ld_library_path_toolkits, std::vector<std::string>{"/usr/local/cuda-12.4"});
  EXPECT_EQ(find(t, "/usr/local/cuda-11.8")->selected_by, std::vector<std::string>{"PATH"});
  EXPECT_EQ(find(t, "/usr/local/cuda-13.0")->selected_by, std::vector<std::string>{"CUDA_HOME"});
  const auto& sel124 = find(t, "/usr/local/cuda-12.4")->selected_by;
  EXPECT_TRUE(has(sel124, "/usr/local/cuda") && has(sel124, "alternatives") && has(sel124, "LD_LIBRARY_PATH"));
}

TEST(ToolkitsProbe, FollowsAnNvccWrapperScript) {
  Facts f;
  probe_toolkits(f, options(kMulti, {{"PATH", "/usr/local/bin:/usr/bin"}}));
  EXPECT_EQ(f.toolkit.path_nvcc, "/usr/local/cuda-13.0/bin/nvcc");
  EXPECT_TRUE(has(find(f.toolkit, "/usr/local/cuda-13.0")->selected_by, "PATH"));
}

TEST(ToolkitsProbe, DanglingCudaHomeIsRecordedButSelectsNothing) {
  Facts f;
  probe_toolkits(f, options(kMulti, {{"CUDA_PATH", "/opt/missing-cuda"}}));
  EXPECT_EQ(f.toolkit.cuda_home, "/opt/missing-cuda");
  EXPECT_EQ(f.toolkit.cuda_home_var, "CUDA_PATH");
  for (const auto& tk : f.toolkit.toolkits) EXPECT_FALSE(has(tk.selected_by, "CUDA_PATH")) << tk.root;
}

TEST(ToolkitsProbe, ReadsHostCompilerLimitsFromHostConfig) {
  Toolkit tk;
  tk.root = "/usr/local/cuda-12.4";
  read_host_config(Root(kMulti), tk);
  EXPECT_EQ(tk.host_gcc_max, 13);
  EXPECT_EQ(tk.host_clang_max, 17);
  EXPECT_EQ(tk.host_config, "/usr/local/cuda-12.4/include/crt/host_config.h");
}

TEST(ToolkitsProbe, ParsesNvccVersionOutput) {
  EXPECT_EQ(parse_nvcc_version("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n"),
            "12.4.131");
  EXPECT_EQ(parse_nvcc_version("Cuda compilation tools, release 11.8\n"), "11.8");
  EXPECT_EQ(parse_nvcc_version("garbage"), "");
}

// The real toolkit of this machine (CUDA 13.0 from pip wheels): files agree with nvcc itself.
TEST(ToolkitsProbe, RealToolkitFilesAgreeWithNvcc) {
  const std::string nvcc = "/usr/local/cuda/bin/nvcc";
  if (!std::filesystem::exists(nvcc)) GTEST_SKIP() << "no /usr/local/cuda here";
  Toolkit tk;
  tk.root = std::filesystem::canonical("/usr/local/cuda").string();
  tk.nvcc = nvcc;
  read_toolkit_version(Root(), tk, std::chrono::seconds(20));
  ASSERT_FALSE(tk.version.empty());
  ProcessResult r = run_process({nvcc, "--version"}, {});
  ASSERT_TRUE(r.ok()) << r.describe();
  std::string from_nvcc = parse_nvcc_version(r.out);
  EXPECT_EQ(Version::parse(tk.version)->major_minor(), Version::parse(from_nvcc)->major_minor());
  if (tk.version_source.find(".dist-info") != std::string::npos) {
    EXPECT_EQ(tk.version, from_nvcc);  // 13.0.88 both
  }
  read_host_config(Root(), tk);
  EXPECT_GE(tk.host_gcc_max, 12);  // a toolkit that builds with this machine's compilers
  EXPECT_GT(tk.host_clang_max, 0);
}

TEST(HostCompilers, AsksEachCompilerItsVersionWithATimeout) {
  auto dir = std::filesystem::temp_directory_path() / ("cd_hc_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto script = [&](const std::string& name, const std::string& body) {
    std::ofstream(dir / name) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(dir / name, std::filesystem::perms::owner_all);
  };
  script("gcc", "echo 16.1.0");
  script("g++-hang", "sleep 30");
  ProbeOptions o;
  o.env = {{"PATH", dir.string()}, {"CUDAHOSTCXX", (dir / "g++-hang").string() + " -O2"}};
  o.timeout = std::chrono::milliseconds(300);
  auto hcs = probe_host_compilers(o);
  std::filesystem::remove_all(dir);
  ASSERT_EQ(hcs.size(), 2u);
  EXPECT_EQ(hcs[0].source, "CUDAHOSTCXX");
  EXPECT_TRUE(hcs[0].version.empty());
  EXPECT_NE(hcs[0].error.find("timed out"), std::string::npos) << hcs[0].error;
  EXPECT_EQ(hcs[1].source, "PATH");
  EXPECT_EQ(hcs[1].kind, "gcc");
  EXPECT_EQ(hcs[1].version, "16.1.0");
}

// `use` reads gcc's version from where its cc1 lives instead of running it: on this
// machine's real gccs the layout must agree with `gcc -dumpfullversion` (its major; Debian
// names the directory by the major alone).
TEST(HostCompilers, GccVersionFromTheLayoutAgreesWithTheRealGcc) {
  int checked = 0;
  for (const char* name : {"/usr/bin/gcc", "/usr/bin/gcc-11", "/usr/bin/gcc-12", "/usr/bin/gcc-13", "/usr/bin/g++-12"}) {
    auto real = Root().resolve(name);
    if (!real || !std::filesystem::exists(*real)) continue;
    std::string from_layout = gcc_version_from_layout(Root(), *real);
    ProcessResult r = run_process({name, "-dumpfullversion"}, {});
    ASSERT_TRUE(r.ok()) << name;
    std::string asked(trim(r.out));
    ASSERT_FALSE(from_layout.empty()) << name << " -> " << *real;
    EXPECT_EQ(asked.substr(0, asked.find('.')), from_layout.substr(0, from_layout.find('.'))) << name;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no gcc in /usr/bin";
}

// Layouts the layout reader must read, and the ones where it must not guess.
TEST(HostCompilers, GccVersionFromTheLayoutUsesTheBinarysSuffixAndNeverGuesses) {
  auto dir = std::filesystem::temp_directory_path() / ("cd_gcc_layout_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto file = [&](const std::string& rel) {
    std::filesystem::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel) << "x";
  };
  // Upstream / conda: libexec/gcc/<target>/<full version>/cc1plus, one version.
  file("conda/bin/x86_64-conda-linux-gnu-gcc");
  file("conda/libexec/gcc/x86_64-conda-linux-gnu/13.2.0/cc1plus");
  file("conda/lib/gcc/x86_64-conda-linux-gnu/13.2.0/crtbegin.o");
  // Debian: two majors side by side; the suffix picks, the bare name cannot.
  file("deb/bin/x86_64-linux-gnu-gcc-11");
  file("deb/bin/x86_64-linux-gnu-gcc-12");
  file("deb/bin/gcc");
  file("deb/bin/ccache");
  file("deb/lib/gcc/x86_64-linux-gnu/11/cc1");
  file("deb/lib/gcc/x86_64-linux-gnu/12/cc1");
  file("deb/lib/gcc/x86_64-linux-gnu/12/cc1plus");
  // A version directory without the compiler proper does not count.
  file("bare/bin/gcc");
  file("bare/lib/gcc/x86_64-linux-gnu/9/libgcc.a");
  Root host;
  EXPECT_EQ(gcc_version_from_layout(host, (dir / "conda/bin/x86_64-conda-linux-gnu-gcc").string()), "13.2.0");
  EXPECT_EQ(gcc_version_from_layout(host, (dir / "deb/bin/x86_64-linux-gnu-gcc-11").string()), "11");
  EXPECT_EQ(gcc_version_from_layout(host, (dir / "deb/bin/x86_64-linux-gnu-gcc-12").string()), "12");
  EXPECT_EQ(gcc_version_from_layout(host, (dir / "deb/bin/gcc").string()), "");     // two versions: ask gcc
  EXPECT_EQ(gcc_version_from_layout(host, (dir / "deb/bin/ccache").string()), "");  // a wrapper: ask it
  EXPECT_EQ(gcc_version_from_layout(host, (dir / "bare/bin/gcc").string()), "");
  // Under --root the same tree reads the same.
  Root inside(dir.string());
  EXPECT_EQ(gcc_version_from_layout(inside, "/conda/bin/x86_64-conda-linux-gnu-gcc"), "13.2.0");
  std::filesystem::remove_all(dir);
}

TEST(HostCompilers, RealCompilersOnThisMachine) {
  ProbeOptions o;
  o.env = {{"PATH", "/usr/bin:/bin"}};
  auto hcs = probe_host_compilers(o);
  if (hcs.empty()) GTEST_SKIP() << "no compiler";
  for (const auto& hc : hcs) {
    EXPECT_TRUE(Version::parse(hc.version)) << hc.path << ": " << hc.error;
    EXPECT_EQ(hc.kind, compiler_kind(*Root().resolve(hc.path)));
  }
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

// A toolkit with nothing but bin/nvcc: the version comes from running it (last resort, with a timeout).
TEST(ToolkitsProbe, NvccVersionIsTheLastResort) {
  auto dir = std::filesystem::temp_directory_path() / ("cd_tk_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "bin");
  std::ofstream(dir / "bin/nvcc") << "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
                                     "echo 'Cuda compilation tools, release 12.2, V12.2.140'\n";
  std::filesystem::permissions(dir / "bin/nvcc", std::filesystem::perms::owner_all);
  Facts f;
  ProbeOptions o;
  o.env = {{"PATH", (dir / "bin").string()}};
  probe_toolkits(f, o);
  std::filesystem::remove_all(dir);
  const Toolkit* tk = nullptr;
  for (const auto& t : f.toolkit.toolkits)
    if (t.root == dir.string()) tk = &t;
  ASSERT_NE(tk, nullptr);
  EXPECT_EQ(tk->version, "12.2.140");
  EXPECT_EQ(tk->version_source, "nvcc --version");
  EXPECT_EQ(tk->selected_by, std::vector<std::string>{"PATH"});
}

}  // namespace
}  // namespace cd
