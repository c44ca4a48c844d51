// The platform probe on hermetic --root trees (tests/fixtures/roots/platform_* and driver_*):
// container kind, WSL version, stub and cuda-compat directories on the search path.
#include <gtest/gtest.h>

#include "probe/probe.hpp"

namespace {

cd::PlatformFacts probe_root(const std::string& name, std::map<std::string, std::string> env = {}) {
  cd::ProbeOptions opts;
  opts.root = cd::Root(std::string(CD_FIXTURES) + "/roots/" + name);
  opts.env = std::move(env);
  cd::Facts facts;
  cd::probe_platform(facts, opts);
  return facts.platform;
}

}  // namespace

TEST(PlatformProbe, Docker) {
  auto p = probe_root("platform_docker_nogpu");
  EXPECT_EQ(p.container, "docker");
  EXPECT_EQ(p.container_evidence, "/.dockerenv exists");
  EXPECT_FALSE(p.wsl);
}

TEST(PlatformProbe, KubernetesFromCgroupAndEnv) {
  EXPECT_EQ(probe_root("platform_k8s").container, "kubernetes");
  auto p = probe_root("driver_ok", {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}});
  EXPECT_EQ(p.container, "kubernetes");
  EXPECT_EQ(p.container_evidence, "KUBERNETES_SERVICE_HOST is set");
}

TEST(PlatformProbe, Podman) { EXPECT_EQ(probe_root("platform_podman").container, "podman"); }

TEST(PlatformProbe, NoContainer) { EXPECT_EQ(probe_root("driver_ok").container, ""); }

TEST(PlatformProbe, Wsl2) {
  auto p = probe_root("platform_wsl2_linux_driver");
  EXPECT_TRUE(p.wsl);
  EXPECT_EQ(p.wsl_version, 2);
  EXPECT_TRUE(p.wsl_lib_dir);
  EXPECT_TRUE(p.dev_dxg);
  EXPECT_NE(p.wsl_evidence.find("microsoft-standard-WSL2"), std::string::npos);
}

TEST(PlatformProbe, Wsl1) {
  auto p = probe_root("platform_wsl1");
  EXPECT_TRUE(p.wsl);
  EXPECT_EQ(p.wsl_version, 1);
  EXPECT_FALSE(p.wsl_lib_dir);
}

TEST(PlatformProbe, StubDirInLdSoConf) {
  auto p = probe_root("driver_stub_ldconf");
  ASSERT_EQ(p.stub_dirs.size(), 1u);
  EXPECT_EQ(p.stub_dirs[0].dir, "/usr/local/cuda-13.0/lib64/stubs");
  EXPECT_EQ(p.stub_dirs[0].via, "/etc/ld.so.conf.d/cuda-stubs.conf");
  EXPECT_EQ(p.stub_dirs[0].files, (std::vector<std::string>{"libcuda.so", "libcuda.so.1"}));
  EXPECT_EQ(p.stub_dirs_on_search_path, std::vector<std::string>{"/usr/local/cuda-13.0/lib64/stubs"});
}

TEST(PlatformProbe, StubDirOnLdLibraryPath) {
  auto p = probe_root("driver_stub_ldconf", {{"LD_LIBRARY_PATH", "/usr/local/cuda-13.0/lib64/stubs:/opt/lib"}});
  ASSERT_EQ(p.stub_dirs.size(), 1u);
  EXPECT_EQ(p.stub_dirs[0].via, "LD_LIBRARY_PATH");  // found there first
}

TEST(PlatformProbe, CompatDir) {
  auto p = probe_root("driver_compat_old");
  ASSERT_EQ(p.compat_dirs.size(), 1u);
  EXPECT_EQ(p.compat_dirs[0].dir, "/usr/local/cuda-13.0/compat");
  EXPECT_TRUE(p.stub_dirs.empty());
}
