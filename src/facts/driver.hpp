#pragma once
// Layer 1: the kernel driver, its user-space libraries, the GPUs and the platform
// (container, WSL) around them.
#include <cstdint>
#include <string>
#include <vector>

#include "facts/json.hpp"
#include "facts/platform.hpp"

namespace cd {

struct DriverLibrary {
  std::string kind;     // "libcuda", "libnvidia-ml"
  std::string path;     // in-root path of the versioned file
  std::string version;  // from the file name: libcuda.so.580.159.04 -> 580.159.04
  bool stub = false;    // a toolkit stub (…/stubs/libcuda.so)
  bool compat = false;  // a cuda-compat forward-compatibility copy (…/compat/libcuda.so.X)
  bool linked = false;  // the soname link (libcuda.so.1) in its directory points at this file
  std::string found_via;  // "default dir", "ld.so.conf", "LD_LIBRARY_PATH"
};
CD_JSON(DriverLibrary, kind, path, version, stub, compat, linked, found_via)

struct PciGpu {
  std::string address;    // 0000:3b:00.0
  std::string device_id;  // 0x2335
  std::string class_id;   // 0x030200
  std::string driver;     // bound kernel driver ("nvidia", "nouveau", "vfio-pci", "" = none)
};
CD_JSON(PciGpu, address, device_id, class_id, driver)

struct GpuInfo {
  int nvml_index = -1;
  int cuda_index = -1;  // order CUDA enumerates it in (CUDA_DEVICE_ORDER matters)
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
  int cc_major = 0;
  int cc_minor = 0;
  uint64_t memory_total_mib = 0;
  uint64_t memory_used_mib = 0;
  uint64_t memory_free_mib = 0;
  uint64_t memory_reserved_mib = 0;  // nvmlDeviceGetMemoryInfo_v2: the driver's own, not in `used`
  int multiprocessors = 0;
  std::string persistence_mode;  // "on" / "off" / ""
  std::string compute_mode;      // "default" / "exclusive_process" / "prohibited"
  std::string mig_mode;          // "enabled" / "disabled" / "" (not supported)
  int64_t ecc_uncorrected_volatile = -1;  // -1: not available
  int64_t ecc_corrected_volatile = -1;
  int64_t retired_pages_pending = -1;    // 1: pages retired, a reset/reboot pending (pre-Ampere)
  int64_t remapped_rows_pending = -1;    // 1: rows remapped, a reset pending (Ampere and later)
  int64_t remapping_failed = -1;         // 1: row remapping failed (the GPU needs service)
  int pcie_gen_current = 0, pcie_gen_max = 0;
  int pcie_width_current = 0, pcie_width_max = 0;
  // The oldest process-utilization sample NVML still held when asked (unix µs; 0: none),
  // i.e. how far back "no sample for this process" reaches.
  uint64_t process_samples_from_us = 0;
};
CD_JSON(GpuInfo, nvml_index, cuda_index, name, uuid, pci_bus_id, cc_major, cc_minor, memory_total_mib, memory_used_mib,
        memory_free_mib, memory_reserved_mib, multiprocessors, persistence_mode, compute_mode, mig_mode, ecc_uncorrected_volatile, ecc_corrected_volatile,
        retired_pages_pending, remapped_rows_pending, remapping_failed, pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max,
        process_samples_from_us)

struct GpuProcess {
  int pid = 0;             // as NVML reports it: a PID of the host's PID namespace
  std::string gpu_uuid{};
  uint64_t used_mib = 0;
  std::string name{};    // comm (/proc/PID/comm), "" when the process is gone
  bool alive = true;   // false: NVML lists it but /proc has no such process
  bool zombie = false;
  std::string type = "compute";  // "compute" / "graphics" (which NVML list named it)
  int gpu_instance_id = -1;      // MIG instance (-1: none / not MIG)
  int compute_instance_id = -1;
  // NVML process utilization samples (nvmlDeviceGetProcessUtilization): the newest sample
  // with SM or memory activity (unix µs; 0: none in NVML's buffer) and its SM %.
  uint64_t last_active_us = 0;
  int sm_util = -1;
  // From /proc/PID (under --root): empty / -1 when the process is gone or unreadable.
  std::string state{};   // the stat state letter: R S D T t Z I …
  int ppid = -1;
  int uid = -1;        // real uid (status Uid:)
  std::string user{};    // uid's name from /etc/passwd under --root ("" unknown)
  std::string cmdline{}; // NULs as spaces, capped
  double start_unix = 0;  // boot time (/proc/stat btime) + stat starttime / CLK_TCK
  std::vector<int> nspid{}; // status NSpid: this namespace's PID first, then nested namespaces' (a container's)
  std::string cgroup{};     // /proc/PID/cgroup, as written (capped)
  std::string slurm_job_id{};  // SLURM_JOB_ID from /proc/PID/environ when readable (only that variable is kept)
};
CD_JSON(GpuProcess, pid, gpu_uuid, used_mib, type, gpu_instance_id, compute_instance_id, last_active_us, sm_util, name,
        alive, zombie, state, ppid, uid, user, cmdline, start_unix, nspid, cgroup, slurm_job_id)

// A process with an NVIDIA device file open (/proc/PID/fd → /dev/nvidia*): the `fuser -v
// /dev/nvidia*` answer, which includes processes without a GPU context (NVML lists none).
struct DeviceHolder {
  int pid = 0;
  int uid = -1;
  std::string user{};
  std::string name{};  // comm
  std::string cmdline{};
  std::vector<std::string> devices{};  // "/dev/nvidia0", "/dev/nvidiactl"
  std::vector<int> nspid{};
};
CD_JSON(DeviceHolder, pid, uid, user, name, cmdline, devices, nspid)

struct DriverFacts {
  // Kernel module (files; works when NVML does not).
  bool module_loaded = false;
  std::string module_version;         // "580.159.04"
  std::string module_version_source;  // "/proc/driver/nvidia/version"
  std::vector<DriverLibrary> libraries;
  // NVML, queried in a child process.
  std::string nvml_driver_version;
  int nvml_status = -1;  // nvmlInit result: 0 ok, -1 not tried
  std::string nvml_error;
  std::string nvml_library;     // which libnvidia-ml the child loaded
  int nvml_cuda_driver_version = 0;  // nvmlSystemGetCudaDriverVersion_v2
  // Driver API, queried in a child process.
  int cuda_driver_version = 0;  // cuDriverGetVersion: 13000
  int cu_init_status = -1;      // cuInit result: 0 ok, -1 not tried
  std::string cu_init_error;    // "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
  std::string libcuda_loaded;   // which libcuda.so.1 the loader picked (dlinfo)
  int cuda_device_count = -1;   // cuDeviceGetCount under this CUDA_VISIBLE_DEVICES; -1 not asked
  std::string query_error;      // the child failed: "timed out after 10 s", "killed by SIGSEGV"
  std::vector<GpuInfo> gpus;
  std::vector<PciGpu> pci_gpus;  // NVIDIA devices on the PCI bus (vendor 0x10de)
  int pci_devices_seen = 0;      // PCI devices of any vendor listed (0: the bus was not readable)
  std::vector<GpuProcess> processes;
  std::vector<std::string> device_nodes;  // /dev/nvidia0, /dev/nvidiactl, /dev/nvidia-uvm …
  double queried_unix = 0;   // when NVML was asked (unix seconds): ages and idle times count from here
  int viewer_uid = -1;       // the uid cuda-doctor ran as (whose processes are "own")
  bool holders_scanned = false;       // ps: /proc/*/fd was scanned for device files
  std::vector<DeviceHolder> device_holders;
  // When NVML or cuInit failed: the device nodes the child could not open(2), with why
  // ("/dev/nvidiactl: Operation not permitted" = the cgroup denies them).
  std::vector<std::string> device_open_errors;
};
CD_JSON(DriverFacts, module_loaded, module_version, module_version_source, libraries, nvml_driver_version, nvml_status,
        nvml_error, nvml_library, nvml_cuda_driver_version, cuda_driver_version, cu_init_status, cu_init_error,
        libcuda_loaded, cuda_device_count, query_error, gpus, pci_gpus, pci_devices_seen, processes, device_nodes,
        queried_unix, viewer_uid, holders_scanned, device_holders, device_open_errors)

// A directory on the library search path that holds something notable (a stub libcuda,
// a cuda-compat libcuda).
struct SearchPathDir {
  std::string dir;
  std::string via;                  // "LD_LIBRARY_PATH", "/etc/ld.so.conf.d/cuda.conf"
  std::vector<std::string> files;   // "libcuda.so", "libcuda.so.1"
};
CD_JSON(SearchPathDir, dir, via, files)

struct PlatformFacts {
  std::string container;  // "docker" / "podman" / "kubernetes" / "" (none detected)
  std::string container_evidence;
  bool wsl = false;
  int wsl_version = 0;       // 1 or 2 (from /proc/version)
  std::string wsl_evidence;
  bool wsl_lib_dir = false;  // /usr/lib/wsl/lib present
  bool dev_dxg = false;      // /dev/dxg (WSL2 GPU paravirtualisation) present
  std::vector<std::string> stub_dirs_on_search_path;  // toolkit stubs/ dirs on LD_LIBRARY_PATH or ld.so.conf
  std::vector<SearchPathDir> stub_dirs;    // the same, with how each is reached and its files
  std::vector<SearchPathDir> compat_dirs;  // cuda-compat dirs (…/compat) on the search path
  DriverInstallFacts driver_install;       // package history, kernel modules, DKMS, nouveau, Secure Boot
  ContainerRuntimeFacts container_runtime; // NVIDIA Container Toolkit, docker/containerd/CDI, mounts, cgroup
  TopologyFacts topology;                  // PCIe paths, ACS, NUMA, IOMMU, InfiniBand, network interfaces
};
CD_JSON(PlatformFacts, container, container_evidence, wsl, wsl_version, wsl_evidence, wsl_lib_dir, dev_dxg,
        stub_dirs_on_search_path, stub_dirs, compat_dirs, driver_install, container_runtime, topology)

}  // namespace cd
