// The facts `ps` needs: the driver (NVML alone, no cuInit), the platform (container or
// not) and every process with an NVIDIA device file open, the /proc scan running while
// the NVML child answers.
#include <ctime>
#include <future>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "probe/driver_probe.hpp"
#include "probe/probe.hpp"
#include "util/trace.hpp"

namespace cd {

Facts probe_ps(const ProbeOptions& opts) {
  Facts facts;
  facts.collected_at = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
  facts.root = opts.root.is_host() ? "/" : opts.root.prefix();
  ProbeOptions o = opts;
  o.driver_nvml_first = true;  // ps needs NVML's GPUs and processes, not the driver API
  DriverFacts holders;
  auto scan = std::async(std::launch::async, [&] { probe_device_holders(holders, opts.root); });
  probe_driver(facts, o);
  probe_platform(facts, opts);
  scan.get();
  facts.driver.holders_scanned = holders.holders_scanned;
  facts.driver.device_holders = std::move(holders.device_holders);
  trace("ps probes");
  return facts;
}

}  // namespace cd
