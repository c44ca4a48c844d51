// memory_rules: memory held by a gone / zombie / stopped / D-state / idle process, by
// another user, and memory no process accounts for — each with the safe command for the
// case (own process: kill; someone else's: ask them; reset only when nothing holds it).
#include <gtest/gtest.h>

#include "rules/finding_helpers.hpp"
#include "rules/rules.hpp"
#include "rules/run_rule.hpp"

namespace {

cd::Facts one_gpu() {
  cd::Facts f;
  cd::GpuInfo g;
  g.nvml_index = g.cuda_index = 0;
  g.uuid = "GPU-0a1b2c3d-0000";
  g.name = "NVIDIA H200";
  g.memory_total_mib = 143771;
  g.memory_used_mib = 2000;
  f.driver.gpus.push_back(g);
  f.driver.viewer_uid = 1000;
  f.driver.queried_unix = 1.7e9;
  return f;
}

cd::GpuProcess proc(int pid, const std::string& state, int uid = 1000, uint64_t mib = 1000) {
  cd::GpuProcess p;
  p.pid = pid;
  p.gpu_uuid = "GPU-0a1b2c3d-0000";
  p.used_mib = mib;
  p.name = state.empty() ? "" : "python3";
  p.alive = !state.empty();
  p.zombie = state == "Z";
  p.state = state;
  p.uid = uid;
  p.user = uid == 1000 ? "me" : uid >= 0 ? "bob" : "";
  p.ppid = 777;
  return p;
}

cd::Findings run(const cd::Facts& f) { return cdtest::run_rule(cd::memory_rules, f); }

using cdtest::find;
using cdtest::fixes;

}  // namespace

TEST(MemoryRules, HealthyProcessesHaveNoFindings) {
  cd::Facts f = one_gpu();
  f.driver.processes.push_back(proc(10, "R"));
  f.driver.processes.push_back(proc(11, "S"));
  EXPECT_TRUE(run(f).empty());
}

TEST(MemoryRules, GoneAndZombie) {
  cd::Facts f = one_gpu();
  f.driver.processes.push_back(proc(31337, "", -1, 20480));
  f.driver.processes.push_back(proc(4000, "Z"));
  f.driver.gpus[0].memory_used_mib = 21480;
  auto all = run(f);
  int n = 0;
  for (const auto& x : all) {
    if (x.id != "memory.held_by_dead_process") continue;
    ++n;
    EXPECT_EQ(x.severity, cd::Severity::warning);
    EXPECT_EQ(x.layer, "memory");
    if (x.subject == "pid 4000") {
      EXPECT_NE(fixes(x).find("kill 777"), std::string::npos) << fixes(x);  // the parent, not the zombie
      EXPECT_EQ(fixes(x).find("kill 4000"), std::string::npos) << fixes(x);
    } else {
      EXPECT_NE(fixes(x).find("--gpu-reset -i 0"), std::string::npos) << fixes(x);
      EXPECT_NE(fixes(x).find("only when nothing holds"), std::string::npos) << fixes(x);
      EXPECT_NE(fixes(x).find("reboot"), std::string::npos) << fixes(x);
    }
  }
  EXPECT_EQ(n, 2);
  f.platform.container = "docker";  // another PID namespace: only info for the vanished one
  for (const auto& x : run(f))
    if (x.subject == "pid 31337") {
      EXPECT_EQ(x.severity, cd::Severity::info);
      EXPECT_EQ(fixes(x).find("--gpu-reset"), std::string::npos);  // never reset from inside a container on a guess
    }
}

TEST(MemoryRules, ZombieOfAnotherUsersParent) {
  cd::Facts f = one_gpu();
  f.driver.processes.push_back(proc(4000, "Z", 1001));
  auto x = find(run(f), "memory.held_by_dead_process");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("ask bob"), std::string::npos) << fixes(*x);
}

TEST(MemoryRules, StoppedOwnAndOthers) {
  cd::Facts f = one_gpu();
  f.driver.processes.push_back(proc(50, "T"));
  auto x = find(run(f), "memory.held_by_stopped_process");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::warning);
  EXPECT_NE(fixes(*x).find("kill -CONT 50"), std::string::npos);
  EXPECT_NE(x->title.find("pid 50"), std::string::npos);
  f.driver.processes[0] = proc(50, "T", 1001);
  x = find(run(f), "memory.held_by_stopped_process");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(fixes(*x).find("ask bob"), std::string::npos) << fixes(*x);
  EXPECT_EQ(fixes(*x).find("kill -CONT"), std::string::npos) << fixes(*x);
}

TEST(MemoryRules, StuckInDState) {
  cd::Facts f = one_gpu();
  f.driver.processes.push_back(proc(60, "D"));
  auto x = find(run(f), "memory.held_by_stuck_process");
  ASSERT_TRUE(x.has_value());
  EXPECT_NE(x->explanation.find("kill -9"), std::string::npos);
}

TEST(MemoryRules, IdleProcessInfoUnlessTheGpuIsFull) {
  cd::Facts f = one_gpu();
  f.driver.processes.push_back(proc(70, "S"));
  f.driver.processes[0].last_active_us = static_cast<uint64_t>((1.7e9 - 3600) * 1e6);
  auto x = find(run(f), "memory.held_by_idle_process");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::info);
  EXPECT_NE(fixes(*x).find("kill 70"), std::string::npos);
  f.driver.gpus[0].memory_used_mib = 140000;
  x = find(run(f), "memory.held_by_idle_process");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::warning);
  f.driver.processes[0].last_active_us = static_cast<uint64_t>((1.7e9 - 5) * 1e6);  // busy 5 s ago
  EXPECT_FALSE(find(run(f), "memory.held_by_idle_process").has_value());
}

TEST(MemoryRules, AnotherUsersProcess) {
  cd::Facts f = one_gpu();
  f.driver.processes.push_back(proc(80, "R", 1001));
  auto x = find(run(f), "memory.held_by_other_user");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::info);
  EXPECT_NE(fixes(*x).find("ask bob"), std::string::npos);
  EXPECT_EQ(fixes(*x).find("kill"), std::string::npos);  // never suggests killing someone else's job
}

TEST(MemoryRules, UnaccountedMemory) {
  cd::Facts f = one_gpu();
  f.driver.processes.push_back(proc(90, "R", 1000, 1000));
  f.driver.gpus[0].memory_used_mib = 1900;  // below the threshold: the driver's own use
  EXPECT_FALSE(find(run(f), "memory.unaccounted").has_value());
  f.driver.gpus[0].memory_used_mib = 9000;
  auto x = find(run(f), "memory.unaccounted");
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->severity, cd::Severity::warning);
  EXPECT_NE(x->title.find("8000 MiB"), std::string::npos) << x->title;
  EXPECT_NE(fixes(*x).find("fuser"), std::string::npos);
  f.platform.container = "kubernetes";
  EXPECT_EQ(find(run(f), "memory.unaccounted")->severity, cd::Severity::info);
}

TEST(MemoryRules, CheckRunsThem) {
  cd::Facts f = one_gpu();
  f.driver.processes.push_back(proc(50, "T"));
  EXPECT_TRUE(find(cdtest::run_rule(cd::check_rules, f), "memory.held_by_stopped_process").has_value());
}
