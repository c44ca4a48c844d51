#pragma once
// The functions derive() is made of, one per derived value; rules call the few that take
// arguments of their own (a torch variant for another GPU, a Python command).
#include <string>
#include <vector>

#include "derive/model.hpp"

namespace cd {

DriverModel derive_driver(const DriverFacts& d, const Kb& kb);  // derive/driver.cpp
DriverTarget driver_target(const DriverModel& d);

// The Ubuntu/Debian package that installs driver branch `branch` for GPUs of these sm numbers
// (empty: none known): `stem`-NNN-open where NVIDIA's open kernel modules exist for that branch
// and drive every GPU (data/plan.toml [open_kernel_module]: first_branch, min_sm), else the
// proprietary `stem`-NNN, with the reason in `note` and its source (derive/driver.cpp).
struct DriverPackage {
  std::string name;    // "nvidia-driver-550-open", "nvidia-driver-440"
  bool open = false;
  std::string note;    // "" for -open; "proprietary module: -open packages start with R515"
  std::string source;  // data/plan.toml's source for the note
};
DriverPackage driver_package(const Kb& kb, int branch, const std::vector<int>& sms, const std::string& stem = "nvidia-driver");
std::vector<int> gpu_sms(const std::vector<MachineGpu>& gpus);

DistroModel derive_distro(const Facts& f, const Kb& kb);          // derive/distro.cpp
// The row whose commands apply to the driver's host: d.row where known, nullptr for an unlisted
// distribution, else (a container, a described machine) the default row.
const DriverInstallKb* install_row(const Kb& kb, const DistroModel& d);
// The commands that install driver package `p`'s branch on distribution `d` (install_row's;
// NVIDIA's guide for an unlisted one): the repository's setup lines, then
// "INSTALL && sudo reboot   # comment; the package's note" (derive/distro.cpp).
std::vector<std::string> driver_install_commands(const Kb& kb, const DistroModel& d, const std::string& arch, int branch,
                                                 const DriverPackage& p, const std::string& comment = "");

// CUDA toolkit `cuda` alone from NVIDIA's repository with this distribution's package manager
// (the os-release's own, container or not: the toolkit goes where the programs run); for an
// unlisted distribution or release a comment line pointing to NVIDIA's downloads (derive/distro.cpp).
std::string toolkit_install_command(const Kb& kb, const DistroModel& d, const Version& cuda);
// A host compiler of `kind` ("gcc" / "clang") and major `n` for nvcc, where nvcc runs (the
// os-release's own row, like the toolkit): the install command and its C++ driver's path; for a
// distribution that records none, a comment line and no path (derive/distro.cpp).
struct HostCompilerInstall {
  std::string install;  // "sudo apt-get install gcc-13 g++-13", or a "# ..." pointer
  std::string cxx;      // "/usr/bin/g++-13"; "" when not known
};
HostCompilerInstall host_compiler_install(const Kb& kb, const DistroModel& d, const std::string& kind, int n);
// The kernel headers DKMS builds the module against, for kernel `kernel` (a version, or
// "$(uname -r)"), on the driver's host (install_row's package manager; a comment line for an
// unlisted distribution). data/plan.toml [package_manager.*] (derive/distro.cpp).
std::string kernel_headers_command(const Kb& kb, const DistroModel& d, const std::string& kernel);
// Holding the driver's packages against automatic upgrades: a comment saying why and how to
// release them, then the command. `pm` overrides the host's package manager (the package logs
// read were dnf's); `packages` empty: the manager's pattern for any driver package.
std::vector<std::string> hold_commands(const Kb& kb, const DistroModel& d, const std::string& pm,
                                       const std::vector<std::string>& packages);
// Keeping nouveau off the GPU on the driver's host: the modprobe.d blacklist, then the
// initramfs rebuilt with the distribution's tool (data/plan.toml [package_manager.*]).
std::vector<std::string> nouveau_blacklist_commands(const Kb& kb, const DistroModel& d);
// The distribution's signed prebuilt module package for `branch` and `kernel` ("" when it has none).
std::string prebuilt_modules_package(const Kb& kb, const DistroModel& d, const std::string& branch, const std::string& kernel);
// The NVIDIA Container Toolkit's repository and install with the distribution's package manager
// (data/plan.toml [package_manager.*] container_toolkit); a pointer to its guide elsewhere.
std::vector<std::string> container_toolkit_commands(const Kb& kb, const DistroModel& d);
// Rebuild the NVIDIA kernel module through DKMS on the driver's host: the row's own command,
// its per-branch DKMS package for these GPUs, else `sudo dkms autoinstall` (derive/distro.cpp).
std::string dkms_rebuild_command(const Kb& kb, const DistroModel& d, int branch, const std::vector<int>& sms,
                                 const std::string& comment);

std::vector<MachineGpu> derive_gpus(const DriverFacts& d);       // derive/gpus.cpp
// One target per distinct architecture, in the GPUs' order.
std::vector<GpuTarget> gpu_targets(const std::vector<MachineGpu>& gpus);

PlatformModel derive_platform(const Facts& f);                   // derive/platform.cpp
// Fills the driver-forensics part of `p` (derive/driver_install.cpp).
void derive_driver_install(const Facts& f, PlatformModel& p);
// "6.8.0-49-generic" < "6.8.0-51-generic": numeric runs compared as numbers.
bool kernel_less(const std::string& a, const std::string& b);
TopologyModel derive_topology(const Facts& f);                   // derive/topology.cpp

// derive/processes.cpp: each NVML process's state, owner, age, idle time and place; each
// GPU's memory against what its processes account for.
std::vector<GpuProcessModel> derive_processes(const Facts& f, const std::vector<MachineGpu>& gpus);
std::vector<GpuMemoryModel> derive_gpu_memory(const Facts& f, const std::vector<MachineGpu>& gpus, const Kb& kb);
std::vector<const DeviceHolder*> holders_without_context(const DriverFacts& d);

// The command that runs an environment's Python: its interpreter, else PREFIX/bin/python,
// else "python3" (no environment known).
std::string python_cmd(const PythonEnv* env);                     // derive/envs.cpp
EnvModel derive_env(const Facts& f, const PythonEnv& env, const PlatformModel& platform, const Kb& kb);
// --deep's JAX run in `env`, judged with the machine's platform and JAX_PLATFORMS (derive/envs.cpp).
JaxModel derive_jax(const Facts& f, const PythonEnv& env, const PlatformModel& platform);

// Each verify measurement judged against the expected figure and threshold that
// gpu/verify_expect put next to it (derive/verify.cpp).
std::vector<MeasurementModel> derive_measurements(const VerifyFacts& v);

// The torch wheel variant to install (derive/torch.cpp): the newest variant of this release
// whose CUDA the driver runs (any, when `driver_cuda` is unknown) and, when `sm` is given,
// whose recorded arch list runs natively there. With none at or below the driver's CUDA, the
// oldest of the driver's CUDA major (it runs through minor-version compatibility).
struct TorchPick {
  std::string variant;  // "cu128"; "" when the release or no fitting variant is known
  bool minor_compat = false;
};
TorchPick torch_variant_for(const Kb& kb, const std::string& torch_version, const Version& driver_cuda, int sm = 0);

// What torch was built for: --deep's get_arch_list(), else the knowledge base's record of
// the installed wheel (PyTorch's own wheels only: conda builds choose their own lists).
struct ArchList {
  std::vector<std::string> archs;  // "sm_90", "compute_120"
  std::string source;
};
ArchList torch_arch_list(const PythonEnv& env, const Kb& kb);

}  // namespace cd
