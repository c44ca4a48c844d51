#pragma once
// The checklist `check` opens with: one item per part of the stack a user asks about (the
// driver, each GPU, each toolkit, each Python environment with CUDA packages), each with the
// worst finding about it, so a healthy machine reads as healthy at a glance.
//
// A finding belongs to an item by its layer (driver/platform → the driver; device, memory,
// perf, nccl → a GPU; toolkit → a toolkit; framework, arch, libs → an environment) and by the
// item's key appearing in its subject or evidence (GPU index, toolkit root, environment
// prefix). A finding that names no item of its layer goes to that layer's first item, so no
// item reads ✓ while an error about its layer is listed below it.
#include <map>
#include <string>
#include <vector>

#include "derive/model.hpp"
#include "facts/finding.hpp"

namespace cd {

struct CheckItem {
  enum class Kind {
    driver,      // the driver and its CUDA version (or its absence)
    gpu,         // index: model.gpus
    no_gpu,      // no GPU visible
    toolkit,     // index: facts.toolkit.toolkits
    no_toolkit,  // none found (prebuilt framework wheels need none)
    env,         // index: model.envs; a Python environment with CUDA packages
  };
  Kind kind = Kind::driver;
  size_t index = 0;
  Severity state = Severity::ok;          // the worst error or warning attached; ok otherwise
  std::vector<const Finding*> findings;  // attached, in report order

  // env: the frameworks named on its line (data/ecosystem.toml [frameworks], in that order)
  // and how many other CUDA packages it has.
  std::vector<const PythonPackage*> frameworks;
  int other_packages = 0;
  // env: its scanned binaries' verdicts per GPU target, binaries counted once per verdict.
  struct Kernels {
    const GpuTarget* target = nullptr;
    std::map<Verdict, int> binaries;
  };
  std::vector<Kernels> kernels;
};

struct Checklist {
  std::vector<CheckItem> items;
  std::vector<const EnvModel*> plain_envs;  // environments without CUDA packages: counted
  // What the default report lists: every error and warning (errors first), at most
  // `kShownFindings`; the rest, and every info finding, are counted and shown with -v.
  std::vector<const Finding*> shown;
  int not_shown = 0;  // errors and warnings beyond the cap
  int errors = 0, warnings = 0, info = 0;
};

inline constexpr size_t kShownFindings = 12;

Checklist checklist(const Model& m, const std::vector<Finding>& findings, const Kb& kb);

}  // namespace cd
