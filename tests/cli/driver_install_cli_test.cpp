// check on the install_* --root trees (tests/fixtures/roots/make_install_roots.sh): the
// driver forensics end to end — which finding, the package change named with its date and
// who did it, the fix — and the real Debian 12 driver user-space (libcuda1/libnvidia-ml1
// 535.261.03 unpacked with dpkg-deb) in a root whose kernel has no module.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/cli_helpers.hpp"

namespace {

using cdtest::doctor;

std::string root_path(const std::string& name) { return std::string(CD_FIXTURES) + "/roots/" + name; }

nlohmann::json check_json(const std::string& root) {
  auto r = doctor({"check", "--json", "--root", root});
  EXPECT_TRUE(r.code == 0 || r.code == 1 || r.code == 2) << r.err;
  return nlohmann::json::parse(r.out);
}

nlohmann::json finding(const nlohmann::json& j, const std::string& id) {
  for (const auto& f : j["findings"])
    if (f["id"] == id) return f;
  return nullptr;
}

std::string all_text(const nlohmann::json& f, const char* field) {
  std::string out;
  for (const auto& e : f[field]) out += (e.is_string() ? e.get<std::string>() : e.dump()) + "\n";
  return out;
}

std::vector<std::string> ids(const nlohmann::json& j) {
  std::vector<std::string> out;
  for (const auto& f : j["findings"]) out.push_back(f["id"]);
  return out;
}

}  // namespace

TEST(DriverInstallCli, MismatchNamesTheRealUpgradeFromARotatedLog) {
  auto j = check_json(root_path("install_upgraded_435"));
  auto f = finding(j, "driver.library_mismatch");
  ASSERT_FALSE(f.is_null()) << j["findings"].dump();
  std::string ev = all_text(f, "evidence");
  EXPECT_NE(ev.find("libnvidia-compute-435 upgraded 435.21-0ubuntu0.18.04.3 → 455.38-0ubuntu0.18.04.1 on 2020-11-19 09:16:09 "
                    "by aptdaemon role='role-commit-packages'"),
            std::string::npos) << ev;
  EXPECT_NE(ev.find("/var/log/apt/history.log.1.gz"), std::string::npos);
  EXPECT_NE(ev.find("booted 2020-11-17 08:00:00 UTC"), std::string::npos) << ev;
  std::string fix = all_text(f, "fix");
  EXPECT_NE(fix.find("sudo apt-mark hold "), std::string::npos);
  EXPECT_NE(fix.find(" nvidia-driver-455"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("linux-image"), std::string::npos) << fix;  // only driver packages are held
}

TEST(DriverInstallCli, UnattendedUpgradeFoundThroughItsOwnLog) {
  auto j = check_json(root_path("install_unattended_550"));
  auto f = finding(j, "driver.library_mismatch");
  ASSERT_FALSE(f.is_null());
  std::string ev = all_text(f, "evidence");
  // dpkg.log has the versions, the unattended-upgrades log (rotated, gzip) says who.
  EXPECT_NE(ev.find("libnvidia-compute-550 upgraded 550.54.14-0ubuntu0.22.04.1 → 550.54.15-0ubuntu0.22.04.2 on "
                    "2024-03-12 06:25:20 by unattended-upgrade"),
            std::string::npos) << ev;
  std::string fix = all_text(f, "fix");
  EXPECT_NE(fix.find("sudo apt-mark hold libnvidia-compute-550 nvidia-dkms-550 nvidia-utils-550"), std::string::npos) << fix;
  // The text report shows the when/who line under the problem's title only with -v; the title is there.
  auto text = doctor({"check", "--root", root_path("install_unattended_550")});
  EXPECT_NE(text.out.find("Driver/library version mismatch"), std::string::npos) << text.out;
}

TEST(DriverInstallCli, DnfHistoryGivesVersionlock) {
  auto j = check_json(root_path("install_dnf_rocky"));
  auto f = finding(j, "driver.library_mismatch");
  ASSERT_FALSE(f.is_null());
  EXPECT_NE(all_text(f, "evidence").find("nvidia-driver-cuda-libs upgraded 3:550.54.14-1.el9 → 3:550.54.15-1.el9 on 2024-03-14 09:12:40 by dnf"),
            std::string::npos) << all_text(f, "evidence");
  EXPECT_NE(all_text(f, "fix").find("dnf versionlock add kmod-nvidia-latest-dkms nvidia-driver-NVML nvidia-driver-cuda-libs"),
            std::string::npos) << all_text(f, "fix");
}

TEST(DriverInstallCli, ModuleNotBuiltForTheRunningKernel) {
  auto j = check_json(root_path("install_not_built"));
  auto f = finding(j, "driver.module_not_built");
  ASSERT_FALSE(f.is_null()) << j["findings"].dump();
  EXPECT_EQ(f["severity"], "error");
  std::string ev = all_text(f, "evidence");
  EXPECT_NE(ev.find("running kernel 6.8.0-51-generic"), std::string::npos) << ev;
  EXPECT_NE(ev.find("DKMS nvidia/550.127.05 built for: 6.8.0-49-generic"), std::string::npos) << ev;
  std::string fix = all_text(f, "fix");
  EXPECT_NE(fix.find("sudo apt install linux-headers-6.8.0-51-generic"), std::string::npos) << fix;
  EXPECT_NE(fix.find("sudo dkms install nvidia/550.127.05 -k 6.8.0-51-generic"), std::string::npos) << fix;
  // One cause, said once: not also the generic "module not loaded" nor "GPU without driver".
  auto all = ids(j);
  EXPECT_EQ(std::count(all.begin(), all.end(), "driver.missing"), 0);
  EXPECT_EQ(std::count(all.begin(), all.end(), "driver.gpu_without_driver"), 0);
}

TEST(DriverInstallCli, NextBootKernelWithoutModuleIsAWarning) {
  auto j = check_json(root_path("install_next_boot"));
  auto f = finding(j, "driver.module_not_built");
  ASSERT_FALSE(f.is_null());
  EXPECT_EQ(f["severity"], "warning");
  EXPECT_NE(f["title"].get<std::string>().find("6.8.0-51-generic"), std::string::npos);
  EXPECT_NE(all_text(f, "fix").find("sudo dkms install nvidia/550.127.05 -k 6.8.0-51-generic"), std::string::npos);
}

TEST(DriverInstallCli, SecureBootUnsignedModule) {
  auto j = check_json(root_path("install_secure_boot"));
  auto f = finding(j, "driver.secure_boot_unsigned");
  ASSERT_FALSE(f.is_null()) << j["findings"].dump();
  EXPECT_NE(all_text(f, "evidence").find("/lib/modules/6.8.0-49-generic/updates/dkms/nvidia.ko"), std::string::npos);
  EXPECT_NE(all_text(f, "fix").find("sudo mokutil --import /var/lib/dkms/mok.pub"), std::string::npos);
  EXPECT_TRUE(finding(j, "driver.missing").is_null());
}

TEST(DriverInstallCli, NouveauHoldsTheGpu) {
  auto j = check_json(root_path("install_nouveau"));
  auto f = finding(j, "driver.nouveau");
  ASSERT_FALSE(f.is_null()) << j["findings"].dump();
  EXPECT_NE(all_text(f, "evidence").find("nouveau is not blacklisted"), std::string::npos);
  EXPECT_NE(all_text(f, "fix").find("blacklist nouveau"), std::string::npos);
}

TEST(DriverInstallCli, RealDebianDriverUserSpaceWithoutModule) {
  // Debian 12 non-free's libcuda1 and libnvidia-ml1 (535.261.03), fetched once by
  // scripts/fetch_debian_driver.sh into ~/.cache/cuda-doctor-debs.
  const char* cache = std::getenv("XDG_CACHE_HOME");
  std::string dir = std::string(cache ? cache : std::string(std::getenv("HOME") ? std::getenv("HOME") : "/root") + "/.cache") +
                    "/cuda-doctor-debs";
  std::vector<std::string> debs;
  if (std::filesystem::is_directory(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".deb" &&
          (e.path().filename().string().rfind("libcuda1_", 0) == 0 || e.path().filename().string().rfind("libnvidia-ml1_", 0) == 0))
        debs.push_back(e.path());
  if (debs.size() < 2) GTEST_SKIP() << "no Debian driver packages in " << dir << " (run scripts/fetch_debian_driver.sh)";
  std::string root = cdtest::temp_dir("debian_driver");
  for (const auto& deb : debs) ASSERT_EQ(std::system(("dpkg-deb -x '" + deb + "' '" + root + "'").c_str()), 0) << deb;
  std::filesystem::create_directories(root + "/proc/sys/kernel");
  std::filesystem::create_directories(root + "/lib/modules/6.1.0-28-amd64");
  std::filesystem::create_directories(root + "/var/log");
  cdtest::write_file(root + "/proc/sys/kernel/osrelease", "6.1.0-28-amd64\n");
  cdtest::write_file(root + "/etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n");
  cdtest::write_file(root + "/lib/modules/6.1.0-28-amd64/modules.dep", "kernel/drivers/gpu/drm/nouveau/nouveau.ko: kernel/drivers/gpu/drm/drm.ko\n");
  cdtest::write_file(root + "/var/log/dpkg.log",
                     "2026-12-04 10:00:01 install libcuda1:amd64 <none> 535.261.03-1\n"
                     "2026-12-04 10:00:02 install libnvidia-ml1:amd64 <none> 535.261.03-1\n");
  auto j = check_json(root);
  // The real package's files: libcuda.so.1 -> libcuda.so.535.261.03 in nvidia/current.
  bool linked = false;
  for (const auto& l : j["facts"]["driver"]["libraries"])
    if (l["kind"] == "libcuda" && l["version"] == "535.261.03" && l["linked"] == true) linked = true;
  EXPECT_TRUE(linked) << j["facts"]["driver"]["libraries"].dump();
  auto f = finding(j, "driver.module_not_built");
  ASSERT_FALSE(f.is_null()) << j["findings"].dump();
  EXPECT_NE(all_text(f, "evidence").find("libcuda 535.261.03"), std::string::npos);
  EXPECT_NE(all_text(f, "fix").find("sudo apt install nvidia-kernel-dkms"), std::string::npos) << all_text(f, "fix");
}
