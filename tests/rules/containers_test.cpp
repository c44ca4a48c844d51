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
  EXPECT_TRUE(find(run(f), "container.toolkit_missing").has_value());
  f.platform.container = "docker";  // inside a container the host's toolkit is not visible
  EXPECT_TRUE(run(f).empty());
}
