#pragma once
// `watch`: what was observed while a job ran — per tick each GPU's NVML readings (from the
// `__sample` child) and the job's processes from /proc (raw cumulative CPU ticks; percentages
// are derived in derive/watch.cpp). Observations only: no thresholds, no verdicts.
#include <cstdint>
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

// What a GPU is, read once when the sampler starts.
struct WatchGpu {
  int index = 0;  // NVML index
  std::string name, uuid;
  uint64_t memory_total_mib = 0;
  int max_sm_clock_mhz = -1;     // nvmlDeviceGetMaxClockInfo(SM)
  double power_limit_w = -1;     // nvmlDeviceGetEnforcedPowerLimit
};
CD_JSON(WatchGpu, index, name, uuid, memory_total_mib, max_sm_clock_mhz, power_limit_w)

// One GPU at one tick; -1 where NVML did not answer (not supported, or not asked this tick).
struct GpuTick {
  int index = 0;
  int util = -1;        // nvmlDeviceGetUtilizationRates .gpu: % of time a kernel ran
  int mem_util = -1;    // .memory: % of time device memory was read or written
  int64_t mem_used_mib = -1;
  double power_w = -1;  // nvmlDeviceGetPowerUsage
  int sm_clock_mhz = -1;
  int temp_c = -1;
  uint64_t throttle = 0;   // nvmlDeviceGetCurrentClocksEventReasons bit mask
  int pcie_rx_kbs = -1;    // nvmlDeviceGetPcieThroughput, KB/s (asked about once a second)
  int pcie_tx_kbs = -1;
  std::vector<int> pids;   // processes with a context on it (compute and graphics lists)
};
CD_JSON(GpuTick, index, util, mem_util, mem_used_mib, power_w, sm_clock_mhz, temp_c, throttle, pcie_rx_kbs, pcie_tx_kbs, pids)

// One process of the watched tree at one tick, from /proc/PID/stat.
struct ProcTick {
  int pid = 0, ppid = 0;
  std::string comm;
  std::string state;         // stat state letter
  uint64_t cpu_ticks = 0;    // utime + stime (CLK_TCK units, cumulative)
  uint64_t blkio_ticks = 0;  // delayacct_blkio_ticks (0 unless the kernel's delay accounting is on)
};
CD_JSON(ProcTick, pid, ppid, comm, state, cpu_ticks, blkio_ticks)

struct WatchSample {
  double t = 0;  // seconds since the watch started
  bool gpu = false;  // the GPU readings below are fresh for this tick
  std::vector<GpuTick> gpus;
  std::vector<ProcTick> procs;
  uint64_t cpu_total_ticks = 0, cpu_iowait_ticks = 0, cpu_idle_ticks = 0;  // /proc/stat "cpu" line, cumulative
  // PIDs NVML lists that this PID namespace does not show (another container's, the host's
  // PID of a process in this container, or gone): which process they are is unknown here.
  std::vector<int> hidden_pids;
};
CD_JSON(WatchSample, t, gpu, gpus, procs, cpu_total_ticks, cpu_iowait_ticks, cpu_idle_ticks, hidden_pids)

// The watcher's own cost, so the overhead promise is checked on every run.
struct WatchOverhead {
  double wall_s = 0;
  double watcher_cpu_s = 0;  // getrusage(RUSAGE_SELF): the watcher's threads (the command itself is a child, not counted)
  double sampler_cpu_s = 0;  // the __sample child's utime + stime (/proc/PID/stat before it is stopped)
};
CD_JSON(WatchOverhead, wall_s, watcher_cpu_s, sampler_cpu_s)

struct WatchFacts {
  std::string mode;                  // "command", "pid", "machine"
  std::vector<std::string> command;  // -- CMD…
  int root_pid = 0;                  // the command's or --pid's PID (0: the whole machine)
  double interval_s = 0.5;
  double started_unix = 0;
  int command_exit = -1;             // the command's exit code (-1: it did not exit normally)
  int command_signal = 0;
  int cpus = 0;                      // online CPUs (sysconf)
  long clk_tck = 100;
  std::string gpu_error;             // why there are no GPU readings ("" when the sampler answered)
  std::vector<WatchGpu> gpus;
  std::vector<WatchSample> samples;
  uint64_t samples_dropped = 0;      // thinned out to bound memory on long runs (every other one, repeatedly)
  WatchOverhead overhead;
  std::vector<std::string> notes;
};
CD_JSON(WatchFacts, mode, command, root_pid, interval_s, started_unix, command_exit, command_signal, cpus, clk_tck,
        gpu_error, gpus, samples, samples_dropped, overhead, notes)

}  // namespace cd
