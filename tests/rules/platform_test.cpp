// platform_rules: container.no_gpu_runtime, container.driver_below_image, wsl.driver_problem.
#include <gtest/gtest.h>

#include "rules/finding_helpers.hpp"

#include <optional>

#include "kb/kb.hpp"
#include "rules/rules.hpp"
#include "rules/run_rule.hpp"

namespace {

cd::Facts gpu_host(const std::string& driver = "580.159.04", int cuda = 13000) {
  cd::Facts f;
  f.driver.module_loaded = true;
  f.driver.module_version = f.driver.nvml_driver_version = driver;
  f.driver.nvml_status = f.driver.cu_init_status = 0;
  f.driver.cuda_driver_version = cuda;
  cd::GpuInfo g;
  g.nvml_index = 0;
  g.name = "NVIDIA H200";
  f.driver.gpus.push_back(g);
  f.driver.device_nodes = {"/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"};
  return f;
}

cd::Findings run(const cd::Facts& f) { return cdtest::run_rule(cd::platform_rules, f); }

using cdtest::find;
using cdtest::fixes;

}  // namespace

TEST(PlatformRules, ContainerWithoutGpus) {
  cd::Facts f;
  f.driver.module_loaded = true;  // the host's module shows through /proc
  f.driver.pci_devices_seen = 4;
  f.platform.container = "docker";
  f.platform.container_evidence = "/.dockerenv exists";
  auto x = find(run(f), "container.no_gpu_runtime");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
  EXPECT_NE(fixes(*x).find("docker run --gpus all"), std::string::npos);
  f.platform.container = "kubernetes";
  x = find(run(f), "container.no_gpu_runtime");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("nvidia.com/gpu"), std::string::npos);
  f.platform.container = "podman";
  x = find(run(f), "container.no_gpu_runtime");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("--device nvidia.com/gpu=all"), std::string::npos);
}

TEST(PlatformRules, ContainerOnAHostWithoutGpusIsNotARuntimeProblem) {
  cd::Facts f;  // like this CPU machine: docker, PCI readable, no NVIDIA anything
  f.driver.pci_devices_seen = 6;
  f.platform.container = "docker";
  EXPECT_FALSE(find(run(f), "container.no_gpu_runtime").has_value());
  EXPECT_FALSE(find(run(gpu_host()), "container.no_gpu_runtime").has_value());
}

TEST(PlatformRules, ImageNeedsNewerDriver) {
  cd::Facts f = gpu_host("535.104.05", 12020);
  f.driver.gpus[0].name = "NVIDIA GeForce RTX 4090";
  f.env["NVIDIA_REQUIRE_CUDA"] = "cuda>=13.0 brand=tesla,driver>=535,driver<536 brand=unknown,driver>=570,driver<571";
  auto x = find(run(f), "container.driver_below_image");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
  EXPECT_NE(x->title.find("requires CUDA 13.0"), std::string::npos) << x->title;
  EXPECT_NE(x->title.find("supports CUDA 12.2"), std::string::npos) << x->title;
  EXPECT_NE(fixes(*x).find("nvidia-driver-580"), std::string::npos) << fixes(*x);
}

TEST(PlatformRules, ImageRequirementMetOrForwardCompatible) {
  cd::Facts f = gpu_host();  // the H200 machine's own value
  f.env["NVIDIA_REQUIRE_CUDA"] = "cuda>=13.0 brand=unknown,driver>=535,driver<536 brand=grid,driver>=535,driver<536 "
                                 "brand=tesla,driver>=535,driver<536 brand=nvidia,driver>=535,driver<536";
  EXPECT_TRUE(run(f).empty());
  cd::Facts dc = gpu_host("535.104.05", 12020);  // data-center GPU on R535: the tesla clause allows it
  dc.env["NVIDIA_REQUIRE_CUDA"] = "cuda>=13.0 brand=tesla,driver>=535,driver<536";
  EXPECT_FALSE(find(run(dc), "container.driver_below_image").has_value());
}

TEST(PlatformRules, Wsl1) {
  cd::Facts f;
  f.platform.wsl = true;
  f.platform.wsl_version = 1;
  auto x = find(run(f), "wsl.driver_problem");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("wsl --set-version"), std::string::npos);
}

TEST(PlatformRules, WslWithoutLibDir) {
  cd::Facts f;
  f.platform.wsl = true;
  f.platform.wsl_version = 2;
  auto x = find(run(f), "wsl.driver_problem");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(x->title.find("/usr/lib/wsl/lib"), std::string::npos);
}

TEST(PlatformRules, LinuxDriverInsideWsl) {
  cd::Facts f;
  f.platform.wsl = true;
  f.platform.wsl_version = 2;
  f.platform.wsl_lib_dir = true;
  f.driver.libraries.push_back({"libcuda", "/usr/lib/wsl/lib/libcuda.so.1.1", "", false, false, true, "default dir"});
  EXPECT_TRUE(run(f).empty());
  f.driver.libraries.push_back({"libcuda", "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15", "550.54.15", false, false, true, "default dir"});
  auto x = find(run(f), "wsl.driver_problem");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(x->title.find("Linux NVIDIA driver"), std::string::npos);
  EXPECT_NE(fixes(*x).find("apt remove --purge"), std::string::npos);
}
