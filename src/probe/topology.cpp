// Where the GPUs sit and what NCCL will use between them and to other machines: each
// NVIDIA GPU's PCIe path from sysfs (its /sys/devices path names every bridge from the
// root port down), each bridge's port type and ACS capability/control from its config
// space (the extended capabilities start at byte 256, so without root — 64 readable
// bytes — ACS stays unknown and config_space_limited says so), NUMA node, local CPUs,
// IOMMU group and link; the IOMMU words of the kernel command line and the number of
// IOMMU groups; InfiniBand/RoCE devices and their ports; network interfaces, their
// PCI function, NUMA node and which carries the default route. Every read is bounded.
#include <cstdlib>

#include "probe/probe.hpp"
#include "probe/topology_parse.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

std::string read_line(const Root& root, const std::string& path) {
  return std::string(trim(root.read(path, 4096).value_or("")));
}

int read_int(const Root& root, const std::string& path, int fallback = -1) {
  std::string s = read_line(root, path);
  if (s.empty()) return fallback;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  return end && *end == '\0' ? static_cast<int>(v) : fallback;
}

// The PCI addresses along an in-root /sys/devices path, root complex first.
std::vector<std::string> pci_components(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& c : split(path, '/'))
    if (is_pci_address(c)) out.push_back(c);
  return out;
}

PciBridge bridge(const Root& root, const std::string& dir, const std::string& address, bool& limited) {
  PciBridge b;
  b.address = address;
  b.id = read_line(root, dir + "/vendor") + ":" + read_line(root, dir + "/device");
  std::string config = root.read(dir + "/config", 4096).value_or("");
  b.config_bytes = static_cast<int>(config.size());
  ConfigSpace cs = parse_config_space(config);
  b.port = cs.port;
  b.acs_cap = cs.acs_cap;
  b.acs_ctrl = cs.acs_ctrl;
  if (cs.truncated) limited = true;
  return b;
}

PciPlace place(const Root& root, const std::string& address, bool& limited) {
  PciPlace p;
  p.address = address;
  std::string link = "/sys/bus/pci/devices/" + address;
  p.sysfs_path = root.resolve(link).value_or(link);
  // Every PCI function on the way down from the host bridge is a bridge of this device.
  std::string dir = "/sys/devices";
  if (p.sysfs_path.rfind(dir + "/", 0) == 0)
    for (const auto& c : split(p.sysfs_path.substr(dir.size()), '/')) {
      dir += "/" + c;
      if (is_pci_address(c) && c != address && p.bridges.size() < 16) p.bridges.push_back(bridge(root, dir, c, limited));
    }
  p.numa_node = read_int(root, link + "/numa_node");
  p.local_cpulist = read_line(root, link + "/local_cpulist");
  if (auto g = root.readlink(link + "/iommu_group")) p.iommu_group = path_basename(*g);
  p.link_speed = read_line(root, link + "/current_link_speed");
  p.link_width = read_line(root, link + "/current_link_width");
  p.max_link_speed = read_line(root, link + "/max_link_speed");
  p.max_link_width = read_line(root, link + "/max_link_width");
  return p;
}

// The PCI function a class device (/sys/class/net/X/device, /sys/class/infiniband/X/device) belongs to.
std::string device_pci(const Root& root, const std::string& cls_dev) {
  auto real = root.resolve(cls_dev + "/device");
  if (!real || !root.exists(cls_dev + "/device")) return {};
  auto parts = pci_components(*real);
  return parts.empty() ? std::string() : parts.back();
}

void infiniband(TopologyFacts& t, const Root& root) {
  for (const auto& name : root.list("/sys/class/infiniband")) {
    if (t.ib.size() >= 32) break;
    std::string dir = "/sys/class/infiniband/" + name;
    IbDevice d;
    d.name = name;
    d.pci = device_pci(root, dir);
    d.numa_node = read_int(root, dir + "/device/numa_node");
    std::vector<std::string> netdevs = root.list(dir + "/device/net");
    for (const auto& port : root.list(dir + "/ports")) {
      std::string pdir = dir + "/ports/" + port;
      IbPort p;
      p.port = std::atoi(port.c_str());
      p.state = read_line(root, pdir + "/state");
      p.phys_state = read_line(root, pdir + "/phys_state");
      p.rate = read_line(root, pdir + "/rate");
      p.link_layer = read_line(root, pdir + "/link_layer");
      if (p.link_layer == "Ethernet" && !netdevs.empty()) p.netdev = netdevs.front();
      d.ports.push_back(p);
      if (d.ports.size() >= 8) break;
    }
    t.ib.push_back(std::move(d));
  }
}

void network(TopologyFacts& t, const Root& root) {
  std::string route_if;
  if (auto route = root.read("/proc/net/route", 256 * 1024))
    for (const auto& line : split(*route, '\n')) {
      auto w = split(line, '\t');
      if (w.size() > 2 && trim(w[1]) == "00000000") {
        route_if = std::string(trim(w[0]));
        break;
      }
    }
  for (const auto& name : root.list("/sys/class/net")) {
    if (name == "lo" || t.net.size() >= 64) continue;
    std::string dir = "/sys/class/net/" + name;
    NetInterface n;
    n.name = name;
    n.operstate = read_line(root, dir + "/operstate");
    n.pci = device_pci(root, dir);
    if (!n.pci.empty()) n.numa_node = read_int(root, dir + "/device/numa_node");
    n.speed_mbps = read_int(root, dir + "/speed");
    n.default_route = name == route_if;
    t.net.push_back(std::move(n));
  }
}

void iommu(TopologyFacts& t, const Root& root) {
  if (auto cmdline = root.read("/proc/cmdline", 64 * 1024)) {
    std::vector<std::string> words;
    for (const auto& w : split(std::string(trim(*cmdline)), ' '))
      if (w.rfind("intel_iommu=", 0) == 0 || w.rfind("amd_iommu=", 0) == 0 || w.rfind("iommu=", 0) == 0 ||
          w.rfind("iommu.passthrough=", 0) == 0 || w.rfind("iommu.strict=", 0) == 0)
        words.push_back(w);
    t.iommu_cmdline = join(words, " ");
  }
  if (root.is_dir("/sys/kernel/iommu_groups")) t.iommu_groups = static_cast<int>(root.list("/sys/kernel/iommu_groups").size());
  if (root.is_dir("/sys/devices/system/node")) t.numa_nodes = static_cast<int>(root.glob("/sys/devices/system/node", "node[0-9]*").size());
}

}  // namespace

void probe_topology(Facts& facts, const ProbeOptions& opts) {
  TopologyFacts& t = facts.platform.topology;
  for (const auto& g : facts.driver.pci_gpus) {
    if (t.gpus.size() >= 64) break;
    t.gpus.push_back(place(opts.root, g.address, t.config_space_limited));
  }
  infiniband(t, opts.root);
  network(t, opts.root);
  iommu(t, opts.root);
}

}  // namespace cd
