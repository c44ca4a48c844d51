// What /proc (under --root) says about the processes NVML lists, and which processes hold
// NVIDIA device files open. Observations only: the state letter, uid, cgroup text and
// NSpid as written; derive/processes.cpp decides what they mean.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "probe/driver_probe.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

constexpr size_t kCmdlineCap = 1024;
constexpr size_t kCgroupCap = 4096;
constexpr size_t kEnvironCap = 256u << 10;

struct ProcReader {
  const Root& root;
  std::map<int, std::string> users;  // /etc/passwd under the root
  double boot_unix = 0;              // /proc/stat btime
  long ticks = sysconf(_SC_CLK_TCK);

  explicit ProcReader(const Root& r) : root(r) {
    for (const auto& line : split(root.read("/etc/passwd", 4u << 20).value_or(""), '\n')) {
      auto f = split(line, ':');
      if (f.size() >= 3) users[std::atoi(f[2].c_str())] = f[0];
    }
    for (const auto& line : split(root.read("/proc/stat", 1u << 20).value_or(""), '\n'))
      if (line.rfind("btime ", 0) == 0) boot_unix = std::atof(line.c_str() + 6);
  }

  std::string user(int uid) const {
    auto it = users.find(uid);
    return it == users.end() ? std::string() : it->second;
  }

  // "Uid:\t1000\t1000…" → 1000; "NSpid:\t4242\t7" → {4242, 7}.
  void read_status(const std::string& proc, int& uid, std::vector<int>& nspid) const {
    for (const auto& line : split(root.read(proc + "/status", 64u << 10).value_or(""), '\n')) {
      if (line.rfind("Uid:", 0) == 0) uid = std::atoi(std::string(trim(line.substr(4))).c_str());
      if (line.rfind("NSpid:", 0) == 0)
        for (const auto& f : split(std::string(trim(line.substr(6))), '\t'))
          if (!trim(f).empty()) nspid.push_back(std::atoi(std::string(trim(f)).c_str()));
    }
  }

  std::string cmdline(const std::string& proc) const {
    std::string c = root.read(proc + "/cmdline", kCmdlineCap * 4).value_or("");
    while (!c.empty() && c.back() == '\0') c.pop_back();
    for (char& ch : c)
      if (ch == '\0') ch = ' ';
    if (c.size() > kCmdlineCap) {
      c.resize(kCmdlineCap);
      c += "…";
    }
    return c;
  }
};

// Only SLURM_JOB_ID is kept from the environment: the rest may hold secrets.
std::string slurm_job_id(const std::string& environ) {
  for (const auto& entry : split(environ, '\0'))
    if (entry.rfind("SLURM_JOB_ID=", 0) == 0) return entry.substr(13, 32);
  return {};
}

void read_process(const ProcReader& r, GpuProcess& p) {
  std::string proc = "/proc/" + std::to_string(p.pid);
  auto stat = r.root.read(proc + "/stat", 4096);
  if (!stat) {
    p.alive = false;
    p.state.clear();
    return;
  }
  p.name = std::string(trim(r.root.read(proc + "/comm", 256).value_or("")));
  // "pid (comm) S ppid …": the fields follow the last ')' (comm may hold spaces and parens).
  auto close = stat->rfind(')');
  auto fields = close == std::string::npos ? std::vector<std::string>{} : split(std::string(trim(stat->substr(close + 1))), ' ');
  if (!fields.empty()) p.state = fields[0];
  if (fields.size() > 1) p.ppid = std::atoi(fields[1].c_str());
  if (fields.size() > 19 && r.boot_unix > 0 && r.ticks > 0)
    p.start_unix = r.boot_unix + std::strtod(fields[19].c_str(), nullptr) / static_cast<double>(r.ticks);
  p.zombie = p.state == "Z";
  r.read_status(proc, p.uid, p.nspid);
  if (p.uid >= 0) p.user = r.user(p.uid);
  p.cmdline = r.cmdline(proc);
  p.cgroup = r.root.read(proc + "/cgroup", kCgroupCap).value_or("");
  p.slurm_job_id = slurm_job_id(r.root.read(proc + "/environ", kEnvironCap).value_or(""));
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

void probe_gpu_processes(DriverFacts& d, const Root& root) {
  d.viewer_uid = static_cast<int>(getuid());
  if (d.processes.empty()) return;
  ProcReader reader(root);
  for (auto& p : d.processes) read_process(reader, p);
}

void probe_device_holders(DriverFacts& d, const Root& root) {
  ProcReader reader(root);
  d.holders_scanned = true;
  for (const auto& name : root.list("/proc")) {
    if (!all_digits(name)) continue;
    std::string proc = "/proc/" + name;
    DeviceHolder h;
    for (const auto& fd : root.list(proc + "/fd")) {
      auto link = root.readlink(proc + "/fd/" + fd);
      if (!link || link->rfind("/dev/nvidia", 0) != 0) continue;
      if (std::find(h.devices.begin(), h.devices.end(), *link) == h.devices.end()) h.devices.push_back(*link);
    }
    if (h.devices.empty()) continue;
    std::sort(h.devices.begin(), h.devices.end());
    h.pid = std::atoi(name.c_str());
    h.name = std::string(trim(root.read(proc + "/comm", 256).value_or("")));
    reader.read_status(proc, h.uid, h.nspid);
    if (h.uid >= 0) h.user = reader.user(h.uid);
    h.cmdline = reader.cmdline(proc);
    d.device_holders.push_back(std::move(h));
  }
}

}  // namespace cd
