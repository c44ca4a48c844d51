#pragma once
// The Linux distribution of the machine, as the driver advice needs it (derive/distro.cpp).
#include <string>

#include "kb/plan.hpp"

namespace cd {

// The Linux distribution and how it installs the driver (derive/distro.cpp): /etc/os-release
// matched against data/plan.toml [[driver_install]].
struct DistroModel {
  const DriverInstallKb* row = nullptr;  // the row os-release matches; nullptr: none does
  bool host_known = false;     // row is the driver's host (false in a container: its os-release is the image's)
  bool unlisted = false;       // os-release names a distribution no row covers: NVIDIA's guide, not a guess
  std::string label;           // "Debian 12", "Ubuntu 24.04"; "" when no row matches
  int major = 0;               // VERSION_ID's major
  std::string codename;        // VERSION_CODENAME
  std::string pm() const { return row && !row->pm.empty() ? row->pm : "apt"; }  // package manager
};

}  // namespace cd
