// Each GPU process NVML lists, read against /proc: its state, owner, age, how long since
// it last used the GPU and where it lives (container, Kubernetes pod, Slurm job, systemd
// unit, from the cgroup path layouts of Docker, containerd, CRI-O, Podman, Slurm and systemd);
// each GPU's memory against what the processes account for.
#include <fmt/format.h>

#include "derive/derive_parts.hpp"
#include "kb/watch.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

bool is_hex_id(std::string_view s) {
  return s.size() >= 32 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// The cgroup path to read: cgroup v2's "0::/path", else v1's pids / memory / name=systemd
// hierarchy (the ones container runtimes and Slurm always place the process in).
std::string cgroup_path(const std::string& cgroup) {
  std::string best;
  int best_rank = 0;
  for (const auto& line : split(cgroup, '\n')) {
    auto c1 = line.find(':');
    auto c2 = c1 == std::string::npos ? std::string::npos : line.find(':', c1 + 1);
    if (c2 == std::string::npos) continue;
    std::string ctrl = line.substr(c1 + 1, c2 - c1 - 1);
    std::string path = line.substr(c2 + 1);
    int rank = ctrl.empty() ? 4 : ctrl.find("pids") != std::string::npos ? 3 : ctrl.find("memory") != std::string::npos ? 2
             : ctrl == "name=systemd" ? 1 : 0;
    rank += path != "/" ? 10 : 0;  // hybrid hierarchies leave v2's "0::/" empty: a real path wins
    if (best.empty() || rank > best_rank) best = path, best_rank = rank;
  }
  return best;
}

// "docker-<id>.scope" / "cri-containerd-<id>.scope" / "crio-<id>.scope" / "libpod-<id>.scope"
// (systemd driver) or a bare "<id>" below docker/ or a kubepods pod (cgroupfs driver).
bool container_component(std::string_view comp, std::string_view parent, ProcessPlace& out) {
  if (comp.ends_with(".scope")) comp.remove_suffix(6);
  static const std::pair<std::string_view, std::string_view> kPrefixes[] = {
      {"docker-", "docker"}, {"cri-containerd-", "containerd"}, {"crio-", "cri-o"}, {"libpod-", "podman"}};
  for (const auto& [prefix, runtime] : kPrefixes)
    if (comp.starts_with(prefix) && is_hex_id(comp.substr(prefix.size()))) {
      out.container_runtime = runtime;
      out.container_id = comp.substr(prefix.size());
      return true;
    }
  if (is_hex_id(comp) && (parent == "docker" || parent.starts_with("pod") || parent.find("-pod") != std::string_view::npos)) {
    out.container_runtime = parent == "docker" ? "docker" : "containerd";
    out.container_id = comp;
    return true;
  }
  return false;
}

// "kubepods-burstable-pod1b2c3d4e_5f60_….slice" or "pod1b2c3d4e-5f60-…" → "1b2c3d4e-5f60-…".
std::string pod_uid(std::string_view comp) {
  auto at = comp.rfind("pod");
  if (at == std::string_view::npos || (at > 0 && comp[at - 1] != '-')) return {};
  std::string uid(comp.substr(at + 3));
  if (uid.ends_with(".slice")) uid.resize(uid.size() - 6);
  for (char& c : uid)
    if (c == '_') c = '-';
  return uid.size() >= 32 ? uid : std::string();
}

std::string place_label(const ProcessPlace& p) {
  std::vector<std::string> parts;
  std::string short_id = p.container_id.substr(0, 12);
  if (!p.pod_uid.empty()) parts.push_back(fmt::format("k8s pod {}", p.pod_uid));
  if (!p.container_id.empty()) parts.push_back(fmt::format("{} container {}", p.container_runtime, short_id));
  if (!p.slurm_job.empty()) parts.push_back("slurm job " + p.slurm_job);
  if (p.container_id.empty() && !p.systemd_unit.empty()) parts.push_back("systemd " + p.systemd_unit);
  return join(parts, ", ");
}

double age_or(double now, double then) { return now > 0 && then > 0 && now >= then ? now - then : -1; }

}  // namespace

ProcessPlace process_place(const std::string& cgroup, const std::string& slurm_job_id) {
  ProcessPlace out;
  std::string path = cgroup_path(cgroup);
  auto comps = split(path, '/');
  bool kube = path.find("kubepods") != std::string::npos;
  for (size_t i = 0; i < comps.size(); ++i) {
    std::string_view comp = comps[i];
    std::string_view parent = i ? std::string_view(comps[i - 1]) : std::string_view();
    if (container_component(comp, parent, out)) continue;
    if (kube && out.pod_uid.empty()) out.pod_uid = pod_uid(comp);
    if (comp.starts_with("job_") && comp.size() > 4 && out.slurm_job.empty()) out.slurm_job = comp.substr(4);
    if ((comp.ends_with(".service") || comp.ends_with(".scope")) && out.container_id.empty()) out.systemd_unit = comp;
  }
  if (!slurm_job_id.empty()) out.slurm_job = slurm_job_id;
  out.label = place_label(out);
  return out;
}

const char* proc_state_name(ProcState s) {
  switch (s) {
    case ProcState::running: return "running";
    case ProcState::sleeping: return "sleeping";
    case ProcState::stopped: return "stopped";
    case ProcState::zombie: return "zombie";
    case ProcState::disk_sleep: return "D (uninterruptible)";
    case ProcState::gone: return "gone";
    case ProcState::not_visible: return "not visible here";
    case ProcState::unknown: break;
  }
  return "unknown";
}

std::vector<GpuProcessModel> derive_processes(const Facts& f, const std::vector<MachineGpu>& gpus) {
  std::vector<GpuProcessModel> out;
  const DriverFacts& d = f.driver;
  // Inside a container NVML reports host PIDs: one missing from our /proc is another PID
  // namespace's as often as a dead one.
  bool container = !f.platform.container.empty();
  for (const auto& p : d.processes) {
    GpuProcessModel m;
    m.process = &p;
    for (size_t i = 0; i < gpus.size(); ++i)
      if (gpus[i].info->uuid == p.gpu_uuid) m.gpu = static_cast<int>(i);
    if (!p.alive) m.state = container ? ProcState::not_visible : ProcState::gone;
    else if (p.zombie || p.state == "Z") m.state = ProcState::zombie;
    else if (p.state == "T" || p.state == "t") m.state = ProcState::stopped;
    else if (p.state == "D") m.state = ProcState::disk_sleep;
    else if (p.state == "R") m.state = ProcState::running;
    else if (p.state == "S" || p.state == "I") m.state = ProcState::sleeping;
    m.own = p.uid >= 0 && p.uid == d.viewer_uid;
    m.age_s = age_or(d.queried_unix, p.start_unix);
    if (p.last_active_us) {
      m.idle_s = age_or(d.queried_unix, static_cast<double>(p.last_active_us) / 1e6);
    } else if (m.gpu >= 0 && gpus[static_cast<size_t>(m.gpu)].info->process_samples_from_us) {
      m.idle_s = age_or(d.queried_unix, static_cast<double>(gpus[static_cast<size_t>(m.gpu)].info->process_samples_from_us) / 1e6);
      m.idle_lower_bound = true;
    }
    if (p.nspid.size() > 1) m.container_pid = p.nspid.back();
    m.place = process_place(p.cgroup, p.slurm_job_id);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<GpuMemoryModel> derive_gpu_memory(const Facts& f, const std::vector<MachineGpu>& gpus, const Kb& kb) {
  const double near_full = ps_thresholds(kb).near_full_percent;  // data/watch.toml [ps]
  std::vector<GpuMemoryModel> out;
  for (const auto& g : gpus) {
    GpuMemoryModel m;
    for (const auto& p : f.driver.processes)
      if (p.gpu_uuid == g.info->uuid) m.accounted_mib += p.used_mib;
    m.unaccounted_mib = g.info->memory_used_mib > m.accounted_mib ? g.info->memory_used_mib - m.accounted_mib : 0;
    uint64_t total = g.info->memory_total_mib;
    m.near_full = total > 0 && static_cast<double>(g.info->memory_used_mib + g.info->memory_reserved_mib) * 100 >= static_cast<double>(total) * near_full;
    out.push_back(m);
  }
  return out;
}

std::vector<const DeviceHolder*> holders_without_context(const DriverFacts& d) {
  std::vector<const DeviceHolder*> out;
  for (const auto& h : d.device_holders) {
    bool listed = false;
    for (const auto& p : d.processes) listed |= p.pid == h.pid;
    if (!listed) out.push_back(&h);
  }
  return out;
}

}  // namespace cd
