#pragma once
// data/plan.toml: what `plan` needs beyond the version tables — which driver package fits
// which GPU, how conda and pixi get a PyTorch build, and the platforms (WSL2, Windows,
// Jetson) whose driver or wheels come from elsewhere. Each part keeps its source.
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
  std::string runfile_url, runfile_flags, runfile_apt, runfile_source;  // {version} {driver} {suffix} {mm} {major} {minor}
  int gib_per_job = 20, cores_per_job = 2;
  std::string max_jobs_source;
  std::vector<UvBackend> uv;
  std::string override_uv, override_conda, override_source;  // {variant} {driver} {cuda}
};

const PlanKb& plan_kb(const Kb& kb);

}  // namespace cd
