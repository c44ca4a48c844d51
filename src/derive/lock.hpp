#pragma once
// `cuda-doctor lock` and `plan --from cuda.lock`: what makes one environment work, written as
// a versioned document (schema cuda-doctor/lock/v1, docs/plan.md), and what differs on
// another machine with the commands that reproduce it. Both are derived from a model and the
// knowledge base (derive/lock.cpp); report/lock_text.cpp prints them and the requirements /
// environment.yml / pixi forms.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "derive/model.hpp"

namespace cd {

inline constexpr const char* kLockSchema = "cuda-doctor/lock/v1";

struct LockGpu {
  int sm = 0;
  std::string name;
};

struct LockPackage {
  std::string name;     // normalised distribution name
  std::string version;  // as installed (dist-info)
};

struct LockLibrary {
  std::string family, soname, version, path;
};

struct LockDoc {
  std::string schema = kLockSchema;
  std::string tool_version, created_at, hostname, os, arch;
  std::vector<LockGpu> gpus;
  std::string driver, driver_cuda;                // the machine's, as locked
  std::string driver_min, driver_compat_min;      // what torch's CUDA needs: directly / minor-version compatibility
  std::vector<std::string> gpu_archs;             // "sm_90" per distinct GPU
  std::string toolkit_version, toolkit_root;      // the toolkit CUDA_HOME / PATH select; "" = none
  std::string env_prefix, python_version;         // the locked environment
  std::string torch_version, torch_variant, torch_cuda, index_url;
  std::vector<std::string> arch_list;             // what torch was built for
  std::vector<LockPackage> packages;              // the CUDA-relevant packages of that environment
  std::vector<LockLibrary> libraries;             // the CUDA libraries its frameworks resolve
  std::map<std::string, std::string> env;         // the variables that matter, as set
};

// The lock of the model's default environment (else the first with torch); UsageError when the
// machine has no Python environment with CUDA packages.
LockDoc make_lock(const Model& m, const Kb& kb, const std::string& tool_version, const std::string& created_at);

nlohmann::json lock_json(const LockDoc& lock);
// Parses a lock; InputError (one line) on anything that is not a cuda-doctor/lock/v1 document.
LockDoc lock_from_text(const std::string& text, const std::string& origin);

// One thing the lock fixes, locked vs here.
struct LockDiffRow {
  std::string what;     // "driver", "GPU", "torch", "package nvidia-cudnn-cu13", "toolkit", "python", "env TORCH_CUDA_ARCH_LIST"
  std::string locked, here;
  bool same = false;
  std::string note;     // why it matters when it differs
  std::vector<std::string> commands;
};

struct LockDiff {
  std::string locked_on;  // "vm, 2026-12-02T17:17:00Z"
  std::vector<LockDiffRow> rows;
  int differences = 0;
};

LockDiff diff_lock(const LockDoc& lock, const Model& here, const Kb& kb);
nlohmann::json lock_diff_json(const LockDiff& d);

}  // namespace cd
