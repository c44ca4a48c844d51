// Why an installed NVIDIA driver's kernel module does not (or will not) load: no module
// built for the running kernel or for the newest installed one (DKMS), Secure Boot
// refusing an unsigned module, nouveau holding the GPU. The cause is the model's
// (derive/driver_install.cpp); these rules say it with the files as evidence and the fix.
// The version-mismatch finding (rules/driver.cpp) takes its when/who from the same model.
#include <ctime>

#include <fmt/format.h>

#include "derive/derive_parts.hpp"
#include "rules/rules.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

std::string branch_of(const PlatformModel& p, const Facts& f) {
  auto v = Version::parse(!p.library_version.empty() ? p.library_version : f.driver.module_version);
  return v && v->major() >= 100 ? std::to_string(v->major()) : std::string("580");
}

void library_evidence(const Facts& f, Finding& x) {
  for (const auto& l : f.driver.libraries)
    if (l.kind == "libcuda" && !l.stub && !l.compat && !l.version.empty()) x.evidence.push_back({"installed " + l.kind + " " + l.version, l.path});
}

void kernel_evidence(const Facts& f, const PlatformModel& p, Finding& x) {
  const DriverInstallFacts& di = f.platform.driver_install;
  std::vector<std::string> with;
  for (const auto& m : di.module_files) with.push_back(m.kernel);
  x.evidence.push_back({"running kernel " + p.running_kernel, f.root == "/" ? "uname -r" : "/proc/sys/kernel/osrelease"});
  x.evidence.push_back({fmt::format("installed kernels with an NVIDIA module: {}", with.empty() ? "none" : join(with, ", ")),
                        "/lib/modules/*/modules.dep"});
  for (const auto& m : di.dkms)
    x.evidence.push_back({fmt::format("DKMS {}/{} built for: {}", m.name, m.version, m.built_for.empty() ? "no kernel" : join(m.built_for, ", ")),
                          "/var/lib/dkms/" + m.name + "/" + m.version});
}

// The commands that build the module for `kernel`.
std::vector<std::string> build_fix(const Model& m, const Kb& kb, const std::string& kernel) {
  const Facts& f = m.facts;
  const PlatformModel& p = m.platform;
  const DriverInstallFacts& di = f.platform.driver_install;
  std::vector<std::string> fix;
  const DriverInstallKb* row = install_row(kb, m.distro);
  std::string headers = kernel_headers_command(kb, m.distro, kernel);
  fix.push_back(headers.starts_with("#") || contains(headers, "   # ") ? headers : headers + "   # DKMS builds against the kernel's headers");
  if (!di.dkms.empty()) {
    const DkmsModule& mod = di.dkms.back();
    fix.push_back(fmt::format("sudo dkms install {}/{} -k {}", mod.name, mod.version, kernel));
  } else {
    std::string pkg = prebuilt_modules_package(kb, m.distro, branch_of(p, f), kernel);
    std::string prebuilt = pkg.empty() ? "" : fmt::format("{} also ships prebuilt signed modules: {}", row->family, pkg);
    fix.push_back(dkms_rebuild_command(kb, m.distro, std::stoi(branch_of(p, f)), gpu_sms(m.gpus), prebuilt));
  }
  fix.push_back("dkms status   # must say 'installed' for " + kernel);
  return fix;
}

void not_built(const Model& m, const Kb& kb, Findings& out) {
  const Facts& f = m.facts;
  const PlatformModel& p = m.platform;
  if (p.module_blocker == ModuleBlocker::not_built) {
    Finding x = new_finding("driver.module_not_built", Severity::error, "kernel " + p.running_kernel,
                            "The NVIDIA kernel module is not built for the running kernel " + p.running_kernel);
    kernel_evidence(f, p, x);
    library_evidence(f, x);
    x.explanation = "The driver's user-space libraries are installed, but no nvidia module exists for this kernel "
                    "(a kernel update for which DKMS did not build it: missing headers or a failed build), so the "
                    "module cannot load and every CUDA and NVML call fails.";
    x.fix = build_fix(m, kb, p.running_kernel);
    x.fix.push_back("sudo modprobe nvidia && nvidia-smi");
    out.push_back(std::move(x));
    return;
  }
  // The module runs now, but the newest installed kernel (the next boot's) has none.
  if (!f.driver.module_loaded || !f.platform.container.empty() || p.newest_kernel.empty() ||
      p.newest_kernel_module != ModuleFile::missing || p.running_kernel_module != ModuleFile::present)
    return;
  Finding x = new_finding("driver.module_not_built", Severity::warning, "kernel " + p.newest_kernel,
                          "Kernel " + p.newest_kernel + " is installed without an NVIDIA module: the driver will not load after the next reboot");
  kernel_evidence(f, p, x);
  x.explanation = "The machine boots the newest installed kernel by default; DKMS did not build the nvidia module for "
                  "it (missing headers or a failed build), so after a reboot nvidia-smi and CUDA fail until it is built.";
  x.fix = build_fix(m, kb, p.newest_kernel);
  out.push_back(std::move(x));
}

void secure_boot_unsigned(const Model& m, const Kb& kb, Findings& out) {
  const Facts& f = m.facts;
  const PlatformModel& p = m.platform;
  if (p.module_blocker != ModuleBlocker::secure_boot) return;
  const DriverInstallFacts& di = f.platform.driver_install;
  Finding x = new_finding("driver.secure_boot_unsigned", Severity::error, "kernel " + p.running_kernel,
                          "Secure Boot is on and the NVIDIA kernel module is not signed: the kernel refuses to load it");
  x.evidence.push_back({"Secure Boot enabled", di.secure_boot_source});
  x.evidence.push_back({"no module signature in " + p.running_module->path, p.running_module->path});
  library_evidence(f, x);
  x.explanation = "With Secure Boot the kernel loads only modules signed by a key it trusts; a DKMS-built module must "
                  "be signed with a Machine Owner Key (MOK) enrolled in the firmware, or modprobe fails with \"Key was "
                  "rejected by service\".";
  std::string key = di.mok_keys.empty() ? "/var/lib/dkms/mok.pub" : di.mok_keys.front();
  const DriverInstallKb* row = install_row(kb, m.distro);
  std::string pkg = prebuilt_modules_package(kb, m.distro, branch_of(p, f), p.running_kernel);
  x.fix = {"mokutil --sb-state",
           "sudo mokutil --import " + key + "   # enroll the key DKMS signs with; choose a one-time password",
           fmt::format("sudo dkms autoinstall -k {}   # rebuild so the module is signed", p.running_kernel),
           "sudo reboot   # in the blue MOK manager: Enroll MOK → Continue → the password",
           pkg.empty() ? "# or turn Secure Boot off in the firmware"
                       : fmt::format("# or use {}'s signed prebuilt modules ({}), or turn Secure Boot off in the firmware", row->family, pkg)};
  out.push_back(std::move(x));
}

void nouveau(const Model& m, const Kb& kb, Findings& out) {
  const Facts& f = m.facts;
  const PlatformModel& p = m.platform;
  if (p.module_blocker != ModuleBlocker::nouveau) return;
  // A GPU bound to nouveau: driver.gpu_without_driver names it, with the same fix.
  for (const auto& g : f.driver.pci_gpus)
    if (g.driver == "nouveau") return;
  const DriverInstallFacts& di = f.platform.driver_install;
  Finding x = new_finding("driver.nouveau", Severity::error, "nouveau",
                          "nouveau is loaded and the NVIDIA module is not: nouveau holds the GPU");
  x.evidence.push_back({"nouveau loaded", di.nouveau_evidence});
  x.evidence.push_back({di.nouveau_blacklisted_in.empty() ? "nouveau is not blacklisted"
                                                          : "blacklisted in " + join(di.nouveau_blacklisted_in, ", ") + " (but loaded: the initramfs predates it)",
                        "/etc/modprobe.d, /lib/modprobe.d, /usr/lib/modprobe.d, /proc/cmdline"});
  library_evidence(f, x);
  x.explanation = "The open-source nouveau driver takes the GPU at boot, so the NVIDIA module cannot bind to it; "
                  "nouveau must be blacklisted (and the initramfs rebuilt, since it loads there).";
  x.fix = nouveau_blacklist_commands(kb, m.distro);
  x.fix.push_back("sudo reboot");
  x.fix.push_back("lsmod | grep -E '^(nouveau|nvidia) '   # after the reboot: nvidia, not nouveau");
  out.push_back(std::move(x));
}

}  // namespace

Findings driver_install_rules(const Model& m, const Kb& kb) {
  Findings out;
  not_built(m, kb, out);
  secure_boot_unsigned(m, kb, out);
  nouveau(m, kb, out);
  return out;
}

// Evidence of when and how the libraries changed, for driver.library_mismatch.
void add_library_change_evidence(const Model& m, Finding& x) {
  const PlatformModel& p = m.platform;
  const DriverInstallFacts& di = m.facts.platform.driver_install;
  if (const PackageEvent* e = p.library_change) {
    std::string done = e->action == "install" ? "installed" : e->action == "reinstall" ? "reinstalled" : e->action + "d";
    std::string change = e->from_version.empty() ? fmt::format("{} {} {}", e->package, done, e->to_version)
                                                 : fmt::format("{} {} {} → {}", e->package, done, e->from_version, e->to_version);
    x.evidence.insert(x.evidence.begin(), Evidence{fmt::format("{} on {}{}", change, e->when,
                                                       p.library_change_by.empty() ? "" : " by " + p.library_change_by),
                                           e->source});
  } else if (!di.package_logs.empty()) {
    x.evidence.push_back({"the package logs do not record the change to " + p.library_version, join(di.package_logs, ", ")});
  }
  if (di.booted_unix > 0) {
    std::time_t t = static_cast<std::time_t>(di.booted_unix);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    x.evidence.push_back({std::string("booted ") + buf + " UTC (the module loaded then; package logs use local time)", "/proc/stat btime"});
  }
}

std::vector<std::string> hold_fix(const Model& m, const Kb& kb) {
  const PlatformModel& p = m.platform;
  return hold_commands(kb, m.distro, p.packages_from_dnf ? "dnf" : "", p.driver_packages);
}

}  // namespace cd
