// The PCIe relation of every GPU pair (the paths' deepest shared bridge: a switch, a root
// port, or none — they meet in the root complex, on one NUMA node or across two), the ACS
// bits that redirect their peer-to-peer traffic, whether the IOMMU translates DMA, and the
// network NCCL will find (interfaces up, the default route's, InfiniBand ports active or not).
#include <algorithm>

#include "derive/derive_parts.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

// ACS Control bits 2 (P2P Request Redirect) and 3 (P2P Completion Redirect).
constexpr int kAcsRedirect = 0x4 | 0x8;

// "pci0000:3a" of "/sys/devices/pci0000:3a/0000:3a:00.0/…": the host bridge (root complex) a path starts at.
std::string host_bridge(const std::string& sysfs_path) {
  const std::string prefix = "/sys/devices/";
  if (sysfs_path.rfind(prefix, 0) != 0) return {};
  return sysfs_path.substr(prefix.size(), sysfs_path.find('/', prefix.size()) - prefix.size());
}

GpuPair pair_of(const TopologyFacts& t, size_t a, size_t b) {
  GpuPair p;
  p.a = a;
  p.b = b;
  const PciPlace& x = t.gpus[a];
  const PciPlace& y = t.gpus[b];
  size_t common = 0;
  while (common < x.bridges.size() && common < y.bridges.size() && x.bridges[common].address == y.bridges[common].address) ++common;
  if (common > 0) {
    p.common = &x.bridges[common - 1];
    p.relation = p.common->port == "root port" ? "same root port" : "same PCIe switch";
  } else if (!host_bridge(x.sysfs_path).empty() && host_bridge(x.sysfs_path) == host_bridge(y.sysfs_path)) {
    p.relation = "same host bridge";
  } else if (x.numa_node >= 0 && y.numa_node >= 0) {
    p.relation = x.numa_node == y.numa_node ? "same NUMA node" : "different NUMA nodes";
  } else {
    p.relation = "unknown";
  }
  // Peer traffic enters the shared part through the ports below the common bridge: their
  // ACS redirect bits send it up to the root complex (and the IOMMU) instead of across.
  for (const PciPlace* side : {&x, &y})
    for (size_t i = common; i < side->bridges.size(); ++i) {
      const PciBridge& br = side->bridges[i];
      if (br.acs_ctrl >= 0 && (br.acs_ctrl & kAcsRedirect)) p.redirecting.push_back(&br);
      if (br.acs_ctrl == -1) p.acs_unknown = true;
    }
  return p;
}

bool is_up(const NetInterface& n) { return n.operstate == "up"; }

}  // namespace

TopologyModel derive_topology(const Facts& f) {
  const TopologyFacts& t = f.platform.topology;
  TopologyModel m;
  for (size_t a = 0; a < t.gpus.size(); ++a)
    for (size_t b = a + 1; b < t.gpus.size(); ++b) m.pairs.push_back(pair_of(t, a, b));
  m.iommu_on = t.iommu_groups > 0;
  for (const char* w : {"iommu=pt", "iommu.passthrough=1", "iommu=off", "intel_iommu=off", "amd_iommu=off"})
    for (const auto& word : split(t.iommu_cmdline, ' '))
      if (word == w) m.iommu_passthrough = true;
  for (const auto& n : t.net)
    if (is_up(n)) m.up.push_back(&n);
  std::stable_sort(m.up.begin(), m.up.end(), [](const NetInterface* a, const NetInterface* b) { return !a->pci.empty() && b->pci.empty(); });
  for (const auto& n : t.net)
    if (n.default_route) m.route = &n;
  for (const auto& d : t.ib) {
    bool active = std::any_of(d.ports.begin(), d.ports.end(), [](const IbPort& p) { return p.state.find("ACTIVE") != std::string::npos; });
    (active ? m.ib_active : m.ib_down).push_back(&d);
  }
  return m;
}

}  // namespace cd
