#pragma once
// Probes: the only code that reads the machine. Each fills one part of Facts and
// records how it knew and what failed (Facts::notes); none decides what is wrong.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "binary/file_scan.hpp"
#include "facts/facts.hpp"
#include "util/root.hpp"

namespace cd {

// check's question of the binaries: the scan reads each container only until the local GPUs'
// verdict is settled (binary/file_scan ReadFocus). `ask` turns the driver child's first answer
// (the GPUs, the driver) into that question, or into nothing (then everything is read).
struct ScanFocus {
  bin::ReadFocus focus;
  std::function<std::optional<bin::ReadFocus::Question>(const DriverFacts&)> ask;
};

struct ProbeOptions {
  Root root;                                // --root
  std::map<std::string, std::string> env;   // the environment to reason about (normally our own)
  std::chrono::milliseconds timeout{10'000};  // per child process (--timeout)
  bool deep = false;                        // --deep: run interpreters
  bool scan_binaries = true;                // scan framework binaries for kernel images
  bool driver_nvml_first = false;           // scan: GPUs from NVML alone when it answers (no cuInit)
  int verbose = 0;
  bool toolkit_details = false;             // `toolkits`: each toolkit's components and size on disk
  bool toolkit_compilers = true;            // the host compilers (runs gcc/clang); `use --off` needs none
  // gcc's version from its installed layout when that is unambiguous, not from a gcc child
  // (`use` and the prompt hook: a process start saved; the checks need only the major).
  bool compiler_version_from_layout = false;
  // `libs FILE…` / `--pid` need only where the environments and the library copies are: not each
  // environment's packages nor which copy each framework resolves (most of its time otherwise).
  bool python_packages = true;              // read every site-packages' dist-info
  bool libs_consumers = true;               // emulate each framework's import (facts.libs.resolutions)
  std::shared_ptr<ScanFocus> scan_focus;    // check: read binaries only as far as its verdicts need

  const std::string* getenv(const std::string& name) const {
    auto it = env.find(name);
    return it == env.end() ? nullptr : &it->second;
  }
  std::string env_or(const std::string& name, std::string fallback = {}) const {
    auto v = getenv(name);
    return v ? *v : fallback;
  }
};

// Our own environment as a map.
std::map<std::string, std::string> current_environment();

void probe_host(Facts&, const ProbeOptions&);        // probe/host.cpp
void probe_env(Facts&, const ProbeOptions&);         // probe/host.cpp: CUDA-relevant variables
void probe_driver(Facts&, const ProbeOptions&);      // probe/driver*.cpp
void probe_platform(Facts&, const ProbeOptions&);    // probe/platform.cpp
// Package history, kernel modules per kernel, DKMS, nouveau, Secure Boot (probe/driver_install.cpp);
// after probe_driver (module signatures are read only when the module is not loaded).
void probe_driver_install(Facts&, const ProbeOptions&);
void probe_containers(Facts&, const ProbeOptions&);  // probe/containers.cpp: toolkit, runtimes, CDI, mounts, cgroup
void probe_topology(Facts&, const ProbeOptions&);    // probe/topology.cpp: after probe_driver (its pci_gpus)
void probe_toolkits(Facts&, const ProbeOptions&);    // probe/toolkits*.cpp
// The toolkit at `dir` (a path the user named), read like the probe reads one; nullopt when
// `dir` is not a toolkit (no bin/nvcc, version.json, version.txt or include/cuda.h), with the
// reason in *why ("no such directory", "a broken symbolic link to /x", "not a CUDA toolkit (…)").
std::optional<Toolkit> probe_toolkit_at(const std::string& dir, const ProbeOptions&, std::string* why = nullptr);
void probe_pythons(Facts&, const ProbeOptions&);     // probe/python*.cpp
void probe_libs(Facts&, const ProbeOptions&);        // probe/libs*.cpp
void probe_binaries(Facts&, const ProbeOptions&);    // probe/binaries.cpp: scan of framework binaries

// scan without paths: probes the Python environments and toolkits into `facts` and returns
// the host paths of their site-packages and toolkit lib dirs that exist (probe/scan_paths.cpp).
std::vector<std::string> default_scan_paths(Facts& facts, const ProbeOptions& opts);

// `ps`: driver (NVML only), platform and the device-file holders (probe/ps.cpp).
Facts probe_ps(const ProbeOptions&);

// `toolkits` / `use`: host, environment, the driver from its files only (no child process),
// the toolkits, and the Python environments when `pythons` (probe/toolkits.cpp).
Facts probe_toolkits_machine(const ProbeOptions&, bool pythons);

// Runs every probe `check` needs.
Facts probe_all(const ProbeOptions&);

}  // namespace cd
