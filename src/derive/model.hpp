#pragma once
// The model of one machine: what follows from the observations (Facts) and the knowledge
// base (Kb), each value computed by exactly one function in this folder. Facts hold
// observations only; a replay with a newer knowledge base derives today's answers.
// Rules and renderers read the model; subcommands build it once with derive().
#include <optional>
#include <string>
#include <vector>

#include "binary/file_scan.hpp"
#include "binary/verdict.hpp"
#include "facts/facts.hpp"
#include "kb/kb.hpp"
#include "derive/distro.hpp"
#include "util/version.hpp"

namespace cd {

// The driver as its best source knows it (derive/driver.cpp).
struct DriverModel {
  bool found = false;          // any sign of a driver: module, libraries or GPUs
  Version version;             // NVML's, else the kernel module's, else the linked libcuda's; empty = unknown
  std::string version_source;  // "NVML", "/proc/driver/nvidia/version", a library path
  Version cuda;                // the newest CUDA the driver supports; empty = unknown
  std::string cuda_source;     // "cuDriverGetVersion", "nvmlSystemGetCudaDriverVersion", "knowledge base: …"
  int cuda_int() const { return cuda.empty() ? 0 : cuda.cuda_int(); }  // 13000
};

// One GPU of facts.driver.gpus with what follows from it.
struct MachineGpu {
  const GpuInfo* info = nullptr;
  int index = 0;      // CUDA's number for it, else NVML's
  int sm = 0;         // 90
  std::string label;  // "sm_90 (NVIDIA H200)"
};

// GPU device nodes and containers (derive/platform.cpp).
// Whether an installed kernel has an NVIDIA module modprobe can load (its modules.dep).
enum class ModuleFile { unknown, present, missing };

// Why the installed NVIDIA kernel module is not loaded, when the files say it.
enum class ModuleBlocker {
  none,
  not_built,    // no nvidia module for the running kernel (DKMS did not build it)
  secure_boot,  // Secure Boot is on and the running kernel's module carries no signature
  nouveau,      // nouveau is loaded (and holds the GPU)
};

// Two GPUs and the PCIe path between them (derive/topology.cpp).
struct GpuPair {
  size_t a = 0, b = 0;                  // indexes into facts.platform.topology.gpus
  std::string relation;                 // "same PCIe switch", "same root port", "same host bridge", "same NUMA node",
                                        // "different NUMA nodes", "unknown" (NCCL's PIX/PXB, PHB, NODE, SYS)
  const PciBridge* common = nullptr;    // the deepest bridge both paths share (none: they meet in the root complex)
  std::vector<const PciBridge*> redirecting;  // bridges below it whose ACS control redirects P2P to the root complex
  bool acs_unknown = false;             // a bridge below it whose ACS control could not be read
};

struct TopologyModel {
  std::vector<GpuPair> pairs;
  bool iommu_on = false;          // IOMMU groups exist
  bool iommu_passthrough = false; // iommu=pt / iommu.passthrough=1 on the command line
  std::vector<const NetInterface*> up;   // interfaces up (or "unknown" with a carrier-less driver), physical first
  const NetInterface* route = nullptr;   // the one carrying the IPv4 default route
  std::vector<const IbDevice*> ib_active;  // with a port in state ACTIVE
  std::vector<const IbDevice*> ib_down;    // with no ACTIVE port
};

struct PlatformModel {
  bool gpu_device_nodes = false;        // /dev/nvidia0 … present
  bool container_without_gpus = false;  // a container not given the host's GPUs
  bool machine_has_gpu = false;         // a GPU, an NVIDIA PCI device or a loaded module
  bool cuda_sees_no_gpu = false;        // cuInit found no device (CUDA_VISIBLE_DEVICES, missing nodes)

  // Driver forensics (derive/driver_install.cpp).
  bool driver_installed = false;        // user-space libraries, a module file or a DKMS module
  std::string library_version;          // the driver version of the libraries the loader uses ("" none)
  const PackageEvent* library_change = nullptr;  // the newest package change that installed library_version
  std::string library_change_by;        // who made it (its transaction's, or a record of the same minute)
  std::vector<std::string> driver_packages;  // NVIDIA driver packages the logs say are installed now
  bool packages_from_dnf = false;       // those logs are dnf's (versionlock, not apt-mark hold)
  std::string running_kernel;           // facts.host.kernel
  ModuleFile running_kernel_module = ModuleFile::unknown;
  const KernelModuleFile* running_module = nullptr;
  std::string newest_kernel;            // the newest installed kernel, when newer than the running one
  ModuleFile newest_kernel_module = ModuleFile::unknown;
  bool nouveau_blacklisted = false;
  ModuleBlocker module_blocker = ModuleBlocker::none;

  TopologyModel topology;
};

// What --deep learned of JAX in one environment (derive/envs.cpp). The report shows the
// state and the message without reading JAX's words; rules/framework reports the failures.
enum class JaxState {
  not_run,        // --deep did not run JAX here (no --deep, or no jax CUDA plugin installed)
  no_answer,      // it ran and reported neither a backend nor an error
  gpu,            // JAX runs on the GPU (any backend but "cpu")
  import_failed,  // `import jax` / jax.devices() raised: `message` is the error
  cpu_fallback,   // on the CPU although the machine has a GPU CUDA sees and nothing asked for the CPU:
                  // the CUDA plugin did not load (framework.import_failed)
  cpu_asked,      // on the CPU because JAX_PLATFORMS names no cuda/gpu platform
  cpu_no_gpu,     // on the CPU because there is no GPU, or CUDA sees none (device.not_visible says why)
};
const char* jax_state_name(JaxState s);  // "cpu_fallback"

struct JaxModel {
  JaxState state = JaxState::not_run;
  std::string version;  // jax.__version__, "" when unknown
  std::string backend;  // jax.default_backend(): "gpu", "cpu"; "" when it never got that far
  std::string message;  // import_failed: the error; otherwise JAX's own fallback message, "" when none
  // `message` is JAX's fallback log line, its guess at the cause ("a CUDA-enabled jaxlib is not
  // installed" even when CUDA_VISIBLE_DEVICES hides the GPUs): show it as JAX's words.
  bool message_is_jax_guess = false;
  bool failed() const { return state == JaxState::import_failed || state == JaxState::cpu_fallback; }
};

// One library of data/libraries.toml marked `main` (cudart, cuBLAS, cuDNN, NCCL) as an
// environment's frameworks load it, by its main soname (not cuDNN's sub-libraries).
struct MainLibrary {
  const LibraryResolution* resolution = nullptr;
  std::string family;    // "cudnn"
  std::string soname;    // "libcudnn.so.9"
  bool found = false;    // false: the loader finds no file for it
  std::string version;   // of the file loaded ("9.19.0.56"); "" when unknown or not found
  std::string realpath;  // the file loaded; "" when not found
  std::string via;       // how the loader found it: "RPATH", "ld.so.cache", … (LibraryResolution::via)
};

// One Python environment with what follows from it (derive/envs.cpp).
struct EnvModel {
  const PythonEnv* env = nullptr;
  std::string python;                   // the command that runs it: its interpreter, else PREFIX/bin/python
  std::string torch_variant;            // "cu130", "cpu"; "" without torch
  std::vector<std::string> torch_arch_list;  // what torch was built for: --deep's answer, else the kb's record
  std::string torch_arch_list_source;
  std::vector<const LibraryResolution*> resolutions;  // the libraries its frameworks resolve
  std::vector<MainLibrary> main_libraries;  // the `main` families among them, in resolution order, one per soname
  JaxModel jax;                             // --deep's JAX run
};

// One measurement of facts.verify next to its expected figure (derive/verify.cpp): the
// perf.below_expected rule and the verify/bench tables read the same judgement.
struct MeasurementModel {
  const Measurement* measurement = nullptr;
  double percent = 0;           // of the expected figure; 0 when none is known
  bool below_expected = false;  // under the knowledge base's threshold (a fraction of the expected figure)
};

// Where a GPU process lives, from its cgroup path and environment (derive/processes.cpp).
struct ProcessPlace {
  std::string container_runtime;  // "docker", "containerd", "cri-o", "podman"; "" = not in a container
  std::string container_id;       // the full id from the cgroup path
  std::string pod_uid;            // Kubernetes pod (kubepods…pod<uid>); "" otherwise
  std::string slurm_job;          // SLURM_JOB_ID, else job_N of the cgroup path
  std::string systemd_unit;       // the last *.service / *.scope of the path that is not a container's
  std::string label;              // one line for people: "k8s pod 1b2c… container 3f2a1b0c4d5e (containerd)"
};
ProcessPlace process_place(const std::string& cgroup, const std::string& slurm_job_id);

enum class ProcState { running, sleeping, stopped, zombie, disk_sleep, gone, not_visible, unknown };
const char* proc_state_name(ProcState s);  // "stopped", "D (uninterruptible)", "not visible here"

// One process of facts.driver.processes with what follows from it (derive/processes.cpp).
struct GpuProcessModel {
  const GpuProcess* process = nullptr;
  int gpu = -1;             // index into Model::gpus; -1 when its uuid matches none
  ProcState state = ProcState::unknown;
  bool own = false;         // same uid as cuda-doctor
  double age_s = -1;        // since it started; -1 unknown
  double idle_s = -1;       // since its last GPU activity sample; -1 unknown
  bool idle_lower_bound = false;  // no activity sample at all: idle at least idle_s (NVML's buffer span)
  int container_pid = -1;   // its PID inside its own PID namespace (NSpid's last entry), when nested
  ProcessPlace place;
};

// Per GPU: the memory NVML says is used against what its processes account for.
struct GpuMemoryModel {
  uint64_t accounted_mib = 0;    // sum of the listed processes' memory on it
  uint64_t unaccounted_mib = 0;  // used − accounted (used excludes the driver's reserve when NVML gives it)
  bool near_full = false;        // used + reserved ≥ 95 % of total
};

struct Model {
  explicit Model(const Facts& f) : facts(f) {}
  const Facts& facts;
  DriverModel driver;
  std::vector<MachineGpu> gpus;     // one per facts.driver.gpus, same order
  std::vector<GpuTarget> targets;   // one per distinct architecture: what binaries are judged for
  DriverTarget driver_target;       // the driver's limits for the verdicts
  std::vector<std::vector<GpuVerdict>> verdicts;  // [binary of facts.binaries][target]
  PlatformModel platform;
  DistroModel distro;
  std::vector<EnvModel> envs;       // one per facts.pythons, same order
  std::vector<MeasurementModel> measurements;  // one per facts.verify.measurements, same order
  std::vector<GpuProcessModel> processes;  // one per facts.driver.processes, same order
  std::vector<GpuMemoryModel> gpu_memory;  // one per gpus, same order
  // Processes with /dev/nvidia* open that NVML lists on no GPU (the fuser answer minus the contexts).
  std::vector<const DeviceHolder*> holders_without_context;

  const EnvModel& env(const PythonEnv& py) const;  // py must be one of facts.pythons
  // The environment whose site-packages holds `path` (longest match); nullptr when none.
  const EnvModel* env_for_path(const std::string& path) const;
};

// Everything above, for these facts. The model refers to `facts`: keep them alive.
Model derive(const Facts& facts, const Kb& kb);
Model derive(Facts&&, const Kb&) = delete;

// check's question of the binaries while the scan still runs (probe ScanFocus), from the driver
// child's first answer: SASS native on every local GPU settles a container (native_on_all).
// Nothing when there is no GPU or one whose architecture is unknown: then everything is read.
std::optional<bin::ReadFocus::Question> scan_question(const DriverFacts& d, const Kb& kb);

// The facts as `check --json` writes them: observations plus the verdicts per binary
// (schema cuda-doctor/facts/v1, docs/json-schema.md).
nlohmann::json facts_json(const Model& m);

}  // namespace cd
