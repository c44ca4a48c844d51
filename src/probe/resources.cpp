// CPUs: sched_getaffinity (a container's cpuset, taskset), else the online count. Memory:
// /proc/meminfo MemTotal, lowered to /sys/fs/cgroup/memory.max (cgroup v2) when that is a
// number — what a build in this container may really use.
#include "probe/resources.hpp"

#include <sched.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <string>

#include "util/strings.hpp"

namespace cd {

BuildResources probe_build_resources(const Root& root) {
  BuildResources r;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) r.cpus = CPU_COUNT(&set);
  if (!r.cpus) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    r.cpus = n > 0 ? static_cast<int>(n) : 0;
  }
  if (auto text = root.read("/proc/meminfo"))
    for (const auto& line : split(*text, '\n'))
      if (line.rfind("MemTotal:", 0) == 0) r.memory_mib = std::strtoull(line.c_str() + 9, nullptr, 10) / 1024;
  if (auto max = root.read("/sys/fs/cgroup/memory.max")) {
    std::string v(trim(*max));
    if (!v.empty() && std::isdigit(static_cast<unsigned char>(v[0]))) {
      uint64_t limit = std::strtoull(v.c_str(), nullptr, 10) >> 20;
      if (limit && (!r.memory_mib || limit < r.memory_mib)) r.memory_mib = limit;
    }
  }
  return r;
}

}  // namespace cd
