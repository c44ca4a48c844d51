#pragma once
// Layer 1: the kernel driver, its user-space libraries, the GPUs and the platform
// (container, WSL) around them.
#include <cstdint>
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

struct DriverLibrary {
  std::string kind;     // "libcuda", "libnvidia-ml"
  std::string path;     // in-root path of the versioned file
  std::string version;  // from the file name: libcuda.so.580.159.04 -> 580.159.04
  bool stub = false;    // a toolkit stub (…/stubs/libcuda.so)
};
CD_JSON(DriverLibrary, kind, path, version, stub)

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
  int multiprocessors = 0;
  std::string persistence_mode;  // "on" / "off" / ""
  std::string compute_mode;      // "default" / "exclusive_process" / "prohibited"
  std::string mig_mode;          // "enabled" / "disabled" / "" (not supported)
  int64_t ecc_uncorrected_volatile = -1;  // -1: not available
  int64_t ecc_corrected_volatile = -1;
  int64_t retired_pages_pending = -1;
  int pcie_gen_current = 0, pcie_gen_max = 0;
  int pcie_width_current = 0, pcie_width_max = 0;
  std::string sm() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
};
CD_JSON(GpuInfo, nvml_index, cuda_index, name, uuid, pci_bus_id, cc_major, cc_minor, memory_total_mib, memory_used_mib,
        multiprocessors, persistence_mode, compute_mode, mig_mode, ecc_uncorrected_volatile, ecc_corrected_volatile,
        retired_pages_pending, pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max)

struct GpuProcess {
  int pid = 0;
  std::string gpu_uuid;
  uint64_t used_mib = 0;
  std::string name;    // from /proc/PID/comm, "" when the process is gone
  bool alive = true;   // false: NVML lists it but /proc has no such process
  bool zombie = false;
};
CD_JSON(GpuProcess, pid, gpu_uuid, used_mib, name, alive, zombie)

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
  // Driver API, queried in a child process.
  int cuda_driver_version = 0;  // cuDriverGetVersion: 13000
  int cu_init_status = -1;      // cuInit result: 0 ok, -1 not tried
  std::string cu_init_error;    // "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
  std::string libcuda_loaded;   // which libcuda.so.1 the loader picked (dladdr)
  std::string query_error;      // the child failed: "timed out after 10 s", "killed by SIGSEGV"
  std::vector<GpuInfo> gpus;
  std::vector<PciGpu> pci_gpus;  // NVIDIA devices on the PCI bus (vendor 0x10de)
  std::vector<GpuProcess> processes;
  std::vector<std::string> device_nodes;  // /dev/nvidia0, /dev/nvidiactl, /dev/nvidia-uvm …
};
CD_JSON(DriverFacts, module_loaded, module_version, module_version_source, libraries, nvml_driver_version, nvml_status,
        nvml_error, cuda_driver_version, cu_init_status, cu_init_error, libcuda_loaded, query_error, gpus, pci_gpus,
        processes, device_nodes)

struct PlatformFacts {
  std::string container;  // "docker" / "podman" / "kubernetes" / "" (none detected)
  std::string container_evidence;
  bool wsl = false;
  bool wsl_lib_dir = false;  // /usr/lib/wsl/lib present
  std::vector<std::string> stub_dirs_on_search_path;  // toolkit stubs/ dirs on LD_LIBRARY_PATH or ld.so.conf
};
CD_JSON(PlatformFacts, container, container_evidence, wsl, wsl_lib_dir, stub_dirs_on_search_path)

}  // namespace cd
