// derive/watch: CPU in cores from cumulative ticks, a worker's CPU counted for the GPU its
// nearest ancestor has a context on, idle ticks and the job's GPUs, thinned samples.
#include <gtest/gtest.h>

#include "derive/watch.hpp"
#include "kb/kb.hpp"

namespace {

cd::ProcTick proc(int pid, int ppid, uint64_t ticks, std::string comm = "python") { return {pid, ppid, std::move(comm), "R", ticks, 0}; }

cd::GpuTick gpu(int index, int util, std::vector<int> pids, int64_t used = 1000) {
  cd::GpuTick g;
  g.index = index;
  g.util = util;
  g.mem_used_mib = used;
  g.pids = std::move(pids);
  return g;
}

// Two GPUs; pid 100 has a context on GPU 0 and a data-loader child 101 without one; pid 200
// (not part of the job) is on GPU 1. Each tick 0.5 s apart; 100 uses 0.2 cores, 101 one core.
cd::WatchFacts facts(int util0, size_t ticks = 21) {
  cd::WatchFacts f;
  f.mode = "command";
  f.clk_tck = 100;
  f.interval_s = 0.5;
  f.gpus = {{0, "NVIDIA H200", "GPU-0", 143771, 1980, 700}, {1, "NVIDIA H200", "GPU-1", 143771, 1980, 700}};
  for (size_t k = 0; k < ticks; ++k) {
    cd::WatchSample s;
    s.t = 0.5 * static_cast<double>(k);
    s.gpu = true;
    s.gpus = {gpu(0, util0, {100}), gpu(1, 0, {200})};
    s.procs = {proc(100, 1, 10 * k), proc(101, 100, 50 * k, "pt_data_worker")};
    s.cpu_total_ticks = 200 * k;
    s.cpu_iowait_ticks = 10 * k;
    f.samples.push_back(std::move(s));
  }
  return f;
}

}  // namespace

TEST(WatchDerive, CpuCoresFromTicksAndWorkersCountForTheirParentsGpu) {
  cd::WatchFacts f = facts(0);
  cd::WatchPoint p = cd::watch_point(f, &f.samples[1], f.samples[2], f.samples[2].gpus);
  EXPECT_DOUBLE_EQ(p.job_cpu_cores, 1.2);
  EXPECT_DOUBLE_EQ(p.gpu_cpu_cores[0], 1.2);
  EXPECT_DOUBLE_EQ(p.gpu_cpu_cores[1], 0);
  EXPECT_DOUBLE_EQ(p.iowait_percent, 5);
  EXPECT_EQ(cd::watch_point(f, nullptr, f.samples[0], f.samples[0].gpus).job_cpu_cores, 0) << "no change before the second tick";
}

TEST(WatchDerive, JobGpusIdleTicksAndProcesses) {
  cd::WatchFacts f = facts(3);
  cd::WatchModel m = cd::derive_watch(f, cd::Kb::get());
  EXPECT_TRUE(m.contexts_known);
  ASSERT_EQ(m.job_gpus.size(), 1u);
  EXPECT_EQ(m.job_gpus[0], 0u);
  EXPECT_TRUE(m.gpus[0].job_used);
  EXPECT_FALSE(m.gpus[1].job_used);
  EXPECT_EQ(m.gpu_ticks, 21u);
  EXPECT_EQ(m.idle_ticks, 20u) << "the first tick has no CPU change yet and is not judged idle";
  EXPECT_NEAR(m.job_cpu_idle_cores, 1.2, 1e-9);
  EXPECT_TRUE(m.enough);
  ASSERT_EQ(m.procs.size(), 2u);
  EXPECT_EQ(m.procs[0].pid, 101) << "busiest first";
  EXPECT_TRUE(m.procs[0].gpus.empty());
  EXPECT_EQ(m.procs[1].gpus, std::vector<int>{0});
  EXPECT_NEAR(m.gpus[0].cpu_mean_cores, 1.2, 1e-9);
}

TEST(WatchDerive, BusyGpuHasNoIdleTicksAndShortRunsAreNotJudged) {
  cd::WatchModel m = cd::derive_watch(facts(90), cd::Kb::get());
  EXPECT_EQ(m.idle_ticks, 0u);
  EXPECT_DOUBLE_EQ(m.gpus[0].busy_fraction, 1.0);
  cd::WatchFacts short_run = facts(90, 4);
  EXPECT_FALSE(cd::derive_watch(short_run, cd::Kb::get()).enough);
}

TEST(WatchDerive, ThrottleReasonNamesFromTheTable) {
  auto names = cd::throttle_names(0x24, cd::Kb::get());
  EXPECT_EQ(names, (std::vector<std::string>{"sw_power_cap", "sw_thermal"}));
}

TEST(WatchDerive, StartUpBeforeTheFirstContextIsNotJudged) {
  // Ten ticks of start-up (imports: CPU busy, no context yet, GPU idle), then a busy GPU.
  cd::WatchFacts f = facts(95);
  for (size_t k = 0; k < 10; ++k) {
    f.samples[k].gpus[0].util = 0;
    f.samples[k].gpus[0].pids.clear();
  }
  cd::WatchModel m = cd::derive_watch(f, cd::Kb::get());
  EXPECT_EQ(m.judge_from, 10u);
  EXPECT_DOUBLE_EQ(m.judge_from_t, 5.0);
  EXPECT_EQ(m.gpu_ticks, 11u);
  EXPECT_EQ(m.idle_ticks, 0u) << "the idle start-up ticks are not counted";
  EXPECT_TRUE(m.enough) << "5 s judged";
  EXPECT_NEAR(m.gpus[0].idle_fraction, 10.0 / 21, 1e-9) << "the per-GPU statistics still cover the whole run";
}
