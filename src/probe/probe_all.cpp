#include <ctime>
#include <future>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "probe/probe.hpp"

namespace cd {

Facts probe_all(const ProbeOptions& opts) {
  Facts facts;
  facts.collected_at = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
  probe_host(facts, opts);
  probe_env(facts, opts);

  // The driver probe waits on a child process; the file probes run meanwhile.
  Facts driver_part;
  auto driver = std::async(std::launch::async, [&] {
    probe_driver(driver_part, opts);
    probe_platform(driver_part, opts);
  });
  probe_toolkits(facts, opts);
  probe_pythons(facts, opts);
  driver.get();
  facts.driver = std::move(driver_part.driver);
  facts.platform = std::move(driver_part.platform);
  facts.notes.insert(facts.notes.end(), driver_part.notes.begin(), driver_part.notes.end());

  // Both need the GPUs and the Python environments found above.
  probe_libs(facts, opts);
  probe_binaries(facts, opts);
  return facts;
}

}  // namespace cd
