// probe_topology on the topo_* --root trees (tests/fixtures/roots/make_topology_roots.sh):
// PCIe paths with the switch's ports and their ACS bits, 64-byte (non-root) config space,
// NUMA, IOMMU, InfiniBand and network interfaces; the config-space parser on bytes.
#include <gtest/gtest.h>

#include "probe/driver_probe.hpp"
#include "probe/probe.hpp"
#include "probe/topology_parse.hpp"

namespace {

cd::Facts probe_root(const std::string& name) {
  cd::ProbeOptions opts;
  opts.root = cd::Root(std::string(CD_FIXTURES) + "/roots/" + name);
  cd::Facts facts;
  cd::probe_pci_gpus(facts.driver, opts.root);
  cd::probe_topology(facts, opts);
  return facts;
}

}  // namespace

TEST(Topology, PciAddress) {
  EXPECT_TRUE(cd::is_pci_address("0000:3b:00.0"));
  EXPECT_TRUE(cd::is_pci_address("0001:a0:1f.7"));
  EXPECT_FALSE(cd::is_pci_address("pci0000:00"));
  EXPECT_FALSE(cd::is_pci_address("0000:3b:00"));
  EXPECT_FALSE(cd::is_pci_address("0000:3g:00.0"));
}

TEST(Topology, ConfigSpaceParser) {
  EXPECT_TRUE(cd::parse_config_space("").truncated);
  std::string bytes(4096, '\0');
  bytes[0x06] = 0x10;
  bytes[0x34] = 0x40;
  bytes[0x40] = 0x10;
  bytes[0x42] = 0x62;  // downstream port
  // Extended capabilities: AER at 0x100 (header 0x14810001: next 0x148), then ACS (0x0001000d).
  bytes[0x100] = 0x01, bytes[0x102] = static_cast<char>(0x81), bytes[0x103] = 0x14;
  bytes[0x148] = 0x0d, bytes[0x14a] = 0x01;
  bytes[0x14c] = 0x7f, bytes[0x14e] = 0x1d;
  auto cs = cd::parse_config_space(bytes);
  EXPECT_EQ(cs.port, "switch downstream");
  EXPECT_EQ(cs.acs_cap, 0x7f);
  EXPECT_EQ(cs.acs_ctrl, 0x1d);
  EXPECT_FALSE(cs.truncated);
  auto cut = cd::parse_config_space(bytes.substr(0, 64));
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.acs_ctrl, -1);
  auto conventional = cd::parse_config_space(bytes.substr(0, 256));
  EXPECT_EQ(conventional.acs_ctrl, -2);
  // A capability list that loops on itself ends.
  std::string loop(4096, '\0');
  loop[0x06] = 0x10, loop[0x34] = 0x40, loop[0x40] = 0x05, loop[0x41] = 0x40;
  loop[0x100] = 0x01, loop[0x102] = 0x01, loop[0x103] = 0x10;  // next = 0x100: itself
  EXPECT_EQ(cd::parse_config_space(loop).acs_ctrl, -2);
}

TEST(Topology, SwitchPathsAndAcs) {
  auto f = probe_root("topo_acs_on");
  const auto& t = f.platform.topology;
  ASSERT_EQ(t.gpus.size(), 2u);
  const auto& g = t.gpus[0];
  EXPECT_EQ(g.address, "0000:03:00.0");
  EXPECT_EQ(g.sysfs_path, "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0");
  ASSERT_EQ(g.bridges.size(), 3u);
  EXPECT_EQ(g.bridges[0].port, "root port");
  EXPECT_EQ(g.bridges[0].id, "0x8086:0x2030");
  EXPECT_EQ(g.bridges[1].port, "switch upstream");
  EXPECT_EQ(g.bridges[1].acs_ctrl, 0);
  EXPECT_EQ(g.bridges[2].port, "switch downstream");
  EXPECT_EQ(g.bridges[2].acs_ctrl, 0x1d);
  EXPECT_EQ(g.bridges[2].acs_cap, 0x7f);
  EXPECT_EQ(g.bridges[2].config_bytes, 4096);
  EXPECT_EQ(g.numa_node, 0);
  EXPECT_EQ(g.local_cpulist, "0-31,64-95");
  EXPECT_EQ(g.iommu_group, "12");
  EXPECT_EQ(g.link_speed, "32.0 GT/s PCIe");
  EXPECT_FALSE(t.config_space_limited);
  EXPECT_EQ(t.iommu_cmdline, "intel_iommu=on");
  EXPECT_EQ(t.iommu_groups, 4);
  EXPECT_EQ(t.numa_nodes, 2);
  ASSERT_EQ(t.ib.size(), 1u);
  EXPECT_EQ(t.ib[0].name, "mlx5_0");
  EXPECT_EQ(t.ib[0].pci, "0000:81:00.0");
  EXPECT_EQ(t.ib[0].numa_node, 1);
  ASSERT_EQ(t.ib[0].ports.size(), 1u);
  EXPECT_EQ(t.ib[0].ports[0].state, "4: ACTIVE");
  EXPECT_EQ(t.ib[0].ports[0].rate, "400 Gb/sec (4X NDR)");
  ASSERT_EQ(t.net.size(), 2u);  // lo left out
  EXPECT_EQ(t.net[0].name, "docker0");
  EXPECT_EQ(t.net[0].pci, "");
  EXPECT_EQ(t.net[1].name, "eth0");
  EXPECT_EQ(t.net[1].pci, "0000:00:03.0");
  EXPECT_TRUE(t.net[1].default_route);
  EXPECT_EQ(t.net[1].speed_mbps, 25000);
}

TEST(Topology, NonRootConfigSpaceIsUnknownNotAnError) {
  auto f = probe_root("topo_not_root");
  const auto& t = f.platform.topology;
  EXPECT_TRUE(t.config_space_limited);
  ASSERT_EQ(t.gpus.size(), 2u);
  for (const auto& b : t.gpus[0].bridges) {
    EXPECT_EQ(b.config_bytes, 64);
    EXPECT_EQ(b.acs_ctrl, -1);
  }
  EXPECT_TRUE(f.notes.empty());
}

TEST(Topology, NothingToSee) {
  auto f = probe_root("driver_none");  // PCI devices but no GPU, no /sys/class
  EXPECT_TRUE(f.platform.topology.gpus.empty());
  EXPECT_TRUE(f.platform.topology.ib.empty());
  EXPECT_EQ(f.platform.topology.iommu_groups, -1);
}
