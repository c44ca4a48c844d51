// `cuda-doctor __driver`: the isolated child the driver probe runs (probe/driver.cpp).
// It asks NVML and the driver API and prints JSON lines: {"stage": …} before each
// stage and {"facts": …} after it, flushed at once, so a parent that has to kill a
// hung child still gets what was learned and the stage it hung in.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "gpu/driver_query.hpp"
#include "util/errors.hpp"
#include "util/trace.hpp"

namespace cd {
namespace {

const auto kStart = std::chrono::steady_clock::now();

// Each line carries the seconds since the child started ("t"), so a slow driver
// shows which stage took the time.
void emit(nlohmann::json line) {
  line["t"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - kStart).count();
  std::string text = json_text(line) + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

int child_driver_main(const std::vector<std::string>& args) {
  bool nvml_first = args.size() == 1 && args[0] == "--nvml-first";
  if (!args.empty() && !nvml_first) {
    std::fprintf(stderr, "cuda-doctor __driver takes only --nvml-first\n");
    return exit_code::cannot_run;
  }
  gpu::QueryProgress progress;
  progress.stage = [](std::string_view s) { emit({{"stage", s}}); };
  progress.partial = [](const DriverFacts& d) { emit({{"facts", d}}); };
  gpu::query_driver(progress, nvml_first);
  emit({{"stage", "done"}});
  trace("driver child exits");
  // Skip the libraries' exit-time teardown (libcuda/NVML destructors cost tens of
  // milliseconds and can hang on a sick driver): everything is written and flushed.
  std::_Exit(exit_code::ok);
}

}  // namespace cd
