#pragma once
// watch's derived values, each computed once here: per-tick points (GPU utilization and
// memory, the job's CPU in cores, per GPU too), per-GPU and per-process statistics, which
// GPUs the job used, and the idle/busy shares the watch.* rules judge.
#include <map>
#include <string>
#include <vector>

#include "facts/watch.hpp"
#include "kb/kb.hpp"

namespace cd {

// One tick, ready to draw or print. -1: no reading.
struct WatchPoint {
  double t = 0;
  bool gpu = false;                 // fresh GPU readings this tick
  std::vector<double> util;         // per GPU (facts.gpus order), %
  std::vector<double> mem_percent;  // used / total, %
  std::vector<double> power_w;
  std::vector<int> sm_clock_mhz;
  std::vector<uint64_t> throttle;
  std::vector<double> gpu_cpu_cores;  // CPU of the job's processes on each GPU (a process with a context there, or whose nearest ancestor has one)
  double job_cpu_cores = 0;           // every watched process
  double iowait_percent = -1;         // the machine's CPU time in I/O wait since the previous tick
  size_t procs = 0;
};

struct WatchGpuStats {
  const WatchGpu* gpu = nullptr;
  bool job_used = false;   // a watched process had a context on it (or unknown: see contexts_known)
  size_t ticks = 0;        // ticks with a utilization reading
  double mean_util = 0, idle_fraction = 0, busy_fraction = 0;
  size_t busy_ticks = 0;
  double peak_mem_mib = 0, peak_mem_percent = 0, mean_mem_percent = 0;
  double mean_power_w = -1, max_power_w = -1;
  double mean_busy_sm_clock = -1;  // MHz over busy ticks
  int max_temp_c = -1;
  std::map<std::string, size_t> reason_busy_ticks;  // throttle reason name → busy ticks it was active
  double pcie_rx_mean_kbs = -1, pcie_tx_mean_kbs = -1;
  double cpu_mean_cores = 0;
};

struct WatchProcStats {
  int pid = 0, ppid = 0;
  std::string comm, last_state;
  double cpu_mean_cores = 0, cpu_max_cores = 0;
  double blkio_s = 0;      // time blocked on I/O (delay accounting; 0 when off)
  std::vector<int> gpus;   // NVML indices it had a context on
  double first_t = 0, last_t = 0;
};

struct WatchModel {
  const WatchFacts* facts = nullptr;
  double duration_s = 0;
  std::vector<WatchPoint> series;
  std::vector<WatchGpuStats> gpus;
  std::vector<WatchProcStats> procs;  // by mean CPU, busiest first
  bool contexts_known = false;        // NVML listed at least one watched PID on a GPU
  bool hidden_contexts = false;       // NVML listed PIDs this namespace cannot see (a container: host PIDs)
  std::vector<size_t> job_gpus;       // positions in gpus the judgement looks at
  // The job is judged from its first GPU context on (the tick where NVML first lists a
  // watched PID): imports, CUDA initialisation and data set loading before it are not idle
  // GPU time. 0 when no context is known.
  size_t judge_from = 0;
  double judge_from_t = 0;            // its time, seconds since the first sample
  size_t gpu_ticks = 0;               // ticks with fresh GPU readings (from judge_from on)
  size_t idle_ticks = 0;              // …where every job GPU was idle
  double job_cpu_mean_cores = 0;
  double job_cpu_idle_cores = 0;      // mean job CPU over the idle ticks
  double iowait_mean_percent = -1;
  double iowait_idle_percent = -1;    // over the idle ticks
  bool enough = false;                // long enough (data/watch.toml min_seconds, min_samples) to judge
};

// Throttle reasons (data/watch.toml) active in a bit mask, by name, in table order.
std::vector<std::string> throttle_names(uint64_t mask, const Kb& kb);

// The point of `cur` given the sample before it (nullptr for the first): what the live
// status line shows and what derive_watch collects. `contexts`: the newest GPU readings'
// process lists (cur's when fresh, else the last fresh ones), for the per-GPU CPU.
WatchPoint watch_point(const WatchFacts& f, const WatchSample* prev, const WatchSample& cur,
                       const std::vector<GpuTick>& contexts);

WatchModel derive_watch(const WatchFacts& f, const Kb& kb);

}  // namespace cd
