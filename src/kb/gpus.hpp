#pragma once
// GPU model <-> compute capability (data/gpus.toml), for `--gpu H100` / "RTX 4090" /
// sm_89 / 12.0 and for naming the architecture of a compute capability.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kb/kb.hpp"

namespace cd {

struct GpuModel {
  int sm = 0;                        // compute capability x 10: 90, 120
  std::string arch;                  // "Hopper"
  std::string segment;               // "datacenter", "jetson", …
  std::vector<std::string> names;    // "H100", "RTX 4090"
  std::string source;
  std::string first_cuda;            // the first toolkit that targets it ("12.8"); "" = not recorded
  std::string first_cuda_source;
  int last_driver_branch = 0;        // the last driver branch that supports it (580); 0 = still supported
  std::string last_driver_source;
};

const std::vector<GpuModel>& gpu_models(const Kb& kb);

// What `--gpu` names: the compute capability and a display name.
struct GpuQuery {
  int sm = 0;
  std::string name;  // "H100" / "RTX 4090"; "" for sm_89 / 12.0
  std::string arch;  // "Ada Lovelace" when known
};

// "sm_89", "sm_90a", "compute_90", "8.9", "12.0", "89", "H100", "NVIDIA GeForce RTX 4090",
// "A100-SXM4-80GB". nullopt when nothing matches.
std::optional<GpuQuery> find_gpu(const Kb& kb, std::string_view text);

// The model row of a compute capability (first row with that sm); nullptr when unknown.
const GpuModel* gpu_model_for_sm(const Kb& kb, int sm);

// "sm_90" / "9.0" for a compute capability x 10.
std::string sm_name(int sm);
std::string cc_name(int sm);

}  // namespace cd
