// `watch` text and JSON: the live status lines and the end summary. Prints the model;
// decides nothing (the judgement is rules/watch.cpp, the numbers derive/watch.cpp).
#include <fmt/format.h>

#include "report/escape.hpp"
#include "report/watch_report.hpp"
#include "util/strings.hpp"
#include "util/term.hpp"

namespace cd {
namespace {

std::string cut(std::string s, size_t width) {
  if (display_width(s) <= width) return s;
  std::string out;
  size_t w = 0;
  for (size_t i = 0; i < s.size() && w + 1 < width; ++i) {
    out += s[i];
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++w;
    while (i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xC0) == 0x80) out += s[++i];
  }
  return out + "…";
}

std::string gib(double mib) { return fmt::format("{:.1f}", mib / 1024); }

std::string reasons_text(uint64_t mask, const Kb& kb) {
  std::vector<std::string> names;
  for (const auto& n : throttle_names(mask, kb))
    if (n != "gpu_idle") names.push_back(n);
  return join(names, ",");
}

std::string exit_text(const WatchFacts& f) {
  if (f.mode != "command") return f.mode == "pid" ? fmt::format("pid {}", f.root_pid) : "whole machine";
  if (f.command_signal) return fmt::format("killed by signal {}", f.command_signal);
  return fmt::format("exit {}", f.command_exit);
}

void gpu_lines(const WatchModel& m, std::string& out) {
  for (const auto& g : m.gpus) {
    out += fmt::format("GPU {}  {}{}\n", g.gpu->index, shown(g.gpu->name), g.job_used ? "  (the job's)" : "");
    if (g.ticks == 0) {
      out += "  no readings\n";
      continue;
    }
    out += fmt::format("  utilization mean {:.0f} % · idle {:.0f} % · busy {:.0f} % of {} samples\n", g.mean_util, 100 * g.idle_fraction,
                       100 * g.busy_fraction, g.ticks);
    out += fmt::format("  memory peak {} GiB of {} GiB ({:.0f} %), mean {:.0f} %\n", gib(g.peak_mem_mib),
                       gib(static_cast<double>(g.gpu->memory_total_mib)), g.peak_mem_percent, g.mean_mem_percent);
    std::string power = g.mean_power_w >= 0 ? fmt::format("power mean {:.0f} W, max {:.0f} W", g.mean_power_w, g.max_power_w) : "power ?";
    if (g.gpu->power_limit_w > 0) power += fmt::format(" (limit {:.0f} W)", g.gpu->power_limit_w);
    std::string clock = g.mean_busy_sm_clock > 0 ? fmt::format(" · SM {:.0f} MHz while busy", g.mean_busy_sm_clock) : "";
    if (!clock.empty() && g.gpu->max_sm_clock_mhz > 0) clock += fmt::format(" (max {})", g.gpu->max_sm_clock_mhz);
    out += "  " + power + clock + (g.max_temp_c >= 0 ? fmt::format(" · peak {} °C", g.max_temp_c) : "") + "\n";
    std::string extra;
    if (g.pcie_rx_mean_kbs >= 0) extra += fmt::format("PCIe rx {:.0f} MB/s tx {:.0f} MB/s · ", g.pcie_rx_mean_kbs / 1000, g.pcie_tx_mean_kbs / 1000);
    extra += fmt::format("CPU of its processes {:.2f} cores", g.cpu_mean_cores);
    for (const auto& [name, n] : g.reason_busy_ticks)
      if (name != "gpu_idle") extra += fmt::format(" · {} {:.0f} % of busy", name, 100.0 * static_cast<double>(n) / static_cast<double>(g.busy_ticks));
    out += "  " + extra + "\n";
  }
}

void proc_lines(const WatchModel& m, const ReportOptions& opts, std::string& out) {
  if (m.procs.empty()) return;
  size_t shown_n = opts.verbose ? m.procs.size() : std::min<size_t>(m.procs.size(), 8);
  out += fmt::format("\nProcesses ({} watched{}):\n", m.procs.size(), shown_n < m.procs.size() ? fmt::format(", busiest {}", shown_n) : "");
  out += fmt::format("  {:<8} {:<8} {:>9} {:>9} {:>6} {:>8}  {}\n", "PID", "PPID", "CPU mean", "CPU max", "STATE", "GPUs", "NAME");
  for (size_t i = 0; i < shown_n; ++i) {
    const WatchProcStats& p = m.procs[i];
    std::vector<std::string> gpus;
    for (int g : p.gpus) gpus.push_back(std::to_string(g));
    out += fmt::format("  {:<8} {:<8} {:>9.2f} {:>9.2f} {:>6} {:>8}  {}{}\n", p.pid, p.ppid, p.cpu_mean_cores, p.cpu_max_cores, shown(p.last_state),
                       gpus.empty() ? "-" : join(gpus, ","), shown(cut(p.comm, 32)),
                       p.blkio_s > 0 ? fmt::format("  (I/O wait {:.1f} s)", p.blkio_s) : "");
  }
  out += fmt::format("  job CPU {:.2f} cores on average ({} CPUs){}\n", m.job_cpu_mean_cores, m.facts->cpus,
                     m.iowait_mean_percent >= 0 ? fmt::format(" · machine I/O wait {:.1f} %", m.iowait_mean_percent) : "");
}

}  // namespace

std::vector<std::string> render_watch_status(const WatchFacts& f, const WatchPoint& p, const Kb& kb, size_t width) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < f.gpus.size(); ++i) {
    std::string s = fmt::format("GPU {}", f.gpus[i].index);
    s += p.util[i] >= 0 ? fmt::format("  util {:3.0f} %", p.util[i]) : "  util   ? %";
    if (p.mem_percent[i] >= 0)
      s += fmt::format("  mem {}/{} GiB", gib(p.mem_percent[i] * static_cast<double>(f.gpus[i].memory_total_mib) / 100),
                       gib(static_cast<double>(f.gpus[i].memory_total_mib)));
    if (p.power_w[i] >= 0) s += fmt::format("  {:.0f} W", p.power_w[i]);
    if (p.sm_clock_mhz[i] >= 0) s += fmt::format("  {} MHz", p.sm_clock_mhz[i]);
    if (std::string r = reasons_text(p.throttle[i], kb); !r.empty()) s += "  " + r;
    s += fmt::format("  · CPU {:.2f} cores", p.gpu_cpu_cores[i]);
    if (i == 0) s += fmt::format(" (job {:.2f}, {} procs)", p.job_cpu_cores, p.procs);
    lines.push_back(cut(s, width));
  }
  return lines;
}

std::string render_watch_text(const WatchModel& m, const std::vector<Finding>& findings, const Kb&, const ReportOptions& opts) {
  const WatchFacts& f = *m.facts;
  std::string what = f.mode == "command" ? shown(cut(join(f.command, " "), 60)) : f.mode == "pid" ? fmt::format("pid {}", f.root_pid) : "all GPUs";
  std::string out = fmt::format("cuda-doctor watch · {} · {:.1f} s · {} · every {:.0f} ms, {} samples{}\n\n", what, m.duration_s, exit_text(f),
                                f.interval_s * 1000, f.samples.size(),
                                f.samples_dropped ? fmt::format(" (thinned: {} dropped)", f.samples_dropped) : "");
  gpu_lines(m, out);
  proc_lines(m, opts, out);
  for (const auto& n : f.notes) out += "note: " + shown(n) + "\n";
  std::vector<Finding> shown_findings;
  for (const auto& x : findings)
    if (opts.verbose || x.severity >= Severity::warning) shown_findings.push_back(x);
  if (!m.enough) out += "\nToo short to judge (findings need a few seconds of samples: data/watch.toml min_seconds, min_samples).\n";
  if (!shown_findings.empty()) out += "\n" + render_findings_text(shown_findings, opts);
  else out += "\n" + summary_line(findings) + "\n";
  double cpu = f.overhead.watcher_cpu_s + f.overhead.sampler_cpu_s;
  if (f.overhead.wall_s > 0)
    out += fmt::format("watch cost {:.2f} % of one core (watcher {:.3f} s + NVML sampler {:.3f} s CPU over {:.1f} s)\n",
                       100 * cpu / f.overhead.wall_s, f.overhead.watcher_cpu_s, f.overhead.sampler_cpu_s, f.overhead.wall_s);
  return out;
}

std::string render_watch_json(const WatchModel& m, const std::vector<Finding>& findings) {
  const WatchFacts& f = *m.facts;
  nlohmann::json gpus = nlohmann::json::array(), procs = nlohmann::json::array(), series = nlohmann::json::array();
  for (const auto& g : m.gpus) {
    nlohmann::json j = *g.gpu;
    j.update({{"job_used", g.job_used}, {"samples", g.ticks}, {"mean_util", g.mean_util}, {"idle_fraction", g.idle_fraction},
              {"busy_fraction", g.busy_fraction}, {"peak_mem_mib", g.peak_mem_mib}, {"peak_mem_percent", g.peak_mem_percent},
              {"mean_mem_percent", g.mean_mem_percent}, {"mean_power_w", g.mean_power_w}, {"max_power_w", g.max_power_w},
              {"mean_busy_sm_clock_mhz", g.mean_busy_sm_clock}, {"max_temp_c", g.max_temp_c}, {"throttle_busy_samples", g.reason_busy_ticks},
              {"pcie_rx_mean_kbs", g.pcie_rx_mean_kbs}, {"pcie_tx_mean_kbs", g.pcie_tx_mean_kbs}, {"cpu_mean_cores", g.cpu_mean_cores}});
    gpus.push_back(std::move(j));
  }
  for (const auto& p : m.procs)
    procs.push_back({{"pid", p.pid}, {"ppid", p.ppid}, {"comm", p.comm}, {"state", p.last_state}, {"cpu_mean_cores", p.cpu_mean_cores},
                     {"cpu_max_cores", p.cpu_max_cores}, {"blkio_s", p.blkio_s}, {"gpus", p.gpus}, {"first_t", p.first_t}, {"last_t", p.last_t}});
  for (const auto& p : m.series)
    series.push_back({{"t", p.t}, {"gpu", p.gpu}, {"util", p.util}, {"mem_percent", p.mem_percent}, {"power_w", p.power_w},
                      {"sm_clock_mhz", p.sm_clock_mhz}, {"throttle", p.throttle}, {"gpu_cpu_cores", p.gpu_cpu_cores},
                      {"job_cpu_cores", p.job_cpu_cores}, {"iowait_percent", p.iowait_percent}});
  return render_json("watch", findings,
                     {{"mode", f.mode}, {"command", f.command}, {"root_pid", f.root_pid}, {"command_exit", f.command_exit},
                      {"command_signal", f.command_signal}, {"interval_s", f.interval_s}, {"started_unix", f.started_unix},
                      {"duration_s", m.duration_s}, {"cpus", f.cpus}, {"gpu_error", f.gpu_error}, {"judged", m.enough},
                      {"contexts_known", m.contexts_known}, {"hidden_contexts", m.hidden_contexts}, {"idle_samples", m.idle_ticks}, {"gpu_samples", m.gpu_ticks}, {"judged_from_s", m.judge_from_t},
                      {"job_cpu_mean_cores", m.job_cpu_mean_cores}, {"job_cpu_idle_cores", m.job_cpu_idle_cores},
                      {"iowait_mean_percent", m.iowait_mean_percent}, {"gpus", gpus}, {"processes", procs}, {"overhead", f.overhead},
                      {"samples_dropped", f.samples_dropped}, {"notes", f.notes}, {"series", series}, {"samples", f.samples}});
}

}  // namespace cd
