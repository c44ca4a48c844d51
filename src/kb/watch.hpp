#pragma once
// ps and watch thresholds and NVML's clock event reason bits (data/watch.toml).
#include <cstdint>
#include <string>
#include <vector>

#include "kb/kb.hpp"

namespace cd {

struct PsThresholds {
  double idle_seconds = 600;
  uint64_t unaccounted_mib = 1024;
  double near_full_percent = 95;
};

struct ThrottleReason {
  uint64_t bit = 0;
  std::string name, label, kind;  // kind: idle, setting, power, slowdown
  std::string source;
};

struct WatchThresholds {
  double idle_util_percent = 10, busy_util_percent = 50;
  double min_seconds = 5;
  size_t min_samples = 10;
  double idle_fraction = 0.3, busy_cpu_cores = 0.5;
  double memory_near_full_percent = 95;
  double throttle_fraction = 0.2, others_idle_fraction = 0.9;
  size_t max_samples = 20000;
  std::vector<ThrottleReason> reasons;
};

const PsThresholds& ps_thresholds(const Kb& kb);
const WatchThresholds& watch_thresholds(const Kb& kb);

}  // namespace cd
