#pragma once
// The CPUs and memory a build on this machine may use (`plan --for build`'s MAX_JOBS). Live
// only: a replayed machine (--facts) does not record them; `plan --cpus/--memory` name them.
#include <cstdint>

#include "util/root.hpp"

namespace cd {

struct BuildResources {
  int cpus = 0;            // CPUs this process may run on (sched_getaffinity); 0 = unknown
  uint64_t memory_mib = 0; // MemTotal, lowered to the cgroup v2 memory.max when one is set; 0 = unknown
};

BuildResources probe_build_resources(const Root& root);

}  // namespace cd
