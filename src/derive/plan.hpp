#pragma once
// `cuda-doctor plan`: the ordered steps to a working stack for one machine — this one, a
// recorded one (--facts) or one described on the command line (--gpu, --driver, --os).
// A plan is derived, never observed: PlanRequest says what the machine is (GPUs, driver,
// OS, Python, the torch already installed) and what is asked (purpose, a torch pin);
// make_plan() decides every step from the knowledge base (derive/plan.cpp); report/plan_text
// only prints it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "binary/verdict.hpp"
#include "derive/distro.hpp"
#include "kb/kb.hpp"
#include "util/version.hpp"

namespace cd {

// The torch an environment of the machine already has.
struct InstalledTorch {
  std::string version;                 // "2.11.0+cu130"
  std::string variant;                 // "cu130", "cpu"
  std::vector<std::string> arch_list;  // what it was built for (--deep, else the kb's record)
  std::string arch_source;
  std::string env;     // its environment's prefix
  std::string python;  // the command that runs that environment's Python
};

// A CUDA toolkit of the machine, for --for build.
struct PlanToolkit {
  std::string version;  // "13.0.88"
  std::string root;     // /usr/local/cuda-13.0
  int host_gcc_max = 0; // its own host_config.h limit; 0 = unknown
};

struct PlanRequest {
  std::string purpose = "run";          // what the stack is for: run | build
  std::vector<GpuTarget> gpus;          // one per distinct architecture
  std::vector<uint64_t> gpu_memory_mib; // same order as gpus; 0 = unknown
  std::string gpu_source;               // "this machine", "--gpu", "--facts FILE"
  bool has_driver = false;
  Version driver;                       // the driver's version; may be empty with has_driver (only its CUDA given)
  Version driver_cuda;                  // the newest CUDA it runs; empty = unknown
  std::string driver_source;            // "NVML", "--driver", "none"
  std::string os = "linux";             // linux | wsl | windows
  std::string host_arch = "x86_64";     // x86_64 | aarch64
  bool container = false;               // the driver belongs to the host
  DistroModel distro;                   // the machine's distribution (driver commands); unknown without one
  std::string python;                   // "3.12"; "" = any
  std::string python_source;            // "--python", "the default environment", ""
  std::string torch_pin;                // "2.5" or "2.5.1"; "" = the newest that works
  std::string installer = "pip";        // pip | uv | conda | pixi
  bool installer_given = false;         // --installer named one: show only its command
  std::vector<InstalledTorch> installed;  // the default environment's torch first
  // --for build
  int cpus = 0;                         // 0 = unknown
  uint64_t memory_mib = 0;              // 0 = unknown
  std::vector<PlanToolkit> toolkits;
  std::string host_gcc;                 // version of the gcc nvcc would use ("13.3.0"); "" = unknown
  std::string torch_cuda_arch_list;     // the environment's TORCH_CUDA_ARCH_LIST, "" = unset
  bool ci = false;                      // no GPU here on purpose (--gpu on a GPU-less build machine)
};

// How a CUDA build runs on a driver.
enum class RunMode { none, direct, minor_compat };
const char* run_mode_name(RunMode m);  // "direct", "minor-version compatibility", "no"

// One torch release × wheel variant judged for the request.
struct TorchCandidate {
  std::string release;   // "2.14"
  std::string variant;   // "cu130"
  Version cuda;          // 13.0
  RunMode mode = RunMode::none;
  std::vector<Verdict> per_gpu;  // request.gpus order: native, jit, no_kernel_image
  bool arch_list_known = true;
  std::string arch_source;
  bool ok = false;
  std::string why_not;   // "no kernels for sm_61", "needs driver >= 580.65.06 (CUDA 13.0)"
};

struct PlanStep {
  std::string id;                     // "driver", "torch"
  std::string status;                 // "ok" (nothing to do), "do" (run the commands), "blocked", "info"
  std::string title;                  // one line
  std::vector<std::string> details;   // why, one line each
  std::vector<std::string> commands;  // to paste, in order ("# …" lines are comments)
  std::vector<std::string> sources;   // the knowledge rows the step rests on
};
void to_json(nlohmann::json& j, const PlanStep& s);

struct TorchPlan {
  bool found = false;
  TorchCandidate pick;
  std::string spec;        // "torch==2.14.*"
  std::string index_url;   // https://download.pytorch.org/whl/cu130
  std::string index_flag;  // "--index-url" / "--extra-index-url"
  Version driver_min;      // the driver that runs it directly (Table 3, this OS)
  std::string driver_min_text;  // "" when not published for this OS
  Version compat_floor;    // minor-version compatibility floor of its CUDA major
};

struct Plan {
  PlanRequest request;
  std::vector<PlanStep> steps;
  TorchPlan torch;
  TorchPlan nearest;                  // a pin that cannot work: the nearest release that does
  std::vector<std::string> skipped;   // newer releases passed over, each with why
  bool satisfiable = true;            // false: no build fits (the steps say why)
  int driver_branch = 0;              // the branch to install; 0 = keep the driver
  Version planned_driver_cuda;        // the CUDA of the driver the plan runs on
  // --for build: what a CUDA extension is compiled with.
  Version build_cuda;                 // torch.version.cuda of the torch built against: the toolkit's major.minor
  std::string arch_list;              // TORCH_CUDA_ARCH_LIST for the GPUs: "8.0;8.6;8.9"
  int max_jobs = 0;                   // 0 = unknown (no memory or cores known)
  std::string max_jobs_rule;
};

// --for build: the toolkit and environment steps (derive/plan_build.cpp), appended to `plan`.
void add_build_steps(Plan& plan, const Kb& kb);
// What uv / conda / pixi would do here and the overrides for a machine without the GPU;
// added when `always` (--for build) or when uv would install a build without kernels for a GPU.
void add_tool_step(Plan& plan, const Kb& kb, bool always);
// MAX_JOBS for nvcc-heavy extensions: min(cpus / cores_per_job, memory GiB / gib_per_job), at
// least 1; 0 when the CPUs or the memory are unknown.
int max_jobs_for(int cpus, uint64_t memory_mib, int gib_per_job, int cores_per_job);

// Every decision of the plan. Throws UsageError (exit 3) on a pin the knowledge base does not know.
Plan make_plan(const PlanRequest& request, const Kb& kb);

// The torch release rows a pin names: "2.5", "2.5.1", "torch==2.5.1"; "" for "torch". UsageError
// when it is not torch or not a version.
std::string parse_torch_pin(const std::string& framework);

nlohmann::json plan_json(const Plan& plan);

}  // namespace cd
