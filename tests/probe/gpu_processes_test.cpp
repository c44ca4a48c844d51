// probe/gpu_processes: /proc under --root (a hermetic tree built here) for NVML's PIDs —
// state, ppid, uid and user, start time, NSpid, cgroup, SLURM_JOB_ID only — and the
// processes holding /dev/nvidia* open.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "probe/driver_probe.hpp"

namespace fs = std::filesystem;

namespace {

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

struct ProcTree {
  fs::path dir;
  ProcTree() {
    dir = fs::temp_directory_path() / ("cd_proc_" + std::to_string(getpid()));
    fs::remove_all(dir);
    put(dir / "etc/passwd", "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n");
    put(dir / "proc/stat", "cpu  1 2 3\nbtime 1700000000\n");
    fs::path p = dir / "proc/4242";
    // comm with a space and a ')' to check the stat parse; starttime (field 22) 1000 ticks.
    put(p / "stat", "4242 (py (x) y) T 4000 4242 4242 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 1000 100 10\n");
    put(p / "comm", "py (x) y\n");
    put(p / "status", "Name:\tpy\nState:\tT (stopped)\nUid:\t1000\t1000\t1000\t1000\nNSpid:\t4242\t7\n");
    put(p / "cmdline", std::string("python\0train.py\0--lr\0", 22));
    put(p / "cgroup", "0::/system.slice/docker-abc.scope\n");
    put(p / "environ", std::string("HOME=/home/alice\0SECRET=hunter2\0SLURM_JOB_ID=4711\0", 51));
    fs::create_directories(p / "fd");
    fs::create_symlink("/dev/nvidia0", p / "fd/3");
    fs::create_symlink("/dev/nvidiactl", p / "fd/4");
    fs::create_symlink("/dev/null", p / "fd/0");
    fs::path q = dir / "proc/99";
    put(q / "stat", "99 (persistenced) S 1 99 99 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0\n");
    put(q / "comm", "persistenced\n");
    put(q / "status", "Uid:\t0\t0\t0\t0\nNSpid:\t99\n");
    fs::create_directories(q / "fd");
    fs::create_symlink("/dev/nvidiactl", q / "fd/5");
    put(dir / "proc/self/stat", "x");  // not a PID directory
  }
  ~ProcTree() { fs::remove_all(dir); }
};

}  // namespace

TEST(GpuProcesses, ReadsProcUnderRoot) {
  ProcTree t;
  cd::DriverFacts d;
  d.processes.push_back({});
  d.processes[0].pid = 4242;
  d.processes.push_back({});
  d.processes[1].pid = 5555;  // no such process in the tree
  cd::probe_gpu_processes(d, cd::Root(t.dir.string()));
  const auto& p = d.processes[0];
  EXPECT_TRUE(p.alive);
  EXPECT_EQ(p.state, "T");
  EXPECT_EQ(p.ppid, 4000);
  EXPECT_EQ(p.name, "py (x) y");
  EXPECT_EQ(p.uid, 1000);
  EXPECT_EQ(p.user, "alice");
  EXPECT_EQ(p.cmdline, "python train.py --lr");
  EXPECT_NEAR(p.start_unix, 1700000000.0 + 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK)), 1e-6);
  EXPECT_EQ(p.nspid, (std::vector<int>{4242, 7}));
  EXPECT_EQ(p.cgroup, "0::/system.slice/docker-abc.scope\n");
  EXPECT_EQ(p.slurm_job_id, "4711");
  EXPECT_FALSE(d.processes[1].alive);
  EXPECT_EQ(d.processes[1].state, "");
  EXPECT_EQ(d.viewer_uid, static_cast<int>(getuid()));
}

TEST(GpuProcesses, DeviceHolders) {
  ProcTree t;
  cd::DriverFacts d;
  cd::probe_device_holders(d, cd::Root(t.dir.string()));
  EXPECT_TRUE(d.holders_scanned);
  ASSERT_EQ(d.device_holders.size(), 2u);
  const auto& a = d.device_holders[0].pid == 4242 ? d.device_holders[0] : d.device_holders[1];
  const auto& b = d.device_holders[0].pid == 4242 ? d.device_holders[1] : d.device_holders[0];
  EXPECT_EQ(a.devices, (std::vector<std::string>{"/dev/nvidia0", "/dev/nvidiactl"}));
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(b.pid, 99);
  EXPECT_EQ(b.user, "root");
  EXPECT_EQ(b.devices, (std::vector<std::string>{"/dev/nvidiactl"}));
}

TEST(GpuProcesses, RealProcessesOnTheHost) {
  cd::DriverFacts d;
  d.processes.push_back({});
  d.processes[0].pid = static_cast<int>(getpid());
  cd::probe_gpu_processes(d, cd::Root());
  EXPECT_TRUE(d.processes[0].state == "R" || d.processes[0].state == "S") << d.processes[0].state;
  EXPECT_EQ(d.processes[0].uid, static_cast<int>(getuid()));
  EXPECT_GT(d.processes[0].start_unix, 1.6e9);
  EXPECT_EQ(d.processes[0].ppid, static_cast<int>(getppid()));
  ASSERT_FALSE(d.processes[0].nspid.empty());
  EXPECT_EQ(d.processes[0].nspid.front(), static_cast<int>(getpid()));
}
