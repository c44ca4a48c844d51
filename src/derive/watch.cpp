// watch's derived values. CPU: the change of each process's utime+stime between two ticks
// over the elapsed time, in cores (1.0 = one core busy); a process seen for the first time
// has no change yet and counts from its second tick. GPU ↔ process: a process belongs to
// the GPUs it has a context on (NVML's process lists), else to its nearest watched
// ancestor's (data-loader workers have no context of their own). The judgement looks at
// the GPUs the job used; when NVML listed none of its PIDs, at the GPUs with PIDs this
// namespace cannot see (inside a container NVML reports host PIDs), else at every GPU; and
// from the job's first GPU context on, so start-up (imports, CUDA init) is not idle time.
#include "derive/watch.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "kb/watch.hpp"

namespace cd {
namespace {

using Contexts = std::unordered_map<int, std::vector<int>>;  // pid → GPU positions (facts.gpus order)

size_t position_of(const WatchFacts& f, int index) {
  for (size_t i = 0; i < f.gpus.size(); ++i)
    if (f.gpus[i].index == index) return i;
  return f.gpus.size();
}

Contexts contexts_of(const WatchFacts& f, const std::vector<GpuTick>& ticks) {
  Contexts c;
  for (const auto& t : ticks) {
    size_t pos = position_of(f, t.index);
    if (pos < f.gpus.size())
      for (int pid : t.pids) c[pid].push_back(static_cast<int>(pos));
  }
  return c;
}

// The GPU positions a process counts for: its own contexts, else its nearest ancestor's.
const std::vector<int>* gpus_of(int pid, const Contexts& ctx, const std::unordered_map<int, int>& parent) {
  for (int hop = 0; hop < 64 && pid > 0; ++hop) {
    if (auto it = ctx.find(pid); it != ctx.end()) return &it->second;
    auto p = parent.find(pid);
    if (p == parent.end()) return nullptr;
    pid = p->second;
  }
  return nullptr;
}

double mean(double sum, size_t n) { return n ? sum / static_cast<double>(n) : 0; }

}  // namespace

std::vector<std::string> throttle_names(uint64_t mask, const Kb& kb) {
  std::vector<std::string> out;
  for (const auto& r : watch_thresholds(kb).reasons)
    if (mask & r.bit) out.push_back(r.name);
  return out;
}

WatchPoint watch_point(const WatchFacts& f, const WatchSample* prev, const WatchSample& cur, const std::vector<GpuTick>& contexts) {
  WatchPoint p;
  size_t n = f.gpus.size();
  p.t = cur.t;
  p.gpu = cur.gpu;
  p.util.assign(n, -1);
  p.mem_percent.assign(n, -1);
  p.power_w.assign(n, -1);
  p.sm_clock_mhz.assign(n, -1);
  p.throttle.assign(n, 0);
  p.gpu_cpu_cores.assign(n, 0);
  p.procs = cur.procs.size();
  if (cur.gpu) {
    for (const auto& g : cur.gpus) {
      size_t i = position_of(f, g.index);
      if (i >= n) continue;
      p.util[i] = g.util;
      if (g.mem_used_mib >= 0 && f.gpus[i].memory_total_mib > 0)
        p.mem_percent[i] = 100.0 * static_cast<double>(g.mem_used_mib) / static_cast<double>(f.gpus[i].memory_total_mib);
      p.power_w[i] = g.power_w;
      p.sm_clock_mhz[i] = g.sm_clock_mhz;
      p.throttle[i] = g.throttle;
    }
  }
  if (!prev || cur.t <= prev->t) return p;
  double dt = cur.t - prev->t, tck = static_cast<double>(f.clk_tck > 0 ? f.clk_tck : 100);
  std::unordered_map<int, uint64_t> before;
  for (const auto& q : prev->procs) before[q.pid] = q.cpu_ticks;
  std::unordered_map<int, int> parent;
  for (const auto& q : cur.procs) parent[q.pid] = q.ppid;
  Contexts ctx = contexts_of(f, contexts);
  for (const auto& q : cur.procs) {
    auto b = before.find(q.pid);
    if (b == before.end() || q.cpu_ticks < b->second) continue;
    double cores = static_cast<double>(q.cpu_ticks - b->second) / tck / dt;
    p.job_cpu_cores += cores;
    if (const auto* gpus = gpus_of(q.pid, ctx, parent))
      for (int i : *gpus) p.gpu_cpu_cores[static_cast<size_t>(i)] += cores;
  }
  if (cur.cpu_total_ticks > prev->cpu_total_ticks && cur.cpu_iowait_ticks >= prev->cpu_iowait_ticks)
    p.iowait_percent = 100.0 * static_cast<double>(cur.cpu_iowait_ticks - prev->cpu_iowait_ticks) /
                       static_cast<double>(cur.cpu_total_ticks - prev->cpu_total_ticks);
  return p;
}

namespace {

struct ProcAccum {
  WatchProcStats s;
  double cpu_sum = 0;
  size_t n = 0;
  uint64_t first_blkio = 0, last_blkio = 0;
  std::set<int> gpus;
};

void accumulate_procs(const WatchFacts& f, const WatchSample* prev, const WatchSample& cur, const Contexts& ctx,
                      std::map<int, ProcAccum>& procs) {
  std::unordered_map<int, uint64_t> before;
  if (prev)
    for (const auto& q : prev->procs) before[q.pid] = q.cpu_ticks;
  double dt = prev ? cur.t - prev->t : 0, tck = static_cast<double>(f.clk_tck > 0 ? f.clk_tck : 100);
  for (const auto& q : cur.procs) {
    auto [it, fresh] = procs.try_emplace(q.pid);
    ProcAccum& a = it->second;
    if (fresh) {
      a.s.pid = q.pid;
      a.s.first_t = cur.t;
      a.first_blkio = q.blkio_ticks;
    }
    a.s.ppid = q.ppid;
    a.s.comm = q.comm;
    a.s.last_state = q.state;
    a.s.last_t = cur.t;
    a.last_blkio = q.blkio_ticks;
    if (auto c = ctx.find(q.pid); c != ctx.end())
      for (int i : c->second) a.gpus.insert(f.gpus[static_cast<size_t>(i)].index);
    auto b = before.find(q.pid);
    if (dt > 0 && b != before.end() && q.cpu_ticks >= b->second) {
      double cores = static_cast<double>(q.cpu_ticks - b->second) / tck / dt;
      a.cpu_sum += cores;
      a.s.cpu_max_cores = std::max(a.s.cpu_max_cores, cores);
      ++a.n;
    }
  }
}

void finish_gpu_stats(const WatchFacts& f, const WatchThresholds& th, WatchModel& m) {
  for (size_t i = 0; i < f.gpus.size(); ++i) {
    WatchGpuStats s;
    s.gpu = &f.gpus[i];
    double util_sum = 0, mem_sum = 0, power_sum = 0, clock_sum = 0, rx_sum = 0, tx_sum = 0, cpu_sum = 0;
    size_t idle = 0, mem_n = 0, power_n = 0, clock_n = 0, rx_n = 0, tx_n = 0, cpu_n = 0;
    for (const auto& p : m.series) {
      if (p.gpu && p.t > 0) cpu_sum += p.gpu_cpu_cores[i], ++cpu_n;
      if (!p.gpu || p.util[i] < 0) continue;
      ++s.ticks;
      util_sum += p.util[i];
      if (p.util[i] < th.idle_util_percent) ++idle;
      bool busy = p.util[i] >= th.busy_util_percent;
      if (p.mem_percent[i] >= 0) {
        mem_sum += p.mem_percent[i], ++mem_n;
        s.peak_mem_percent = std::max(s.peak_mem_percent, p.mem_percent[i]);
      }
      if (p.power_w[i] >= 0) {
        power_sum += p.power_w[i], ++power_n;
        s.max_power_w = std::max(s.max_power_w, p.power_w[i]);
      }
      if (!busy) continue;
      ++s.busy_ticks;
      if (p.sm_clock_mhz[i] >= 0) clock_sum += p.sm_clock_mhz[i], ++clock_n;
      for (const auto& r : th.reasons)
        if (p.throttle[i] & r.bit) ++s.reason_busy_ticks[r.name];
    }
    for (const auto& smp : f.samples)
      for (const auto& g : smp.gpus) {
        if (g.index != f.gpus[i].index || !smp.gpu) continue;
        if (g.pcie_rx_kbs >= 0) rx_sum += g.pcie_rx_kbs, ++rx_n;
        if (g.pcie_tx_kbs >= 0) tx_sum += g.pcie_tx_kbs, ++tx_n;
        s.peak_mem_mib = std::max(s.peak_mem_mib, static_cast<double>(g.mem_used_mib));
        s.max_temp_c = std::max(s.max_temp_c, g.temp_c);
      }
    s.mean_util = mean(util_sum, s.ticks);
    s.idle_fraction = s.ticks ? static_cast<double>(idle) / static_cast<double>(s.ticks) : 0;
    s.busy_fraction = s.ticks ? static_cast<double>(s.busy_ticks) / static_cast<double>(s.ticks) : 0;
    s.mean_mem_percent = mean(mem_sum, mem_n);
    if (power_n) s.mean_power_w = power_sum / static_cast<double>(power_n);
    if (clock_n) s.mean_busy_sm_clock = clock_sum / static_cast<double>(clock_n);
    if (rx_n) s.pcie_rx_mean_kbs = rx_sum / static_cast<double>(rx_n);
    if (tx_n) s.pcie_tx_mean_kbs = tx_sum / static_cast<double>(tx_n);
    s.cpu_mean_cores = mean(cpu_sum, cpu_n);
    m.gpus.push_back(std::move(s));
  }
}

// Ticks where every job GPU was idle, and the job's CPU and the machine's I/O wait then.
void judge_idle_ticks(const WatchThresholds& th, WatchModel& m) {
  double cpu_all = 0, cpu_idle = 0, io_all = 0, io_idle = 0;
  size_t cpu_n = 0, io_n = 0, io_idle_n = 0;
  for (size_t k = m.judge_from; k < m.series.size(); ++k) {
    const WatchPoint& p = m.series[k];
    if (k > 0) cpu_all += p.job_cpu_cores, ++cpu_n;
    if (p.iowait_percent >= 0) io_all += p.iowait_percent, ++io_n;
    if (!p.gpu || m.job_gpus.empty()) continue;
    bool all_idle = true, any = false;
    for (size_t i : m.job_gpus) {
      if (p.util[i] < 0) continue;
      any = true;
      all_idle &= p.util[i] < th.idle_util_percent;
    }
    if (!any) continue;
    ++m.gpu_ticks;
    if (!all_idle || k == 0) continue;
    ++m.idle_ticks;
    cpu_idle += p.job_cpu_cores;
    if (p.iowait_percent >= 0) io_idle += p.iowait_percent, ++io_idle_n;
  }
  m.job_cpu_mean_cores = mean(cpu_all, cpu_n);
  m.job_cpu_idle_cores = mean(cpu_idle, m.idle_ticks);
  if (io_n) m.iowait_mean_percent = io_all / static_cast<double>(io_n);
  if (io_idle_n) m.iowait_idle_percent = io_idle / static_cast<double>(io_idle_n);
}

}  // namespace

WatchModel derive_watch(const WatchFacts& f, const Kb& kb) {
  const WatchThresholds& th = watch_thresholds(kb);
  WatchModel m;
  m.facts = &f;
  if (!f.samples.empty()) m.duration_s = f.samples.back().t - f.samples.front().t;
  const std::vector<GpuTick>* last_gpus = nullptr;
  std::map<int, ProcAccum> procs;
  std::set<int> watched, used;  // watched PIDs; GPU positions they had a context on
  for (size_t k = 0; k < f.samples.size(); ++k) {
    const WatchSample& s = f.samples[k];
    if (s.gpu) last_gpus = &s.gpus;
    static const std::vector<GpuTick> kNone;
    const std::vector<GpuTick>& ctx_ticks = last_gpus ? *last_gpus : kNone;
    m.series.push_back(watch_point(f, k ? &f.samples[k - 1] : nullptr, s, ctx_ticks));
    Contexts ctx = contexts_of(f, s.gpu ? s.gpus : std::vector<GpuTick>{});
    accumulate_procs(f, k ? &f.samples[k - 1] : nullptr, s, ctx, procs);
    for (const auto& q : s.procs) {
      watched.insert(q.pid);
      if (auto c = ctx.find(q.pid); c != ctx.end()) {
        if (used.empty()) m.judge_from = k, m.judge_from_t = s.t - f.samples.front().t;
        for (int i : c->second) used.insert(i);
      }
    }
  }
  for (auto& [pid, a] : procs) {
    a.s.cpu_mean_cores = mean(a.cpu_sum, a.n);
    a.s.blkio_s = static_cast<double>(a.last_blkio - std::min(a.first_blkio, a.last_blkio)) / static_cast<double>(f.clk_tck > 0 ? f.clk_tck : 100);
    a.s.gpus.assign(a.gpus.begin(), a.gpus.end());
    m.procs.push_back(std::move(a.s));
  }
  std::stable_sort(m.procs.begin(), m.procs.end(), [](const auto& a, const auto& b) { return a.cpu_mean_cores > b.cpu_mean_cores; });
  m.contexts_known = !used.empty();
  // Inside a container NVML lists host PIDs: when none is the job's, the GPUs with PIDs this
  // namespace cannot see are probably the job's; without those either, every GPU is judged.
  std::set<int> hidden_on;
  for (const auto& s : f.samples)
    for (int pid : s.hidden_pids)
      for (const auto& g : s.gpus)
        if (std::find(g.pids.begin(), g.pids.end(), pid) != g.pids.end()) hidden_on.insert(static_cast<int>(position_of(f, g.index)));
  m.hidden_contexts = !hidden_on.empty();
  const std::set<int>& chosen = m.contexts_known ? used : hidden_on;
  for (size_t i = 0; i < f.gpus.size(); ++i)
    if (chosen.empty() || chosen.count(static_cast<int>(i))) m.job_gpus.push_back(i);
  finish_gpu_stats(f, th, m);
  for (size_t i : m.job_gpus) m.gpus[i].job_used = m.contexts_known;
  judge_idle_ticks(th, m);
  m.enough = m.duration_s - m.judge_from_t >= th.min_seconds && m.gpu_ticks >= th.min_samples;
  return m;
}

}  // namespace cd
