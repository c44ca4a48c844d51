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

// A framework's CPU-only package and what replaces it (data/ecosystem.toml [[cpu_package]]).
struct CpuPackage {
  std::string name;    // "onnxruntime"
  std::string unless;  // its CUDA package; installed next to it, nothing is wrong ("" = none)
  std::string why;     // the evidence line
  std::vector<std::string> fix;  // "{python} -m pip …"
  std::string source;
};
const std::vector<CpuPackage>& cpu_packages(const Kb& kb);

// Whether `package` matches a name, or a prefix written with a trailing '*' ("nvidia-*").
bool package_pattern_matches(const std::string& pattern, const std::string& package);
// Whether the Python probe records `package` (data/ecosystem.toml [recorded]), and whether it
// reads its METADATA Requires-Dist ([metadata_read]).
bool package_recorded(const Kb& kb, const std::string& package);
bool metadata_read(const Kb& kb, const std::string& package);
// The position of `package` in the frameworks `check` names on an environment's line
// (data/ecosystem.toml [frameworks]); -1 for the packages it only counts.
int framework_rank(const Kb& kb, const std::string& package);
// Whether framework.pins_conflict checks this package's Requires-Dist pins (data/ecosystem.toml [pinned]).
bool pins_checked(const Kb& kb, const std::string& package);
// The row for an installed package version: an exact release row, else the longest series prefix.
std::optional<EcosystemPin> ecosystem_pin(const Kb& kb, const std::string& package, const std::string& version);
// Whether `torch_version` satisfies the pin (local tags ignored).
bool pin_satisfied(const EcosystemPin& pin, const std::string& torch_version);

}  // namespace cd

namespace cd {

// One Requires-Dist line: `cuda-toolkit[cublas,cudart]==13.0.2; platform_system == "Linux"`.
struct Requirement {
  std::string name;                 // normalised
  std::vector<std::string> extras;  // [cublas, cudart]
  std::string specifier;            // "==13.0.2", ">=2.2,<3"
  std::string marker;               // `platform_system == "Linux"`
  std::string text;                 // as written
};

// PEP 503 name normalisation: "Flash_Attn" -> "flash-attn".
std::string normalize_dist_name(std::string_view name);

Requirement parse_requirement(const std::string& line);
// Whether `version` satisfies every clause of a PEP 440 specifier (==, !=, >=, <=, >, <, ~=,
// ==X.*); an empty specifier allows anything. Local tags ("+cu130") are ignored.
bool specifier_allows(const std::string& specifier, const std::string& version);
// Marker evaluation for an installed Linux environment: false for other platforms/machines
// and for `extra == "X"` unless X is in `extras`; python_version clauses are not judged.
bool marker_applies(const std::string& marker, const std::string& machine, const std::vector<std::string>& extras);

}  // namespace cd
