// rules/arch.cpp on recorded facts: torch's arch list vs the GPU, TORCH_CUDA_ARCH_LIST,
// and a scanned extension inside a venv (fix = rebuild with the GPU's arch list).
#include <gtest/gtest.h>

#include "binary/nvcc_fixtures.hpp"
#include "binary/scan.hpp"
#include "rules/rules.hpp"
#include "rules/run_rule.hpp"

using namespace cd;

namespace {

Facts machine(int major, int minor, const std::string& name) {
  Facts f;
  GpuInfo g;
  g.name = name;
  g.cc_major = major;
  g.cc_minor = minor;
  f.driver.gpus.push_back(g);
  f.driver.cuda_driver_version = 12080;
  f.driver.nvml_driver_version = "570.124.06";
  return f;
}

const Finding* find(const Findings& all, const std::string& id) {
  for (const auto& f : all)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace

TEST(ArchRules, TorchWithoutTheGpuArchGetsTheRightWheel) {
  Facts f = machine(12, 0, "NVIDIA GeForce RTX 5090");
  PythonEnv env;
  env.interpreter = "/opt/venv/bin/python";
  env.prefix = "/opt/venv";
  env.torch.version = "2.7.0+cu126";
  env.torch.cuda = "12.6";
  env.deep.ran = true;  // --deep: what torch.cuda.get_arch_list() said
  env.deep.arch_list = {"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"};
  f.pythons.push_back(env);
  Findings out = cdtest::run_rule(cd::arch_rules, f);
  const Finding* u = find(out, "arch.unsupported_by_framework");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->severity, Severity::error);
  ASSERT_FALSE(u->fix.empty());
  EXPECT_EQ(u->fix.back(),
            "/opt/venv/bin/python -m pip install --force-reinstall torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128");
  f.driver.gpus[0].cc_major = 8, f.driver.gpus[0].cc_minor = 9;  // sm_86 SASS serves an RTX 4090
  EXPECT_EQ(find(cdtest::run_rule(cd::arch_rules, f), "arch.unsupported_by_framework"), nullptr);
}

TEST(ArchRules, TorchCudaArchListMustCoverTheGpus) {
  Facts f = machine(9, 0, "NVIDIA H100");
  f.env["TORCH_CUDA_ARCH_LIST"] = "7.5;8.0;8.6+PTX";  // PTX 8.6 would JIT: covered
  EXPECT_EQ(find(cdtest::run_rule(cd::arch_rules, f), "arch.arch_list_mismatch"), nullptr);
  f.env["TORCH_CUDA_ARCH_LIST"] = "7.5 8.0 8.6";
  const Findings out = cdtest::run_rule(cd::arch_rules, f);
  const Finding* m = find(out, "arch.arch_list_mismatch");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->fix.at(0), "export TORCH_CUDA_ARCH_LIST=\"9.0\"");
  f.env["TORCH_CUDA_ARCH_LIST"] = "9.0a";  // the H200 image's value
  EXPECT_EQ(find(cdtest::run_rule(cd::arch_rules, f), "arch.arch_list_mismatch"), nullptr);
}

TEST(ArchRules, Sm75ExtensionInAVenvOnAnH200) {
  if (!fx::have_nvcc()) GTEST_SKIP() << "no nvcc";
  std::string so = fx::shared("libk75", "-gencode arch=compute_75,code=sm_75");
  Facts f = machine(9, 0, "NVIDIA H200");
  PythonEnv env;
  env.interpreter = "/opt/venv/bin/python";
  env.site_packages = {fx::dir()};
  f.pythons.push_back(env);
  BinaryScan b = scan_binary(so, false);
  b.package = "my_ext";
  f.binaries.push_back(b);
  Findings out = cdtest::run_rule(cd::arch_rules, f);
  const Finding* n = find(out, "arch.no_kernel_image");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->severity, Severity::error);
  EXPECT_EQ(n->fix.back(),
            "TORCH_CUDA_ARCH_LIST=\"9.0\" /opt/venv/bin/python -m pip install --force-reinstall --no-build-isolation "
            "--no-binary my_ext my-ext");
}
