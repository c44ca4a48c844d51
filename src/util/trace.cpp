#include "util/trace.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace cd {
namespace {

// CUDA_DOCTOR_TRACE=/path appends there (the __driver child's stderr is captured by
// its parent, a file shows both); any other non-"0" value writes to stderr.
int trace_fd() {
  static const int fd = [] {
    const char* v = std::getenv("CUDA_DOCTOR_TRACE");
    if (!v || !*v || (v[0] == '0' && !v[1])) return -1;
    if (v[0] != '/') return STDERR_FILENO;
    return open(v, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  }();
  return fd;
}

}  // namespace

bool trace_enabled() { return trace_fd() >= 0; }

void trace(std::string_view what) {
  const int fd = trace_fd();
  if (fd < 0) return;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  // What the process has read from disk so far (its own and its reaped children's), so a
  // cold run shows which stage waited on the disk.
  rusage self{}, kids{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &kids);
  char line[320];
  int n = std::snprintf(line, sizeof line, "trace %ld.%06ld %d %.*s [read %ld KiB, children %ld KiB, %ld major faults]\n",
                        static_cast<long>(ts.tv_sec), ts.tv_nsec / 1000, static_cast<int>(getpid()),
                        static_cast<int>(what.size() > 180 ? 180 : what.size()), what.data(), self.ru_inblock / 2,
                        kids.ru_inblock / 2, self.ru_majflt);
  if (n > 0) (void)!write(fd, line, static_cast<size_t>(n < static_cast<int>(sizeof line) ? n : sizeof line - 1));
}

}  // namespace cd
