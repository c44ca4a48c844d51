// The watched process trees from /proc. The kernel here has no /proc/PID/task/TID/children
// (CONFIG_PROC_CHILDREN is often off), so the tree is found from every process's ppid:
// a listing of /proc about once a second finds new descendants (data-loader workers; only
// PIDs not seen before are read), and every tick reads the known members' stat files through
// descriptors kept open — one pread each — which keeps 10 Hz sampling cheap. Observations only: CPU percentages are derived later.
#include "probe/watch_procs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include <nlohmann/json.hpp>

#include "util/strings.hpp"

namespace cd {
namespace {

// Small /proc files read with plain syscalls (no streams: this runs ten times a second).
bool read_small(const std::string& path, std::string& out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  if (n <= 0) return false;
  out.assign(buf, static_cast<size_t>(n));
  return true;
}

bool read_stat(const std::string& proc, int pid, ProcTick& t) {
  std::string text;
  if (!read_small(proc + "/" + std::to_string(pid) + "/stat", text)) return false;
  return parse_proc_stat(text, t);
}

uint64_t field(const std::vector<std::string>& f, size_t stat_field) {
  size_t i = stat_field - 3;  // f[0] is field 3 (state)
  return i < f.size() ? std::strtoull(f[i].c_str(), nullptr, 10) : 0;
}

}  // namespace

bool parse_proc_stat(const std::string& text, ProcTick& out) {
  size_t open_paren = text.find('('), close = text.rfind(')');
  if (open_paren == std::string::npos || close == std::string::npos || close < open_paren) return false;
  std::vector<std::string> f = split(std::string(trim(text.substr(close + 1))), ' ');
  if (f.size() < 13) return false;
  out.pid = std::atoi(text.c_str());
  out.comm = text.substr(open_paren + 1, close - open_paren - 1);
  out.state = f[0];
  out.ppid = std::atoi(f[1].c_str());
  out.cpu_ticks = field(f, 14) + field(f, 15);  // utime + stime
  out.blkio_ticks = field(f, 42);               // delayacct_blkio_ticks
  return true;
}

ProcTreeSampler::~ProcTreeSampler() {
  for (const auto& [pid, fd] : member_fds_) close(fd);
  if (stat_fd_ >= 0) close(stat_fd_);
}

void ProcTreeSampler::set_roots(std::vector<int> roots) {
  std::sort(roots.begin(), roots.end());
  if (roots == roots_) return;
  roots_ = std::move(roots);
  rescan_needed_ = true;
}

// A member's stat through its kept descriptor: one pread per tick instead of open, read,
// close. False (and the descriptor dropped) once the process is gone.
bool ProcTreeSampler::read_member(int pid, ProcTick& t) {
  auto it = member_fds_.find(pid);
  if (it == member_fds_.end()) {
    int fd = open((proc_ + "/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    it = member_fds_.emplace(pid, fd).first;
  }
  char buf[4096];
  ssize_t n = pread(it->second, buf, sizeof buf, 0);
  if (n > 0 && parse_proc_stat(std::string(buf, static_cast<size_t>(n)), t)) return true;
  close(it->second);
  member_fds_.erase(it);
  return false;
}

std::vector<ProcTick> ProcTreeSampler::sample(bool rescan) {
  std::vector<ProcTick> out;
  if (roots_.empty()) return out;
  if (!rescan && !rescan_needed_) {
    std::vector<int> pids;
    for (const auto& [pid, fd] : member_fds_) pids.push_back(pid);
    for (int pid : pids) {
      ProcTick t;
      if (read_member(pid, t)) out.push_back(std::move(t));
    }
    return out;
  }
  rescan_needed_ = false;
  // The PIDs now; a PID not seen before is read once for its parent. (A parent changes only
  // when a process is re-parented to a reaper, which takes it out of a tree, never into one;
  // the members' own stat, read every tick, carries their current parent.)
  std::map<int, int> now;
  if (DIR* d = opendir(proc_.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
      int pid = std::atoi(e->d_name);
      if (auto known = ppid_of_.find(pid); known != ppid_of_.end()) {
        now.emplace(pid, known->second);
        continue;
      }
      ProcTick t;
      if (read_stat(proc_, pid, t)) now.emplace(pid, t.ppid);
    }
    closedir(d);
  }
  ppid_of_ = std::move(now);
  std::map<int, std::vector<int>> children;
  for (const auto& [pid, ppid] : ppid_of_) children[ppid].push_back(pid);
  std::set<int> tree;
  std::vector<int> stack(roots_.begin(), roots_.end());
  while (!stack.empty()) {
    int pid = stack.back();
    stack.pop_back();
    if (!ppid_of_.count(pid) || !tree.insert(pid).second) continue;
    for (int c : children[pid]) stack.push_back(c);
  }
  for (auto it = member_fds_.begin(); it != member_fds_.end();) {
    if (tree.count(it->first)) {
      ++it;
      continue;
    }
    close(it->second);
    it = member_fds_.erase(it);
  }
  for (int pid : tree) {  // std::set: in PID order
    ProcTick t;
    if (!read_member(pid, t)) continue;
    ppid_of_[pid] = t.ppid;
    out.push_back(std::move(t));
  }
  return out;
}

SamplerLine parse_sampler_line(const std::string& line) {
  SamplerLine out;
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object()) return out;
  try {
    if (auto e = j.find("error"); e != j.end()) {
      json_read::read_value(*e, out.error_text);
      out.kind = SamplerLine::error;
    } else if (auto g = j.find("gpus"); g != j.end()) {
      json_read::read_value(*g, out.gpu_list);
      out.kind = SamplerLine::gpus;
    } else if (auto t = j.find("g"); t != j.end()) {
      json_read::read_value(*t, out.readings);
      out.kind = SamplerLine::tick;
    }
  } catch (const nlohmann::json::exception& e) {
    out = SamplerLine{};
    out.problem = e.what();
  }
  return out;
}

bool ProcTreeSampler::system_cpu(uint64_t& total, uint64_t& iowait, uint64_t& idle) {
  if (stat_fd_ < 0) stat_fd_ = open((proc_ + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  char buf[4096];
  ssize_t n = stat_fd_ >= 0 ? pread(stat_fd_, buf, sizeof buf, 0) : -1;
  if (n <= 0) return false;
  std::string text(buf, static_cast<size_t>(n));
  if (text.rfind("cpu ", 0) != 0) return false;
  std::vector<std::string> f = split(std::string(trim(text.substr(4, text.find('\n') - 4))), ' ');
  total = 0;
  for (size_t i = 0; i < f.size() && i < 8; ++i) total += std::strtoull(f[i].c_str(), nullptr, 10);  // up to steal
  idle = f.size() > 3 ? std::strtoull(f[3].c_str(), nullptr, 10) : 0;
  iowait = f.size() > 4 ? std::strtoull(f[4].c_str(), nullptr, 10) : 0;
  return true;
}

}  // namespace cd
