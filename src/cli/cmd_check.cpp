// `check` (the default) and `snapshot`.

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "cli/options.hpp"
#include "derive/checklist.hpp"
#include "derive/model.hpp"
#include "kb/kb.hpp"
#include "util/errors.hpp"
#include "report/escape.hpp"
#include "report/report.hpp"
#include "rules/rules.hpp"
#include "util/strings.hpp"
#include "util/term.hpp"
#include "util/trace.hpp"

namespace cd {
namespace {

struct CheckOptions {
  bool deep = false;
  bool no_scan = false;
  std::string explain;  // --explain ID: that finding in full
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
    // check judges the binaries only for this machine's GPUs: each container is read until
    // their verdict is settled, from the moment the driver child has named them.
    p.scan_focus = std::make_shared<ScanFocus>();
    p.scan_focus->ask = [](const DriverFacts& d) { return scan_question(d, Kb::get()); };
    return probe_with_progress(p);
  });
}

// --explain ID: the findings with that id (or id prefix*) in full, whatever their severity.
std::string explain_finding(const Findings& findings, const std::string& id, const ReportOptions& r) {
  Findings match;
  std::vector<std::string> ids;
  for (const auto& f : findings) {
    if (id_matches(f.id, id)) match.push_back(f);
    if (f.severity != Severity::ok && std::find(ids.begin(), ids.end(), f.id) == ids.end()) ids.push_back(f.id);
  }
  if (!match.empty()) return render_findings_text(match, r);
  return fmt::format("no finding {} on this machine{}\n", shown(id),
                     ids.empty() ? "" : " (its findings: " + shown(join(ids, ", ")) + ")");
}

void print_check(const GlobalOptions& g, const CheckOptions& c, const Model& model, const Findings& findings) {
  if (g.json) return print_out(render_json("check", findings, {{"facts", facts_json(model)}}));
  if (g.markdown) return print_out(render_check_markdown(model, findings));
  ReportOptions r = report_options(g);
  if (!c.explain.empty()) return print_out(explain_finding(findings, c.explain, ReportOptions{r.style, 1}));
  if (g.verbose) return print_out(render_check_text(model, findings, r));
  print_out(render_check_summary(model, checklist(model, findings, Kb::get()), r));
}

int run_check(const GlobalOptions& g, const CheckOptions& c) {
  Facts facts = probe_for_check(g, c);
  const Kb& kb = Kb::get();
  Model model = derive(facts, kb);
  trace("derive");
  Findings findings = without_ignored(check_rules(model, kb), g.ignore);
  trace("rules");
  print_check(g, c, model, findings);
  trace("report written");
  return exit_code_for(findings, g);
}

}  // namespace

void register_check(CLI::App& app, GlobalOptions& g, int& rc) {
  static CheckOptions opts;
  auto* check = app.add_subcommand("check", "Diagnose the four layers of this machine's CUDA stack (default)");
  check->add_flag("--deep", opts.deep, "Also run each Python interpreter to confirm what torch and JAX see (child processes, timeout)");
  check->add_flag("--no-scan", opts.no_scan, "Skip reading kernel images inside framework binaries");
  check->add_option("--explain", opts.explain, "Print one finding in full: its evidence, why and every fix (ID, or a prefix like libs.*)")
      ->option_text("ID");
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
