// driver_install_rules and the derived driver forensics on hand-built facts: which cause
// wins when several files speak, what containers and WSL never get, kernel ordering, and
// the package change chosen for driver.library_mismatch.
#include <gtest/gtest.h>

#include "derive/derive_parts.hpp"
#include "kb/kb.hpp"
#include "rules/finding_helpers.hpp"
#include "rules/run_rule.hpp"

namespace {

using cdtest::find;
using cdtest::fixes;

// Libraries 550.127.05 installed, module not loaded, running kernel 6.8.0-51 known.
cd::Facts installed_not_loaded() {
  cd::Facts f;
  f.host.kernel = "6.8.0-51-generic";
  f.host.os = "Ubuntu 24.04.1 LTS";
  cd::DriverLibrary l;
  l.kind = "libcuda";
  l.path = "/usr/lib/x86_64-linux-gnu/libcuda.so.550.127.05";
  l.version = "550.127.05";
  l.linked = true;
  f.driver.libraries.push_back(l);
  f.platform.driver_install.kernels = {"6.8.0-49-generic", "6.8.0-51-generic"};
  f.platform.driver_install.module_files = {{"6.8.0-49-generic", "/lib/modules/6.8.0-49-generic/updates/dkms/nvidia.ko.zst", ""}};
  return f;
}

cd::Findings run(const cd::Facts& f) { return cdtest::run_rule(cd::driver_install_rules, f); }

cd::PackageEvent ev(std::string when, std::string pkg, std::string from, std::string to, std::string by = "") {
  return {std::move(when), from.empty() ? "install" : "upgrade", std::move(pkg), std::move(from), std::move(to), std::move(by), "log"};
}

}  // namespace

TEST(DriverInstallRules, KernelOrder) {
  EXPECT_TRUE(cd::kernel_less("6.8.0-49-generic", "6.8.0-51-generic"));
  EXPECT_TRUE(cd::kernel_less("6.8.0-9-generic", "6.8.0-10-generic"));  // numbers, not text
  EXPECT_TRUE(cd::kernel_less("5.15.0-100-generic", "6.1.0-28-amd64"));
  EXPECT_FALSE(cd::kernel_less("6.8.0-51-generic", "6.8.0-51-generic"));
  EXPECT_FALSE(cd::kernel_less("6.8.0-51-generic", "6.8.0-49-generic"));
}

TEST(DriverInstallRules, NotBuiltWinsOverSecureBootAndNouveau) {
  cd::Facts f = installed_not_loaded();
  f.platform.driver_install.secure_boot = 1;
  f.platform.driver_install.nouveau_loaded = true;
  auto all = run(f);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, "driver.module_not_built");
  EXPECT_NE(fixes(all[0]).find("nvidia-dkms-550-open"), std::string::npos) << fixes(all[0]);  // no DKMS record: the package
  // Built, but unsigned under Secure Boot: that is the cause.
  f.platform.driver_install.module_files.push_back({"6.8.0-51-generic", "/lib/modules/6.8.0-51-generic/updates/dkms/nvidia.ko", "unsigned"});
  all = run(f);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, "driver.secure_boot_unsigned");
  // Signed: then nouveau is what is left.
  f.platform.driver_install.module_files.back().signature = "signed";
  all = run(f);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, "driver.nouveau");
}

TEST(DriverInstallRules, LoadedModuleOrWslOrUnknownKernelSaysNothing) {
  cd::Facts f = installed_not_loaded();
  f.driver.module_loaded = true;  // loaded: only the next-boot check can speak, and 6.8.0-51 runs (no newer)
  EXPECT_TRUE(run(f).empty());
  f = installed_not_loaded();
  f.platform.wsl = true;
  EXPECT_TRUE(run(f).empty());
  f = installed_not_loaded();
  f.host.kernel = "6.12.0-1-custom";  // no modules.dep read for it: unknown, not missing
  EXPECT_TRUE(run(f).empty());
}

TEST(DriverInstallRules, NextBootWarningOnlyOnAHost) {
  cd::Facts f = installed_not_loaded();
  f.host.kernel = "6.8.0-49-generic";
  f.driver.module_loaded = true;
  auto x = find(run(f), "driver.module_not_built");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::warning);
  EXPECT_NE(x->title.find("6.8.0-51-generic"), std::string::npos);
  f.platform.container = "docker";  // a container's /lib/modules is the image's, not what the host boots
  EXPECT_FALSE(find(run(f), "driver.module_not_built").has_value());
}

TEST(DriverInstallRules, LibraryChangePrefersTheLibraryPackageWithWho) {
  cd::Facts f = installed_not_loaded();
  auto& events = f.platform.driver_install.package_events;
  events.push_back(ev("2024-01-02 10:00:00", "libnvidia-compute-550", "", "550.54.15-0ubuntu1"));  // an older version
  events.push_back(ev("2024-03-12 06:25:20", "nvidia-utils-550", "550.54.15-0ubuntu1", "550.127.05-0ubuntu1"));
  events.push_back(ev("2024-03-12 06:25:21", "libnvidia-compute-550", "550.54.15-0ubuntu1", "550.127.05-0ubuntu1"));
  cd::PackageEvent uu = ev("2024-03-12 06:25:17", "libnvidia-compute-550", "", "", "unattended-upgrade");
  uu.action = "upgrade";
  events.push_back(uu);
  const cd::Kb& kb = cd::Kb::get();
  cd::Model m = cd::derive(f, kb);
  ASSERT_NE(m.platform.library_change, nullptr);
  EXPECT_EQ(m.platform.library_change->package, "libnvidia-compute-550");
  EXPECT_EQ(m.platform.library_change->when, "2024-03-12 06:25:21");
  EXPECT_EQ(m.platform.library_change_by, "unattended-upgrade");
  EXPECT_EQ(m.platform.driver_packages, (std::vector<std::string>{"libnvidia-compute-550", "nvidia-utils-550"}));
  // A removal afterwards drops the package from what to hold.
  cd::PackageEvent rm = ev("2024-04-01 09:00:00", "nvidia-utils-550", "550.127.05-0ubuntu1", "");
  rm.action = "remove";
  events.push_back(rm);
  cd::Model m2 = cd::derive(f, kb);
  EXPECT_EQ(m2.platform.driver_packages, std::vector<std::string>{"libnvidia-compute-550"});
}

// The kernel headers DKMS needs, by the host's package manager; a distribution no row covers
// gets a line saying what to install instead of another distribution's command.
TEST(DriverInstallRules, KernelHeadersFollowTheDistribution) {
  struct Case {
    const char* id;
    const char* like;
    const char* version;
    const char* want;
  };
  for (const Case& c : {Case{"ubuntu", "debian", "24.04", "sudo apt install linux-headers-6.8.0-51-generic   # "},
                        Case{"debian", "", "12", "sudo apt install linux-headers-6.8.0-51-generic   # "},
                        Case{"rocky", "rhel centos fedora", "9.4", "sudo dnf install kernel-devel-6.8.0-51-generic kernel-headers-6.8.0-51-generic   # "},
                        Case{"opensuse-leap", "suse opensuse", "15.6", "sudo zypper install kernel-default-devel   # "},
                        Case{"arch", "", "", "# install the headers of kernel 6.8.0-51-generic from this distribution's packages"}}) {
    cd::Facts f = installed_not_loaded();
    f.host.os_id = c.id, f.host.os_like = c.like, f.host.os_version = c.version;
    auto x = find(run(f), "driver.module_not_built");
    ASSERT_TRUE(x.has_value()) << c.id;
    ASSERT_FALSE(x->fix.empty());
    EXPECT_EQ(x->fix[0].rfind(c.want, 0), 0u) << c.id << ": " << x->fix[0];
  }
}

// nouveau is kept off by rebuilding the initramfs with the distribution's tool; only Ubuntu
// offers signed prebuilt modules under Secure Boot.
TEST(DriverInstallRules, NouveauAndSecureBootFollowTheDistribution) {
  cd::Facts f = installed_not_loaded();
  f.platform.driver_install.module_files.push_back({"6.8.0-51-generic", "/lib/modules/6.8.0-51-generic/updates/dkms/nvidia.ko", "signed"});
  f.platform.driver_install.nouveau_loaded = true;
  struct Case {
    const char* id;
    const char* like;
    const char* initramfs;
  };
  for (const Case& c : {Case{"ubuntu", "debian", "sudo update-initramfs -u"}, Case{"rocky", "rhel centos fedora", "sudo dracut --force"},
                        Case{"opensuse-leap", "suse opensuse", "sudo dracut --force"},
                        Case{"arch", "", "# rebuild the initramfs with this distribution's tool"}}) {
    f.host.os_id = c.id, f.host.os_like = c.like, f.host.os_version = "9";
    auto x = find(run(f), "driver.nouveau");
    ASSERT_TRUE(x.has_value()) << c.id;
    std::string fix = fixes(*x);
    EXPECT_NE(fix.find("blacklist nouveau"), std::string::npos) << fix;
    EXPECT_NE(fix.find(c.initramfs), std::string::npos) << c.id << ": " << fix;
    EXPECT_NE(fix.find("sudo reboot"), std::string::npos) << fix;
    EXPECT_EQ(fix.find("grubby") != std::string::npos, std::string(c.id) == "rocky") << fix;  // RHEL's kernel arguments
  }
  f.platform.driver_install.nouveau_loaded = false;
  f.platform.driver_install.secure_boot = 1;
  f.platform.driver_install.module_files.back().signature = "unsigned";
  f.host.os_id = "ubuntu", f.host.os_like = "debian", f.host.os_version = "24.04";
  auto x = find(run(f), "driver.secure_boot_unsigned");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("Ubuntu's signed prebuilt modules (linux-modules-nvidia-550-6.8.0-51-generic)"), std::string::npos) << fixes(*x);
  f.host.os_id = "debian", f.host.os_like = "", f.host.os_version = "12";
  x = find(run(f), "driver.secure_boot_unsigned");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(fixes(*x).find("prebuilt"), std::string::npos) << fixes(*x);
  EXPECT_NE(fixes(*x).find("turn Secure Boot off"), std::string::npos) << fixes(*x);
}
