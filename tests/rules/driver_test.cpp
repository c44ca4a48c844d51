// driver_rules: one test (at least) per driver.* finding id, on facts built in code.
#include <gtest/gtest.h>

#include "rules/finding_helpers.hpp"

#include <optional>

#include <fstream>
#include <sstream>

#include "kb/kb.hpp"
#include "rules/rules.hpp"
#include "rules/run_rule.hpp"

namespace {

// One H200 on driver 580.159.04 / CUDA 13.0, everything healthy.
cd::Facts healthy() {
  cd::Facts f;
  cd::DriverFacts& d = f.driver;
  d.module_loaded = true;
  d.module_version = "580.159.04";
  d.module_version_source = "/proc/driver/nvidia/version";
  d.libraries.push_back({"libcuda", "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04", "580.159.04", false, false, true, "default dir"});
  d.libraries.push_back({"libnvidia-ml", "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04", "580.159.04", false, false, true, "default dir"});
  d.nvml_status = 0;
  d.nvml_driver_version = "580.159.04";
  d.cu_init_status = 0;
  d.cuda_driver_version = 13000;
  d.cuda_device_count = 1;
  cd::GpuInfo g;
  g.nvml_index = 0;
  g.cuda_index = 0;
  g.name = "NVIDIA H200";
  g.uuid = "GPU-aaaa";
  g.pci_bus_id = "0000:3b:00.0";
  g.cc_major = 9;
  g.persistence_mode = "on";
  g.compute_mode = "default";
  d.gpus.push_back(g);
  d.pci_gpus.push_back({"0000:3b:00.0", "0x2335", "0x030200", "nvidia"});
  d.pci_devices_seen = 5;
  d.device_nodes = {"/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"};
  return f;
}

cd::PythonEnv torch_env(const std::string& version, const std::string& cuda) {
  cd::PythonEnv py;
  py.interpreter = "/opt/venv/bin/python";
  py.prefix = "/opt/venv";
  py.site_packages = {"/opt/venv/lib/python3.12/site-packages"};
  py.torch.version = version;
  py.torch.cuda = cuda;
  return py;
}

cd::Findings run(const cd::Facts& f) { return cdtest::run_rule(cd::driver_rules, f); }

using cdtest::find;
using cdtest::fixes;

std::string evidence(const cd::Finding& f) {
  std::string s;
  for (const auto& e : f.evidence) s += e.fact + " [" + e.source + "]\n";
  return s;
}

}  // namespace

TEST(DriverRules, HealthyMachineHasNoDriverFindings) { EXPECT_TRUE(run(healthy()).empty()); }

TEST(DriverRules, MissingOnAMachineWithoutGpu) {
  cd::Facts f;  // this CPU machine: no module, no libraries, no NVIDIA PCI device
  f.driver.pci_devices_seen = 6;
  f.platform.container = "docker";
  f.platform.container_evidence = "/.dockerenv exists";
  auto all = run(f);
  auto x = find(all, "driver.missing");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
  EXPECT_NE(x->title.find("No NVIDIA driver"), std::string::npos) << x->title;
  EXPECT_NE(evidence(*x).find("no NVIDIA device"), std::string::npos);
  EXPECT_NE(fixes(*x).find("nvidia-driver-580"), std::string::npos) << fixes(*x);
  EXPECT_EQ(all.size(), 1u);
}

TEST(DriverRules, MissingPicksTheBranchFrameworksNeed) {
  cd::Facts f;
  f.driver.pci_devices_seen = 3;
  cd::Toolkit tk;
  tk.version = "12.8";
  f.toolkit.toolkits.push_back(tk);
  auto x = find(run(f), "driver.missing");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("nvidia-driver-570"), std::string::npos) << fixes(*x);
}

TEST(DriverRules, MissingKernelModule) {
  cd::Facts f = healthy();
  f.driver.module_loaded = false;
  f.driver.module_version.clear();
  f.driver.gpus.clear();
  f.driver.nvml_status = 9;
  f.driver.cu_init_status = 100;
  f.driver.pci_gpus[0].driver = "nvidia";
  auto x = find(run(f), "driver.missing");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(x->title.find("kernel module is not loaded"), std::string::npos) << x->title;
  EXPECT_NE(fixes(*x).find("sudo modprobe nvidia"), std::string::npos);
}

TEST(DriverRules, MissingLibrariesInContainer) {
  cd::Facts f = healthy();
  f.driver.libraries.clear();
  f.driver.gpus.clear();
  f.driver.nvml_status = -1;
  f.driver.cu_init_status = -1;
  f.driver.cu_init_error = "libcuda.so.1: cannot open shared object file";
  f.platform.container = "docker";
  auto x = find(run(f), "driver.missing");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("NVIDIA_DRIVER_CAPABILITIES=compute,utility"), std::string::npos) << fixes(*x);
}

TEST(DriverRules, MissingUvmDevice) {
  cd::Facts f = healthy();
  f.driver.device_nodes = {"/dev/nvidia0", "/dev/nvidiactl"};
  f.driver.cu_init_status = 999;
  f.driver.cu_init_error = "CUDA_ERROR_UNKNOWN: unknown error";
  auto x = find(run(f), "driver.missing");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->subject, "/dev/nvidia-uvm");
  EXPECT_EQ(x->severity, cd::Severity::error);
  EXPECT_NE(fixes(*x).find("sudo modprobe nvidia-uvm"), std::string::npos);
}

TEST(DriverRules, GpuWithoutDriver) {
  cd::Facts f;
  f.driver.pci_gpus.push_back({"0000:65:00.0", "0x2684", "0x030000", ""});
  auto all = run(f);
  auto x = find(all, "driver.gpu_without_driver");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
  EXPECT_EQ(x->subject, "PCI 0000:65:00.0");
  EXPECT_FALSE(find(all, "driver.missing").has_value());  // one finding, not two
  EXPECT_NE(fixes(*x).find("ubuntu-drivers install"), std::string::npos);
}

TEST(DriverRules, GpuHeldByNouveauOrVfio) {
  cd::Facts f;
  f.driver.pci_gpus.push_back({"0000:01:00.0", "0x2684", "0x030000", "nouveau"});
  f.driver.pci_gpus.push_back({"0000:02:00.0", "0x2684", "0x030000", "vfio-pci"});
  auto all = run(f);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_NE(fixes(all[0]).find("blacklist nouveau"), std::string::npos);
  EXPECT_EQ(all[1].severity, cd::Severity::warning);
  EXPECT_NE(fixes(all[1]).find("vfio-pci/unbind"), std::string::npos);
}

TEST(DriverRules, LibraryMismatchFromFilesWhenNvmlFails) {
  cd::Facts f = healthy();
  f.driver.module_version = "550.54.15";
  f.driver.nvml_status = -1;  // say the child never ran
  f.driver.nvml_driver_version.clear();
  f.driver.gpus.clear();
  f.driver.cu_init_status = -1;
  f.driver.libraries.push_back({"libcuda", "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15", "550.54.15", false, false, false, "default dir"});
  auto x = find(run(f), "driver.library_mismatch");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
  EXPECT_NE(x->title.find("550.54.15"), std::string::npos);
  EXPECT_NE(x->title.find("580.159.04"), std::string::npos);
  EXPECT_EQ(evidence(*x).find("libcuda.so.550.54.15"), std::string::npos) << "the unlinked stale file is not evidence";
  EXPECT_EQ(x->fix.front(), "sudo reboot");
}

TEST(DriverRules, LibraryMismatchFromNvmlError) {
  cd::Facts f = healthy();
  f.driver.nvml_status = 18;
  f.driver.nvml_error = "NVML_ERROR_LIB_RM_VERSION_MISMATCH: Driver/library version mismatch";
  f.driver.nvml_driver_version.clear();
  f.driver.gpus.clear();
  f.driver.module_version.clear();
  auto x = find(run(f), "driver.library_mismatch");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(evidence(*x).find("LIB_RM_VERSION_MISMATCH"), std::string::npos);
}

TEST(DriverRules, StubInLdSoConfIsAnError) {
  cd::Facts f = healthy();
  f.platform.stub_dirs.push_back({"/usr/local/cuda-13.0/lib64/stubs", "/etc/ld.so.conf.d/cuda-stubs.conf", {"libcuda.so", "libcuda.so.1"}});
  auto x = find(run(f), "driver.stub_library");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
  std::string fx = fixes(*x);
  EXPECT_NE(fx.find("/etc/ld.so.conf.d/cuda-stubs.conf"), std::string::npos) << fx;
  EXPECT_NE(fx.find("sudo rm /usr/local/cuda-13.0/lib64/stubs/libcuda.so.1"), std::string::npos) << fx;
  EXPECT_NE(fx.find("sudo ldconfig"), std::string::npos) << fx;
}

TEST(DriverRules, StubOnLdLibraryPathGetsTheExactExport) {
  cd::Facts f = healthy();
  f.env["LD_LIBRARY_PATH"] = "/usr/local/cuda/lib64/stubs:/usr/local/nvidia/lib64";
  f.platform.stub_dirs.push_back({"/usr/local/cuda/lib64/stubs", "LD_LIBRARY_PATH", {"libcuda.so"}});
  auto x = find(run(f), "driver.stub_library");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::warning);  // only libcuda.so: dlopen("libcuda.so.1") still finds the driver
  EXPECT_EQ(x->fix.front(), "export LD_LIBRARY_PATH=/usr/local/nvidia/lib64");
  f.env["LD_LIBRARY_PATH"] = "/usr/local/cuda/lib64/stubs";
  f.driver.cu_init_status = 34;
  f.driver.cu_init_error = "CUDA_ERROR_STUB_LIBRARY: CUDA driver is a stub library";
  x = find(run(f), "driver.stub_library");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
  EXPECT_EQ(x->fix.front(), "unset LD_LIBRARY_PATH");
}

TEST(DriverRules, ForwardCompatOnUnsupportedGpu) {
  cd::Facts f = healthy();
  f.driver.gpus[0].name = "NVIDIA GeForce RTX 4090";
  f.driver.cu_init_status = 804;
  f.driver.cu_init_error = "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility was attempted on non supported HW";
  f.driver.libcuda_loaded = "/usr/local/cuda-13.0/compat/libcuda.so.1";
  f.platform.compat_dirs.push_back({"/usr/local/cuda-13.0/compat", "LD_LIBRARY_PATH", {"libcuda.so.1"}});
  f.env["LD_LIBRARY_PATH"] = "/usr/local/cuda-13.0/compat";
  auto x = find(run(f), "driver.forward_compat_unsupported");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
  EXPECT_NE(evidence(*x).find("not a data-center GPU"), std::string::npos) << evidence(*x);
  EXPECT_EQ(x->fix.front(), "unset LD_LIBRARY_PATH");
}

TEST(DriverRules, CompatOlderThanDriverWarns) {
  cd::Facts f = healthy();
  f.driver.module_version = f.driver.nvml_driver_version = "590.48.01";
  for (auto& l : f.driver.libraries) l.version = "590.48.01";
  f.driver.libraries.push_back({"libcuda", "/usr/local/cuda-13.0/compat/libcuda.so.580.95.05", "580.95.05", false, true, true, "/etc/ld.so.conf.d/000_cuda-compat.conf"});
  f.platform.compat_dirs.push_back({"/usr/local/cuda-13.0/compat", "/etc/ld.so.conf.d/000_cuda-compat.conf", {"libcuda.so.1", "libcuda.so.580.95.05"}});
  auto all = run(f);
  auto x = find(all, "driver.forward_compat_unsupported");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::warning);
  EXPECT_FALSE(find(all, "driver.library_mismatch").has_value());  // compat copies are meant to differ
}

TEST(DriverRules, PersistenceOffOnlyForDataCenterGpus) {
  cd::Facts f = healthy();
  f.driver.gpus[0].persistence_mode = "off";
  auto x = find(run(f), "driver.persistence_off");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::info);
  EXPECT_NE(fixes(*x).find("nvidia-persistenced"), std::string::npos);
  f.driver.gpus[0].name = "NVIDIA GeForce RTX 4090";
  EXPECT_FALSE(find(run(f), "driver.persistence_off").has_value());
}

TEST(DriverRules, TooOldForTorch) {
  cd::Facts f = healthy();
  f.driver.module_version = f.driver.nvml_driver_version = "535.104.05";
  for (auto& l : f.driver.libraries) l.version = "535.104.05";
  f.driver.cuda_driver_version = 12020;
  f.pythons.push_back(torch_env("2.11.0+cu130", "13.0"));
  auto x = find(run(f), "driver.too_old");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
  EXPECT_NE(x->title.find("CUDA 12.2"), std::string::npos) << x->title;
  EXPECT_NE(evidence(*x).find("not an installed toolkit"), std::string::npos);
  EXPECT_NE(evidence(*x).find(">= 580.65.06"), std::string::npos) << evidence(*x);
  std::string fx = fixes(*x);
  EXPECT_NE(fx.find("nvidia-driver-580"), std::string::npos) << fx;
  // torch 2.11 has no build <= 12.2; cu126 runs on 12.2 through minor-version compatibility.
  EXPECT_NE(fx.find("torch==2.11.0 --index-url https://download.pytorch.org/whl/cu126"), std::string::npos) << fx;
  EXPECT_NE(fx.find("minor-version compatibility"), std::string::npos) << fx;
}

TEST(DriverRules, MinorCompatForTorch) {
  cd::Facts f = healthy();
  f.driver.module_version = f.driver.nvml_driver_version = "535.104.05";
  for (auto& l : f.driver.libraries) l.version = "535.104.05";
  f.driver.cuda_driver_version = 12020;
  f.pythons.push_back(torch_env("2.7.1+cu126", "12.6"));
  auto all = run(f);
  EXPECT_FALSE(find(all, "driver.too_old").has_value());
  auto x = find(all, "driver.minor_compat");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::warning);
  EXPECT_NE(x->explanation.find("SASS"), std::string::npos);
  EXPECT_NE(evidence(*x).find(">= 525.60.13"), std::string::npos) << evidence(*x);
}

TEST(DriverRules, BranchTableWhenTheDriverApiCouldNotRun) {
  cd::Facts f = healthy();
  f.driver.module_version = "550.54.15";
  f.driver.nvml_driver_version.clear();
  f.driver.nvml_status = -1;
  f.driver.cuda_driver_version = 0;
  f.driver.cu_init_status = -1;
  for (auto& l : f.driver.libraries) l.version = "550.54.15";
  f.pythons.push_back(torch_env("2.11.0+cu130", "13.0"));
  auto x = find(run(f), "driver.too_old");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(evidence(*x).find("knowledge base: driver branch 550 -> CUDA 12.4"), std::string::npos) << evidence(*x);
}

TEST(DriverRules, ToolkitNewerThanDriverWarns) {
  cd::Facts f = healthy();
  f.driver.cuda_driver_version = 12080;
  cd::Toolkit tk;
  tk.root = "/usr/local/cuda-13.0";
  tk.version = "13.0.88";
  tk.version_source = "version.json";
  f.toolkit.toolkits.push_back(tk);
  auto x = find(run(f), "driver.too_old");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::warning);
  EXPECT_NE(x->subject.find("/usr/local/cuda-13.0"), std::string::npos);
}

TEST(DriverRules, NewerDriverIsFine) {
  cd::Facts f = healthy();
  f.pythons.push_back(torch_env("2.7.1+cu128", "12.8"));
  EXPECT_TRUE(run(f).empty());
}

TEST(DriverRules, NvmlWorksButLibcudaDoesNotLoad) {
  cd::Facts f = healthy();
  f.driver.cu_init_status = -1;
  f.driver.cuda_driver_version = 0;
  f.driver.cu_init_error = "libcuda.so.1: cannot open shared object file: No such file or directory";
  f.platform.container = "docker";
  f.env["NVIDIA_DRIVER_CAPABILITIES"] = "utility";
  auto x = find(run(f), "driver.missing");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->subject, "libcuda.so.1");
  EXPECT_NE(fixes(*x).find("NVIDIA_DRIVER_CAPABILITIES=compute,utility"), std::string::npos);
  EXPECT_NE(evidence(*x).find("NVIDIA_DRIVER_CAPABILITIES=utility"), std::string::npos);
}

// The facts recorded on the H200 device machine (tests/fixtures/h200/README.md).
TEST(DriverRules, H200RecordedFacts) {
  std::ifstream in(std::string(CD_FIXTURES) + "/h200/facts.json");
  ASSERT_TRUE(in) << "tests/fixtures/h200/facts.json missing";
  std::stringstream text;
  text << in.rdbuf();
  cd::Facts f = cd::facts_from_json_text(text.str(), "h200/facts.json");
  const cd::DriverFacts& d = f.driver;
  EXPECT_EQ(d.nvml_driver_version, "580.159.04");
  EXPECT_EQ(d.module_version, "580.159.04");
  EXPECT_EQ(d.cuda_driver_version, 13000);
  EXPECT_EQ(d.cu_init_status, 0);
  EXPECT_TRUE(d.query_error.empty());
  ASSERT_EQ(d.gpus.size(), 1u);
  EXPECT_EQ(d.gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(d.gpus[0].cc_major * 10 + d.gpus[0].cc_minor, 90);
  EXPECT_EQ(d.gpus[0].cuda_index, 0);
  EXPECT_EQ(d.gpus[0].nvml_index, 0);
  EXPECT_EQ(d.gpus[0].memory_total_mib, 143771u);
  EXPECT_EQ(d.gpus[0].persistence_mode, "on");
  EXPECT_EQ(d.gpus[0].pcie_gen_max, 5);
  EXPECT_EQ(d.gpus[0].pcie_width_max, 16);
  EXPECT_EQ(d.gpus[0].pci_bus_id, "0000:00:06.0");
  ASSERT_EQ(d.pci_gpus.size(), 1u);
  EXPECT_EQ(d.pci_gpus[0].address, d.gpus[0].pci_bus_id);
  EXPECT_EQ(f.platform.container, "docker");
  // A healthy driver: no layer-1 finding, and the image's NVIDIA_REQUIRE_CUDA is met.
  EXPECT_TRUE(cdtest::run_rule(cd::driver_rules, f).empty());
  EXPECT_TRUE(cdtest::run_rule(cd::device_rules, f).empty());
  EXPECT_TRUE(cdtest::run_rule(cd::platform_rules, f).empty());
  // The same machine with torch needing CUDA 13.2 would be too old for it, minor compat aside.
  f.pythons[0].torch.cuda = "13.2";
  auto x = find(run(f), "driver.minor_compat");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(evidence(*x).find("driver 580.159.04 supports CUDA <= 13.0"), std::string::npos) << evidence(*x);
}

TEST(DriverRules, FilesOnlyFactsOfAHealthyDriverAreNotMissing) {
  cd::Facts f = healthy();  // as --root sees it: files only, the driver never asked
  f.driver.nvml_status = f.driver.cu_init_status = -1;
  f.driver.nvml_driver_version.clear();
  f.driver.cuda_driver_version = 0;
  f.driver.gpus.clear();
  EXPECT_TRUE(run(f).empty());
}

// The kernel module runs but libcuda is missing: the user-space libraries of the module's branch,
// by the distribution's package names (data/plan.toml [[driver_install]] user_libs), else the
// whole driver of that branch.
TEST(DriverRules, MissingUserSpaceLibrariesByDistribution) {
  cd::Facts f;
  f.driver.module_loaded = true;
  f.driver.module_version = "550.127.05";
  f.host.os_id = "ubuntu", f.host.os_version = "24.04";
  auto x = find(run(f), "driver.missing");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("sudo apt install libnvidia-compute-550   # the user-space libraries matching kernel module 550.127.05"),
            std::string::npos) << fixes(*x);
  f.host.os_id = "debian", f.host.os_version = "12", f.host.os_codename = "bookworm";
  x = find(run(f), "driver.missing");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("sudo apt install libcuda1 libnvidia-ml1"), std::string::npos) << fixes(*x);
  f.host.os_id = "rocky", f.host.os_like = "rhel centos fedora", f.host.os_version = "9.4", f.host.os_codename.clear();
  x = find(run(f), "driver.missing");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("sudo dnf module install nvidia-driver:550-open"), std::string::npos) << fixes(*x);
  EXPECT_EQ(fixes(*x).find("apt install"), std::string::npos) << fixes(*x);
}
