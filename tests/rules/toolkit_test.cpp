// toolkit.* rules on hand-built facts: one test per finding id, plus the quiet H200 case.
#include <gtest/gtest.h>

#include "rules/rules.hpp"
#include "rules/run_rule.hpp"

namespace cd {
namespace {

Toolkit tk(const std::string& root, const std::string& version, std::vector<std::string> selected_by = {}) {
  Toolkit t;
  t.root = root;
  t.version = version;
  t.version_source = root + "/version.json";
  t.nvcc = root + "/bin/nvcc";
  t.origin = "system";
  t.selected_by = std::move(selected_by);
  return t;
}

PythonEnv torch_env(const std::string& prefix, const std::string& version, const std::string& cuda) {
  PythonEnv py;
  py.prefix = prefix;
  py.interpreter = prefix + "/bin/python3";
  py.kind = "venv";
  py.torch.version = version;
  py.torch.cuda = cuda;
  py.torch.source = prefix + "/lib/python3.12/site-packages/torch/version.py";
  py.packages.push_back({"torch", version, prefix + "/lib/python3.12/site-packages", {}, "pip"});
  return py;
}

// The H200 machine: one toolkit that every selector agrees on, gcc 13.3, torch cu130.
Facts h200() {
  Facts f;
  f.toolkit.toolkits = {tk("/usr/local/cuda-13.0", "13.0.88", {"PATH", "CUDA_HOME", "/usr/local/cuda", "alternatives"})};
  f.toolkit.toolkits[0].host_gcc_max = 15;
  f.toolkit.toolkits[0].host_clang_max = 20;
  f.toolkit.toolkits[0].host_config = "/usr/local/cuda-13.0/include/crt/host_config.h";
  f.toolkit.path_nvcc = "/usr/local/cuda-13.0/bin/nvcc";
  f.toolkit.cuda_home = "/usr/local/cuda-13.0";
  f.toolkit.cuda_home_var = "CUDA_HOME";
  f.toolkit.usr_local_cuda = "/usr/local/cuda-13.0";
  f.toolkit.alternatives_cuda = "/usr/local/cuda-13.0";
  f.toolkit.host_compilers = {{"gcc", "/usr/bin/gcc", "13.3.0", "PATH", "", ""}};
  f.pythons = {torch_env("/opt/torch/.venv", "2.11.0+cu130", "13.0")};
  f.env = {{"TORCH_CUDA_ARCH_LIST", "9.0a"}};
  return f;
}

Findings with_id(const Findings& all, const std::string& id) {
  Findings out;
  for (const auto& f : all)
    if (f.id == id) out.push_back(f);
  return out;
}

TEST(ToolkitRules, H200IsQuiet) {
  Findings all = cdtest::run_rule(cd::toolkit_rules, h200());
  EXPECT_TRUE(all.empty()) << all.front().id << ": " << all.front().title;
}

TEST(ToolkitRules, PathsDisagree) {
  Facts f = h200();
  f.toolkit.toolkits = {tk("/usr/local/cuda-12.4", "12.4.1", {"PATH", "/usr/local/cuda", "alternatives"}),
                        tk("/usr/local/cuda-13.0", "13.0.88", {"CUDA_HOME", "LD_LIBRARY_PATH"})};
  f.toolkit.path_nvcc = "/usr/local/cuda-12.4/bin/nvcc";
  f.toolkit.usr_local_cuda = "/usr/local/cuda-12.4";
  f.toolkit.alternatives_cuda = "/usr/local/cuda-12.4";
  f.toolkit.ld_library_path_toolkits = {"/usr/local/cuda-13.0"};
  f.env["LD_LIBRARY_PATH"] = "/usr/local/cuda/lib64:/usr/local/nvidia/lib64";
  Findings found = with_id(cdtest::run_rule(cd::toolkit_rules, f), "toolkit.paths_disagree");
  ASSERT_EQ(found.size(), 1u);
  const Finding& fi = found[0];
  EXPECT_EQ(fi.severity, Severity::warning);
  EXPECT_EQ(fi.evidence.size(), 4u);  // PATH, CUDA_HOME, /usr/local/cuda, LD_LIBRARY_PATH
  // torch is cu130, so every selector is pointed at 13.0, and /usr/local/cuda/lib64 (12.4) leaves LD_LIBRARY_PATH.
  EXPECT_EQ(fi.fix[0], "export CUDA_HOME=/usr/local/cuda-13.0");
  EXPECT_EQ(fi.fix[1], "export PATH=/usr/local/cuda-13.0/bin:$PATH");
  EXPECT_EQ(fi.fix[2], "export LD_LIBRARY_PATH=/usr/local/nvidia/lib64");
  EXPECT_EQ(fi.fix[3], "sudo update-alternatives --set cuda /usr/local/cuda-13.0");
}

TEST(ToolkitRules, MultipleIsInfoWithWhatSelectsEach) {
  Facts f = h200();
  f.toolkit.toolkits.push_back(tk("/usr/local/cuda-12.8", "12.8.93"));
  Findings found = with_id(cdtest::run_rule(cd::toolkit_rules, f), "toolkit.multiple");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::info);
  EXPECT_NE(found[0].evidence[1].fact.find("selected by nothing"), std::string::npos);
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::toolkit_rules, f), "toolkit.paths_disagree").empty());
}

TEST(ToolkitRules, HostCompilerTooNewFromHostConfig) {
  Facts f = h200();
  f.toolkit.host_compilers = {{"gcc", "/usr/bin/gcc", "16.1.0", "PATH", "", ""}};
  Findings found = with_id(cdtest::run_rule(cd::toolkit_rules, f), "toolkit.host_compiler_unsupported");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].title.find("gcc ≤ 15"), std::string::npos) << found[0].title;
  EXPECT_EQ(found[0].fix[0], "sudo apt-get install gcc-15 g++-15");
  EXPECT_EQ(found[0].fix[1], "export NVCC_CCBIN=/usr/bin/g++-15");
  EXPECT_EQ(found[0].evidence[1].source, "/usr/local/cuda-13.0/include/crt/host_config.h");
  // The compiler goes where nvcc runs, installed the way this distribution packages it.
  Facts rocky = f;
  rocky.host.os_id = "rocky", rocky.host.os_like = "rhel centos fedora", rocky.host.os_version = "9.4";
  found = with_id(cdtest::run_rule(cd::toolkit_rules, rocky), "toolkit.host_compiler_unsupported");
  ASSERT_EQ(found.size(), 1u);
  ASSERT_GE(found[0].fix.size(), 3u);
  EXPECT_EQ(found[0].fix[0], "sudo dnf install gcc-toolset-15");
  EXPECT_EQ(found[0].fix[1], "export NVCC_CCBIN=/opt/rh/gcc-toolset-15/root/usr/bin/g++");
  EXPECT_EQ(found[0].fix[2], "export CUDAHOSTCXX=/opt/rh/gcc-toolset-15/root/usr/bin/g++");
  Facts leap = f;
  leap.host.os_id = "opensuse-leap", leap.host.os_like = "suse opensuse", leap.host.os_version = "15.6";
  found = with_id(cdtest::run_rule(cd::toolkit_rules, leap), "toolkit.host_compiler_unsupported");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].fix[0], "sudo zypper install gcc15 gcc15-c++");
  EXPECT_EQ(found[0].fix[1], "export NVCC_CCBIN=/usr/bin/g++-15");
  // Unrecorded (Arch; Fedora's one gcc): a pointer, and no path that may not exist.
  for (const char* id : {"arch", "fedora"}) {
    Facts other = f;
    other.host.os_id = id;
    found = with_id(cdtest::run_rule(cd::toolkit_rules, other), "toolkit.host_compiler_unsupported");
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].fix[0].rfind("# install gcc 15 (or older)", 0), 0u) << found[0].fix[0];
    for (const auto& line : found[0].fix) EXPECT_EQ(line.find("NVCC_CCBIN="), std::string::npos) << line;
  }
}

TEST(ToolkitRules, HostCompilerLimitFallsBackToKb) {
  Facts f = h200();
  f.toolkit.toolkits = {tk("/usr/local/cuda-12.6", "12.6.3", {"PATH", "CUDA_HOME"})};  // no host_config read
  f.pythons.clear();
  f.toolkit.host_compilers = {{"gcc", "/usr/bin/gcc", "14.2.0", "PATH", "", ""},
                              {"gcc", "/opt/gcc/bin/g++", "13.3.0", "CUDAHOSTCXX", "", ""}};
  // CUDAHOSTCXX (13) is what the build uses: fine for 12.6.
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::toolkit_rules, f), "toolkit.host_compiler_unsupported").empty());
  f.toolkit.host_compilers.pop_back();
  Findings found = with_id(cdtest::run_rule(cd::toolkit_rules, f), "toolkit.host_compiler_unsupported");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].evidence[1].source.find("kb:"), std::string::npos);
  EXPECT_NE(found[0].title.find("gcc ≤ 13"), std::string::npos) << found[0].title;
}

TEST(ToolkitRules, VersionMismatchMattersOnlyForExtensions) {
  Facts f = h200();
  f.pythons = {torch_env("/opt/venv", "2.8.0+cu128", "12.8")};
  Findings found = with_id(cdtest::run_rule(cd::toolkit_rules, f), "toolkit.version_mismatch");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::warning);
  EXPECT_NE(found[0].explanation.find("only for building CUDA extensions"), std::string::npos);
  EXPECT_EQ(found[0].fix[1], "sudo apt-get install cuda-toolkit-12-8   # NVIDIA's CUDA repository (https://developer.nvidia.com/cuda-downloads)");
  // A second installed toolkit of the right major is offered instead of an install.
  f.toolkit.toolkits.push_back(tk("/usr/local/cuda-12.8", "12.8.93"));
  found = with_id(cdtest::run_rule(cd::toolkit_rules, f), "toolkit.version_mismatch");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].fix[0], "export CUDA_HOME=/usr/local/cuda-12.8");
  // Minor-only difference: info.
  f.pythons = {torch_env("/opt/venv", "2.10.0+cu130", "13.2")};
  found = with_id(cdtest::run_rule(cd::toolkit_rules, f), "toolkit.version_mismatch");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::info);
}

TEST(ToolkitRules, NvccMissingWhenABuildNeedsIt) {
  Facts f = h200();
  f.toolkit = {};
  Findings found = with_id(cdtest::run_rule(cd::toolkit_rules, f), "toolkit.nvcc_missing");
  ASSERT_EQ(found.size(), 1u);  // TORCH_CUDA_ARCH_LIST is set: someone builds extensions
  EXPECT_EQ(found[0].fix[0], "sudo apt-get install cuda-toolkit-13-0   # NVIDIA's CUDA repository (https://developer.nvidia.com/cuda-downloads)");
  // The distribution's package manager, container or not (the toolkit goes where programs run);
  // where none is recorded, NVIDIA's download page rather than another distribution's command.
  Facts rocky = f;
  rocky.host.os_id = "rocky", rocky.host.os_like = "rhel centos fedora", rocky.host.os_version = "9.4";
  rocky.platform.container = "docker";
  found = with_id(cdtest::run_rule(cd::toolkit_rules, rocky), "toolkit.nvcc_missing");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].fix[0].rfind("sudo dnf install cuda-toolkit-13-0   # ", 0), 0u) << found[0].fix[0];
  Facts arch = f;
  arch.host.os_id = "arch";
  found = with_id(cdtest::run_rule(cd::toolkit_rules, arch), "toolkit.nvcc_missing");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].fix[0].rfind("# install CUDA toolkit 13.0 ", 0), 0u) << found[0].fix[0];
  f.env.clear();
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::toolkit_rules, f), "toolkit.nvcc_missing").empty());  // nothing to build
  // CUDA_HOME pointing at a directory without nvcc is always worth saying.
  f.toolkit.cuda_home = "/usr/local/cuda-12.1";
  f.toolkit.cuda_home_var = "CUDA_HOME";
  found = with_id(cdtest::run_rule(cd::toolkit_rules, f), "toolkit.nvcc_missing");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].subject, "CUDA_HOME");
}

}  // namespace
}  // namespace cd
