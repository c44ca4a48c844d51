// device_rules: one test (at least) per device.* id (memory.*: memory_test.cpp).
#include <gtest/gtest.h>

#include "rules/finding_helpers.hpp"

#include <optional>

#include "kb/kb.hpp"
#include "rules/rules.hpp"
#include "rules/run_rule.hpp"

namespace {

cd::Facts two_gpus() {
  cd::Facts f;
  cd::DriverFacts& d = f.driver;
  d.module_loaded = true;
  d.module_version = d.nvml_driver_version = "580.159.04";
  d.nvml_status = 0;
  d.cu_init_status = 0;
  d.cuda_driver_version = 13000;
  d.cuda_device_count = 2;
  for (int i = 0; i < 2; ++i) {
    cd::GpuInfo g;
    g.nvml_index = g.cuda_index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.uuid = i == 0 ? "GPU-0a1b2c3d-0000" : "GPU-9f8e7d6c-1111";
    g.pci_bus_id = i == 0 ? "0000:3b:00.0" : "0000:5e:00.0";
    g.persistence_mode = "on";
    g.compute_mode = "default";
    g.ecc_uncorrected_volatile = 0;
    g.pcie_gen_current = g.pcie_gen_max = 5;
    g.pcie_width_current = g.pcie_width_max = 16;
    d.gpus.push_back(g);
  }
  d.device_nodes = {"/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl"};
  return f;
}

cd::Findings run(const cd::Facts& f) { return cdtest::run_rule(cd::device_rules, f); }

using cdtest::find;
using cdtest::fixes;

}  // namespace

TEST(DeviceRules, HealthyGpusHaveNoFindings) {
  cd::Facts f = two_gpus();
  f.env["CUDA_VISIBLE_DEVICES"] = "1,0";
  EXPECT_TRUE(run(f).empty());
  f.env["CUDA_VISIBLE_DEVICES"] = "GPU-9f8e";  // UUID prefixes are valid
  EXPECT_TRUE(run(f).empty());
}

TEST(DeviceRules, VisibleDevicesHidingAll) {
  for (const char* value : {"", "-1", "NoDevFiles", "GPU-deadbeef"}) {
    cd::Facts f = two_gpus();
    f.env["CUDA_VISIBLE_DEVICES"] = value;
    auto x = find(run(f), "device.not_visible");
    ASSERT_TRUE(x.has_value()) << value;
    EXPECT_EQ(x->severity, cd::Severity::error) << value;
    EXPECT_NE(x->title.find("hides all 2 GPU(s)"), std::string::npos) << x->title;
    EXPECT_EQ(x->fix.front(), "unset CUDA_VISIBLE_DEVICES   # all GPUs");
    EXPECT_NE(fixes(*x).find("export CUDA_VISIBLE_DEVICES=0,1"), std::string::npos);
  }
}

TEST(DeviceRules, VisibleDevicesWithBadId) {
  cd::Facts f = two_gpus();
  f.env["CUDA_VISIBLE_DEVICES"] = "0,7,1";
  auto x = find(run(f), "device.not_visible");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::warning);
  EXPECT_NE(x->title.find("\"7\""), std::string::npos) << x->title;
}

TEST(DeviceRules, CuInitNoDeviceWhileNvmlSeesGpus) {
  cd::Facts f = two_gpus();
  f.driver.cu_init_status = 100;
  f.driver.cu_init_error = "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected";
  f.driver.cuda_device_count = -1;
  auto x = find(run(f), "device.not_visible");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
  EXPECT_NE(fixes(*x).find("ls -l /dev/nvidia*"), std::string::npos);
}

TEST(DeviceRules, ExclusiveProcessWithAHolder) {
  cd::Facts f = two_gpus();
  f.driver.gpus[1].compute_mode = "exclusive_process";
  f.driver.processes.push_back(cd::GpuProcess{.pid = 4242, .gpu_uuid = "GPU-9f8e7d6c-1111", .used_mib = 30000, .name = "python3"});
  auto x = find(run(f), "device.busy_or_unavailable");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::warning);
  EXPECT_NE(x->title.find("4242"), std::string::npos);
  EXPECT_NE(fixes(*x).find("nvidia-smi -i 1 -c DEFAULT"), std::string::npos);
  f.driver.processes.clear();  // exclusive but idle: fine
  EXPECT_FALSE(find(run(f), "device.busy_or_unavailable").has_value());
}

TEST(DeviceRules, ProhibitedComputeMode) {
  cd::Facts f = two_gpus();
  f.driver.gpus[0].compute_mode = "prohibited";
  auto x = find(run(f), "device.busy_or_unavailable");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
}

TEST(DeviceRules, UncorrectableEcc) {
  cd::Facts f = two_gpus();
  f.driver.gpus[0].ecc_uncorrected_volatile = 2;
  auto x = find(run(f), "device.hardware_fault");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
  EXPECT_NE(fixes(*x).find("nvidia-smi -r -i 0"), std::string::npos);
}

TEST(DeviceRules, PendingRemapNeedsReset) {
  cd::Facts f = two_gpus();
  f.driver.gpus[1].remapped_rows_pending = 1;
  auto x = find(run(f), "device.hardware_fault");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::warning);
}

TEST(DeviceRules, HungDriverQuery) {
  cd::Facts f = two_gpus();
  f.driver.gpus.clear();
  f.driver.query_error = "driver query timed out after 10 s in nvml";
  auto x = find(run(f), "device.hardware_fault");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(x->title.find("timed out after 10 s in nvml"), std::string::npos);
}

TEST(DeviceRules, NvmlGpuLostIsDecoded) {
  cd::Facts f = two_gpus();
  f.driver.gpus.clear();
  f.driver.nvml_status = 15;
  f.driver.nvml_error = "NVML_ERROR_GPU_IS_LOST: GPU is lost";
  auto x = find(run(f), "device.hardware_fault");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(x->title.find("fallen off the bus"), std::string::npos) << x->title;  // from data/nvml_errors.toml
}

TEST(DeviceRules, NarrowPcieLink) {
  cd::Facts f = two_gpus();
  f.driver.gpus[0].pcie_width_current = 8;
  auto x = find(run(f), "device.degraded_link");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(x->title.find("gen5 x8"), std::string::npos) << x->title;
}

TEST(DeviceRules, IdleGenerationDropIsNotALinkProblem) {
  cd::Facts f = two_gpus();
  f.driver.gpus[0].pcie_gen_current = 1;  // power saving at idle
  EXPECT_FALSE(find(run(f), "device.degraded_link").has_value());
  f.driver.processes.push_back(cd::GpuProcess{.pid = 77, .gpu_uuid = f.driver.gpus[0].uuid, .used_mib = 1000, .name = "python3"});
  EXPECT_TRUE(find(run(f), "device.degraded_link").has_value());  // still gen1 under load
}

TEST(DeviceRules, OtherCuInitErrorsAreDecoded) {
  cd::Facts f = two_gpus();
  f.driver.cu_init_status = 802;
  f.driver.cu_init_error = "CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized";
  auto x = find(run(f), "device.hardware_fault");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("nvidia-fabricmanager"), std::string::npos) << x->title << fixes(*x);
  f.driver.cu_init_status = 101;
  x = find(run(f), "device.not_visible");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(x->explanation.find("CUDA_ERROR_INVALID_DEVICE"), std::string::npos) << x->explanation;
}

// A mixed machine: CUDA's fastest-first order puts the second PCI slot first.
TEST(DeviceRules, CudaOrderDiffersFromNvidiaSmi) {
  cd::Facts f = two_gpus();
  f.driver.gpus[0].cuda_index = 1;
  f.driver.gpus[1].cuda_index = 0;
  f.driver.gpus[1].name = "NVIDIA H200";
  auto x = find(run(f), "device.order_differs");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::warning);
  ASSERT_GE(x->evidence.size(), 3u);
  EXPECT_EQ(x->evidence[0].fact, "cuda:0 is nvidia-smi GPU 1: NVIDIA H200 at 0000:5e:00.0");
  EXPECT_NE(x->evidence.back().fact.find("FASTEST_FIRST"), std::string::npos);
  EXPECT_NE(fixes(*x).find("CUDA_DEVICE_ORDER=PCI_BUS_ID"), std::string::npos);

  f.env["CUDA_VISIBLE_DEVICES"] = "1,0";  // renumbered on purpose: not a finding
  EXPECT_FALSE(find(run(f), "device.order_differs").has_value());
}

TEST(DeviceRules, SameOrderOrNoCudaOrderIsQuiet) {
  cd::Facts f = two_gpus();
  EXPECT_FALSE(find(run(f), "device.order_differs").has_value());
  for (auto& g : f.driver.gpus) g.cuda_index = -1;  // cuInit failed: no CUDA order to compare
  EXPECT_FALSE(find(run(f), "device.order_differs").has_value());
}
