// The verdict rules against the driver behaviour measured on the H200 (sm_90, driver
// 580.159.04 = CUDA 13.0, measured on that machine): sm_75/80/86/89/100/120 cubins -> 209,
// sm_90 and sm_90a load, compute_80 PTX JITs, PTX ISA 9.1 -> 222.
#include <gtest/gtest.h>

#include "binary/verdict.hpp"
#include "kb/arch.hpp"
#include "kb/gpus.hpp"

using namespace cd;

namespace {

const ArchRules& rules() { return arch_rules(Kb::get()); }

KernelImage sass(int arch, std::string suffix = "", std::string compression = "none") {
  return KernelImage{"sass", arch, suffix, 0, 0, compression, 1, 100, 0};
}
KernelImage ptx(int arch, int isa, std::string suffix = "", std::string compression = "none") {
  return KernelImage{"ptx", arch, suffix, isa / 10, isa % 10, compression, 1, 100, 0};
}

std::string judge(std::vector<KernelImage> imgs, int sm, DriverTarget driver = {13000, "580.159.04"}) {
  std::vector<const KernelImage*> ptrs;
  for (const auto& i : imgs) ptrs.push_back(&i);
  return verdict_name(judge_container(ptrs, GpuTarget{sm, ""}, driver, rules()));
}

}  // namespace

TEST(Verdict, MeasuredOnH200) {
  for (int arch : {75, 80, 86, 89, 100, 120}) EXPECT_EQ(judge({sass(arch)}, 90), "no_kernel_image") << arch;
  EXPECT_EQ(judge({sass(100, "a")}, 90), "no_kernel_image");
  EXPECT_EQ(judge({sass(100, "f")}, 90), "no_kernel_image");
  EXPECT_EQ(judge({sass(90)}, 90), "native");
  EXPECT_EQ(judge({sass(90, "a")}, 90), "native");
  EXPECT_EQ(judge({ptx(80, 90)}, 90), "jit");
  EXPECT_EQ(judge({ptx(90, 91)}, 90), "ptx_too_new");
  EXPECT_EQ(judge({ptx(90, 90)}, 90), "jit");
  EXPECT_EQ(judge({ptx(100, 90)}, 90), "no_kernel_image") << "PTX for a newer target (218)";
}

TEST(Verdict, SassPreferredOverPtx) {
  EXPECT_EQ(judge({sass(75), sass(90), ptx(120, 90)}, 90), "native");
  EXPECT_EQ(judge({sass(75), ptx(75, 90)}, 90), "jit");
}

TEST(Verdict, SameMajorNewerMinor) {
  EXPECT_EQ(judge({sass(86)}, 89), "native");
  EXPECT_EQ(judge({sass(80)}, 86), "native");
  EXPECT_EQ(judge({sass(89)}, 86), "no_kernel_image");
  EXPECT_EQ(judge({sass(120)}, 121), "native");
  EXPECT_EQ(judge({sass(90)}, 100), "no_kernel_image");
}

TEST(Verdict, ArchSpecificAndFamily) {
  EXPECT_EQ(judge({sass(100, "a")}, 103), "no_kernel_image");
  EXPECT_EQ(judge({sass(100, "f")}, 103), "native");
  EXPECT_EQ(judge({sass(103, "f")}, 100), "no_kernel_image");
  EXPECT_EQ(judge({ptx(90, 90, "a")}, 100), "no_kernel_image");
  EXPECT_EQ(judge({ptx(90, 90, "a")}, 90), "jit");
  EXPECT_EQ(judge({ptx(100, 90, "f")}, 103), "jit");
  EXPECT_EQ(judge({ptx(100, 90, "f")}, 120), "no_kernel_image");
  EXPECT_EQ(judge({ptx(100, 90)}, 120), "jit");
}

TEST(Verdict, TegraExceptions) {
  EXPECT_EQ(judge({sass(80)}, 87), "no_kernel_image");
  EXPECT_EQ(judge({sass(87)}, 87), "native");
  EXPECT_EQ(judge({sass(87)}, 89), "no_kernel_image");
  EXPECT_EQ(judge({sass(100)}, 101), "no_kernel_image");
  EXPECT_EQ(judge({sass(101)}, 110), "native") << "Thor renumbered 10.1 -> 11.0";
  EXPECT_EQ(judge({ptx(80, 90)}, 87), "jit");
}

TEST(Verdict, DriverLimits) {
  DriverTarget r550{12040, "550.54.14"}, r535{12020, "535.104.05"};
  EXPECT_EQ(judge({sass(90, "", "zstd")}, 90, r550), "native");
  EXPECT_EQ(judge({sass(90, "", "zstd")}, 90, r535), "compression_unsupported");
  EXPECT_EQ(judge({sass(90, "", "zstd")}, 90, DriverTarget{0, "550.54"}), "native") << "prefix compare";
  EXPECT_EQ(judge({sass(90, "", "zstd")}, 90, DriverTarget{12030, ""}), "compression_unsupported");
  EXPECT_EQ(judge({ptx(80, 84)}, 90, r550), "jit");
  EXPECT_EQ(judge({ptx(80, 85)}, 90, r550), "ptx_too_new");
  EXPECT_EQ(judge({ptx(80, 91)}, 90, DriverTarget{}), "jit") << "unknown driver: ISA not judged";
  EXPECT_EQ(judge({ptx(80, 95)}, 90, DriverTarget{13050, ""}), "jit") << "9.N <-> 13.N extrapolated";
}

TEST(Verdict, ContainersForOtherGpusDoNotFailABinaryThatServes) {
  BinaryScan s;
  s.images = {sass(90), sass(80), ptx(80, 90)};
  s.groups = {ContainerGroup{10, {0}, {"good"}}, ContainerGroup{2, {1}, {"k_old"}}, ContainerGroup{3, {1, 2}, {"k_jit"}}};
  GpuVerdict v = judge_binary(s, GpuTarget{90, "NVIDIA H200"}, DriverTarget{13000, "580.159.04"}, rules());
  EXPECT_EQ(v.verdict, Verdict::jit);
  EXPECT_EQ(v.containers_other_arch, 2);
  EXPECT_EQ(v.containers_jit, 3);
  EXPECT_EQ(v.containers_failing, 0);
  EXPECT_EQ(v.gpu, "sm_90 (NVIDIA H200)");
}

TEST(Verdict, NothingServesNamesTheFailingKernels) {
  BinaryScan s;
  s.images = {sass(75), sass(80)};
  s.groups = {ContainerGroup{2, {0}, {"k_a"}}, ContainerGroup{1, {0, 1}, {"k_b"}}};
  GpuVerdict v = judge_binary(s, GpuTarget{90, ""}, DriverTarget{13000, "580.159.04"}, rules());
  EXPECT_EQ(v.verdict, Verdict::no_kernel_image);
  EXPECT_EQ(v.containers_failing, 3);
  EXPECT_EQ(v.containers_judged, 3);
  EXPECT_EQ(v.kernels_failing, (std::vector<std::string>{"k_a", "k_b"}));
  EXPECT_NE(v.detail.find("all containers"), std::string::npos) << v.detail;
}

TEST(Verdict, LibraryKernelTableServes) {
  BinaryScan s;  // cuFFT: one sm_75 module in .nv_fatbin, its real kernels in .ldata
  s.images = {sass(75)};
  s.groups = {ContainerGroup{1, {0}, {}}};
  s.dispatch_containers = 400;
  s.dispatch_images = {sass(90), sass(100)};
  EXPECT_EQ(judge_binary(s, GpuTarget{90, ""}, DriverTarget{}, rules()).verdict, Verdict::native);
  EXPECT_EQ(judge_binary(s, GpuTarget{120, ""}, DriverTarget{}, rules()).verdict, Verdict::no_kernel_image);
}

TEST(Verdict, IrOnlyContainersDoNotCount) {
  BinaryScan s;
  s.images = {KernelImage{"nvvm_ir", 90, "", 0, 0, "none", 1, 1, 0}};
  s.groups = {ContainerGroup{1, {0}, {}}};
  EXPECT_EQ(judge_binary(s, GpuTarget{90, ""}, DriverTarget{}, rules()).verdict, Verdict::no_cuda_code);
}

TEST(KbGpus, FindsByNameCcAndSm) {
  const Kb& kb = Kb::get();
  EXPECT_EQ(find_gpu(kb, "H100")->sm, 90);
  EXPECT_EQ(find_gpu(kb, "NVIDIA H200")->sm, 90);
  EXPECT_EQ(find_gpu(kb, "RTX 4090")->sm, 89);
  EXPECT_EQ(find_gpu(kb, "NVIDIA GeForce RTX 5090")->sm, 120);
  EXPECT_EQ(find_gpu(kb, "NVIDIA A100-SXM4-80GB")->sm, 80);
  EXPECT_EQ(find_gpu(kb, "Quadro RTX 6000")->sm, 75);
  EXPECT_EQ(find_gpu(kb, "NVIDIA RTX 6000 Ada Generation")->sm, 89);
  EXPECT_EQ(find_gpu(kb, "sm_89")->sm, 89);
  EXPECT_EQ(find_gpu(kb, "sm_90a")->sm, 90);
  EXPECT_EQ(find_gpu(kb, "12.0")->sm, 120);
  EXPECT_EQ(find_gpu(kb, "12.0")->arch, "Blackwell");
  EXPECT_FALSE(find_gpu(kb, "Voodoo 3").has_value());
  EXPECT_FALSE(find_gpu(kb, "H1000").has_value());
}

TEST(KbArch, PtxIsaTable) {
  EXPECT_EQ(max_ptx_isa(rules(), 13000), 90);
  EXPECT_EQ(max_ptx_isa(rules(), 12040), 84);
  EXPECT_EQ(max_ptx_isa(rules(), 12060), 85);
  EXPECT_EQ(cuda_for_ptx_isa(rules(), 91), 13010);
  EXPECT_TRUE(rules().tegra.count(87));
}
