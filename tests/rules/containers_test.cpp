// container_rules on hand-built facts: device nodes the container may not open (the cgroup
// case after the host's daemon-reload), and what a container or a GPU-less host never gets.
#include <gtest/gtest.h>

#include "kb/kb.hpp"
#include "rules/finding_helpers.hpp"
#include "rules/run_rule.hpp"

namespace {

using cdtest::find;
using cdtest::fixes;

cd::Findings run(const cd::Facts& f) { return cdtest::run_rule(cd::container_rules, f); }

cd::Facts container_lost_devices() {
  cd::Facts f;
  f.platform.container = "docker";
  f.platform.container_evidence = "/.dockerenv exists";
  f.driver.module_loaded = true;
  f.driver.device_nodes = {"/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"};
  f.driver.nvml_status = 999;
  f.driver.nvml_error = "Unknown Error";
  f.driver.device_open_errors = {"/dev/nvidia0: Operation not permitted", "/dev/nvidiactl: Operation not permitted"};
  f.platform.container_runtime.cgroup_version = 2;
  return f;
}

}  // namespace

TEST(ContainerRules, DeviceNodesNotOpenable) {
  auto x = find(run(container_lost_devices()), "container.no_gpu_runtime");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::error);
  EXPECT_NE(x->title.find("may not open them"), std::string::npos);
  EXPECT_NE(fixes(*x).find("nvidia-ctk system create-dev-char-symlinks --create-all"), std::string::npos);
  EXPECT_NE(fixes(*x).find("docker restart"), std::string::npos);
}

TEST(ContainerRules, OtherOpenErrorsAreNotTheCgroupCase) {
  cd::Facts f = container_lost_devices();
  f.driver.device_open_errors = {"/dev/nvidia0: No such device or address"};
  EXPECT_TRUE(run(f).empty());
  f = container_lost_devices();
  f.platform.container.clear();  // on a host EPERM is file permissions, not the runtime
  f.platform.container_runtime = {};
  EXPECT_FALSE(find(run(f), "container.no_gpu_runtime").has_value());
}

TEST(ContainerRules, HostRulesNeedAGpuHost) {
  cd::Facts f;
  f.platform.container_runtime.docker = "/usr/bin/dockerd";
  EXPECT_TRUE(run(f).empty());  // no module, no GPU: a build machine with docker
  f.driver.module_loaded = true;
  auto x = find(run(f), "container.toolkit_missing");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("sudo apt-get install -y nvidia-container-toolkit"), std::string::npos) << fixes(*x);  // nothing known: apt
  // The host's package manager: dnf on a RHEL rebuild, zypper on SUSE, the guide elsewhere.
  cd::Facts rocky = f;
  rocky.host.os_id = "rocky", rocky.host.os_like = "rhel centos fedora", rocky.host.os_version = "9.4";
  x = find(run(rocky), "container.toolkit_missing");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("/etc/yum.repos.d/nvidia-container-toolkit.repo"), std::string::npos) << fixes(*x);
  EXPECT_NE(fixes(*x).find("sudo dnf install -y nvidia-container-toolkit"), std::string::npos) << fixes(*x);
  EXPECT_EQ(fixes(*x).find("apt-get"), std::string::npos) << fixes(*x);
  cd::Facts leap = f;
  leap.host.os_id = "opensuse-leap", leap.host.os_like = "suse opensuse";
  EXPECT_NE(fixes(*find(run(leap), "container.toolkit_missing")).find("sudo zypper --gpg-auto-import-keys install -y nvidia-container-toolkit"),
            std::string::npos);
  cd::Facts arch = f;
  arch.host.os_id = "arch";
  std::string guide = fixes(*find(run(arch), "container.toolkit_missing"));
  EXPECT_NE(guide.find("container-toolkit/latest/install-guide.html"), std::string::npos) << guide;
  EXPECT_EQ(guide.find("install -y"), std::string::npos) << guide;
  f.platform.container = "docker";  // inside a container the host's toolkit is not visible
  EXPECT_TRUE(run(f).empty());
}
