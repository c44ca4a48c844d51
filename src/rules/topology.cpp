// What the PCIe tree, the IOMMU and the network mean for multi-GPU and multi-node jobs:
// ACS bits that redirect peer-to-peer traffic between two GPUs to the root complex
// (NCCL hangs or crawls), ACS that could not be read (not root), the IOMMU translating
// DMA, GPUs far (NUMA) from the NICs, and the NCCL_SOCKET_IFNAME / NCCL_IB_HCA /
// NCCL_P2P_* settings the machine calls for, each with the sysfs files as evidence.
#include <fmt/format.h>

#include <set>

#include "rules/rules.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

// "GPU 0 (0000:3b:00.0)" for a topology entry, numbered as the rest of the report does.
std::string gpu_name(const Model& m, const PciPlace& p) {
  for (const auto& g : m.gpus) {
    std::string bus = to_lower(g.info->pci_bus_id);
    if (bus.size() >= 12 && bus.substr(bus.size() - 12) == p.address) return fmt::format("GPU {} ({})", g.index, p.address);
  }
  return "GPU " + p.address;
}

// ACS Control bits set in `ctrl`, named (PCI Express Base Specification, ACS Control Register).
std::string acs_ctrl_names(int ctrl) {
  static const char* names[] = {"Source Validation", "Translation Blocking", "P2P Request Redirect", "P2P Completion Redirect",
                                "Upstream Forwarding", "P2P Egress Control", "Direct Translated P2P"};
  std::string out;
  for (int bit = 0; bit < 7; ++bit)
    if (ctrl >= 0 && ((ctrl >> bit) & 1)) out += (out.empty() ? "" : ", ") + std::string(names[bit]);
  return out.empty() ? "none" : out;
}

std::string bridge_fact(const PciBridge& b) {
  return fmt::format("{} ({}{}) ACS control 0x{:04x}: {}", b.address, b.port.empty() ? "bridge" : b.port,
                     b.id.size() > 1 ? ", " + b.id : "", b.acs_ctrl, acs_ctrl_names(b.acs_ctrl));
}

std::string config_path(const PciBridge& b) { return "/sys/bus/pci/devices/" + b.address + "/config"; }

void acs_redirect(const Model& m, Findings& out) {
  const TopologyFacts& t = m.facts.platform.topology;
  std::vector<std::string> pairs;
  std::set<std::string> seen;
  std::vector<const PciBridge*> bridges;
  for (const auto& p : m.platform.topology.pairs) {
    if (p.redirecting.empty()) continue;
    pairs.push_back(fmt::format("{} ↔ {} ({})", gpu_name(m, t.gpus[p.a]), gpu_name(m, t.gpus[p.b]), p.relation));
    for (const auto* b : p.redirecting)
      if (seen.insert(b->address).second) bridges.push_back(b);
  }
  if (pairs.empty()) return;
  Finding x = new_finding("pcie.acs_redirect", Severity::warning, "PCIe ACS",
                          fmt::format("ACS redirects peer-to-peer traffic between {} GPU pair{} to the root complex", pairs.size(),
                                      pairs.size() == 1 ? "" : "s"),
                          "device");
  for (const auto& s : pairs) x.evidence.push_back({s, "/sys/bus/pci/devices (PCIe paths)"});
  for (const auto* b : bridges) x.evidence.push_back({bridge_fact(*b), config_path(*b)});
  x.explanation = "GPUs under one PCIe switch exchange data through it, but with ACS P2P Request/Completion Redirect set "
                  "on its ports every peer transfer goes up to the root complex (and the IOMMU): P2P is slow or fails, and "
                  "NCCL all-reduce hangs or crawls. Virtual machines need ACS on; bare-metal GPU servers usually not.";
  for (const auto* b : bridges) x.fix.push_back("sudo setpci -s " + b->address + " ECAP_ACS+0x6.w=0000   # until reboot");
  x.fix.push_back("# for good: disable ACS (or 'PCIe ACS control') in the BIOS");
  x.fix.push_back("cuda-doctor verify   # then measures P2P between the GPUs");
  x.fix.push_back("# if ACS must stay on: export NCCL_P2P_DISABLE=1   (NCCL copies through host memory instead of hanging)");
  out.push_back(std::move(x));
}

void acs_unknown(const Model& m, Findings& out) {
  const TopologyFacts& t = m.facts.platform.topology;
  if (!t.config_space_limited) return;
  std::vector<std::string> pairs;
  for (const auto& p : m.platform.topology.pairs)
    if (p.acs_unknown && p.common)
      pairs.push_back(fmt::format("{} ↔ {} ({})", gpu_name(m, t.gpus[p.a]), gpu_name(m, t.gpus[p.b]), p.relation));
  if (pairs.empty()) return;
  Finding x = new_finding("pcie.acs_unknown", Severity::info, "PCIe ACS",
                          "ACS on the PCIe switches between the GPUs could not be read (needs root)", "device");
  for (const auto& s : pairs) x.evidence.push_back({s, "/sys/bus/pci/devices (PCIe paths)"});
  x.evidence.push_back({"config space readable: 64 bytes (the extended capabilities, ACS among them, start at 256)",
                        "/sys/bus/pci/devices/*/config"});
  x.explanation = "Whether peer-to-peer traffic between these GPUs is redirected to the root complex depends on the ACS "
                  "bits of the switch ports, which only root can read.";
  x.fix = {"sudo cuda-doctor check -v", "sudo lspci -vvv | grep -E '^[0-9a-f]|ACSCtl'"};
  out.push_back(std::move(x));
}

void iommu_translation(const Model& m, Findings& out) {
  const TopologyModel& tm = m.platform.topology;
  const TopologyFacts& t = m.facts.platform.topology;
  if (tm.pairs.empty() || !tm.iommu_on || tm.iommu_passthrough || !m.facts.platform.container.empty()) return;
  Finding x = new_finding("pcie.iommu_translation", Severity::info, "IOMMU",
                          "The IOMMU translates DMA: PCIe peer-to-peer between GPUs may be slow or fail", "device");
  x.evidence.push_back({fmt::format("{} IOMMU groups", t.iommu_groups), "/sys/kernel/iommu_groups"});
  x.evidence.push_back({t.iommu_cmdline.empty() ? "no iommu=pt on the kernel command line" : "kernel command line: " + t.iommu_cmdline,
                        "/proc/cmdline"});
  x.explanation = "With the IOMMU translating, PCIe peer-to-peer transfers between GPUs (not NVLink) go through it and "
                  "can fault or crawl; NCCL's documentation recommends passthrough mode on bare-metal GPU servers.";
  x.fix = {"# add iommu=pt to GRUB_CMDLINE_LINUX in /etc/default/grub, then:", "sudo update-grub && sudo reboot",
           "cuda-doctor verify   # measures P2P afterwards"};
  out.push_back(std::move(x));
}

void numa_mismatch(const Model& m, Findings& out) {
  const TopologyFacts& t = m.facts.platform.topology;
  const TopologyModel& tm = m.platform.topology;
  if (tm.ib_active.empty() || t.numa_nodes < 2) return;
  std::set<int> nic_nodes;
  for (const auto* d : tm.ib_active)
    if (d->numa_node >= 0) nic_nodes.insert(d->numa_node);
  for (const auto& g : t.gpus) {
    if (g.numa_node < 0 || nic_nodes.empty() || nic_nodes.count(g.numa_node)) continue;
    Finding x = new_finding("nccl.numa_mismatch", Severity::info, gpu_name(m, g),
                            fmt::format("{} is on NUMA node {}, no active InfiniBand/RoCE device is", gpu_name(m, g), g.numa_node));
    x.evidence.push_back({fmt::format("{} NUMA node {}, local CPUs {}", gpu_name(m, g), g.numa_node, g.local_cpulist),
                          "/sys/bus/pci/devices/" + g.address + "/numa_node"});
    for (const auto* d : tm.ib_active)
      x.evidence.push_back({fmt::format("{} NUMA node {}", d->name, d->numa_node), "/sys/class/infiniband/" + d->name + "/device/numa_node"});
    x.explanation = "GPUDirect RDMA between this GPU and the network crosses the CPU interconnect, which halves "
                    "inter-node bandwidth at best; NCCL picks the closest NIC it can.";
    x.fix = {fmt::format("numactl --cpunodebind={0} --membind={0} <command>   # keep the process next to the GPU", g.numa_node),
             "nvidia-smi topo -m   # the GPU/NIC affinity NCCL sees"};
    out.push_back(std::move(x));
  }
}

// Whether an NCCL_SOCKET_IFNAME / NCCL_IB_HCA value selects `name` (comma list of prefixes, '^'
// excludes, '=' exact; a ':port' suffix is ignored).
bool ifname_selects(const std::string& spec, const std::string& name) {
  std::string s = spec;
  bool exclude = !s.empty() && s[0] == '^';
  if (exclude) s = s.substr(1);
  bool exact = !s.empty() && s[0] == '=';
  if (exact) s = s.substr(1);
  bool match = false;
  for (const auto& token : split(s, ',')) {
    std::string p = token.substr(0, token.find(':'));  // NCCL_IB_HCA's "mlx5_0:1" names a port
    if (!p.empty() && (exact ? name == p : name.rfind(p, 0) == 0)) match = true;
  }
  return exclude ? !match : match;
}

void socket_interface(const Model& m, Findings& out) {
  const TopologyModel& tm = m.platform.topology;
  const std::string* spec = m.facts.getenv("NCCL_SOCKET_IFNAME");
  std::string suggest = tm.route ? tm.route->name : (!tm.up.empty() ? tm.up.front()->name : "");
  auto evidence = [&](Finding& x) {
    for (const auto* n : tm.up)
      x.evidence.push_back({fmt::format("{} up{}{}{}", n->name, n->pci.empty() ? " (virtual)" : ", PCI " + n->pci,
                                        n->speed_mbps > 0 ? fmt::format(", {} Mb/s", n->speed_mbps) : "",
                                        n->default_route ? ", default route" : ""),
                            "/sys/class/net/" + n->name});
  };
  if (spec) {
    bool any = std::any_of(tm.up.begin(), tm.up.end(), [&](const NetInterface* n) { return ifname_selects(*spec, n->name); });
    if (any || tm.up.empty()) return;
    Finding x = new_finding("nccl.socket_interface", Severity::warning, "NCCL_SOCKET_IFNAME",
                            "NCCL_SOCKET_IFNAME=" + *spec + " selects no network interface that is up");
    x.evidence.push_back({"NCCL_SOCKET_IFNAME=" + *spec, "environment"});
    evidence(x);
    x.explanation = "NCCL's bootstrap and socket transport use only interfaces this variable selects; with none it fails "
                    "(\"Bootstrap : no socket interface found\") or hangs at init.";
    x.fix = {suggest.empty() ? "unset NCCL_SOCKET_IFNAME" : "export NCCL_SOCKET_IFNAME=" + suggest + "   # the interface of the default route"};
    out.push_back(std::move(x));
    return;
  }
  // NCCL picks the first usable interface (ib* first, docker* and lo never): with several up,
  // the one for multi-node jobs is worth naming.
  std::vector<const NetInterface*> candidates;
  for (const auto* n : tm.up)
    if (n->name.rfind("docker", 0) != 0 && n->name.rfind("veth", 0) != 0) candidates.push_back(n);
  if (candidates.size() < 2 || suggest.empty() || m.facts.platform.topology.gpus.empty()) return;
  Finding x = new_finding("nccl.socket_interface", Severity::info, "network",
                          fmt::format("{} network interfaces are up: for multi-node NCCL set NCCL_SOCKET_IFNAME", candidates.size()));
  evidence(x);
  x.explanation = "Without NCCL_SOCKET_IFNAME, NCCL's bootstrap takes the first interface it finds (InfiniBand IPoIB first), "
                  "which may not be the one the other nodes reach; the default route's interface usually is.";
  x.fix = {"export NCCL_SOCKET_IFNAME=" + suggest + "   # the interface of the default route",
           "NCCL_DEBUG=INFO <command> 2>&1 | grep -E 'NET/(Socket|IB)'   # what NCCL picked"};
  out.push_back(std::move(x));
}

void ib_unusable(const Model& m, Findings& out) {
  const TopologyModel& tm = m.platform.topology;
  const std::string* hca = m.facts.getenv("NCCL_IB_HCA");
  std::vector<const IbDevice*> named_down;
  if (hca)
    for (const auto* d : tm.ib_down)
      if (ifname_selects(*hca, d->name)) named_down.push_back(d);
  bool all_down = !tm.ib_down.empty() && tm.ib_active.empty();
  if (named_down.empty() && !all_down) return;
  Finding x = new_finding("nccl.ib_unusable", named_down.empty() ? Severity::info : Severity::warning, "InfiniBand",
                          named_down.empty() ? "No InfiniBand/RoCE port is active: multi-node NCCL falls back to TCP sockets"
                                             : "NCCL_IB_HCA names InfiniBand devices whose ports are not active");
  for (const auto* d : tm.ib_down)
    for (const auto& p : d->ports)
      x.evidence.push_back({fmt::format("{} port {}: {} / {} ({})", d->name, p.port, p.state, p.phys_state, p.link_layer),
                            fmt::format("/sys/class/infiniband/{}/ports/{}/state", d->name, p.port)});
  if (hca) x.evidence.push_back({"NCCL_IB_HCA=" + *hca, "environment"});
  x.explanation = "NCCL uses InfiniBand/RoCE only on ACTIVE ports; down ports (cable, subnet manager not running, RoCE "
                  "without an IP) leave it on TCP sockets at a fraction of the bandwidth, or fail when NCCL_IB_HCA insists.";
  std::vector<std::string> active;
  for (const auto* d : tm.ib_active) active.push_back(d->name);
  x.fix = {"ibstat   # port state and physical link", "sudo systemctl status opensm   # InfiniBand needs a subnet manager on the fabric"};
  if (!active.empty()) x.fix.push_back("export NCCL_IB_HCA=" + join(active, ",") + "   # the devices with an active port");
  out.push_back(std::move(x));
}

void p2p_disabled(const Model& m, Findings& out) {
  const std::string* v = m.facts.getenv("NCCL_P2P_DISABLE");
  if (!v || (*v != "1" && to_lower(*v) != "true")) return;
  std::vector<std::string> clean;
  for (const auto& p : m.platform.topology.pairs)
    if (p.common && p.redirecting.empty() && !p.acs_unknown)
      clean.push_back(fmt::format("{} ↔ {} ({}, no ACS redirect)", gpu_name(m, m.facts.platform.topology.gpus[p.a]),
                                  gpu_name(m, m.facts.platform.topology.gpus[p.b]), p.relation));
  if (clean.empty()) return;
  Finding x = new_finding("nccl.p2p_disabled", Severity::info, "NCCL_P2P_DISABLE",
                          "NCCL_P2P_DISABLE=1 is set although the GPUs' PCIe paths allow peer-to-peer", "nccl");
  x.evidence.push_back({"NCCL_P2P_DISABLE=" + *v, "environment"});
  for (const auto& c : clean) x.evidence.push_back({c, "/sys/bus/pci/devices/*/config"});
  x.explanation = "With P2P disabled NCCL copies between GPUs through host memory, at a fraction of the bandwidth; it is a "
                  "workaround for ACS/IOMMU problems this machine does not show.";
  x.fix = {"unset NCCL_P2P_DISABLE", "cuda-doctor verify   # P2P bandwidth with it unset"};
  out.push_back(std::move(x));
}

}  // namespace

Findings topology_rules(const Model& m, const Kb&) {
  Findings out;
  acs_redirect(m, out);
  acs_unknown(m, out);
  iommu_translation(m, out);
  numa_mismatch(m, out);
  socket_interface(m, out);
  ib_unusable(m, out);
  p2p_disabled(m, out);
  return out;
}

}  // namespace cd
