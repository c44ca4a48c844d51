// check on the topo_* and ctr_* --root trees: PCIe ACS between GPUs behind one switch,
// the same unreadable without root, the container toolkit on a host, snap docker.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_helpers.hpp"

namespace {

nlohmann::json check_json(const std::string& name, std::map<std::string, std::string> env = {}) {
  env.emplace("NCCL_SOCKET_IFNAME", "\x01");
  env.emplace("NCCL_IB_HCA", "\x01");
  env.emplace("NCCL_P2P_DISABLE", "\x01");
  auto r = cdtest::doctor({"check", "--json", "--root", std::string(CD_FIXTURES) + "/roots/" + name}, env);
  return nlohmann::json::parse(r.out);
}

nlohmann::json finding(const nlohmann::json& j, const std::string& id) {
  for (const auto& f : j["findings"])
    if (f["id"] == id) return f;
  return nullptr;
}

std::string text(const nlohmann::json& f) { return f.dump(); }

}  // namespace

TEST(PlatformCli, AcsRedirectBetweenGpusBehindOneSwitch) {
  auto j = check_json("topo_acs_on");
  auto f = finding(j, "pcie.acs_redirect");
  ASSERT_FALSE(f.is_null()) << j["findings"].dump();
  EXPECT_EQ(f["severity"], "warning");
  EXPECT_NE(text(f).find("GPU 0000:03:00.0 ↔ GPU 0000:04:00.0 (same PCIe switch)"), std::string::npos) << text(f);
  EXPECT_NE(text(f).find("0000:02:08.0 (switch downstream, 0x10b5:0x8747) ACS control 0x001d"), std::string::npos) << text(f);
  EXPECT_NE(text(f).find("sudo setpci -s 0000:02:08.0 ECAP_ACS+0x6.w=0000"), std::string::npos);
  EXPECT_NE(text(f).find("sudo setpci -s 0000:02:10.0 ECAP_ACS+0x6.w=0000"), std::string::npos);
  EXPECT_EQ(text(f).find("0000:00:01.0 (root port"), std::string::npos);  // above the switch: not in the peer path
  EXPECT_FALSE(finding(j, "pcie.iommu_translation").is_null());  // intel_iommu=on, no iommu=pt
  // The GPUs are on NUMA node 0, the only active InfiniBand device on node 1.
  auto numa = finding(j, "nccl.numa_mismatch");
  ASSERT_FALSE(numa.is_null());
  EXPECT_NE(text(numa).find("numactl --cpunodebind=0 --membind=0"), std::string::npos);
  EXPECT_TRUE(finding(check_json("topo_acs_off"), "pcie.acs_redirect").is_null());
}

TEST(PlatformCli, AcsUnreadableWithoutRoot) {
  auto j = check_json("topo_not_root");
  EXPECT_TRUE(finding(j, "pcie.acs_redirect").is_null());
  auto f = finding(j, "pcie.acs_unknown");
  ASSERT_FALSE(f.is_null()) << j["findings"].dump();
  EXPECT_EQ(f["severity"], "info");
  EXPECT_EQ(j["facts"]["platform"]["topology"]["config_space_limited"], true);
}

TEST(PlatformCli, NcclSettingsFromTheEnvironment) {
  auto j = check_json("topo_acs_off", {{"NCCL_SOCKET_IFNAME", "ens"}, {"NCCL_IB_HCA", "mlx5_3"}, {"NCCL_P2P_DISABLE", "1"}});
  auto sock = finding(j, "nccl.socket_interface");
  ASSERT_FALSE(sock.is_null()) << j["findings"].dump();
  EXPECT_EQ(sock["severity"], "warning");
  EXPECT_NE(text(sock).find("export NCCL_SOCKET_IFNAME=eth0"), std::string::npos);
  auto p2p = finding(j, "nccl.p2p_disabled");
  ASSERT_FALSE(p2p.is_null());
  EXPECT_NE(text(p2p).find("same PCIe switch, no ACS redirect"), std::string::npos);
  EXPECT_TRUE(finding(check_json("topo_acs_off", {{"NCCL_SOCKET_IFNAME", "eth"}}), "nccl.socket_interface").is_null());
}

TEST(PlatformCli, ContainerToolkitOnAHost) {
  auto j = check_json("ctr_host_no_toolkit");
  auto f = finding(j, "container.toolkit_missing");
  ASSERT_FALSE(f.is_null()) << j["findings"].dump();
  EXPECT_EQ(f["severity"], "warning");
  EXPECT_NE(text(f).find("sudo nvidia-ctk runtime configure --runtime=docker"), std::string::npos);
  EXPECT_NE(text(f).find("docker run --rm --gpus all ubuntu nvidia-smi"), std::string::npos);
  auto ok = check_json("ctr_host_toolkit");
  EXPECT_TRUE(finding(ok, "container.toolkit_missing").is_null());
  EXPECT_TRUE(finding(ok, "container.runtime_not_configured").is_null());
  auto snap = finding(check_json("ctr_host_snap"), "container.runtime_not_configured");
  ASSERT_FALSE(snap.is_null());
  EXPECT_EQ(snap["severity"], "warning");
  EXPECT_NE(text(snap).find("snap"), std::string::npos);
}
