#pragma once
// Toolkits as `toolkits` lists them and `use` switches between them (derive/toolkits.cpp).
// Each derived value has its home here: what each toolkit can target and which host
// compilers it accepts (its own host_config.h, else data/toolkits.toml), whether this
// driver runs what it builds, which toolkit a request (`12`, `12.4`, `12.4.1`, a path,
// `torch`, `latest`) names, and the variables `use` / `use --off` set.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "derive/model.hpp"

namespace cd {

// Whether the driver runs what a toolkit builds.
enum class DriverFit {
  unknown,       // no driver known
  runs,          // the driver's CUDA ≥ the toolkit's
  minor_compat,  // same major, newer minor: runs through minor-version compatibility (SASS only, no newer-PTX JIT)
  too_old,       // the driver cannot run it
};
const char* driver_fit_name(DriverFit f);  // "runs", "minor-version compatibility", "too old", "unknown"

struct ToolkitView {
  const Toolkit* tk = nullptr;
  Version version;               // empty when unknown
  int gcc_max = 0;               // highest gcc major its nvcc accepts; 0 unknown
  int clang_max = 0;
  std::string compiler_limit_source;  // its host_config.h or "data/toolkits.toml: …"
  int sm_min = 0, sm_max = 0;    // compute capability × 10 it can target (data/toolkits.toml); 0 unknown
  std::string arch_source;
  DriverFit driver = DriverFit::unknown;
  Version driver_cuda;           // the driver's CUDA it was judged against
  Version driver_needed;         // the lowest driver that runs it natively (data/cuda_drivers.toml); empty unknown
  bool usable = false;           // has nvcc: `use` can switch to it
};

ToolkitView toolkit_view(const Toolkit& tk, const DriverModel& driver, const Kb& kb);
// One per facts.toolkit.toolkits, same order.
std::vector<ToolkitView> toolkit_views(const Facts& f, const DriverModel& driver, const Kb& kb);

// What a `use` request names.
struct ToolkitPick {
  const Toolkit* toolkit = nullptr;  // the match
  std::string error;                 // one line when there is none
  Version missing;                   // a well-formed version that is not installed (install commands follow)
};
// `spec`: "12", "12.4", "12.4.1" (newest installed with nvcc whose version starts so), an absolute path
// (the toolkit whose root it is), "torch" (matches `torch_cuda`, the active torch's CUDA; "" = no torch),
// "latest". Paths must already be among `toolkits` (cmd_use reads a named path with probe_toolkit_at).
ToolkitPick pick_toolkit(const std::vector<Toolkit>& toolkits, const std::string& spec, const std::string& torch_cuda);

// The torch `use torch` and the checks mean: the active environment's (VIRTUAL_ENV / CONDA_PREFIX),
// else the default python3's; nullptr when none has a CUDA torch.
const PythonEnv* active_torch_env(const Facts& f);

// The facts as they would read after `use`: `target` selected by PATH, CUDA_HOME, CUDA_PATH and
// LD_LIBRARY_PATH; besides it only the conda toolkits stay (an active env's may shadow it), and
// only `torch_env` of the Python environments. use_rules() judges this.
Facts as_if_used(const Facts& f, const Toolkit& target, const PythonEnv* torch_env);

// Install commands for a CUDA version that is not installed: runfile (toolkit only, never the
// driver or the /usr/local/cuda link), NVIDIA's repository with the distribution's package
// manager, conda, pip.
std::vector<std::string> install_commands(const Version& cuda, const Kb& kb, const DistroModel& distro);
// Why no install command can be given for `cuda`: "" when NVIDIA released it (its major, or its
// major.minor, is in the knowledge base's release table), else one line — a version never
// released (with the nearest releases), or older or newer than any release the knowledge base knows.
std::string release_problem(const Version& cuda, const Kb& kb);

// `use VERSION --system`: the commands (and the /etc/profile.d/cuda.sh text) that make `target` the
// default for every user and login shell, as shell lines with # comments; nothing is run.
// Toolkits under /usr/local go through the /usr/local/cuda link (update-alternatives when the
// machine uses it, else ln -sfn); others are named directly.
std::vector<std::string> system_commands(const Toolkit& target, const ToolkitFacts& t);

// One variable `use` sets: a value, or unset (nullopt). `list`: a colon-separated search path
// (fish writes those as lists).
struct EnvAssign {
  std::string name;
  std::optional<std::string> value;
  bool list = false;
};

struct ShellPlan {
  std::vector<EnvAssign> vars;
  bool rehash = false;               // PATH changed: forget the shell's cached command locations
  std::vector<std::string> removed;  // PATH / LD_LIBRARY_PATH entries of other toolkits it drops
  std::string note;                  // for stderr: why it did less than asked ("nothing to undo")
};

using EnvMap = std::map<std::string, std::string>;

// Variables that keep what was there before the first `use` (so `--off` can restore it).
inline constexpr const char* kOrigVars = "_CUDA_DOCTOR_ORIG_VARS";  // names of those that were set
inline constexpr const char* kActiveVar = "_CUDA_DOCTOR_TOOLKIT";   // the toolkit `use` put first
std::string saved_name(const std::string& var);                      // "PATH" -> "_CUDA_DOCTOR_PATH_WAS"

// `use`: CUDA_HOME and CUDA_PATH = the toolkit, its bin first on PATH, its lib dir first on
// LD_LIBRARY_PATH, every other toolkit's entries removed (its own too, then put first: idempotent),
// every other entry kept in order. `resolved` maps PATH / LD_LIBRARY_PATH entries to their real
// paths (ToolkitFacts::resolved_dirs) so /usr/local/cuda/bin counts as the toolkit it points at.
ShellPlan plan_use(const std::vector<Toolkit>& toolkits, const Toolkit& target, const EnvMap& env,
                   const std::map<std::string, std::string>& resolved);
// `use --off`: what was there before the first `use`; when PATH or LD_LIBRARY_PATH changed since,
// only the entries `use` added are removed.
ShellPlan plan_off(const std::vector<Toolkit>& toolkits, const EnvMap& env,
                   const std::map<std::string, std::string>& resolved);

}  // namespace cd
