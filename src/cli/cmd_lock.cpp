// `lock`: what makes this environment work, as a versioned document (derive/lock) or as the
// files pip, conda and pixi read (report/lock_text). Read-only; writes to stdout.
#include <ctime>
#include <future>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "cli/options.hpp"
#include "derive/lock.hpp"
#include "derive/model.hpp"
#include "kb/kb.hpp"
#include "report/lock_report.hpp"
#include "util/errors.hpp"

#ifndef CD_VERSION
#define CD_VERSION "0"
#endif

namespace cd {
namespace {

// What a lock needs: host, environment, driver and GPUs, toolkits, Python environments and the
// libraries their frameworks resolve — not the binary scan.
Facts probe_for_lock(const ProbeOptions& opts) {
  ProbeOptions o = opts;
  o.driver_nvml_first = true;
  Facts facts;
  facts.collected_at = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
  probe_host(facts, o);
  probe_env(facts, o);
  Facts driver_part;
  auto driver = std::async(std::launch::async, [&] {
    probe_driver(driver_part, o);
    probe_platform(driver_part, o);
  });
  probe_toolkits(facts, o);
  probe_pythons(facts, o);
  probe_libs(facts, o);
  driver.get();
  facts.driver = std::move(driver_part.driver);
  facts.platform = std::move(driver_part.platform);
  return facts;
}

int run_lock(const GlobalOptions& g, const std::string& format) {
  const Kb& kb = Kb::get();
  Facts facts = load_or_probe(g, probe_for_lock);
  Model model = derive(facts, kb);
  LockDoc lock = make_lock(model, kb, CD_VERSION, facts.collected_at);
  if (format == "lock") print_out(render_lock(lock));
  else if (format == "requirements") print_out(render_lock_requirements(lock));
  else if (format == "environment.yml") print_out(render_lock_environment_yml(lock));
  else print_out(render_lock_pixi(lock));
  return exit_code::ok;
}

}  // namespace

// plan --from FILE (cmd_plan.cpp): the lock read here, this machine probed like `lock` does.
int run_plan_from_lock(const GlobalOptions& g, const std::string& path) {
  const Kb& kb = Kb::get();
  LockDoc lock = lock_from_text(read_facts_text(path, "plan --from"), path);
  Facts facts = load_or_probe(g, probe_for_lock);
  Model model = derive(facts, kb);
  LockDiff diff = diff_lock(lock, model, kb);
  print_out(g.json ? render_lock_diff_json(diff) : render_lock_diff_text(diff, report_options(g)));
  return diff.differences ? exit_code::errors : exit_code::ok;
}

void register_lock(CLI::App& app, GlobalOptions& g, int& rc) {
  static std::string format = "lock";
  auto* lock = app.add_subcommand("lock", "What makes this environment work (driver floor, GPUs, toolkit, torch and its index, packages, libraries, variables) as cuda.lock or for pip/conda/pixi");
  lock->add_option("--format", format, "lock (default, JSON cuda-doctor/lock/v1), requirements, environment.yml or pixi")
      ->check(CLI::IsMember({"lock", "requirements", "environment.yml", "pixi"}));
  lock->callback([&] { rc = run_lock(g, format); });
}

}  // namespace cd
