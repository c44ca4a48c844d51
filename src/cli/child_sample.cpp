// `cuda-doctor __sample INTERVAL_MS`: watch's long-lived NVML child.
//
// Design (why a child, why long-lived): NVML must never be loaded into the watcher itself
// (a sick driver hangs or crashes it, and the user's job must keep its watcher), and
// starting a __driver child per tick would cost a fork+exec+nvmlInit (~tens of ms CPU) ten
// times a second, breaking the < 1 % of one core budget. So one child loads NVML once and
// prints one JSON line per tick on stdout, flushed:
//   {"gpus":[WatchGpu…]}            once, after nvmlInit and the device list
//   {"error":"…"}                   instead, when there is no driver / NVML fails; then exits
//   {"g":[GpuTick…]}                every INTERVAL_MS (PCIe throughput about once a second)
// The parent (cli/cmd_watch.cpp) reads the lines without blocking and gives up on the
// child when the first line is late (--timeout) or a tick is overdue; it kills the child
// when the watch ends. The child also dies with its parent (PR_SET_PDEATHSIG) and stops
// when stdout is gone (SIGPIPE), so it never outlives the watch.
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "gpu/watch_sampler.hpp"
#include "util/errors.hpp"

namespace cd {
namespace {

bool emit(const nlohmann::json& line) {
  std::string text = json_text(line) + "\n";
  return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
}

void add_ns(timespec& t, long ns) {
  t.tv_nsec += ns;
  while (t.tv_nsec >= 1000000000L) {
    t.tv_nsec -= 1000000000L;
    ++t.tv_sec;
  }
}

}  // namespace

int child_sample_main(const std::vector<std::string>& args) {
  long interval_ms = args.size() == 1 ? std::atol(args[0].c_str()) : 0;
  if (interval_ms < 10 || interval_ms > 60000) {
    std::fprintf(stderr, "cuda-doctor __sample takes INTERVAL_MS (10-60000)\n");
    return exit_code::cannot_run;
  }
  pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) std::_Exit(0);  // the parent died before the prctl
  gpu::WatchSampler sampler;
  if (!sampler.open()) {
    emit({{"error", sampler.error()}});
    std::_Exit(exit_code::ok);
  }
  if (!emit({{"gpus", sampler.gpus()}})) std::_Exit(0);
  long pcie_every = std::max(1L, 1000 / interval_ms);
  timespec next{};
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (long n = 0;; ++n) {
    if (!emit({{"g", sampler.tick(n % pcie_every == 0)}})) break;
    add_ns(next, interval_ms * 1000000L);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr) != 0) {
    }
    if (getppid() != parent) break;
  }
  // No nvmlShutdown and no exit-time teardown: they cost tens of ms and can hang on a sick driver.
  std::_Exit(exit_code::ok);
}

}  // namespace cd
