// `check` (the default) and `snapshot`.
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "cli/options.hpp"
#include "derive/model.hpp"
#include "kb/kb.hpp"
#include "util/errors.hpp"
#include "report/report.hpp"
#include "rules/rules.hpp"
#include "util/term.hpp"
#include "util/trace.hpp"

namespace cd {
namespace {

struct CheckOptions {
  bool deep = false;
  bool no_scan = false;
};

// Probes with a progress line on stderr when it takes over a second (slow driver,
// --deep, cold page cache); probes themselves never print. The ticker waits on a
// condition variable, not a plain sleep: the report must not wait out its last tick.
Facts probe_with_progress(const ProbeOptions& p) {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::thread ticker([&] {
    Progress progress("cuda-doctor: probing driver, toolkits, Python environments, binaries");
    std::unique_lock lock(mutex);
    while (!cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; })) progress.update(0, 0, "…");
  });
  auto stop_ticker = [&] {
    {
      std::lock_guard lock(mutex);
      done = true;
    }
    cv.notify_one();
    ticker.join();
  };
  Facts facts;
  try {
    facts = probe_all(p);
  } catch (...) {
    stop_ticker();
    throw;
  }
  stop_ticker();
  return facts;
}

Facts probe_for_check(const GlobalOptions& g, const CheckOptions& c) {
  return load_or_probe(g, [&](ProbeOptions p) {
    p.deep = c.deep;
    p.scan_binaries = !c.no_scan;
    return probe_with_progress(p);
  });
}

int run_check(const GlobalOptions& g, const CheckOptions& c) {
  Facts facts = probe_for_check(g, c);
  const Kb& kb = Kb::get();
  Model model = derive(facts, kb);
  trace("derive");
  Findings findings = without_ignored(check_rules(model, kb), g.ignore);
  trace("rules");
  if (g.json) {
    print_out(render_json("check", findings, {{"facts", facts_json(model)}}));
  } else if (g.markdown) {
    print_out(render_check_markdown(model, findings));
  } else {
    ReportOptions r;
    r.style = g.no_color ? Style::plain() : Style::for_fd(STDOUT_FILENO);
    r.verbose = g.verbose;
    print_out(render_check_text(model, findings, r));
  }
  trace("report written");
  return exit_code_for(findings, g);
}

}  // namespace

void register_check(CLI::App& app, GlobalOptions& g, int& rc) {
  static CheckOptions opts;
  auto* check = app.add_subcommand("check", "Diagnose the four layers of this machine's CUDA stack (default)");
  check->add_flag("--deep", opts.deep, "Also run each Python interpreter to confirm what torch and JAX see (child processes, timeout)");
  check->add_flag("--no-scan", opts.no_scan, "Skip reading kernel images inside framework binaries");
  check->callback([&] { rc = run_check(g, opts); });

  auto* snap = app.add_subcommand("snapshot", "Write this machine's facts as JSON (replay with --facts FILE)");
  snap->add_flag("--deep", opts.deep, "Also run each Python interpreter (child process, timeout)");
  snap->callback([&] {
    Facts facts = probe_for_check(g, opts);
    print_out(facts_to_json_text(facts) + "\n");
    rc = cd::exit_code::ok;
  });
}

}  // namespace cd
