#pragma once
// Typed views of data/cuda_drivers.toml (CUDA release <-> driver, minor-version
// compatibility floors, driver branch -> CUDA, data-center GPU names) and
// data/nvml_errors.toml (NVML return codes).
#include <optional>
#include <string>
#include <vector>

#include "facts/driver.hpp"
#include "kb/kb.hpp"
#include "util/version.hpp"

namespace cd {

struct CudaRelease {
  Version cuda;             // 12.4
  std::string release;      // "GA", "Update 1"
  Version linux_min;        // 550.54.14
  std::string windows_min;  // "551.61", "" = not published
  std::string source;
};

struct MinorCompatFloor {
  int major = 0;
  Version linux_min;
  std::string windows_min;
  std::string source;
};

struct DriverBranch {
  int branch = 0;  // major of the driver version: 580
  Version cuda;    // what cuDriverGetVersion reports: 13.0
  std::string source;
};

struct NvmlErrorInfo {
  int code = 0;
  std::string name;
  std::string meaning;
  std::string finding;
  std::string source;
};

struct DriversKb {
  std::vector<CudaRelease> releases;
  std::vector<MinorCompatFloor> minor_compat;
  std::vector<DriverBranch> branches;  // ascending by branch
  std::vector<std::string> datacenter_patterns;
  std::string datacenter_source;
  int default_branch = 580;  // what the fixes install when nothing asks for a particular CUDA
};

const DriversKb& drivers_kb(const Kb& kb);

// The earliest release (GA) of CUDA major.minor; nullptr when unknown.
const CudaRelease* first_release(const DriversKb& d, const Version& cuda);
// The minor-version-compatibility floor for a CUDA major; nullptr before CUDA 11.
const MinorCompatFloor* minor_compat_floor(const DriversKb& d, int cuda_major);

// The CUDA version a driver reports, from the branch table. `exact` is false when
// the driver's branch is not in the table (the nearest lower branch was used).
struct BranchCuda {
  Version cuda;
  bool exact = true;
  std::string source;
};
std::optional<BranchCuda> cuda_for_driver(const DriversKb& d, const Version& driver);

// The lowest driver branch whose CUDA is >= `cuda` (what to install); 0 when none.
int branch_for_cuda(const DriversKb& d, const Version& cuda);

// True when an NVML device name is a data-center GPU ("NVIDIA H200", "Tesla V100-SXM2-16GB").
bool is_datacenter_gpu(const DriversKb& d, const std::string& name);

const std::vector<NvmlErrorInfo>& nvml_errors(const Kb& kb);
const NvmlErrorInfo* find_nvml_error(const Kb& kb, int code);

}  // namespace cd
