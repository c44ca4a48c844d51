#include <ctime>
#include <future>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "kb/kb.hpp"
#include "probe/probe.hpp"
#include "util/trace.hpp"

namespace cd {
namespace {

// Runs one probe and records how long it took.
template <class Fn>
void timed(Facts& facts, const char* name, Fn&& fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  trace(name);
  facts.probe_seconds[name] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Facts probe_all(const ProbeOptions& opts) {
  // The knowledge base (derive and rules need it) parses while the probes run.
  auto kb_ready = std::async(std::launch::async, [] { Kb::get(); });
  Facts facts;
  facts.collected_at = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
  probe_host(facts, opts);
  probe_env(facts, opts);
  trace("host/env");

  // The driver probe waits on a child process (cuInit, NVML); the file probes run meanwhile.
  Facts driver_part;
  auto driver = std::async(std::launch::async, [&] {
    timed(driver_part, "driver", [&] { probe_driver(driver_part, opts); });
    timed(driver_part, "platform", [&] { probe_platform(driver_part, opts); });
    timed(driver_part, "driver_install", [&] { probe_driver_install(driver_part, opts); });
    timed(driver_part, "containers", [&] { probe_containers(driver_part, opts); });
    timed(driver_part, "topology", [&] { probe_topology(driver_part, opts); });
  });
  timed(facts, "toolkits", [&] { probe_toolkits(facts, opts); });
  timed(facts, "pythons", [&] { probe_pythons(facts, opts); });

  // Both need the Python environments (and libs the toolkits) found above, not the driver.
  Facts libs_part = facts;  // a copy: the two probes write different parts
  const size_t notes_before = facts.notes.size();
  auto libs = std::async(std::launch::async, [&] { timed(libs_part, "libs", [&] { probe_libs(libs_part, opts); }); });
  timed(facts, "binaries", [&] { probe_binaries(facts, opts); });
  libs.get();
  facts.libs = std::move(libs_part.libs);
  facts.notes.insert(facts.notes.end(), libs_part.notes.begin() + static_cast<long>(notes_before), libs_part.notes.end());
  facts.probe_seconds["libs"] = libs_part.probe_seconds["libs"];

  driver.get();
  facts.driver = std::move(driver_part.driver);
  facts.platform = std::move(driver_part.platform);
  facts.notes.insert(facts.notes.end(), driver_part.notes.begin(), driver_part.notes.end());
  facts.probe_seconds.insert(driver_part.probe_seconds.begin(), driver_part.probe_seconds.end());

  kb_ready.get();
  return facts;
}

}  // namespace cd
