// Tables that were C++ constants before they moved to data/ (issue 11): each reads back
// as the code used it, with a source.
#include <gtest/gtest.h>

#include "kb/drivers.hpp"
#include "kb/kb.hpp"
#include "kb/nccl.hpp"
#include "kb/pytorch.hpp"
#include "kb/verify_fixes.hpp"
#include "kb/ecosystem.hpp"
#include "kb/libraries.hpp"

namespace cd {
namespace {

TEST(KbTables, NcclTriageLadderInOrder) {
  const auto& ladder = nccl_triage(Kb::get());
  ASSERT_EQ(ladder.size(), 4u);
  EXPECT_EQ(ladder[0].label, "default");
  EXPECT_TRUE(ladder[0].env.empty());
  EXPECT_EQ(ladder[1].env, (std::map<std::string, std::string>{{"NCCL_P2P_DISABLE", "1"}}));
  EXPECT_EQ(ladder[2].env, (std::map<std::string, std::string>{{"NCCL_SHM_DISABLE", "1"}}));
  EXPECT_EQ(ladder[3].label, "sockets only");
  EXPECT_EQ(ladder[3].env.at("NCCL_NET"), "Socket");
  EXPECT_EQ(ladder[3].env.size(), 4u);
  for (const auto& a : ladder) EXPECT_NE(a.source.find("docs.nvidia.com/deeplearning/nccl"), std::string::npos) << a.label;
}

TEST(KbTables, Defaults) {
  const TorchDefaults& t = torch_defaults(Kb::get());
  EXPECT_EQ(t.unknown_release, "cu128");
  EXPECT_EQ(t.upgrade, "cu130");
  EXPECT_FALSE(t.source.empty());
  EXPECT_EQ(drivers_kb(Kb::get()).default_branch, 580);
}

TEST(KbTables, VerifyStepFixesByFindingElseTheCatchAll) {
  const Kb& kb = Kb::get();
  EXPECT_NE(verify_step_fix(kb, "driver.stub_library").at(1).find("grep -n stubs"), std::string::npos);
  EXPECT_EQ(verify_step_fix(kb, "arch.no_kernel_image"), verify_step_fix(kb, "arch.ptx_unsupported"));
  EXPECT_EQ(verify_step_fix(kb, "nccl.system_error").at(1), "nvidia-smi topo -m");
  EXPECT_NE(verify_step_fix(kb, "device.hardware_fault").at(0).find("Xid"), std::string::npos);
  EXPECT_EQ(verify_step_fix(kb, "no.such_id"), verify_step_fix(kb, "device.hardware_fault"));
}

TEST(KbTables, CpuPackagesAndLibraryFamilies) {
  const Kb& kb = Kb::get();
  const auto& cpu = cpu_packages(kb);
  ASSERT_EQ(cpu.size(), 3u);
  EXPECT_EQ(cpu[0].name, "onnxruntime");
  EXPECT_EQ(cpu[0].unless, "onnxruntime-gpu");
  EXPECT_EQ(cpu[2].fix.at(1), "{python} -m pip install \"tensorflow[and-cuda]\"");
  EXPECT_TRUE(pins_checked(kb, "torch"));
  EXPECT_TRUE(pins_checked(kb, "nvidia-cudnn-cu13"));
  EXPECT_FALSE(pins_checked(kb, "numpy"));
  EXPECT_FALSE(pins_checked(kb, "nvidia"));  // the prefix wants its dash
  const auto& fams = library_families(kb);
  ASSERT_EQ(fams.size(), 12u);
  int sublibs = 0;
  for (const auto& f : fams) sublibs += f.sublibs;
  EXPECT_EQ(sublibs, 1);  // cudnn alone
  EXPECT_EQ(fams[3].name, "cudnn");
  EXPECT_TRUE(fams[3].toolkit_key.empty());
  // The libraries check shows per environment, each with why.
  std::vector<std::string> main;
  for (const auto& f : fams)
    if (f.main_library) {
      main.push_back(f.name);
      EXPECT_NE(f.main_source.find("https://"), std::string::npos) << f.name;
    }
  EXPECT_EQ(main, (std::vector<std::string>{"cudart", "cublas", "cudnn", "nccl"}));
}

}  // namespace
}  // namespace cd
