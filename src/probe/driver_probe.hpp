#pragma once
// Pieces of the driver probe (probe/driver*.cpp), exposed for the platform probe and
// for tests. All file reads go through a Root, so --root trees work.
#include <map>
#include <functional>
#include <string>
#include <vector>

#include "facts/driver.hpp"
#include "util/root.hpp"
#include "util/subprocess.hpp"

namespace cd {

// A directory the dynamic loader searches, and why ("LD_LIBRARY_PATH",
// "/etc/ld.so.conf.d/cuda.conf", "default dir").
struct LibDir {
  std::string dir;
  std::string via;
};

// In loader order: LD_LIBRARY_PATH, ld.so.conf (with includes), the default and the
// usual driver directories (/usr/local/nvidia/lib64, /usr/lib/wsl/lib …). No duplicates.
std::vector<LibDir> library_search_dirs(const Root& root, const std::map<std::string, std::string>& env);

// File-based facts: these work when NVML and the driver API do not.
// /proc/driver/nvidia/version, /sys/module/nvidia/version; a special file there is a note.
void probe_driver_module(DriverFacts& d, const Root& root, std::vector<std::string>* notes = nullptr);
void probe_driver_libraries(DriverFacts& d, const Root& root,     // libcuda.so.X / libnvidia-ml.so.X files
                            const std::map<std::string, std::string>& env);
void probe_pci_gpus(DriverFacts& d, const Root& root);           // /sys/bus/pci/devices, vendor 0x10de, class 0x03xxxx
void probe_device_nodes(DriverFacts& d, const Root& root);       // /dev/nvidia*
void probe_gpu_processes(DriverFacts& d, const Root& root);      // NVML's PIDs against /proc (probe/gpu_processes.cpp)
void probe_device_holders(DriverFacts& d, const Root& root);     // /proc/*/fd → /dev/nvidia* (ps only: reads every process)

// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build …" -> "580.159.04".
std::string parse_nvrm_version(const std::string& text);
// "libcuda.so.580.159.04" -> "580.159.04"; "" for soname links (libcuda.so.1) and others.
std::string library_file_version(const std::string& file_name, const std::string& stem);

// The driver query in a child (`argv`, normally `cuda-doctor __driver`) with a timeout,
// and how its output becomes facts: the last {"facts"} line, plus query_error when the
// child hung, crashed or failed ("timed out after 10 s in cuInit").
// `on_answer` sees the child's first {"facts"} line that names GPUs, while it still runs (NVML
// answers before cuInit ends): check's scan asks its question of the binaries from it.
ProcessResult run_driver_child(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                               std::function<void(const DriverFacts&)> on_answer = {});
// How the child's last line begins (cli/child_driver.cpp prints {"stage":"done","t":…}):
// the parent stops waiting there instead of at the child's slow exit.
inline constexpr const char* kDriverChildDoneLine = R"({"stage":"done")";
DriverFacts driver_facts_from_child(const ProcessResult& result);
// Copies the query fields of `query` into `d` (file fields stay).
void merge_driver_query(DriverFacts& d, DriverFacts query);

}  // namespace cd
