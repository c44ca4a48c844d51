#pragma once
// A long-lived child whose stdout is read line by line without blocking (watch's
// __sample child). Its own process group, /dev/null stdin, stderr discarded; stop() kills
// the group and reaps it. The destructor stops it too.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace cd {

class LineChild {
 public:
  LineChild() = default;
  ~LineChild() { stop(); }
  LineChild(const LineChild&) = delete;
  LineChild& operator=(const LineChild&) = delete;

  // Starts argv; false (error() set) when it cannot start.
  bool start(const std::vector<std::string>& argv);
  // Complete lines that arrived within `wait` (0: only what is already there). Sets
  // closed() once the child closed its stdout.
  std::vector<std::string> lines(std::chrono::milliseconds wait);
  bool running() const { return pid_ > 0; }
  bool closed() const { return fd_ < 0; }
  pid_t pid() const { return pid_; }
  const std::string& error() const { return error_; }
  // utime + stime of the child so far in seconds (its /proc/PID/stat), -1 when unknown.
  double cpu_seconds() const;
  void stop();

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buf_, error_;
};

}  // namespace cd
