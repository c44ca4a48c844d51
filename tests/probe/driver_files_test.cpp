// The driver probe's file half on hermetic --root trees (tests/fixtures/roots/driver_*):
// kernel module version, driver library files, PCI GPUs, device nodes. With --root the
// live driver is never asked.
#include <gtest/gtest.h>

#include <algorithm>

#include "probe/driver_probe.hpp"
#include "probe/probe.hpp"

namespace {

cd::Facts probe_root(const std::string& name, std::map<std::string, std::string> env = {}) {
  cd::ProbeOptions opts;
  opts.root = cd::Root(std::string(CD_FIXTURES) + "/roots/" + name);
  opts.env = std::move(env);
  cd::Facts facts;
  cd::probe_driver(facts, opts);
  return facts;
}

const cd::DriverLibrary* find_lib(const cd::DriverFacts& d, const std::string& kind, const std::string& version) {
  for (const auto& l : d.libraries)
    if (l.kind == kind && l.version == version) return &l;
  return nullptr;
}

}  // namespace

TEST(DriverFiles, ParsesNvrmVersionLine) {
  EXPECT_EQ(cd::parse_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
                                   "(dvs-builder@U22)  Wed Jun 25 20:50:53 UTC 2025\nGCC version: gcc 13.3.0"),
            "580.159.04");
  EXPECT_EQ(cd::parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023"),
            "535.104.05");
  EXPECT_EQ(cd::parse_nvrm_version("garbage"), "");
}

TEST(DriverFiles, LibraryFileVersion) {
  EXPECT_EQ(cd::library_file_version("libcuda.so.580.159.04", "libcuda"), "580.159.04");
  EXPECT_EQ(cd::library_file_version("libnvidia-ml.so.570.124.06", "libnvidia-ml"), "570.124.06");
  EXPECT_EQ(cd::library_file_version("libcuda.so.1", "libcuda"), "");
  EXPECT_EQ(cd::library_file_version("libcuda.so.1.1", "libcuda"), "");  // WSL's
  EXPECT_EQ(cd::library_file_version("libcudart.so.13.0.96", "libcuda"), "");
}

TEST(DriverFiles, HealthyDriver) {
  cd::Facts f = probe_root("driver_ok");
  const cd::DriverFacts& d = f.driver;
  EXPECT_TRUE(d.module_loaded);
  EXPECT_EQ(d.module_version, "580.159.04");
  EXPECT_EQ(d.module_version_source, "/proc/driver/nvidia/version");
  const auto* cuda = find_lib(d, "libcuda", "580.159.04");
  ASSERT_NE(cuda, nullptr);
  EXPECT_TRUE(cuda->linked);
  EXPECT_FALSE(cuda->stub);
  EXPECT_EQ(cuda->path, "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04");
  EXPECT_NE(find_lib(d, "libnvidia-ml", "580.159.04"), nullptr);
  ASSERT_EQ(d.pci_gpus.size(), 1u);  // the Intel host bridge is not a GPU
  EXPECT_EQ(d.pci_gpus[0].address, "0000:3b:00.0");
  EXPECT_EQ(d.pci_gpus[0].device_id, "0x2335");
  EXPECT_EQ(d.pci_gpus[0].driver, "nvidia");
  EXPECT_EQ(d.pci_devices_seen, 2);
  EXPECT_NE(std::find(d.device_nodes.begin(), d.device_nodes.end(), "/dev/nvidia-uvm"), d.device_nodes.end());
  // --root: the live driver is not asked.
  EXPECT_EQ(d.nvml_status, -1);
  EXPECT_EQ(d.cu_init_status, -1);
  EXPECT_TRUE(d.query_error.empty());
  ASSERT_FALSE(f.notes.empty());
  EXPECT_EQ(f.notes[0].probe, "driver");
}

TEST(DriverFiles, MismatchSeenFromFilesAlone) {
  const cd::DriverFacts d = probe_root("driver_mismatch").driver;
  EXPECT_EQ(d.module_version, "550.54.15");
  const auto* linked = find_lib(d, "libcuda", "580.159.04");
  ASSERT_NE(linked, nullptr);
  EXPECT_TRUE(linked->linked);
  const auto* stale = find_lib(d, "libcuda", "550.54.15");
  ASSERT_NE(stale, nullptr);
  EXPECT_FALSE(stale->linked);
}

TEST(DriverFiles, NoDriverNoGpu) {
  const cd::DriverFacts d = probe_root("driver_none").driver;
  EXPECT_FALSE(d.module_loaded);
  EXPECT_TRUE(d.libraries.empty());
  EXPECT_TRUE(d.pci_gpus.empty());
  EXPECT_EQ(d.pci_devices_seen, 2);
  EXPECT_TRUE(d.device_nodes.empty());
}

TEST(DriverFiles, UnboundAndNouveauGpus) {
  const cd::DriverFacts unbound = probe_root("driver_unbound").driver;
  ASSERT_EQ(unbound.pci_gpus.size(), 1u);
  EXPECT_EQ(unbound.pci_gpus[0].driver, "");
  EXPECT_EQ(unbound.pci_gpus[0].class_id, "0x030000");
  const cd::DriverFacts nouveau = probe_root("driver_nouveau").driver;
  ASSERT_EQ(nouveau.pci_gpus.size(), 1u);
  EXPECT_EQ(nouveau.pci_gpus[0].driver, "nouveau");
}

TEST(DriverFiles, LibrariesFoundThroughLdSoConf) {
  const cd::DriverFacts d = probe_root("driver_libs_no_module").driver;
  EXPECT_FALSE(d.module_loaded);
  const auto* lib = find_lib(d, "libcuda", "570.124.06");
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(lib->path, "/usr/local/nvidia/lib64/libcuda.so.570.124.06");
  EXPECT_EQ(lib->found_via, "/etc/ld.so.conf.d/nvidia.conf");
}

TEST(DriverFiles, LdLibraryPathComesFirst) {
  auto dirs = cd::library_search_dirs(cd::Root(std::string(CD_FIXTURES) + "/roots/driver_libs_no_module"),
                                      {{"LD_LIBRARY_PATH", "/opt/x/lib::/usr/local/nvidia/lib64/"}});
  ASSERT_GE(dirs.size(), 3u);
  EXPECT_EQ(dirs[0].dir, "/opt/x/lib");
  EXPECT_EQ(dirs[0].via, "LD_LIBRARY_PATH");
  EXPECT_EQ(dirs[1].dir, "/usr/local/nvidia/lib64");
  EXPECT_EQ(dirs[1].via, "LD_LIBRARY_PATH");  // deduplicated: the ld.so.conf entry comes later
  for (size_t i = 2; i < dirs.size(); ++i) EXPECT_NE(dirs[i].dir, "/usr/local/nvidia/lib64");
}

TEST(DriverFiles, StubAndCompatLibrariesAreMarked) {
  const cd::DriverFacts stub = probe_root("driver_stub_ldconf").driver;
  bool saw_stub = false;
  for (const auto& l : stub.libraries) saw_stub |= l.stub && l.path.find("/stubs/") != std::string::npos;
  EXPECT_TRUE(saw_stub);
  const cd::DriverFacts compat = probe_root("driver_compat_old").driver;
  const auto* c = find_lib(compat, "libcuda", "580.95.05");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->compat);
  EXPECT_EQ(compat.module_version, "590.48.01");
}

TEST(DriverFiles, MissingUvmNode) {
  const cd::DriverFacts d = probe_root("driver_no_uvm").driver;
  EXPECT_NE(std::find(d.device_nodes.begin(), d.device_nodes.end(), "/dev/nvidia0"), d.device_nodes.end());
  EXPECT_EQ(std::find(d.device_nodes.begin(), d.device_nodes.end(), "/dev/nvidia-uvm"), d.device_nodes.end());
}

TEST(DriverFiles, WslDriverFromWindows) {
  const cd::DriverFacts d = probe_root("platform_wsl2_linux_driver").driver;
  bool wsl = false, linux_lib = false;
  for (const auto& l : d.libraries) {
    wsl |= l.path == "/usr/lib/wsl/lib/libcuda.so.1.1" && l.version.empty();
    linux_lib |= l.path == "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15" && l.version == "550.54.15";
  }
  EXPECT_TRUE(wsl);
  EXPECT_TRUE(linux_lib);
  EXPECT_FALSE(d.module_loaded);
}
