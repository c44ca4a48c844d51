// Layer 1 driver findings: missing driver, GPU without driver, kernel module vs library
// mismatch, stub libcuda, forward-compatibility misuse, persistence mode, and the
// driver's CUDA vs what frameworks and toolkits need (with minor-version compatibility).
#include <fmt/format.h>

#include <cstdlib>

#include "kb/drivers.hpp"
#include "kb/pytorch.hpp"
#include "derive/derive_parts.hpp"
#include "rules/rules.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

bool real_libcuda(const DriverLibrary& l) { return l.kind == "libcuda" && !l.stub && !l.compat; }

bool has_real_libcuda(const DriverFacts& d) {
  return std::any_of(d.libraries.begin(), d.libraries.end(), real_libcuda);
}

bool driver_answers(const DriverFacts& d) { return !d.gpus.empty() || d.cu_init_status == 0 || d.nvml_status == 0; }

// The CUDA the newest framework/toolkit on the machine needs (to pick a driver branch).
Version newest_needed_cuda(const Facts& f) {
  Version best;
  auto consider = [&](const std::string& s) {
    auto v = Version::parse(s);
    if (v && !v->empty() && (best.empty() || *v > best)) best = *v;
  };
  for (const auto& py : f.pythons) consider(py.torch.cuda);
  for (const auto& tk : f.toolkit.toolkits) consider(tk.version);
  return best;
}

// The driver branch that supports `cuda` (else the kb's default branch).
int driver_branch_for(const DriversKb& dk, const Version& cuda) {
  int branch = cuda.empty() ? 0 : branch_for_cuda(dk, cuda);
  return branch ? branch : dk.default_branch;
}

// The Ubuntu/Debian package of that branch for this machine's GPUs (-open only where it exists
// and drives them: derive/driver.cpp driver_package).
DriverPackage package_for(const Model& m, const Kb& kb, const Version& cuda, const std::string& stem = "nvidia-driver") {
  return driver_package(kb, driver_branch_for(drivers_kb(kb), cuda), gpu_sms(m.gpus), stem);
}

// This distribution's commands for the branch `cuda` needs (derive/distro.cpp).
std::vector<std::string> install_commands(const Model& m, const Kb& kb, const Version& cuda, const std::string& comment = "") {
  int branch = driver_branch_for(drivers_kb(kb), cuda);
  return driver_install_commands(kb, m.distro, m.facts.host.arch, branch, package_for(m, kb, cuda), comment);
}

// `header`: a first comment line naming what is installed (callers with their own lead-in
// leave it out). Where only NVIDIA's guide can be named, that line alone: nothing to verify yet.
std::vector<std::string> install_driver_fix(const Model& m, const Kb& kb, bool header = true) {
  Version cuda = newest_needed_cuda(m.facts);
  const DistroModel& d = m.distro;
  const DriverInstallKb* r = install_row(kb, d);
  std::vector<std::string> fix;
  if (r && !r->recommend.empty()) {  // Ubuntu, or a host nothing is known of
    DriverPackage p = package_for(m, kb, cuda);
    std::string install = replace_all(p.open ? r->open : r->proprietary, "{branch}",
                                      std::to_string(driver_branch_for(drivers_kb(kb), cuda)));
    if (header) fix.push_back("# " + r->family + ": let it pick the recommended driver, or name the branch");
    // A host nothing is known of (a container, a described machine): say whose commands these are.
    std::string whose = d.host_known || header ? "" : r->family + "; ";
    fix.insert(fix.end(), {r->recommend + "   # " + whose + "or: " + install + (p.note.empty() ? "" : " (" + p.note + ")"), "sudo reboot",
                           "nvidia-smi   # must list the GPUs afterwards"});
    return fix;
  }
  std::vector<std::string> cmds = install_commands(m, kb, cuda);
  if (std::all_of(cmds.begin(), cmds.end(), [](const std::string& c) { return c.starts_with("#"); })) return cmds;
  if (header)
    fix.push_back(fmt::format("# {}the NVIDIA driver R{}", d.host_known ? d.label + ": " : "", driver_branch_for(drivers_kb(kb), cuda)));
  fix.insert(fix.end(), cmds.begin(), cmds.end());
  fix.push_back("nvidia-smi   # must list the GPUs afterwards");
  return fix;
}

// Install (or reinstall) the driver's user-space libraries of branch `branch`; where the
// distribution's package names are not recorded, the whole driver's install commands.
std::vector<std::string> user_libs_fix(const Model& m, const Kb& kb, const std::string& branch, bool reinstall,
                                       const std::string& comment) {
  const DriverInstallKb* r = install_row(kb, m.distro);
  if (r && !r->user_libs.empty() && r->pm == "apt")
    return {"sudo apt install " + std::string(reinstall ? "--reinstall " : "") + replace_all(r->user_libs, "{branch}", branch) +
            "   # " + comment};
  int b = std::atoi(branch.c_str());  // the module's branch: the libraries must match it
  if (b < 100) b = driver_branch_for(drivers_kb(kb), newest_needed_cuda(m.facts));
  return driver_install_commands(kb, m.distro, m.facts.host.arch, b, driver_package(kb, b, gpu_sms(m.gpus)), comment);
}

std::string reinstall_dkms(const Model& m, const Kb& kb, const std::string& comment) {
  return dkms_rebuild_command(kb, m.distro, driver_branch_for(drivers_kb(kb), newest_needed_cuda(m.facts)), gpu_sms(m.gpus), comment);
}

void driver_missing(const Model& m, const Kb& kb, Findings& out) {
  const Facts& f = m.facts;
  const DriverFacts& d = f.driver;
  if (driver_answers(d) || f.platform.wsl || m.platform.container_without_gpus) return;
  if (m.platform.module_blocker != ModuleBlocker::none) return;  // rules/driver_install.cpp names the cause
  bool unbound_gpu = std::any_of(d.pci_gpus.begin(), d.pci_gpus.end(), [](const PciGpu& g) { return g.driver != "nvidia"; });
  if (unbound_gpu) return;  // driver.gpu_without_driver says it better
  const DriversKb& dk = drivers_kb(kb);
  bool libs = has_real_libcuda(d);
  Finding x = new_finding("driver.missing", Severity::error, "NVIDIA driver", "");
  if (!d.module_loaded && !libs) {
    x.title = "No NVIDIA driver: neither the kernel module nor libcuda is installed";
    x.evidence.push_back({"no /proc/driver/nvidia/version and no /sys/module/nvidia", "/proc, /sys"});
    x.evidence.push_back({"no libcuda.so.<version> in the loader's directories", "LD_LIBRARY_PATH, /etc/ld.so.conf, default dirs"});
    if (d.pci_gpus.empty()) {
      x.evidence.push_back({fmt::format("no NVIDIA device (vendor 0x10de) among {} PCI devices", d.pci_devices_seen),
                            "/sys/bus/pci/devices"});
      if (!f.platform.container.empty())
        x.evidence.push_back({f.platform.container + " container", f.platform.container_evidence});
      x.explanation = "This machine has no NVIDIA driver and no NVIDIA GPU is visible on its PCI bus, so no CUDA "
                      "program can use a GPU here; CUDA toolkits and CUDA builds of frameworks install, but only run "
                      "on a machine with a GPU and its driver.";
      x.fix = {"# run on a machine (or VM/container) with an NVIDIA GPU attached; there, install the driver:"};
      auto more = install_driver_fix(m, kb, false);
      x.fix.insert(x.fix.end(), more.begin(), more.end());
    } else {
      x.explanation = "An NVIDIA GPU is present but no driver is installed, so CUDA cannot reach it.";
      x.fix = install_driver_fix(m, kb);
    }
  } else if (!d.module_loaded) {
    x.title = "NVIDIA driver libraries are installed but the kernel module is not loaded";
    for (const auto& l : d.libraries)
      if (real_libcuda(l)) x.evidence.push_back({l.kind + " " + l.version, l.path});
    x.evidence.push_back({"no /proc/driver/nvidia/version and no /sys/module/nvidia", "/proc, /sys"});
    x.explanation = "The user-space driver is there but nvidia.ko is not loaded (not built for this kernel, "
                    "blocked by Secure Boot, or nouveau holds the GPU), so every CUDA call fails.";
    x.fix = {"sudo modprobe nvidia && nvidia-smi",
             "# if modprobe fails, the reason is in the kernel log:",
             "sudo dmesg | grep -iE 'nvidia|nouveau|secure boot|module verification'",
             "mokutil --sb-state   # Secure Boot on: enroll the module key or use signed (e.g. -open) packages",
             reinstall_dkms(m, kb, "rebuild for this kernel"),
             "sudo reboot"};
  } else if (!libs) {
    x.title = "The NVIDIA kernel module is loaded but no libcuda.so is installed";
    x.evidence.push_back({"kernel module " + d.module_version, d.module_version_source});
    x.evidence.push_back({"no libcuda.so.<version> in the loader's directories", "LD_LIBRARY_PATH, /etc/ld.so.conf, default dirs"});
    if (!d.cu_init_error.empty()) x.evidence.push_back({d.cu_init_error, "dlopen libcuda.so.1"});
    if (!f.platform.container.empty()) {
      x.explanation = "The container sees the host's GPU but the NVIDIA runtime did not mount the driver libraries into "
                      "it (NVIDIA_DRIVER_CAPABILITIES without 'compute', or a runtime that only passes devices).";
      x.fix = {"docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility IMAGE …",
               "# Kubernetes/podman: use the NVIDIA device plugin / CDI (nvidia-ctk cdi generate) so libraries are injected"};
    } else {
      x.explanation = "The driver's user-space part (libcuda, libnvidia-ml) is missing, so CUDA programs cannot load "
                      "the driver even though the kernel module runs.";
      std::string v = d.module_version.empty() ? std::to_string(driver_branch_for(dk, newest_needed_cuda(f)))
                                               : std::to_string(Version::parse(d.module_version).value_or(Version{}).major());
      x.fix = user_libs_fix(m, kb, v, false, "the user-space libraries matching kernel module " + d.module_version);
      x.fix.push_back("sudo ldconfig && nvidia-smi");
    }
  } else {
    return;  // module and libraries are there; the driver was not asked (--root) or other findings say why not
  }
  out.push_back(std::move(x));
}

// NVML answers but libcuda.so.1 cannot be loaded: nvidia-smi works, CUDA does not (typical of a
// container given only the "utility" driver capability).
void libcuda_unloadable(const Model& m, const Kb& kb, Findings& out) {
  const Facts& f = m.facts;
  const DriverFacts& d = f.driver;
  if (d.nvml_status != 0 || d.cu_init_status != -1 || d.cu_init_error.empty() || !d.query_error.empty()) return;
  Finding x = new_finding("driver.missing", Severity::error, "libcuda.so.1",
                          "NVML works but the CUDA driver library (libcuda.so.1) cannot be loaded");
  x.evidence.push_back({"NVML driver " + d.nvml_driver_version, d.nvml_library.empty() ? "NVML" : d.nvml_library});
  x.evidence.push_back({d.cu_init_error, "dlopen libcuda.so.1"});
  if (const std::string* caps = f.getenv("NVIDIA_DRIVER_CAPABILITIES"))
    x.evidence.push_back({"NVIDIA_DRIVER_CAPABILITIES=" + *caps, "environment"});
  if (!f.platform.container.empty()) {
    x.explanation = "The container runtime mounted the management library but not the CUDA driver: the container was "
                    "started without the 'compute' driver capability.";
    x.fix = {"docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility IMAGE …"};
  } else {
    x.explanation = "nvidia-smi will work, but every CUDA program fails to load the driver: libcuda.so.1 is not in the "
                    "loader's path (a broken or partial driver install).";
    std::string branch = std::to_string(Version::parse(d.nvml_driver_version).value_or(Version{}).major());
    x.fix = {"ldconfig -p | grep libcuda"};
    for (auto& c : user_libs_fix(m, kb, branch, true, "the driver's user-space libraries")) x.fix.push_back(std::move(c));
    x.fix.push_back("sudo ldconfig");
  }
  out.push_back(std::move(x));
}

void nvidia_uvm_missing(const Model& m, Findings& out) {
  const Facts& f = m.facts;
  const DriverFacts& d = f.driver;
  if (!d.module_loaded || !m.platform.gpu_device_nodes || d.cu_init_status == 0) return;
  if (std::find(d.device_nodes.begin(), d.device_nodes.end(), "/dev/nvidia-uvm") != d.device_nodes.end()) return;
  Finding x = new_finding("driver.missing", d.cu_init_status > 0 ? Severity::error : Severity::warning,
                          "/dev/nvidia-uvm", "The nvidia-uvm device is missing: CUDA cannot initialise without it");
  x.evidence.push_back({"device nodes: " + join(d.device_nodes, " "), "/dev"});
  if (d.cu_init_status > 0) x.evidence.push_back({"cuInit: " + d.cu_init_error, "cuInit"});
  if (!f.platform.container.empty()) {
    x.explanation = "The container got /dev/nvidia* but not /dev/nvidia-uvm, which CUDA needs for its memory manager; "
                    "the runtime should pass it (docker --gpus does).";
    x.fix = {"docker run --gpus all IMAGE …   # or add --device /dev/nvidia-uvm --device /dev/nvidia-uvm-tools",
             "# on the host, once: sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0"};
  } else {
    x.explanation = "The nvidia-uvm kernel module is not loaded (normally nvidia-modprobe loads it on first CUDA use), "
                    "so cuInit fails with an unknown error or no device.";
    x.fix = {"sudo modprobe nvidia-uvm", "sudo nvidia-modprobe -u -c=0   # creates /dev/nvidia-uvm", "nvidia-smi"};
  }
  out.push_back(std::move(x));
}

void gpu_without_driver(const Model& m, const Kb& kb, Findings& out) {
  const Facts& f = m.facts;
  const DriverFacts& d = f.driver;
  for (const auto& g : d.pci_gpus) {
    if (g.driver == "nvidia") continue;
    // No driver bound because the module cannot load: rules/driver_install.cpp says why, once.
    if (g.driver.empty() && m.platform.module_blocker != ModuleBlocker::none) continue;
    bool known = std::any_of(d.gpus.begin(), d.gpus.end(), [&](const GpuInfo& i) { return i.pci_bus_id == g.address; });
    if (known) continue;
    Finding x = new_finding("driver.gpu_without_driver", Severity::error, "PCI " + g.address, "");
    x.evidence.push_back({fmt::format("NVIDIA device {} (class {}) at {}", g.device_id, g.class_id, g.address),
                          "/sys/bus/pci/devices/" + g.address});
    x.evidence.push_back({"bound driver: " + (g.driver.empty() ? std::string("none") : g.driver),
                          "/sys/bus/pci/devices/" + g.address + "/driver"});
    if (g.driver == "nouveau") {
      x.title = "NVIDIA GPU " + g.address + " is driven by nouveau, not the NVIDIA driver";
      x.explanation = "The open-source nouveau driver holds the GPU; CUDA needs NVIDIA's driver, and nouveau must be "
                      "blacklisted before it can load.";
      const auto& bl = f.platform.driver_install.nouveau_blacklisted_in;
      if (!bl.empty()) x.evidence.push_back({"blacklisted in " + join(bl, ", ") + " (but bound: the initramfs predates it)", bl.front()});
      x.fix = nouveau_blacklist_commands(kb, m.distro);  // install_driver_fix's reboot follows
      auto inst = install_driver_fix(m, kb, false);
      x.fix.insert(x.fix.end(), inst.begin(), inst.end());
    } else if (g.driver == "vfio-pci") {
      x.severity = Severity::warning;
      x.title = "NVIDIA GPU " + g.address + " is bound to vfio-pci (reserved for VM passthrough)";
      x.explanation = "vfio-pci hands the GPU to a virtual machine; this host cannot use it for CUDA until it is "
                      "unbound and given to the nvidia driver.";
      x.fix = {"echo " + g.address + " | sudo tee /sys/bus/pci/drivers/vfio-pci/unbind",
               "echo " + g.address + " | sudo tee /sys/bus/pci/drivers/nvidia/bind   # needs the nvidia module loaded",
               "# or remove the vfio-pci.ids= kernel parameter / modprobe.d entry and reboot"};
    } else {
      x.title = "NVIDIA GPU " + g.address + " has no driver bound";
      if (d.module_loaded) {
        x.explanation = "The nvidia module is loaded but did not take this GPU; usually the driver is too old for the "
                        "GPU or the GPU failed to initialise (the kernel log says which).";
        x.fix = {"sudo dmesg | grep -iE 'NVRM|nvidia'", "# if the GPU is newer than the driver, install a newer branch:"};
        auto inst = install_driver_fix(m, kb, false);
        x.fix.insert(x.fix.end(), inst.begin(), inst.end());
      } else if (has_real_libcuda(d)) {
        for (const auto& l : d.libraries)
          if (real_libcuda(l)) x.evidence.push_back({"installed " + l.kind + " " + l.version, l.path});
        x.explanation = "The driver's libraries are installed but the nvidia kernel module is not loaded (not built for "
                        "this kernel, or blocked by Secure Boot), so nothing drives this GPU.";
        x.fix = {"sudo modprobe nvidia && nvidia-smi",
                 "sudo dmesg | grep -iE 'nvidia|secure boot|module verification'   # if modprobe fails",
                 reinstall_dkms(m, kb, "rebuild the module for this kernel, then reboot")};
      } else {
        x.explanation = "No NVIDIA kernel driver is loaded, so nothing drives this GPU and CUDA cannot see it.";
        x.fix = install_driver_fix(m, kb);
      }
    }
    out.push_back(std::move(x));
  }
}

void library_mismatch(const Model& m, const Kb& kb, Findings& out) {
  const Facts& f = m.facts;
  const DriverFacts& d = f.driver;
  if (f.platform.wsl) return;
  // Libraries the loader uses: those the soname links point at (else every versioned file).
  bool any_linked = std::any_of(d.libraries.begin(), d.libraries.end(), [](const DriverLibrary& l) {
    return l.linked && !l.stub && !l.compat;
  });
  std::vector<const DriverLibrary*> differing;
  for (const auto& l : d.libraries)
    if (!l.stub && !l.compat && !l.version.empty() && (l.linked || !any_linked) && !d.module_version.empty() &&
        l.version != d.module_version)
      differing.push_back(&l);
  bool nvml_differs = !d.module_version.empty() && !d.nvml_driver_version.empty() && d.nvml_driver_version != d.module_version;
  bool nvml_says = d.nvml_status == 18;
  bool cu_says = d.cu_init_status == 803 && f.platform.compat_dirs.empty() && !contains(d.libcuda_loaded, "/compat/");
  if (differing.empty() && !nvml_differs && !nvml_says && !cu_says) return;

  std::string lib_version = !differing.empty() ? differing.front()->version : d.nvml_driver_version;
  Finding x = new_finding(
      "driver.library_mismatch", Severity::error, "NVIDIA driver",
      fmt::format("Driver/library version mismatch: kernel module {} vs user-space libraries {}",
                  d.module_version.empty() ? "?" : d.module_version, lib_version.empty() ? "?" : lib_version));
  if (!d.module_version.empty()) x.evidence.push_back({"kernel module " + d.module_version, d.module_version_source});
  for (const auto* l : differing) x.evidence.push_back({l->kind + " " + l->version, l->path});
  if (nvml_differs) x.evidence.push_back({"NVML reports driver " + d.nvml_driver_version, "nvmlSystemGetDriverVersion"});
  if (nvml_says) x.evidence.push_back({"nvmlInit: " + d.nvml_error, "nvmlInit_v2"});
  if (cu_says) x.evidence.push_back({"cuInit: " + d.cu_init_error, "cuInit"});
  if (!f.platform.container.empty()) {
    x.explanation = "The host's kernel module and the driver libraries in this container differ: the host driver was "
                    "upgraded without a reboot, or the image ships its own driver libraries.";
    x.fix = {"# on the host:", "sudo reboot",
             "# and never bake libcuda/libnvidia-ml into images: let the NVIDIA runtime mount the host's (docker run --gpus all …)"};
  } else {
    x.explanation = "The driver libraries were upgraded (or downgraded) while the old kernel module stayed loaded, so "
                    "NVML and CUDA refuse to talk to it (\"Failed to initialize NVML: Driver/library version mismatch\").";
    x.fix = {"sudo reboot",
             "# or, without a reboot, stop everything using the GPU and reload the module:",
             "sudo systemctl stop nvidia-persistenced; sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia",
             "sudo modprobe nvidia && sudo modprobe nvidia_uvm && nvidia-smi"};
    for (auto& line : hold_fix(m, kb)) x.fix.push_back(std::move(line));
  }
  add_library_change_evidence(m, x);
  out.push_back(std::move(x));
}

// LD_LIBRARY_PATH without the given directories.
std::string ld_path_without(const Facts& f, const std::vector<std::string>& drop) {
  const std::string* v = f.getenv("LD_LIBRARY_PATH");
  if (!v) return {};
  std::vector<std::string> keep;
  for (const auto& dir : split(*v, ':'))
    if (!dir.empty() && std::find(drop.begin(), drop.end(), path_normalize(dir)) == drop.end()) keep.push_back(dir);
  return join(keep, ":");
}

// Commands that take `dirs` off the loader's search path, wherever they came from.
std::vector<std::string> drop_dirs_fix(const Facts& f, const std::vector<SearchPathDir>& dirs) {
  std::vector<std::string> fix, from_env;
  for (const auto& s : dirs) {
    if (s.via == "LD_LIBRARY_PATH") {
      from_env.push_back(s.dir);
    } else {
      fix.push_back(fmt::format("sudo sed -i '\\#^{}/*$#d' {}", s.dir, s.via));
      for (const auto& file : s.files)
        if (file != "libcuda.so" && contains(s.dir + "/", "/stubs/"))
          fix.push_back("sudo rm " + path_join(s.dir, file) + "   # a link ldconfig made to the stub");
    }
  }
  if (!fix.empty()) fix.push_back("sudo ldconfig");
  if (!from_env.empty()) {
    std::string rest = ld_path_without(f, from_env);
    fix.insert(fix.begin(), rest.empty() ? "unset LD_LIBRARY_PATH" : "export LD_LIBRARY_PATH=" + rest);
    fix.push_back("# and remove it where it is set (~/.bashrc, the Dockerfile's ENV, the job script)");
  }
  return fix;
}

void stub_library(const Facts& f, Findings& out) {
  const DriverFacts& d = f.driver;
  const auto& stubs = f.platform.stub_dirs;
  bool cu_says = d.cu_init_status == 34;
  if (stubs.empty() && !cu_says) return;
  // The loader asks for libcuda.so.1: a stubs dir that has one (ldconfig makes it from
  // ld.so.conf entries) shadows the driver. One with only libcuda.so affects dlopen("libcuda.so").
  bool shadows = cu_says || std::any_of(stubs.begin(), stubs.end(), [](const SearchPathDir& s) {
    return s.via != "LD_LIBRARY_PATH" ||
           std::find(s.files.begin(), s.files.end(), "libcuda.so.1") != s.files.end();
  });
  Finding x = new_finding("driver.stub_library", shadows ? Severity::error : Severity::warning, "libcuda",
                          shadows ? "A toolkit stub libcuda is loaded instead of the driver's (CUDA_ERROR_STUB_LIBRARY)"
                                  : "A toolkit stubs/ directory is on the library search path");
  if (cu_says) x.evidence.push_back({"cuInit: " + d.cu_init_error + (d.libcuda_loaded.empty() ? "" : " from " + d.libcuda_loaded), "cuInit"});
  for (const auto& s : stubs)
    x.evidence.push_back({s.dir + " (" + join(s.files, ", ") + ")", s.via});
  x.explanation = "The CUDA toolkit's stubs/libcuda.so exists only so programs can link without a driver; loaded at "
                  "run time it fails every call with error 34 (\"CUDA driver is a stub library\"). Link-time paths belong "
                  "in LIBRARY_PATH, never in LD_LIBRARY_PATH or ld.so.conf.";
  x.fix = drop_dirs_fix(f, stubs);
  if (x.fix.empty())
    x.fix = {"# find what puts the stub first:", "LD_DEBUG=libs python -c 'import ctypes; ctypes.CDLL(\"libcuda.so.1\")' 2>&1 | grep -i libcuda"};
  out.push_back(std::move(x));
}

void forward_compat(const Facts& f, const Kb& kb, Findings& out) {
  const DriverFacts& d = f.driver;
  const DriversKb& dk = drivers_kb(kb);
  bool compat_loaded = contains(d.libcuda_loaded, "/compat/") || !f.platform.compat_dirs.empty();
  bool err804 = d.cu_init_status == 804;
  bool err803 = d.cu_init_status == 803 && compat_loaded;
  // Without an error: a compat libcuda older than the kernel driver is bound to fail (803).
  std::vector<const DriverLibrary*> older;
  auto module = Version::parse(d.module_version);
  for (const auto& l : d.libraries)
    if (l.compat && l.kind == "libcuda" && module && !l.version.empty() && Version::parse(l.version).value_or(Version{}) < *module)
      older.push_back(&l);
  if (!err804 && !err803 && older.empty()) return;
  Finding x = new_finding("driver.forward_compat_unsupported", (err804 || err803) ? Severity::error : Severity::warning,
                          "cuda-compat libcuda", "");
  if (err804) {
    x.title = "Forward compatibility (cuda-compat) was attempted on a GPU that does not support it (error 804)";
    x.explanation = "A cuda-compat libcuda is on the search path, but forward compatibility works only on data-center "
                    "GPUs; on others cuInit fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE.";
  } else if (err803) {
    x.title = "The cuda-compat libcuda does not match the kernel driver (error 803)";
    x.explanation = "A forward-compatibility libcuda is used with a kernel driver it was not built for (often one newer "
                    "than itself), so cuInit fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH.";
  } else {
    x.title = "A cuda-compat libcuda older than the kernel driver is on the search path";
    x.explanation = "cuda-compat exists to run a newer CUDA on an older driver; this one is older than the installed "
                    "driver, so programs that load it fail with error 803 — the driver's own libcuda is better.";
  }
  if (err804 || err803) x.evidence.push_back({"cuInit: " + d.cu_init_error, "cuInit"});
  if (!d.libcuda_loaded.empty()) x.evidence.push_back({"loaded " + d.libcuda_loaded, "dlinfo(libcuda.so.1)"});
  if (!d.module_version.empty()) x.evidence.push_back({"kernel module " + d.module_version, d.module_version_source});
  for (const auto* l : older) x.evidence.push_back({"cuda-compat libcuda " + l->version, l->path});
  for (const auto& g : d.gpus)
    x.evidence.push_back({g.name + (is_datacenter_gpu(dk, g.name) ? " (data-center GPU)" : " (not a data-center GPU)"), "NVML"});
  x.fix = drop_dirs_fix(f, f.platform.compat_dirs);
  x.fix.push_back("sudo apt remove 'cuda-compat-*'   # if the compat package is installed system-wide");
  out.push_back(std::move(x));
}

void persistence_off(const Facts& f, const Kb& kb, Findings& out) {
  if (f.platform.wsl) return;
  const DriversKb& dk = drivers_kb(kb);
  for (const auto& g : f.driver.gpus) {
    if (g.persistence_mode != "off" || !is_datacenter_gpu(dk, g.name)) continue;
    Finding x = new_finding("driver.persistence_off", Severity::info, fmt::format("GPU {} {}", g.nvml_index, g.name),
                            "Persistence mode is off on a data-center GPU");
    x.evidence.push_back({"persistence mode off", "nvmlDeviceGetPersistenceMode"});
    x.explanation = "Without persistence the driver tears the GPU down when the last process exits, so every new "
                    "process pays a slow initialisation (seconds on large GPUs).";
    x.fix = {"sudo systemctl enable --now nvidia-persistenced   # or: sudo nvidia-smi -pm 1"};
    out.push_back(std::move(x));
  }
}

// ---- driver's CUDA vs what frameworks and toolkits need ----

struct Need {
  std::string subject;  // "torch 2.11.0+cu130 in /opt/venv", "CUDA toolkit 13.0 at /usr/local/cuda-13.0"
  Version cuda;
  std::string source;
  bool framework = true;
  const PythonEnv* python = nullptr;
};

std::vector<std::string> too_old_fix(const Model& m, const Kb& kb, const Need& n) {
  const Facts& f = m.facts;
  const DriverModel& s = m.driver;
  const DriversKb& dk = drivers_kb(kb);
  std::vector<std::string> fix;
  const CudaRelease* rel = first_release(dk, n.cuda);
  int branch = driver_branch_for(dk, n.cuda);
  std::string min = rel ? rel->linux_min.text : "R" + std::to_string(branch);
  bool container = !f.platform.container.empty();
  fix.push_back(fmt::format("# either upgrade the driver to >= {} (CUDA {}){}", min, n.cuda.major_minor(),
                            container ? " on the host" : ""));
  for (auto& c : install_commands(m, kb, n.cuda)) fix.push_back(std::move(c));
  if (n.framework && n.python) {
    std::string base = n.python->torch.version.substr(0, n.python->torch.version.find('+'));
    TorchPick pick = torch_variant_for(kb, n.python->torch.version, s.cuda);
    if (!pick.variant.empty() && !(pick.minor_compat && cuda_from_tag(pick.variant) == n.cuda)) {
      fix.push_back("# or install the torch build for the driver's CUDA " + s.cuda.major_minor() +
                    (pick.minor_compat ? " (runs through minor-version compatibility):" : ":"));
      fix.push_back(fmt::format("{} -m pip install --force-reinstall torch=={} --index-url {}", python_cmd(n.python), base,
                                torch_index_url(kb, pick.variant)));
    } else {
      fix.push_back(fmt::format("# or install a torch release that has a cu{}{} (or older) build: https://pytorch.org/get-started/previous-versions/",
                                s.cuda.major(), s.cuda.minor()));
    }
  } else if (!n.framework) {
    fix.push_back("# or build with a toolkit whose CUDA is <= " + s.cuda.major_minor() + " (the driver's maximum)");
  }
  return fix;
}

void check_need(const Model& m, const Kb& kb, const Need& n, Findings& out) {
  const DriverModel& s = m.driver;
  if (n.cuda.empty() || s.cuda.empty() || n.cuda.cuda_int() <= s.cuda.cuda_int()) return;
  const DriversKb& dk = drivers_kb(kb);
  const MinorCompatFloor* floor = minor_compat_floor(dk, n.cuda.major());
  bool same_major = n.cuda.major() == s.cuda.major() && n.cuda.major() >= 11;
  bool minor_ok = same_major && floor && (s.version.empty() || s.version >= floor->linux_min);
  Evidence have{fmt::format("driver {} supports CUDA <= {} (nvidia-smi's \"CUDA Version\": the driver's maximum, "
                            "not an installed toolkit)", s.version.empty() ? "?" : s.version.text, s.cuda.major_minor()),
                s.cuda_source};
  Evidence need{fmt::format("{} needs CUDA {}", n.subject, n.cuda.major_minor()), n.source};
  if (minor_ok) {
    Finding x = new_finding("driver.minor_compat", n.framework ? Severity::warning : Severity::info, n.subject,
                            fmt::format("{} runs on driver CUDA {} only through minor-version compatibility", n.subject,
                                        s.cuda.major_minor()));
    x.evidence = {have, need, {fmt::format("CUDA {}.x minor-version compatibility needs driver >= {}", n.cuda.major(),
                                           floor->linux_min.text), floor->source}};
    x.explanation = "It works, with limits: the binaries must contain SASS for the GPU (PTX from the newer toolkit cannot "
                    "be JIT-compiled by this driver, error 222), and newer CUDA APIs fail with error 36.";
    x.fix = too_old_fix(m, kb, n);
    x.fix[0] = "# for full support, upgrade the driver (CUDA " + n.cuda.major_minor() + " needs >= " +
               (first_release(dk, n.cuda) ? first_release(dk, n.cuda)->linux_min.text : "R" + std::to_string(driver_branch_for(dk, n.cuda))) + ")";
    out.push_back(std::move(x));
    return;
  }
  Finding x = new_finding("driver.too_old", n.framework ? Severity::error : Severity::warning, n.subject,
                          fmt::format("The driver (CUDA {}) is too old for {} (CUDA {})", s.cuda.major_minor(),
                                      n.subject, n.cuda.major_minor()));
  x.evidence = {have, need};
  if (floor) x.evidence.push_back({fmt::format("CUDA {}.x minor-version compatibility needs driver >= {}", n.cuda.major(),
                                               floor->linux_min.text), floor->source});
  if (const CudaRelease* rel = first_release(dk, n.cuda))
    x.evidence.push_back({fmt::format("CUDA {} {} ships with driver >= {}", n.cuda.major_minor(), rel->release, rel->linux_min.text), rel->source});
  x.explanation = n.framework
      ? "Its CUDA runtime is newer than the driver supports and minor-version compatibility does not bridge a major "
        "version, so CUDA initialisation fails with error 35 (\"CUDA driver version is insufficient\")."
      : "Programs built with this toolkit need a newer driver than the installed one and fail at start with error 35.";
  x.fix = too_old_fix(m, kb, n);
  out.push_back(std::move(x));
}

void driver_vs_needs(const Model& m, const Kb& kb, Findings& out) {
  const Facts& f = m.facts;
  const DriverModel& s = m.driver;
  if (s.cuda.empty()) return;
  for (const auto& py : f.pythons) {
    if (py.torch.cuda.empty()) continue;
    Need n;
    n.subject = fmt::format("torch {} in {}", py.torch.version, py.prefix.empty() ? py.interpreter : py.prefix);
    n.cuda = Version::parse(py.torch.cuda).value_or(Version{});
    n.source = !py.torch.source.empty() ? py.torch.source
                                        : path_join(py.site_packages.empty() ? py.prefix : py.site_packages.front(), "torch/version.py");
    n.python = &py;
    check_need(m, kb, n, out);
  }
  for (const auto& tk : f.toolkit.toolkits) {
    Need n;
    n.subject = fmt::format("CUDA toolkit {} at {}", tk.version, tk.root);
    n.cuda = Version::parse(tk.version).value_or(Version{});
    n.source = tk.origin == "pasted report" ? tk.version_source : path_join(tk.root, tk.version_source);
    n.framework = false;
    check_need(m, kb, n, out);
  }
}

}  // namespace

Findings driver_rules(const Model& m, const Kb& kb) {
  const Facts& f = m.facts;
  Findings out;
  driver_missing(m, kb, out);
  libcuda_unloadable(m, kb, out);
  nvidia_uvm_missing(m, out);
  gpu_without_driver(m, kb, out);
  library_mismatch(m, kb, out);
  stub_library(f, out);
  forward_compat(f, kb, out);
  persistence_off(f, kb, out);
  driver_vs_needs(m, kb, out);
  return out;
}

}  // namespace cd
