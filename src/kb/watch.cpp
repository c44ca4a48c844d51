#include "kb/watch.hpp"

#include "kb/toml_access.hpp"

namespace cd {

const PsThresholds& ps_thresholds(const Kb& kb) {
  return kb.view<PsThresholds>("watch.ps", [](const Kb& k) {
    PsThresholds t;
    if (const toml::table* p = kb_table(k, "watch")["ps"].as_table()) {
      t.idle_seconds = row_num(*p, "idle_seconds").value_or(t.idle_seconds);
      t.unaccounted_mib = static_cast<uint64_t>(row_int(*p, "unaccounted_mib").value_or(static_cast<int64_t>(t.unaccounted_mib)));
      t.near_full_percent = row_num(*p, "near_full_percent").value_or(t.near_full_percent);
    }
    return t;
  });
}

const WatchThresholds& watch_thresholds(const Kb& kb) {
  return kb.view<WatchThresholds>("watch.watch", [](const Kb& k) {
    WatchThresholds t;
    if (const toml::table* w = kb_table(k, "watch")["watch"].as_table()) {
      t.idle_util_percent = row_num(*w, "idle_util_percent").value_or(t.idle_util_percent);
      t.busy_util_percent = row_num(*w, "busy_util_percent").value_or(t.busy_util_percent);
      t.min_seconds = row_num(*w, "min_seconds").value_or(t.min_seconds);
      t.min_samples = static_cast<size_t>(row_int(*w, "min_samples").value_or(static_cast<int64_t>(t.min_samples)));
      t.idle_fraction = row_num(*w, "idle_fraction").value_or(t.idle_fraction);
      t.busy_cpu_cores = row_num(*w, "busy_cpu_cores").value_or(t.busy_cpu_cores);
      t.memory_near_full_percent = row_num(*w, "memory_near_full_percent").value_or(t.memory_near_full_percent);
      t.throttle_fraction = row_num(*w, "throttle_fraction").value_or(t.throttle_fraction);
      t.others_idle_fraction = row_num(*w, "others_idle_fraction").value_or(t.others_idle_fraction);
      t.max_samples = static_cast<size_t>(row_int(*w, "max_samples").value_or(static_cast<int64_t>(t.max_samples)));
    }
    for (const toml::table* row : kb_rows(k, "watch", "throttle_reason")) {
      ThrottleReason r;
      r.bit = static_cast<uint64_t>(row_int(*row, "bit").value_or(0));
      r.name = row_str(*row, "name");
      r.label = row_str(*row, "label");
      r.kind = row_str(*row, "kind");
      r.source = row_str(*row, "source");
      t.reasons.push_back(std::move(r));
    }
    return t;
  });
}

}  // namespace cd
