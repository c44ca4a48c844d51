#pragma once
// The system under and around the driver: how the driver got installed and whether it can
// load (package-manager history, kernel modules per kernel, DKMS, nouveau, Secure Boot;
// probe/driver_install.cpp), the container runtime (probe/containers.cpp), and the PCIe,
// NUMA and network topology NCCL uses (probe/topology.cpp). Observations only; derive/
// and rules/ judge.
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

// One change of an NVIDIA driver package, as a package manager logged it.
struct PackageEvent {
  std::string when;          // "2024-03-12 06:25:21" as logged (the machine's local time)
  std::string action;        // "install" / "upgrade" / "downgrade" / "remove" / "purge" / "reinstall"
  std::string package;       // "libnvidia-compute-550" (architecture dropped)
  std::string from_version;  // "550.54.14-0ubuntu0.22.04.1" ("" for an install)
  std::string to_version;    // "" for a remove
  std::string by;            // "unattended-upgrade", "apt-get install nvidia-driver-580", "" when the log does not say
  std::string source;        // the log it was read from: "/var/log/apt/history.log.2.gz"
};
CD_JSON(PackageEvent, when, action, package, from_version, to_version, by, source)

// An NVIDIA kernel module that modprobe can find for one installed kernel.
struct KernelModuleFile {
  std::string kernel;     // "6.8.0-49-generic"
  std::string path;       // "/lib/modules/6.8.0-49-generic/updates/dkms/nvidia.ko.zst"
  std::string signature;  // "signed" / "unsigned" / "" (not checked: only when Secure Boot is on and the module is not loaded)
};
CD_JSON(KernelModuleFile, kernel, path, signature)

// A module DKMS knows (/var/lib/dkms/NAME/VERSION/KERNEL/ARCH): the kernels it was built for.
struct DkmsModule {
  std::string name;     // "nvidia" (Ubuntu, NVIDIA's repos), "nvidia-current" (Debian)
  std::string version;  // "550.54.15"
  std::vector<std::string> built_for;  // kernels with a built module
};
CD_JSON(DkmsModule, name, version, built_for)

struct DriverInstallFacts {
  // Installed kernels (/lib/modules/* holding a modules.dep) and, per kernel, the NVIDIA
  // module modprobe would load (from modules.dep).
  std::vector<std::string> kernels;
  std::vector<KernelModuleFile> module_files;
  std::vector<DkmsModule> dkms;
  bool nouveau_loaded = false;
  std::string nouveau_evidence;                      // "/sys/module/nouveau exists"
  std::vector<std::string> nouveau_blacklisted_in;   // "/etc/modprobe.d/blacklist-nouveau.conf", "/proc/cmdline"
  int secure_boot = -1;                              // 1 on, 0 off, -1 unknown (no EFI, unreadable)
  std::string secure_boot_source;
  std::vector<std::string> mok_keys;                 // DKMS / shim signing keys present (/var/lib/dkms/mok.pub …)
  std::vector<PackageEvent> package_events;          // NVIDIA driver packages, oldest first (bounded)
  std::vector<std::string> package_logs;             // the logs read
  double booted_unix = 0;                            // /proc/stat btime (0: unknown)
};
CD_JSON(DriverInstallFacts, kernels, module_files, dkms, nouveau_loaded, nouveau_evidence, nouveau_blacklisted_in,
        secure_boot, secure_boot_source, mok_keys, package_events, package_logs, booted_unix)

// The container runtime around the GPUs (probe/containers.cpp): inside a container what
// the NVIDIA runtime mounted; on a host whether the NVIDIA Container Toolkit is there and
// which runtimes use it.
struct ContainerRuntimeFacts {
  // Inside a container.
  std::vector<std::string> driver_mounts;  // mount points of NVIDIA driver files (/proc/self/mountinfo), capped
  int driver_mounts_total = 0;             // how many there were
  int cgroup_version = 0;                  // 2: unified (/sys/fs/cgroup/cgroup.controllers), 1: legacy, 0: unknown
  std::vector<std::string> cgroup_device_rules;  // cgroup v1 devices.list (what the container may open)
  // On a host (or a container that sees the host's files).
  std::vector<std::string> toolkit_files;  // nvidia-ctk, nvidia-container-runtime(-hook), nvidia-container-cli found
  std::string toolkit_version;             // from the nvidia-container-toolkit package's dpkg/rpm record, "" unknown
  std::string docker;                      // the docker daemon found: "/usr/bin/dockerd", "/snap/bin/docker"
  bool docker_snap = false;
  std::string docker_config;               // /etc/docker/daemon.json (or the snap's), when present
  std::string docker_config_error;         // it does not parse
  std::vector<std::string> docker_runtimes;   // its "runtimes" keys
  std::string docker_default_runtime;
  std::string docker_cgroup_driver;           // exec-opts native.cgroupdriver=…  ("" = docker's default)
  std::string containerd_config;              // /etc/containerd/config.toml when present
  bool containerd_nvidia = false;             // it names nvidia-container-runtime
  bool podman = false;                        // /usr/bin/podman
  std::vector<std::string> cdi_specs;         // /etc/cdi, /var/run/cdi files that define nvidia.com/gpu
};
CD_JSON(ContainerRuntimeFacts, driver_mounts, driver_mounts_total, cgroup_version, cgroup_device_rules, toolkit_files,
        toolkit_version, docker, docker_snap, docker_config, docker_config_error, docker_runtimes, docker_default_runtime,
        docker_cgroup_driver, containerd_config, containerd_nvidia, podman, cdi_specs)

// A PCI bridge on a GPU's path to the CPU, with its ACS control bits when readable.
struct PciBridge {
  std::string address;   // 0000:00:01.1
  std::string id;        // vendor:device "0x1000:0xc010"
  std::string port;      // "root port" / "switch upstream" / "switch downstream" / "pci bridge" / "" (no PCIe capability)
  int acs_cap = -1;      // ACS Capability register; -1 unknown, -2 the bridge has no ACS capability
  int acs_ctrl = -1;     // ACS Control register (bit 2 P2P Request Redirect, 3 Completion Redirect, 4 Upstream Forwarding …)
  int config_bytes = 0;  // how much of its config space was readable (64 without root: no extended capabilities)
};
CD_JSON(PciBridge, address, id, port, acs_cap, acs_ctrl, config_bytes)

// One PCI device's place: its path from the root complex, NUMA node, CPUs, IOMMU group, link.
struct PciPlace {
  std::string address;             // 0000:3b:00.0
  std::string sysfs_path;          // /sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0
  std::vector<PciBridge> bridges;  // root port first
  int numa_node = -1;
  std::string local_cpulist;       // "0-31,64-95"
  std::string iommu_group;         // "" none
  std::string link_speed, link_width, max_link_speed, max_link_width;  // as sysfs writes them
};
CD_JSON(PciPlace, address, sysfs_path, bridges, numa_node, local_cpulist, iommu_group, link_speed, link_width,
        max_link_speed, max_link_width)

struct IbPort {
  int port = 0;
  std::string state;       // "4: ACTIVE"
  std::string phys_state;  // "5: LinkUp"
  std::string rate;        // "400 Gb/sec (4X NDR)"
  std::string link_layer;  // "InfiniBand" / "Ethernet" (RoCE)
  std::string netdev;      // the Ethernet interface of a RoCE port
};
CD_JSON(IbPort, port, state, phys_state, rate, link_layer, netdev)

struct IbDevice {
  std::string name;  // mlx5_0
  std::string pci;   // its PCI address ("" virtual)
  int numa_node = -1;
  std::vector<IbPort> ports;
};
CD_JSON(IbDevice, name, pci, numa_node, ports)

struct NetInterface {
  std::string name;       // eth0
  std::string operstate;  // "up" / "down" / "unknown"
  std::string pci;        // "" for virtual interfaces (veth, bridges, lo)
  int numa_node = -1;
  int speed_mbps = -1;
  bool default_route = false;  // the IPv4 default route leaves through it (/proc/net/route)
};
CD_JSON(NetInterface, name, operstate, pci, numa_node, speed_mbps, default_route)

struct TopologyFacts {
  std::vector<PciPlace> gpus;        // one per NVIDIA GPU on the PCI bus, in bus order
  std::vector<IbDevice> ib;          // /sys/class/infiniband
  std::vector<NetInterface> net;     // /sys/class/net, loopback left out
  std::string iommu_cmdline;         // the IOMMU words of /proc/cmdline ("intel_iommu=on iommu=pt")
  int iommu_groups = -1;             // entries in /sys/kernel/iommu_groups (-1 unreadable, 0: IOMMU off)
  int numa_nodes = -1;               // /sys/devices/system/node/node*
  bool config_space_limited = false; // a bridge's config space was cut at 64 bytes (not root)
};
CD_JSON(TopologyFacts, gpus, ib, net, iommu_cmdline, iommu_groups, numa_nodes, config_space_limited)

}  // namespace cd
