// watch (perf.*, memory.near_full): what a watched run shows about how the job used its GPUs — starved by its input
// (GPUs idle while its CPUs are busy), waiting on something else (GPUs and CPUs idle), never
// on a GPU, one GPU of several, memory near full, clocks slowed down and why. Thresholds
// are data/watch.toml [watch]; nothing is judged on a run shorter than its minimum.
#include <algorithm>

#include <fmt/format.h>

#include "kb/watch.hpp"
#include "rules/rules.hpp"
#include "rules/watch_rules.hpp"

namespace cd {
namespace {

std::string gpu_list(const WatchModel& m, const std::vector<size_t>& positions) {
  std::string s;
  for (size_t i : positions) s += (s.empty() ? "" : ", ") + std::to_string(m.gpus[i].gpu->index);
  return s;
}

std::string job_name(const WatchModel& m) {
  const WatchFacts& f = *m.facts;
  if (f.mode == "command" && !f.command.empty()) return f.command.front();
  if (f.mode == "pid") return fmt::format("pid {}", f.root_pid);
  return "the GPU processes";
}

Evidence idle_evidence(const WatchModel& m, const WatchThresholds& th) {
  return {fmt::format("GPU {} below {:.0f} % utilization in {} of {} samples ({:.0f} %) over {:.0f} s{}", gpu_list(m, m.job_gpus),
                      th.idle_util_percent, m.idle_ticks, m.gpu_ticks,
                      100.0 * static_cast<double>(m.idle_ticks) / static_cast<double>(m.gpu_ticks), m.duration_s - m.judge_from_t,
                      m.judge_from_t > 0 ? fmt::format(" (from the job's first GPU context at {:.1f} s)", m.judge_from_t) : ""),
          "nvmlDeviceGetUtilizationRates"};
}

Evidence cpu_evidence(const WatchModel& m) {
  std::string busiest;
  for (size_t i = 0; i < m.procs.size() && i < 3; ++i)
    busiest += fmt::format("{}{} {} {:.2f}", i ? ", " : "", m.procs[i].comm, m.procs[i].pid, m.procs[i].cpu_mean_cores);
  return {fmt::format("the job's {} processes used {:.2f} cores while the GPUs were idle ({:.2f} on average; busiest: {})",
                      m.procs.size(), m.job_cpu_idle_cores, m.job_cpu_mean_cores, busiest),
          "/proc/PID/stat utime+stime"};
}

void starved(const WatchModel& m, const WatchThresholds& th, Findings& out) {
  if (m.gpu_ticks == 0 || static_cast<double>(m.idle_ticks) < th.idle_fraction * static_cast<double>(m.gpu_ticks)) return;
  bool cpu_bound = m.job_cpu_idle_cores >= th.busy_cpu_cores;
  std::string subject = "GPU " + gpu_list(m, m.job_gpus);
  if (cpu_bound) {
    Finding x = new_finding("perf.input_bound", Severity::warning, subject,
                            fmt::format("{} is input-bound: its GPUs sat idle {:.0f} % of the time while its CPUs were busy",
                                        job_name(m), 100.0 * static_cast<double>(m.idle_ticks) / static_cast<double>(m.gpu_ticks)),
                            "perf");
    x.evidence = {idle_evidence(m, th), cpu_evidence(m)};
    x.explanation = "The GPU waits for the next batch: data loading, decoding or augmentation on the CPU is slower than "
                    "the step on the GPU. More loader workers, pinned memory and prefetching overlap it with the GPU work.";
    x.fix = {"# PyTorch: DataLoader(..., num_workers=N, pin_memory=True, prefetch_factor=2, persistent_workers=True)",
             "# move decoding/augmentation to the GPU (torchvision.transforms.v2 on CUDA tensors, NVIDIA DALI)",
             "# check: cuda-doctor watch -- CMD again; the GPU idle share should fall"};
    out.push_back(std::move(x));
    return;
  }
  Finding x = new_finding("perf.gpu_idle", Severity::warning, subject,
                          fmt::format("{} left its GPUs idle {:.0f} % of the time and was not busy on the CPU either: it waits",
                                      job_name(m), 100.0 * static_cast<double>(m.idle_ticks) / static_cast<double>(m.gpu_ticks)),
                          "perf");
  x.evidence = {idle_evidence(m, th), cpu_evidence(m)};
  if (m.iowait_idle_percent >= 0)
    x.evidence.push_back({fmt::format("the machine's CPUs were in I/O wait {:.1f} % of the time while the GPUs were idle", m.iowait_idle_percent),
                          "/proc/stat iowait"});
  x.explanation = "Neither the GPU nor the CPU is the bottleneck: the job waits on storage, the network, a lock or a "
                  "sleep, or synchronises too often (per-step .item()/.cpu(), logging).";
  x.fix = {"# I/O wait high: read from local disk, cache the dataset, more DataLoader workers",
           "# profile one step: python -m torch.utils.bottleneck SCRIPT, or torch.profiler"};
  out.push_back(std::move(x));
}

void no_gpu_use(const WatchModel& m, const WatchThresholds& th, Findings& out) {
  Finding x = new_finding("perf.gpu_not_used", Severity::warning, job_name(m),
                          fmt::format("{} never used a GPU: NVML listed none of its processes and no GPU was busy", job_name(m)), "perf");
  double best = 0;
  for (const auto& g : m.gpus) best = std::max(best, g.mean_util);
  x.evidence = {{fmt::format("{} processes watched over {:.0f} s; no GPU context; highest mean GPU utilization {:.0f} % (busy ≥ {:.0f} %)",
                             m.procs.size(), m.duration_s, best, th.busy_util_percent),
                 "nvmlDeviceGetComputeRunningProcesses"}};
  x.explanation = "The job ran on the CPU: a CPU-only framework build, a device never set (tensors left on 'cpu'), or "
                  "CUDA_VISIBLE_DEVICES hiding the GPUs. Inside a container NVML may list host PIDs this namespace "
                  "cannot match — then run watch on the host.";
  x.fix = {"python -c 'import torch; print(torch.cuda.is_available(), torch.version.cuda)'", "cuda-doctor check   # the stack, layer by layer"};
  out.push_back(std::move(x));
}

void single_gpu(const WatchModel& m, const WatchThresholds& th, Findings& out) {
  if (m.gpus.size() < 2) return;
  const WatchFacts& f = *m.facts;
  std::vector<size_t> busy, others_idle;
  for (size_t i = 0; i < m.gpus.size(); ++i) {
    if (m.gpus[i].busy_fraction >= 0.5) busy.push_back(i);
    else if (1.0 - m.gpus[i].idle_fraction <= 1.0 - th.others_idle_fraction) others_idle.push_back(i);
  }
  bool job = f.mode != "machine" && m.contexts_known && m.job_gpus.size() == 1;
  bool machine = busy.size() == 1 && others_idle.size() == m.gpus.size() - 1;
  if (!job && !machine) return;
  if (job && others_idle.size() + 1 < m.gpus.size()) return;  // the other GPUs are busy with something else
  size_t used = job ? m.job_gpus.front() : busy.front();
  Finding x = new_finding("perf.single_gpu_used", job ? Severity::warning : Severity::info, fmt::format("GPU {}", m.gpus[used].gpu->index),
                          fmt::format("{} used only GPU {} of {}; the others stayed idle", job_name(m), m.gpus[used].gpu->index, m.gpus.size()),
                          "perf");
  for (size_t i = 0; i < m.gpus.size(); ++i)
    x.evidence.push_back({fmt::format("GPU {}: mean utilization {:.0f} %, idle {:.0f} % of the time{}", m.gpus[i].gpu->index,
                                      m.gpus[i].mean_util, 100 * m.gpus[i].idle_fraction, i == used && job ? " (the job's context)" : ""),
                          "nvmlDeviceGetUtilizationRates"});
  x.explanation = "One Python process drives one GPU: a plain `python train.py` uses cuda:0 only. To use every GPU, start "
                  "one process per GPU (DistributedDataParallel) — nn.DataParallel is slower and single-process.";
  x.fix = {fmt::format("torchrun --standalone --nproc_per_node={} train.py   # with DistributedDataParallel in the script", m.gpus.size()),
           "# or run independent jobs side by side: CUDA_VISIBLE_DEVICES=1 python other.py"};
  out.push_back(std::move(x));
}

void memory_near_full(const WatchModel& m, const WatchThresholds& th, Findings& out) {
  for (size_t i : m.job_gpus) {
    const WatchGpuStats& g = m.gpus[i];
    if (g.peak_mem_percent < th.memory_near_full_percent) continue;
    Finding x = new_finding("memory.near_full", Severity::warning, fmt::format("GPU {}", g.gpu->index),
                            fmt::format("GPU {} memory peaked at {:.0f} % ({:.0f} of {} MiB): the next larger batch fails with out of memory",
                                        g.gpu->index, g.peak_mem_percent, g.peak_mem_mib, g.gpu->memory_total_mib),
                            "memory");
    x.evidence = {{fmt::format("used memory peak {:.0f} MiB, mean {:.0f} % of {} MiB", g.peak_mem_mib, g.mean_mem_percent, g.gpu->memory_total_mib),
                   "nvmlDeviceGetMemoryInfo"}};
    x.explanation = "Frameworks cache freed memory, so a near-full GPU may be the allocator's reserve; still, a longer "
                    "sequence, a larger batch or another process on this GPU will not fit.";
    x.fix = {"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True   # less fragmentation (PyTorch)",
             "# smaller batch with gradient accumulation, activation checkpointing, bf16/fp16",
             "cuda-doctor ps   # who else holds memory on it"};
    out.push_back(std::move(x));
  }
}

void throttled(const WatchModel& m, const WatchThresholds& th, Findings& out) {
  for (size_t i : m.job_gpus) {
    const WatchGpuStats& g = m.gpus[i];
    if (g.busy_ticks < th.min_samples) continue;
    std::vector<const ThrottleReason*> slow, power;
    for (const auto& r : th.reasons) {
      auto it = g.reason_busy_ticks.find(r.name);
      if (it == g.reason_busy_ticks.end() || static_cast<double>(it->second) < th.throttle_fraction * static_cast<double>(g.busy_ticks)) continue;
      if (r.kind == "slowdown") slow.push_back(&r);
      if (r.kind == "power") power.push_back(&r);
    }
    if (slow.empty() && power.empty()) continue;
    const auto& shown = slow.empty() ? power : slow;
    std::string why;
    for (const auto* r : shown) why += (why.empty() ? "" : ", ") + r->label;
    Finding x = new_finding("perf.clocks_throttled", slow.empty() ? Severity::info : Severity::warning, fmt::format("GPU {}", g.gpu->index),
                            fmt::format("GPU {} clocks were held down while busy: {}", g.gpu->index, why), "perf");
    for (const auto* r : shown)
      x.evidence.push_back({fmt::format("{} active in {} of {} busy samples", r->name, g.reason_busy_ticks.at(r->name), g.busy_ticks),
                            "nvmlDeviceGetCurrentClocksEventReasons"});
    if (g.mean_busy_sm_clock > 0 && g.gpu->max_sm_clock_mhz > 0)
      x.evidence.push_back({fmt::format("SM clock {:.0f} MHz on average while busy (max {} MHz)", g.mean_busy_sm_clock, g.gpu->max_sm_clock_mhz),
                            "nvmlDeviceGetClockInfo"});
    if (g.max_temp_c > 0 || g.max_power_w > 0)
      x.evidence.push_back({fmt::format("peak {} °C, {:.0f} W (limit {:.0f} W)", g.max_temp_c, g.max_power_w, g.gpu->power_limit_w),
                            "nvmlDeviceGetTemperature, nvmlDeviceGetPowerUsage"});
    if (slow.empty()) {
      x.explanation = "The GPU runs at its power limit: expected under full load on data-center GPUs, and the clock follows "
                      "the power budget. A lowered limit (nvidia-smi -pl) costs speed.";
      x.fix = {fmt::format("nvidia-smi -q -d POWER -i {}   # current vs default power limit", g.gpu->index)};
    } else {
      x.explanation = "Thermal or hardware slowdown: the GPU is too hot, its power supply asserted a brake, or a "
                      "hardware protection tripped. It runs slower than it can until the cause is fixed.";
      x.fix = {fmt::format("nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i {}   # which reason, temperatures, limits", g.gpu->index),
               "# check airflow / fans / data-center cooling; ask the admin about power-brake events", "sudo dmesg | grep -i -E 'NVRM|Xid'"};
    }
    out.push_back(std::move(x));
  }
}

}  // namespace

Findings watch_rules(const WatchModel& m, const Kb& kb) {
  const WatchThresholds& th = watch_thresholds(kb);
  Findings out;
  if (!m.enough || m.gpus.empty()) return out;
  double best = 0;
  for (const auto& g : m.gpus) best = std::max(best, g.mean_util);
  // Not when NVML lists PIDs we cannot see: the job's own context may be one of them (a container).
  if (m.facts->mode != "machine" && !m.contexts_known && !m.hidden_contexts && best < th.busy_util_percent) no_gpu_use(m, th, out);
  else starved(m, th, out);
  single_gpu(m, th, out);
  memory_near_full(m, th, out);
  throttled(m, th, out);
  sort_by_severity(out);
  return out;
}

}  // namespace cd
