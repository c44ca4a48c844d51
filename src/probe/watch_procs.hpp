#pragma once
// watch's CPU side: the watched process trees read from /proc, tick by tick.
#include <map>
#include <string>
#include <vector>

#include "facts/watch.hpp"

namespace cd {

class ProcTreeSampler {
 public:
  // `proc`: the proc filesystem to read (tests point it elsewhere only for parsing).
  explicit ProcTreeSampler(std::string proc = "/proc") : proc_(std::move(proc)) {}
  ~ProcTreeSampler();
  ProcTreeSampler(const ProcTreeSampler&) = delete;
  ProcTreeSampler& operator=(const ProcTreeSampler&) = delete;
  // The trees to follow: each root and all its descendants. Changing them forces a rescan.
  void set_roots(std::vector<int> roots);
  const std::vector<int>& roots() const { return roots_; }
  // The tree's processes now. `rescan`: list /proc to find new descendants (about once a
  // second; only PIDs not seen before are read); otherwise read only the known members.
  std::vector<ProcTick> sample(bool rescan);
  // /proc/stat's aggregate "cpu" line: total, iowait and idle jiffies (cumulative).
  bool system_cpu(uint64_t& total, uint64_t& iowait, uint64_t& idle);

 private:
  bool read_member(int pid, ProcTick& t);
  std::string proc_;
  std::vector<int> roots_;
  std::map<int, int> member_fds_;  // member PID -> its open /proc/PID/stat (re-read with pread)
  std::map<int, int> ppid_of_;     // every PID seen by a rescan -> its parent (read once)
  int stat_fd_ = -1;               // /proc/stat, kept open
  bool rescan_needed_ = true;
};

// Parses one /proc/PID/stat text (fields after the last ')'); false when malformed.
bool parse_proc_stat(const std::string& text, ProcTick& out);

// One line of the `__sample` child (cli/child_sample.cpp): the GPU list, an error, or a tick.
struct SamplerLine {
  enum Kind { none, gpus, error, tick } kind = none;
  std::vector<WatchGpu> gpu_list;
  std::string error_text;
  std::vector<GpuTick> readings;
  std::string problem;  // why a line was not understood ("" for blank or unknown lines)
};
SamplerLine parse_sampler_line(const std::string& line);

}  // namespace cd
