#pragma once
// Packages built against one PyTorch (xformers, flash-attn, vLLM, SGLang): which torch
// each release needs (data/ecosystem.toml). Used when a package's own metadata has no pin.
#include <optional>
#include <string>
#include <vector>

#include "kb/kb.hpp"

namespace cd {

struct EcosystemPin {
  std::string package;   // "xformers"
  std::string version;   // "0.0.35" or a series prefix "2.7"
  std::string torch;     // "2.10.0"
  std::string match;     // "exact", "minor", "minimum"
  std::vector<std::string> cuda;  // wheel variants published
  std::string min_cuda;
  std::string source;
};

const std::vector<EcosystemPin>& ecosystem_pins(const Kb& kb);
// The row for an installed package version: an exact release row, else the longest series prefix.
std::optional<EcosystemPin> ecosystem_pin(const Kb& kb, const std::string& package, const std::string& version);
// Whether `torch_version` satisfies the pin (local tags ignored).
bool pin_satisfied(const EcosystemPin& pin, const std::string& torch_version);

}  // namespace cd
