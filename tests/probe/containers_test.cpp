// probe_containers on the ctr_* --root trees (tests/fixtures/roots/make_container_roots.sh):
// the toolkit's programs and package version, docker's daemon.json (runtimes, cgroup driver),
// snap docker, containerd, CDI specs; inside a container the runtime's bind mounts and cgroup v2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "probe/probe.hpp"

namespace {

cd::ContainerRuntimeFacts probe_root(const std::string& name) {
  cd::ProbeOptions opts;
  opts.root = cd::Root(std::string(CD_FIXTURES) + "/roots/" + name);
  cd::Facts facts;
  cd::probe_containers(facts, opts);
  return facts.platform.container_runtime;
}

}  // namespace

TEST(Containers, HostWithoutToolkit) {
  auto c = probe_root("ctr_host_no_toolkit");
  EXPECT_TRUE(c.toolkit_files.empty());
  EXPECT_EQ(c.docker, "/usr/bin/dockerd");
  EXPECT_EQ(c.docker_config, "/etc/docker/daemon.json");
  EXPECT_TRUE(c.docker_runtimes.empty());
  EXPECT_TRUE(c.cdi_specs.empty());
}

TEST(Containers, HostWithToolkitRegistered) {
  auto c = probe_root("ctr_host_toolkit");
  EXPECT_EQ(c.toolkit_files.size(), 4u);
  EXPECT_EQ(c.toolkit_version, "1.17.8-1");
  EXPECT_EQ(c.docker_runtimes, std::vector<std::string>{"nvidia"});
  EXPECT_EQ(c.docker_cgroup_driver, "systemd");
  EXPECT_TRUE(c.containerd_nvidia);
  EXPECT_EQ(c.cdi_specs, std::vector<std::string>{"/etc/cdi/nvidia.yaml"});
  EXPECT_FALSE(c.docker_snap);
}

TEST(Containers, SnapDocker) {
  auto c = probe_root("ctr_host_snap");
  EXPECT_TRUE(c.docker_snap);
  EXPECT_EQ(c.docker, "/snap/bin/docker");
  EXPECT_EQ(c.docker_config, "/var/snap/docker/current/config/daemon.json");
  EXPECT_TRUE(c.docker_runtimes.empty());
}

TEST(Containers, InsideMountsAndCgroup) {
  auto c = probe_root("ctr_inside");
  EXPECT_EQ(c.cgroup_version, 2);
  EXPECT_EQ(c.driver_mounts_total, 6);  // libs, nvidia-smi, persistenced socket, /dev/nvidia0, /proc/driver/nvidia
  ASSERT_FALSE(c.driver_mounts.empty());
  EXPECT_EQ(c.driver_mounts[0], "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04");
  EXPECT_TRUE(c.toolkit_files.empty());
}

TEST(Containers, BrokenDaemonJsonIsANoteNotAFailure) {
  std::string dir = ::testing::TempDir() + "/ctr_broken";
  std::filesystem::create_directories(dir + "/etc/docker");
  { std::ofstream(dir + "/etc/docker/daemon.json") << "{ \"runtimes\": { nvidia"; }
  cd::ProbeOptions opts;
  opts.root = cd::Root(dir);
  cd::Facts facts;
  cd::probe_containers(facts, opts);
  EXPECT_EQ(facts.platform.container_runtime.docker_config_error, "not a JSON object");
}
