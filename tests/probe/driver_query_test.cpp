// gpu::query_driver in-process against the fake NVML, and process liveness from /proc.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "gpu/driver_query.hpp"
#include "probe/driver_probe.hpp"

namespace {

bool have_fake() { return std::filesystem::exists(std::string(CD_FAKES_DIR) + "/libnvidia-ml.so.1"); }

}  // namespace

TEST(DriverQuery, NormalizesBusIds) {
  EXPECT_EQ(cd::gpu::normalize_bus_id("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(cd::gpu::normalize_bus_id("0000:3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(cd::gpu::normalize_bus_id("3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(cd::gpu::normalize_bus_id("00000001:C1:00.0"), "0001:c1:00.0");
}

TEST(DriverQuery, NoLibrariesMeansErrorsNotCrashes) {
  setenv("CUDA_DOCTOR_LIBNVML", "/nonexistent/libnvidia-ml.so.1", 1);
  setenv("CUDA_DOCTOR_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  std::vector<std::string> stages;
  cd::gpu::QueryProgress progress;
  progress.stage = [&](std::string_view s) { stages.emplace_back(s); };
  cd::DriverFacts d = cd::gpu::query_driver(progress);
  unsetenv("CUDA_DOCTOR_LIBNVML");
  unsetenv("CUDA_DOCTOR_LIBCUDA");
  EXPECT_EQ(stages, (std::vector<std::string>{"nvml", "cuInit"}));
  EXPECT_EQ(d.nvml_status, -1);
  EXPECT_NE(d.nvml_error.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << d.nvml_error;
  EXPECT_EQ(d.cu_init_status, -1);
  EXPECT_TRUE(d.gpus.empty());
}

TEST(DriverQuery, FakeNvmlEccAndComputeMode) {
  if (!have_fake()) GTEST_SKIP() << "build fake_nvml first";
  setenv("CUDA_DOCTOR_LIBNVML", (std::string(CD_FAKES_DIR) + "/libnvidia-ml.so.1").c_str(), 1);
  setenv("CUDA_DOCTOR_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  setenv("CD_FAKE_NVML_ECC_UNCORRECTED", "3", 1);
  setenv("CD_FAKE_NVML_COMPUTE_MODE", "3", 1);
  setenv("CD_FAKE_NVML_PCIE", "4,8,5,16", 1);
  setenv("CD_FAKE_NVML_GPUS", "2", 1);
  cd::DriverFacts d = cd::gpu::query_driver();
  for (const char* v : {"CUDA_DOCTOR_LIBNVML", "CUDA_DOCTOR_LIBCUDA", "CD_FAKE_NVML_ECC_UNCORRECTED",
                        "CD_FAKE_NVML_COMPUTE_MODE", "CD_FAKE_NVML_PCIE", "CD_FAKE_NVML_GPUS"})
    unsetenv(v);
  ASSERT_EQ(d.gpus.size(), 2u);
  EXPECT_EQ(d.gpus[0].ecc_uncorrected_volatile, 3);
  EXPECT_EQ(d.gpus[0].compute_mode, "exclusive_process");
  EXPECT_EQ(d.gpus[0].pcie_width_current, 8);
  EXPECT_EQ(d.gpus[1].nvml_index, 1);
  EXPECT_EQ(d.gpus[1].pci_bus_id, "0000:3c:00.0");
  EXPECT_NE(d.gpus[0].uuid, d.gpus[1].uuid);
}

TEST(DriverQuery, ProcessLivenessFromProc) {
  cd::DriverFacts d;
  d.processes.push_back(cd::GpuProcess{.pid = static_cast<int>(getpid()), .gpu_uuid = "GPU-x", .used_mib = 100, .name = ""});
  d.processes.push_back(cd::GpuProcess{.pid = 999999999, .gpu_uuid = "GPU-x", .used_mib = 200, .name = ""});
  cd::probe_gpu_processes(d, cd::Root());
  EXPECT_TRUE(d.processes[0].alive);
  EXPECT_FALSE(d.processes[0].name.empty());
  EXPECT_FALSE(d.processes[0].zombie);
  EXPECT_FALSE(d.processes[1].alive);
}
