// memory.*: GPU memory held by processes that cannot or do not use it (gone, zombie,
// stopped, stuck in D state, idle for long), by another user, or by no listed process.
// Each fix is the safe command for the case; the tool never kills anything itself.
#include <fmt/format.h>

#include "kb/watch.hpp"
#include "rules/rules.hpp"

namespace cd {
namespace {

int smi_index(const Model& m, const GpuProcessModel& p) {
  return p.gpu >= 0 ? m.gpus[static_cast<size_t>(p.gpu)].info->nvml_index : 0;
}

std::string who(const GpuProcessModel& p) {
  const GpuProcess& g = *p.process;
  if (!g.user.empty()) return g.user;
  return g.uid >= 0 ? "uid " + std::to_string(g.uid) : "its owner";
}

// The commands that end process `pid`: the user's own → kill; someone else's → ask them
// (or an admin with sudo).
std::vector<std::string> end_it(const GpuProcessModel& p, int pid, const std::string& what) {
  if (p.own) return {fmt::format("kill {}   # {}; kill -9 {} if it ignores SIGTERM", pid, what, pid)};
  return {fmt::format("# ask {} to end pid {} ({}), or an admin: sudo kill {}", who(p), pid, what, pid)};
}

std::vector<std::string> reset_lines(const Model& m, const GpuProcessModel& p) {
  int i = smi_index(m, p);
  return {"sudo fuser -v /dev/nvidia*   # who else has the GPU open",
          fmt::format("sudo nvidia-smi --gpu-reset -i {}   # only when nothing holds GPU {} any more", i, i),
          "# a reboot frees it when the reset is refused"};
}

Finding process_finding(const Model& m, const GpuProcessModel& p, std::string id, Severity sev, std::string what) {
  const GpuProcess& g = *p.process;
  Finding x = new_finding(std::move(id), sev, fmt::format("pid {}", g.pid),
                          fmt::format("{} MiB of GPU {} memory held by pid {}{}, which is {}", g.used_mib, smi_index(m, p), g.pid,
                                      g.name.empty() ? "" : " (" + g.name + ")", what),
                          "memory");
  x.evidence.push_back({fmt::format("pid {} uses {} MiB on {} ({} process)", g.pid, g.used_mib, g.gpu_uuid, g.type),
                        g.type == "graphics" ? "nvmlDeviceGetGraphicsRunningProcesses" : "nvmlDeviceGetComputeRunningProcesses"});
  if (!g.user.empty() || g.uid >= 0) x.evidence.push_back({fmt::format("owner {}{}", who(p), p.own ? " (you)" : ""), "/proc/PID/status"});
  if (!p.place.label.empty()) x.evidence.push_back({"runs in " + p.place.label, "/proc/PID/cgroup"});
  return x;
}

void dead(const Model& m, const GpuProcessModel& p, Findings& out) {
  const GpuProcess& g = *p.process;
  bool zombie = p.state == ProcState::zombie;
  Severity sev = p.state == ProcState::not_visible ? Severity::info : Severity::warning;
  Finding x = process_finding(m, p, "memory.held_by_dead_process", sev,
                              zombie ? "a zombie" : p.state == ProcState::gone ? "gone" : "not visible in this container");
  x.evidence.push_back({zombie ? "state Z (zombie)" : "no /proc/" + std::to_string(g.pid), "/proc"});
  if (zombie) {
    x.explanation = "The process died but its parent has not reaped it, so the driver keeps its GPU memory; kill -9 on a "
                    "zombie does nothing — its parent must reap it or die.";
    if (g.ppid > 1) x.fix = end_it(p, g.ppid, "the zombie's parent, so the zombie is reaped");
    else x.fix = {fmt::format("ps -o ppid= -p {}   # the parent that has to reap it", g.pid)};
    x.fix.emplace_back("# the memory returns when the zombie is reaped");
  } else if (p.state == ProcState::not_visible) {
    x.explanation = "NVML reports host PIDs; this one is not in this container's PID namespace. It may be another "
                    "container's process, or a dead one whose memory the driver still holds.";
    x.fix = {"cuda-doctor ps   # run on the host to see who it is"};
  } else {
    x.explanation = "The driver still accounts memory to a process that no longer exists (usually a child that "
                    "inherited the GPU context is still alive, or the driver has not finished tearing it down).";
    x.fix = reset_lines(m, p);
  }
  out.push_back(std::move(x));
}

void stopped(const Model& m, const GpuProcessModel& p, Findings& out) {
  const GpuProcess& g = *p.process;
  Finding x = process_finding(m, p, "memory.held_by_stopped_process", Severity::warning, "stopped (SIGSTOP / Ctrl-Z)");
  x.evidence.push_back({"state " + g.state + " (stopped)", "/proc/PID/stat"});
  x.explanation = "A stopped process keeps its GPU memory until it is resumed or ended (a job suspended with Ctrl-Z, "
                  "a debugger, a scheduler's suspend). A SIGTERM waits until it runs again.";
  if (p.own) {
    x.fix = {fmt::format("kill -CONT {}   # resume it (fg in its shell)", g.pid),
             fmt::format("kill {} && kill -CONT {}   # or end it: the SIGTERM is delivered once it runs", g.pid, g.pid)};
  } else {
    x.fix = end_it(p, g.pid, "stopped, holding GPU memory");
  }
  out.push_back(std::move(x));
}

void stuck(const Model& m, const GpuProcessModel& p, Findings& out) {
  const GpuProcess& g = *p.process;
  Finding x = process_finding(m, p, "memory.held_by_stuck_process", Severity::warning, "in uninterruptible sleep (D state)");
  x.evidence.push_back({"state D", "/proc/PID/stat"});
  x.explanation = "The process waits in the kernel (I/O, a network filesystem, the driver) and cannot be killed until the "
                  "wait ends: kill -9 takes effect only then. If it never ends, only a reboot frees the memory.";
  x.fix = {fmt::format("sudo cat /proc/{}/stack   # where it waits", g.pid), "sudo dmesg | tail -50   # NVRM Xid or I/O errors",
           "# a reboot if it stays in D state"};
  out.push_back(std::move(x));
}

void idle(const Model& m, const GpuProcessModel& p, Findings& out) {
  const GpuProcess& g = *p.process;
  bool full = p.gpu >= 0 && m.gpu_memory[static_cast<size_t>(p.gpu)].near_full;
  Finding x = process_finding(m, p, "memory.held_by_idle_process", full ? Severity::warning : Severity::info,
                              fmt::format("idle on the GPU for {}{:.0f} min", p.idle_lower_bound ? "at least " : "", p.idle_s / 60));
  x.evidence.push_back({p.idle_lower_bound ? fmt::format("no GPU activity sample for it in NVML's buffer ({:.0f} s)", p.idle_s)
                                           : fmt::format("last GPU activity {:.0f} s ago", p.idle_s),
                        "nvmlDeviceGetProcessUtilization"});
  x.explanation = "It holds the memory without using the GPU (a notebook kernel, a finished script waiting for input, a "
                  "leaked worker)." + std::string(full ? " The GPU is nearly full, so other jobs fail with out of memory." : "");
  x.fix = end_it(p, g.pid, "idle on the GPU");
  out.push_back(std::move(x));
}

void other_user(const Model& m, const GpuProcessModel& p, Findings& out) {
  const GpuProcess& g = *p.process;
  bool full = p.gpu >= 0 && m.gpu_memory[static_cast<size_t>(p.gpu)].near_full;
  Finding x = process_finding(m, p, "memory.held_by_other_user", full ? Severity::warning : Severity::info,
                              "another user's (" + who(p) + ")");
  x.explanation = "Another user's job shares this GPU; its memory is not available to yours." +
                  std::string(full ? " The GPU is nearly full." : "");
  x.fix = {fmt::format("# ask {} about pid {}, or pick a free GPU: CUDA_VISIBLE_DEVICES=N", who(p), g.pid)};
  out.push_back(std::move(x));
}

void unaccounted(const Model& m, uint64_t min_mib, Findings& out) {
  bool container = !m.facts.platform.container.empty();
  for (size_t i = 0; i < m.gpus.size(); ++i) {
    const GpuInfo& g = *m.gpus[i].info;
    const GpuMemoryModel& mem = m.gpu_memory[i];
    if (g.memory_total_mib == 0 || mem.unaccounted_mib < min_mib) continue;
    Finding x = new_finding("memory.unaccounted", container ? Severity::info : Severity::warning, fmt::format("GPU {}", g.nvml_index),
                            fmt::format("{} MiB of GPU {} memory is used by no process NVML lists", mem.unaccounted_mib, g.nvml_index),
                            "memory");
    x.evidence.push_back({fmt::format("used {} MiB, processes account for {} MiB{}", g.memory_used_mib, mem.accounted_mib,
                                      g.memory_reserved_mib ? fmt::format(" (driver reserve {} MiB not counted)", g.memory_reserved_mib) : ""),
                          "nvmlDeviceGetMemoryInfo vs the running-process lists"});
    x.explanation = container ? "Inside a container NVML lists only what this PID namespace may see: other containers' "
                                "processes use the rest."
                              : "Memory is used with no process listed: processes in other PID namespaces, a process "
                                "that holds the device open without a context, or memory the driver did not free.";
    x.fix = {"sudo fuser -v /dev/nvidia*   # every process with the GPU open (cuda-doctor ps lists them too)",
             fmt::format("sudo nvidia-smi --gpu-reset -i {}   # only when nothing holds GPU {} any more", g.nvml_index, g.nvml_index),
             "# a reboot frees it when the reset is refused"};
    out.push_back(std::move(x));
  }
}

}  // namespace

Findings memory_rules(const Model& m, const Kb& kb) {
  const PsThresholds& limits = ps_thresholds(kb);  // data/watch.toml [ps]: idle time, unaccounted memory
  Findings out;
  for (const auto& p : m.processes) {
    switch (p.state) {
      case ProcState::gone:
      case ProcState::not_visible:
      case ProcState::zombie: dead(m, p, out); continue;
      case ProcState::stopped: stopped(m, p, out); continue;
      case ProcState::disk_sleep: stuck(m, p, out); continue;
      default: break;
    }
    if (p.idle_s >= limits.idle_seconds) idle(m, p, out);
    else if (p.process->uid >= 0 && m.facts.driver.viewer_uid >= 0 && !p.own) other_user(m, p, out);
  }
  unaccounted(m, limits.unaccounted_mib, out);
  return out;
}

}  // namespace cd
