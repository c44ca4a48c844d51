// `ps`: per GPU its memory and the processes holding it, each with owner, state, age, last
// GPU use, where it lives and its command; then the device-file holders without a GPU
// context and the memory.* findings. Prints the model; decides nothing.
#include <cmath>

#include <fmt/format.h>

#include "report/escape.hpp"
#include "report/ps_report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

std::string duration(double s) {
  if (s < 0) return "?";
  if (s < 120) return fmt::format("{:.0f}s", s);
  if (s < 7200) return fmt::format("{:.0f}m", s / 60);
  if (s < 172800) return fmt::format("{:.0f}h{:02.0f}m", std::floor(s / 3600), std::fmod(s, 3600) / 60);
  return fmt::format("{:.0f}d", s / 86400);
}

std::string last_use(const GpuProcessModel& p) {
  if (p.idle_s < 0) return "?";
  if (p.idle_lower_bound) return ">" + duration(p.idle_s) + " ago";
  return p.idle_s < 2 ? "now" : duration(p.idle_s) + " ago";
}

std::string pid_text(const GpuProcessModel& p) {
  std::string s = std::to_string(p.process->pid);
  if (p.container_pid >= 0) s += fmt::format(" ({} inside)", p.container_pid);
  return s;
}

std::string user_text(const GpuProcess& g) {
  if (!g.user.empty()) return shown(g.user);
  return g.uid >= 0 ? std::to_string(g.uid) : "?";
}

std::string cut(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n - 1) + "…";
  return s;
}

void gpu_block(const Model& m, size_t i, std::string& out) {
  const GpuInfo& g = *m.gpus[i].info;
  const GpuMemoryModel& mem = m.gpu_memory[i];
  out += fmt::format("GPU {}  {}  {}{}\n", g.nvml_index, shown(g.name), g.pci_bus_id, g.mig_mode == "enabled" ? "  MIG enabled" : "");
  out += fmt::format("  memory {} MiB: used {} (processes {}, unaccounted {}), free {}{}\n", g.memory_total_mib, g.memory_used_mib,
                     mem.accounted_mib, mem.unaccounted_mib, g.memory_free_mib,
                     g.memory_reserved_mib ? fmt::format(", driver reserve {}", g.memory_reserved_mib) : "");
  bool any = false;
  for (const auto& p : m.processes) {
    if (p.gpu != static_cast<int>(i)) continue;
    if (!any) out += fmt::format("  {:<16} {:<10} {:<20} {:>8} {:>8} {:>10}  {:<40} {}\n", "PID", "USER", "STATE", "GPU MiB", "AGE",
                                 "LAST USE", "WHERE", "COMMAND");
    any = true;
    const GpuProcess& g2 = *p.process;
    std::string state = proc_state_name(p.state);
    if (g2.type == "graphics") state += " (graphics)";
    if (g2.gpu_instance_id >= 0) state += fmt::format(" MIG {}/{}", g2.gpu_instance_id, g2.compute_instance_id);
    std::string cmd = g2.cmdline.empty() ? g2.name : g2.cmdline;
    out += fmt::format("  {:<16} {:<10} {:<20} {:>8} {:>8} {:>10}  {:<40} {}\n", pid_text(p), cut(user_text(g2), 10), state,
                       g2.used_mib, duration(p.age_s), last_use(p), shown(cut(p.place.label.empty() ? "-" : p.place.label, 40)),
                       shown(cut(cmd, 60)));
  }
  if (!any) out += "  no processes\n";
}

nlohmann::json process_json(const Model& m, const GpuProcessModel& p) {
  const GpuProcess& g = *p.process;
  nlohmann::json j = g;
  j["gpu_index"] = p.gpu >= 0 ? m.gpus[static_cast<size_t>(p.gpu)].info->nvml_index : -1;
  j["state_name"] = proc_state_name(p.state);
  j["own"] = p.own;
  j["age_s"] = p.age_s;
  j["idle_s"] = p.idle_s;
  j["idle_lower_bound"] = p.idle_lower_bound;
  j["container_pid"] = p.container_pid;
  j["place"] = {{"container_runtime", p.place.container_runtime}, {"container_id", p.place.container_id},
                {"pod_uid", p.place.pod_uid}, {"slurm_job", p.place.slurm_job}, {"systemd_unit", p.place.systemd_unit},
                {"label", p.place.label}};
  return j;
}

}  // namespace

std::string render_ps_text(const Model& m, const std::vector<Finding>& findings, const ReportOptions& opts) {
  std::string out;
  for (size_t i = 0; i < m.gpus.size(); ++i) gpu_block(m, i, out);
  const DriverFacts& d = m.facts.driver;
  if (d.holders_scanned) {
    if (m.holders_without_context.empty()) {
      out += "\nNo other process has an NVIDIA device file open.\n";
    } else {
      out += "\nNVIDIA device files open without a GPU context:\n";
      for (const DeviceHolder* h : m.holders_without_context) {
        std::vector<std::string> devs;
        for (const auto& dev : h->devices) devs.push_back(shown(dev));
        out += fmt::format("  {:<8} {:<10} {:<16} {}\n", h->pid, cut(h->user.empty() ? std::to_string(h->uid) : shown(h->user), 10),
                           shown(cut(h->name, 16)), join(devs, " "));
      }
    }
  }
  std::vector<Finding> shown_findings;
  for (const auto& f : findings)
    if (opts.verbose || f.severity >= Severity::warning) shown_findings.push_back(f);
  if (!shown_findings.empty()) out += "\n" + render_findings_text(shown_findings, opts);
  else out += "\n" + summary_line(findings) + "\n";
  return out;
}

std::string render_ps_json(const Model& m, const std::vector<Finding>& findings) {
  nlohmann::json gpus = nlohmann::json::array(), procs = nlohmann::json::array(), holders = nlohmann::json::array();
  for (size_t i = 0; i < m.gpus.size(); ++i) {
    nlohmann::json g = *m.gpus[i].info;
    g["memory_accounted_mib"] = m.gpu_memory[i].accounted_mib;
    g["memory_unaccounted_mib"] = m.gpu_memory[i].unaccounted_mib;
    g["memory_near_full"] = m.gpu_memory[i].near_full;
    gpus.push_back(g);
  }
  for (const auto& p : m.processes) procs.push_back(process_json(m, p));
  for (const DeviceHolder* h : m.holders_without_context) holders.push_back(*h);
  const DriverFacts& d = m.facts.driver;
  return render_json("ps", findings,
                     {{"queried_unix", d.queried_unix}, {"viewer_uid", d.viewer_uid}, {"gpus", gpus}, {"processes", procs},
                      {"holders_scanned", d.holders_scanned}, {"holders_without_context", holders}, {"notes", m.facts.notes}});
}

}  // namespace cd
