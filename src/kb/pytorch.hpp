#pragma once
// PyTorch releases -> CUDA wheel variants, Python range, companion packages, and per
// wheel variant cuDNN/NCCL and shipped arch list (data/pytorch.toml).
#include <optional>
#include <string>
#include <vector>

#include "kb/kb.hpp"

namespace cd {

struct TorchRelease {
  std::string torch;         // "2.11"
  std::string torchvision;   // "0.26"
  std::string torchaudio;    // "2.11"
  std::vector<std::string> variants;  // "cu126", …, "cpu"
  std::string pypi_default;  // the variant plain `pip install torch` gets on Linux x86_64
  std::string python_min, python_max;
  std::string install;       // "index-url" / "extra-index-url"
  std::string source;
};

struct TorchWheel {
  std::string torch;         // "2.11"
  std::string variant;       // "cu130"
  std::string cudnn, nccl;
  std::vector<std::string> arch_list;  // ["sm_75", …, "compute_120"] (Linux x86_64)
  std::string arch_source;
  std::vector<std::string> arch_list_aarch64;  // Linux aarch64 (SBSA) wheels; empty = not recorded
  std::string arch_aarch64_source;
  std::string source;
};

// Variants the fixes name when the installed release says nothing better (data/pytorch.toml [defaults]).
struct TorchDefaults {
  std::string unknown_release = "cu128";  // the release is not in the table
  std::string upgrade = "cu130";          // "upgrade torch"
  std::string source;
};
const TorchDefaults& torch_defaults(const Kb& kb);

// Every release row, in the table's order (oldest first).
const std::vector<TorchRelease>& torch_releases(const Kb& kb);
// The release row for a torch version ("2.11.0+cu130" -> the "2.11" row).
std::optional<TorchRelease> torch_release(const Kb& kb, const std::string& torch_version);
// The wheel row for a torch version and variant ("cu130").
std::optional<TorchWheel> torch_wheel(const Kb& kb, const std::string& torch_version, const std::string& variant);
// https://download.pytorch.org/whl/<variant>
std::string torch_index_url(const Kb& kb, const std::string& variant);
// The variant of an installed torch: local tag ("cu130", "cpu") or, without one, the
// PyPI default of its release when it has CUDA (`cuda` = torch.version.cuda).
std::string torch_variant(const Kb& kb, const std::string& torch_version, const std::string& cuda);

}  // namespace cd
