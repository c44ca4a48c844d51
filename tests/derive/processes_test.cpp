// derive/processes: where a GPU process lives (cgroup layouts of Docker, containerd,
// CRI-O, Podman under Kubernetes or not, Slurm v1/v2, systemd), its state, owner, age and
// idle time, and each GPU's unaccounted memory.
#include <gtest/gtest.h>

#include "derive/derive_parts.hpp"
#include "derive/model.hpp"

namespace {

const std::string kId = "3f2a1b0c4d5e6f708192a3b4c5d6e7f80123456789abcdef0123456789abcdef";

}  // namespace

TEST(ProcessPlace, DockerSystemdAndCgroupfsDrivers) {
  auto p = cd::process_place("0::/system.slice/docker-" + kId + ".scope\n", "");
  EXPECT_EQ(p.container_runtime, "docker");
  EXPECT_EQ(p.container_id, kId);
  EXPECT_EQ(p.systemd_unit, "");  // the container's scope is not reported as a unit
  EXPECT_EQ(p.label, "docker container 3f2a1b0c4d5e");
  p = cd::process_place("12:pids:/docker/" + kId + "\n11:memory:/docker/" + kId + "\n0::/\n", "");
  EXPECT_EQ(p.container_runtime, "docker");
  EXPECT_EQ(p.container_id, kId);
}

TEST(ProcessPlace, KubernetesPods) {
  auto p = cd::process_place(
      "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f60_4a1b_9c2d_0e1f2a3b4c5d.slice/"
      "cri-containerd-" + kId + ".scope\n", "");
  EXPECT_EQ(p.pod_uid, "1b2c3d4e-5f60-4a1b-9c2d-0e1f2a3b4c5d");
  EXPECT_EQ(p.container_runtime, "containerd");
  EXPECT_EQ(p.container_id, kId);
  EXPECT_EQ(p.label, "k8s pod 1b2c3d4e-5f60-4a1b-9c2d-0e1f2a3b4c5d, containerd container 3f2a1b0c4d5e");
  p = cd::process_place("0::/kubepods/besteffort/pod1b2c3d4e-5f60-4a1b-9c2d-0e1f2a3b4c5d/" + kId + "\n", "");
  EXPECT_EQ(p.pod_uid, "1b2c3d4e-5f60-4a1b-9c2d-0e1f2a3b4c5d");
  EXPECT_EQ(p.container_id, kId);
  p = cd::process_place("0::/kubepods.slice/kubepods-pod1b2c3d4e_5f60_4a1b_9c2d_0e1f2a3b4c5d.slice/crio-" + kId + ".scope\n", "");
  EXPECT_EQ(p.container_runtime, "cri-o");
}

TEST(ProcessPlace, PodmanSlurmSystemd) {
  auto p = cd::process_place("0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + kId + ".scope/container\n", "");
  EXPECT_EQ(p.container_runtime, "podman");
  p = cd::process_place("0::/system.slice/slurmstepd.scope/job_4711/step_0/user/task_0\n", "");
  EXPECT_EQ(p.slurm_job, "4711");
  EXPECT_EQ(p.label, "slurm job 4711, systemd slurmstepd.scope");
  p = cd::process_place("7:memory:/slurm/uid_1000/job_99/step_batch/task_0\n0::/\n", "");
  EXPECT_EQ(p.slurm_job, "99");
  p = cd::process_place("0::/system.slice/slurmstepd.scope/job_1/step_0\n", "123");  // environ wins
  EXPECT_EQ(p.slurm_job, "123");
  p = cd::process_place("0::/system.slice/jupyterhub.service\n", "");
  EXPECT_EQ(p.systemd_unit, "jupyterhub.service");
  EXPECT_EQ(p.label, "systemd jupyterhub.service");
  p = cd::process_place("0::/user.slice/user-1000.slice/session-3.scope\n", "");
  EXPECT_EQ(p.systemd_unit, "session-3.scope");
  EXPECT_EQ(cd::process_place("0::/\n", "").label, "");
  EXPECT_EQ(cd::process_place("garbage", "").label, "");
}

TEST(DeriveProcesses, StatesOwnerAgeIdle) {
  cd::Facts f;
  cd::GpuInfo g;
  g.nvml_index = 0;
  g.uuid = "GPU-a";
  g.memory_total_mib = 100000;
  g.memory_used_mib = 96000;
  g.process_samples_from_us = 1'000'000'000ull * 1'000'000ull;  // unix 1e9 s
  f.driver.gpus.push_back(g);
  f.driver.queried_unix = 1e9 + 1000;
  f.driver.viewer_uid = 1000;
  auto add = [&](int pid, std::string state, int uid) {
    cd::GpuProcess p;
    p.pid = pid;
    p.gpu_uuid = "GPU-a";
    p.used_mib = 1000;
    p.state = state;
    p.alive = !state.empty();
    p.uid = uid;
    p.start_unix = 1e9 - 3600;
    f.driver.processes.push_back(p);
  };
  add(1, "T", 1000);
  add(2, "Z", 1000);
  add(3, "", -1);
  add(4, "D", 0);
  add(5, "R", 1001);
  f.driver.processes[1].zombie = true;
  f.driver.processes[4].last_active_us = static_cast<uint64_t>((1e9 + 990) * 1e6);
  f.driver.processes[4].nspid = {5, 1};
  const cd::Model m = cd::derive(f, cd::Kb::get());
  ASSERT_EQ(m.processes.size(), 5u);
  EXPECT_EQ(m.processes[0].state, cd::ProcState::stopped);
  EXPECT_EQ(m.processes[1].state, cd::ProcState::zombie);
  EXPECT_EQ(m.processes[2].state, cd::ProcState::gone);
  EXPECT_EQ(m.processes[3].state, cd::ProcState::disk_sleep);
  EXPECT_EQ(m.processes[4].state, cd::ProcState::running);
  EXPECT_TRUE(m.processes[0].own);
  EXPECT_FALSE(m.processes[4].own);
  EXPECT_NEAR(m.processes[0].age_s, 4600, 1);
  EXPECT_NEAR(m.processes[0].idle_s, 1000, 1);  // no sample of its own: the buffer's span, a lower bound
  EXPECT_TRUE(m.processes[0].idle_lower_bound);
  EXPECT_NEAR(m.processes[4].idle_s, 10, 1);
  EXPECT_FALSE(m.processes[4].idle_lower_bound);
  EXPECT_EQ(m.processes[4].container_pid, 1);
  EXPECT_EQ(m.processes[0].container_pid, -1);
  ASSERT_EQ(m.gpu_memory.size(), 1u);
  EXPECT_EQ(m.gpu_memory[0].accounted_mib, 5000u);
  EXPECT_EQ(m.gpu_memory[0].unaccounted_mib, 91000u);
  EXPECT_TRUE(m.gpu_memory[0].near_full);
  f.platform.container = "docker";  // a host PID from another namespace, not a dead one
  const cd::Model in_container = cd::derive(f, cd::Kb::get());
  EXPECT_EQ(in_container.processes[2].state, cd::ProcState::not_visible);
}

TEST(DeriveProcesses, HoldersWithoutContext) {
  cd::DriverFacts d;
  d.processes.push_back({});
  d.processes[0].pid = 10;
  d.device_holders.push_back({10, 0, "root", "python", "", {"/dev/nvidia0"}, {}});
  d.device_holders.push_back({11, 0, "root", "nvidia-persiste", "", {"/dev/nvidiactl"}, {}});
  auto h = cd::holders_without_context(d);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0]->pid, 11);
}
