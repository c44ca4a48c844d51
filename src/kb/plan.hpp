#pragma once
// data/plan.toml: what `plan` needs beyond the version tables — which driver package fits
// which GPU, how conda and pixi get a PyTorch build, and the platforms (WSL2, Windows,
// Jetson) whose driver or wheels come from elsewhere. Each part keeps its source.
#include <map>
#include <string>
#include <vector>

#include "kb/kb.hpp"
#include "util/version.hpp"

namespace cd {

struct PlanNote {
  std::string text;
  std::string url;
  std::string source;
};

// One PyTorch index uv's --torch-backend=auto may pick, in uv's order, with its driver floor.
struct UvBackend {
  std::string variant;  // "cu129"
  Version linux_min;
  Version windows_min;
  std::string source;
};

// How one Linux distribution installs an NVIDIA driver branch ([[driver_install]]).
struct DriverInstallKb {
  std::string family;               // "Debian"
  std::vector<std::string> ids;     // os-release ID / ID_LIKE words it answers to
  std::vector<std::string> names;   // lowercase parts of PRETTY_NAME (snapshots without ID)
  std::string pm;                   // "apt", "dnf", "zypper"
  std::vector<int> majors;          // the releases its commands hold for; empty: all
  bool is_default = false;          // stands for an unknown host
  std::string recommend;            // the distribution's own picker ("sudo ubuntu-drivers install")
  std::vector<std::string> setup;   // the repository the packages come from; {major} {repo_arch}
  std::string open, proprietary;    // {branch}; "" when not recorded
  std::string user_libs;            // the packages of libcuda and NVML; {branch}
  std::string dkms_reinstall;       // the command that rebuilds the module through DKMS
  std::string dkms_package;         // or: the stem of a per-branch DKMS package ("nvidia-dkms")
  std::string prebuilt_modules;     // signed prebuilt module package; {branch} {kernel}
  std::string toolkit;              // CUDA toolkit X.Y from NVIDIA's repository; {cuda_major} {cuda_minor}
  std::vector<std::string> gcc, clang;  // a host compiler of major {n}: install command, C++ driver
  std::string source;
  std::string archive_install, archive_note, archive_source;  // the distribution's own driver
  std::map<std::string, int> archive;  // VERSION_CODENAME -> the branch its archive carries
};

// What differs by package manager (data/plan.toml [package_manager.*]).
struct PackageManagerKb {
  std::string kernel_headers;  // {kernel}
  std::string hold, unhold;    // {packages}
  std::string any_driver;      // the driver's packages as a pattern, when not known
  std::vector<std::string> blacklist_nouveau;  // keep nouveau off the GPU (the initramfs rebuilt)
  std::vector<std::string> container_toolkit;  // NVIDIA Container Toolkit: repository, install
};

struct PlanKb {
  int open_module_min_sm = 75;  // nvidia-driver-NNN-open drives this compute capability and newer
  std::string open_module_source;
  int open_module_first_branch = 515;  // the first driver branch with open kernel modules (-open packages)
  std::string open_module_first_branch_source;
  std::string conda_last_release = "2.5";  // the last torch on PyTorch's own conda channel
  std::string conda_source;
  std::string pixi_snippet;  // with {spec} and {index}
  std::string pixi_source;
  PlanNote wsl, jetson, windows;
  // --for build
  std::string runfile_url, runfile_flags, runfile_source;  // {version} {driver} {suffix} {mm} {major} {minor}
  int gib_per_job = 20, cores_per_job = 2;
  std::string max_jobs_source;
  std::vector<UvBackend> uv;
  std::string override_uv, override_conda, override_source;  // {variant} {driver} {cuda}
  std::vector<DriverInstallKb> driver_install;
  std::string container_toolkit_guide, container_toolkit_other, container_toolkit_source;  // other: {guide}
  std::string toolkit_install_comment, toolkit_install_other;  // other: {mm}
  std::string driver_install_other, driver_install_other_source;  // {branch} {module}
  std::string host_compiler_other;  // {kind} {n}
  std::map<std::string, PackageManagerKb> package_manager;  // "apt" "dnf" "zypper" "other"
};

const PlanKb& plan_kb(const Kb& kb);

}  // namespace cd
