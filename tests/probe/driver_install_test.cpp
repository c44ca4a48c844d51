// Driver forensics: the package-log readers on real-format lines (apt history.log,
// dpkg.log, dnf.rpm.log, unattended-upgrades.log), gzip rotations (whole, truncated, not
// gzip), and probe_driver_install on the install_* --root trees (tests/fixtures/roots,
// made by make_install_roots.sh): kernels and their nvidia module, DKMS, nouveau, Secure
// Boot and module signatures, package history oldest first.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "probe/driver_probe.hpp"
#include "probe/pkglog.hpp"
#include "probe/probe.hpp"

namespace {

std::string root_path(const std::string& name) { return std::string(CD_FIXTURES) + "/roots/" + name; }

cd::Facts probe_root(const std::string& name) {
  cd::ProbeOptions opts;
  opts.root = cd::Root(root_path(name));
  cd::Facts facts;
  cd::probe_driver_module(facts.driver, opts.root);
  cd::probe_driver_install(facts, opts);
  return facts;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const cd::PackageEvent* event(const std::vector<cd::PackageEvent>& events, const std::string& pkg) {
  for (const auto& e : events)
    if (e.package == pkg) return &e;
  return nullptr;
}

}  // namespace

TEST(PackageLogs, DriverPackageNames) {
  for (const char* p : {"libnvidia-compute-550", "nvidia-driver-580-open", "libcuda1", "nvidia-driver-cuda-libs",
                        "kmod-nvidia-latest-dkms", "xserver-xorg-video-nvidia-455", "cuda-drivers-550"})
    EXPECT_TRUE(cd::is_driver_package(p)) << p;
  for (const char* p : {"firefox", "cuda-toolkit-12-4", "libcudnn9-cuda-12", "linux-image-6.8.0-51-generic",
                        "nvidia-container-toolkit", "libnvidia-container1", "nvidia-cuda-toolkit", "nvidia-cuda-dev"})
    EXPECT_FALSE(cd::is_driver_package(p)) << p;
}

TEST(PackageLogs, UpstreamVersion) {
  EXPECT_EQ(cd::upstream_version("550.54.15-0ubuntu0.22.04.2"), "550.54.15");
  EXPECT_EQ(cd::upstream_version("3:550.54.15-1.el9"), "550.54.15");
  EXPECT_EQ(cd::upstream_version("535.261.03-1"), "535.261.03");
}

TEST(PackageLogs, AptHistoryTransaction) {
  // The real aptdaemon transaction of an Ubuntu 18.04 machine (435 → 455 through transitional packages).
  auto events = cd::parse_apt_history(slurp(root_path("install_upgraded_435") + "/var/log/apt/history.log"), "h");
  EXPECT_TRUE(events.empty());  // the current log holds only a firefox upgrade
  std::string text =
      "Start-Date: 2024-05-02  10:11:12\n"
      "Commandline: apt install nvidia-driver-550\n"
      "Requested-By: alice (1000)\n"
      "Install: nvidia-dkms-550:amd64 (550.54.15-0ubuntu0.22.04.2, automatic), zlib1g-dev:amd64 (1:1.2.11)\n"
      "Upgrade: libnvidia-compute-550:amd64 (550.54.14-0ubuntu0.22.04.1, 550.54.15-0ubuntu0.22.04.2)\n"
      "Remove: nvidia-driver-535:amd64 (535.161.07-0ubuntu0.22.04.1)\n"
      "End-Date: 2024-05-02  10:12:40\n";
  events = cd::parse_apt_history(text, "/var/log/apt/history.log");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].action, "install");
  EXPECT_EQ(events[0].package, "nvidia-dkms-550");
  EXPECT_EQ(events[0].to_version, "550.54.15-0ubuntu0.22.04.2");  // ", automatic" dropped
  EXPECT_EQ(events[1].action, "upgrade");
  EXPECT_EQ(events[1].from_version, "550.54.14-0ubuntu0.22.04.1");
  EXPECT_EQ(events[1].to_version, "550.54.15-0ubuntu0.22.04.2");
  EXPECT_EQ(events[1].when, "2024-05-02 10:11:12");
  EXPECT_EQ(events[1].by, "apt install nvidia-driver-550 (by alice)");
  EXPECT_EQ(events[2].action, "remove");
  EXPECT_EQ(events[2].from_version, "535.161.07-0ubuntu0.22.04.1");
  // A log cut in the middle of a transaction (no End-Date) still yields what it has.
  auto cut = cd::parse_apt_history(text.substr(0, text.find("Remove:")), "x");
  EXPECT_EQ(cut.size(), 2u);
  EXPECT_TRUE(cd::parse_apt_history("Upgrade: nvidia (((\n\x01\xff: :\nStart-Date: x\n", "x").empty());
}

TEST(PackageLogs, DpkgLog) {
  auto events = cd::parse_dpkg_log(slurp(root_path("install_unattended_550") + "/var/log/dpkg.log.1"), "d");
  ASSERT_EQ(events.size(), 3u);  // status/configure/trigproc lines are not changes
  EXPECT_EQ(events[0].package, "libnvidia-compute-550");
  EXPECT_EQ(events[0].from_version, "550.54.14-0ubuntu0.22.04.1");
  EXPECT_EQ(events[0].to_version, "550.54.15-0ubuntu0.22.04.2");
  EXPECT_EQ(events[0].when, "2024-03-12 06:25:20");
  EXPECT_EQ(events[0].by, "");  // dpkg does not say who
  auto install = cd::parse_dpkg_log("2020-11-19 09:17:02 install nvidia-dkms-455:amd64 <none> 455.38-0ubuntu0.18.04.1\n", "d");
  ASSERT_EQ(install.size(), 1u);
  EXPECT_EQ(install[0].from_version, "");
  EXPECT_TRUE(cd::parse_dpkg_log("2020-11-19 09:17 upgrade nvidia-x a b\nbad\n", "d").empty());
}

TEST(PackageLogs, DnfRpmLogPairsUpgradeAndUpgraded) {
  auto events = cd::parse_dnf_rpm_log(slurp(root_path("install_dnf_rocky") + "/var/log/dnf.rpm.log"), "r");
  ASSERT_EQ(events.size(), 3u);  // openssl is not a driver package
  const auto* libs = event(events, "nvidia-driver-cuda-libs");
  ASSERT_NE(libs, nullptr);
  EXPECT_EQ(libs->action, "upgrade");
  EXPECT_EQ(libs->to_version, "3:550.54.15-1.el9");
  EXPECT_EQ(libs->from_version, "3:550.54.14-1.el9");
  EXPECT_EQ(libs->when, "2024-03-14 09:12:40");
  EXPECT_EQ(libs->by, "dnf");
}

TEST(PackageLogs, UnattendedUpgradesLog) {
  auto events = cd::parse_unattended_upgrades_log(
      "2024-03-12 06:25:17,406 INFO Packages that will be upgraded: firefox libnvidia-compute-550 nvidia-utils-550\n", "u");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].by, "unattended-upgrade");
  EXPECT_EQ(events[0].when, "2024-03-12 06:25:17");
}

TEST(PackageLogs, Gunzip) {
  std::string gz = slurp(root_path("install_upgraded_435") + "/var/log/apt/history.log.1.gz");
  auto text = cd::gunzip(gz, 1u << 20);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("libnvidia-compute-435:amd64 (435.21-0ubuntu0.18.04.3, 455.38-0ubuntu0.18.04.1)"), std::string::npos);
  // Capped output: whole lines only, no more than asked.
  auto capped = cd::gunzip(gz, 300);
  ASSERT_TRUE(capped.has_value());
  EXPECT_LE(capped->size(), 300u);
  EXPECT_EQ(capped->back(), '\n');
  // A truncated rotation gives what inflated before the cut; garbage is refused with a reason.
  auto truncated = cd::gunzip(gz.substr(0, gz.size() / 2), 1u << 20);
  if (truncated) {
    EXPECT_LT(truncated->size(), text->size());
  }
  std::string why;
  EXPECT_FALSE(cd::gunzip("plain text, not gzip at all", 1024, &why).has_value());
  EXPECT_EQ(why, "not gzip data");
}

TEST(DriverInstallProbe, RotatedAptAndDpkgLogs) {
  auto f = probe_root("install_upgraded_435");
  const auto& d = f.platform.driver_install;
  EXPECT_EQ(f.driver.module_version, "435.21");
  // Oldest first; the current history.log (firefox only) adds nothing, its .1.gz and dpkg's .2.gz do.
  EXPECT_EQ(d.package_logs, (std::vector<std::string>{"/var/log/apt/history.log.1.gz", "/var/log/apt/history.log",
                                                     "/var/log/dpkg.log.2.gz", "/var/log/dpkg.log"}));
  const auto* up = event(d.package_events, "libnvidia-compute-435");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->to_version, "455.38-0ubuntu0.18.04.1");
  EXPECT_EQ(up->by, "aptdaemon role='role-commit-packages' sender=':1.166'");
  EXPECT_TRUE(std::is_sorted(d.package_events.begin(), d.package_events.end(),
                             [](const cd::PackageEvent& a, const cd::PackageEvent& b) { return a.when < b.when; }));
  EXPECT_EQ(d.kernels.size(), 2u);
  EXPECT_EQ(d.module_files.size(), 2u);
  EXPECT_EQ(d.booted_unix, 1605600000);
}

TEST(DriverInstallProbe, KernelsDkmsAndModules) {
  auto f = probe_root("install_not_built");
  const auto& d = f.platform.driver_install;
  EXPECT_EQ(d.kernels, (std::vector<std::string>{"6.8.0-49-generic", "6.8.0-51-generic"}));
  ASSERT_EQ(d.module_files.size(), 1u);
  EXPECT_EQ(d.module_files[0].kernel, "6.8.0-49-generic");
  EXPECT_EQ(d.module_files[0].path, "/lib/modules/6.8.0-49-generic/updates/dkms/nvidia.ko.zst");
  EXPECT_EQ(d.module_files[0].signature, "");  // Secure Boot unknown: not read
  ASSERT_EQ(d.dkms.size(), 1u);  // the kernel-… link and source/ are not versions
  EXPECT_EQ(d.dkms[0].version, "550.127.05");
  EXPECT_EQ(d.dkms[0].built_for, std::vector<std::string>{"6.8.0-49-generic"});  // 6.8.0-51 has only a log
  EXPECT_FALSE(d.nouveau_loaded);
  EXPECT_EQ(d.secure_boot, -1);
}

TEST(DriverInstallProbe, SecureBootAndSignatures) {
  auto f = probe_root("install_secure_boot");
  const auto& d = f.platform.driver_install;
  EXPECT_EQ(d.secure_boot, 1);
  EXPECT_EQ(d.secure_boot_source, "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e0fe3e8d6d2a");
  EXPECT_EQ(d.mok_keys, std::vector<std::string>{"/var/lib/dkms/mok.pub"});
  ASSERT_EQ(d.module_files.size(), 2u);
  for (const auto& m : d.module_files) {
    if (m.kernel == "6.8.0-49-generic") EXPECT_EQ(m.signature, "unsigned") << m.path;
    else EXPECT_EQ(m.signature, "signed") << m.path;  // the zstd-compressed one, inflated to its end
  }
}

TEST(DriverInstallProbe, Nouveau) {
  auto f = probe_root("install_nouveau");
  const auto& d = f.platform.driver_install;
  EXPECT_TRUE(d.nouveau_loaded);
  EXPECT_EQ(d.nouveau_evidence, "/sys/module/nouveau exists");
  EXPECT_TRUE(d.nouveau_blacklisted_in.empty());  // alsa-base.conf blacklists something else
}

TEST(DriverInstallProbe, NothingThereIsNotAnError) {
  auto f = probe_root("driver_ok");
  const auto& d = f.platform.driver_install;
  EXPECT_TRUE(d.kernels.empty());
  EXPECT_TRUE(d.package_events.empty());
  EXPECT_TRUE(d.package_logs.empty());
  EXPECT_TRUE(f.notes.empty());
}
