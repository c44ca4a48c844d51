// `explain`: read a failing log (or run a command), name the causal error and the fix
// for this machine. `cuda-doctor explain [FILE|-]`, `cuda-doctor explain -- CMD ARGS…`.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "binary/scan.hpp"
#include "cli/options.hpp"
#include "explain/explain.hpp"
#include "explain/report.hpp"
#include "kb/arch.hpp"
#include "kb/kb.hpp"
#include "report/exit_status.hpp"
#include "report/explain_report.hpp"
#include "rules/report.hpp"
#include "rules/rules.hpp"
#include "util/errors.hpp"
#include "util/escape.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

namespace cd {
namespace {

struct ExplainOptions {
  std::vector<std::string> args;  // FILE / "-" / CMD ARGS…
  bool no_probe = false;
  bool findings_exit = false;
};

// CLI11 drops the "--" separator; whether it was there decides FILE vs command.
bool command_mode(const std::vector<std::string>& args) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::vector<std::string> argv = split(ss.str(), '\0', true);
  bool after_explain = false;
  for (const auto& a : argv) {
    if (a == "explain") after_explain = true;
    else if (after_explain && a == "--") return true;
  }
  return argv.empty() && args.size() > 1;  // no /proc: several words can only be a command
}

// Facts of the machine the log is joined with: --facts FILE, live probes, or none.
Facts facts_for(const GlobalOptions& g, const ExplainOptions& o, bool have_events) {
  if (!g.facts_file.empty()) return load_or_probe(g, [](const ProbeOptions&) { return Facts{}; });
  if (o.no_probe || !have_events) return Facts{};
  return load_or_probe(g, [](const ProbeOptions& p) { return probe_all(p); });
}

void print_report(const GlobalOptions& g, const LogFacts& log, const Findings& findings, const ReportFacts& reports) {
  if (g.json) return print_out(render_explain_json(log, findings, reports.reports, reports.empty() ? nullptr : &reports.facts));
  if (g.markdown) return print_out(render_explain_markdown(log, findings, reports.reports));
  print_out(render_explain_text(log, findings, report_options(g), reports.reports));
}

// The binaries a kernel-image error names are scanned, so the rules can show their images
// and the verdict for this machine's GPUs. Only for live facts: with --facts the paths
// belong to another machine.
void scan_named_binaries(Facts& facts, const GlobalOptions& g) {
  if (!g.facts_file.empty()) return;
  for (const auto& p : binaries_named(facts.log, facts.binaries)) facts.binaries.push_back(scan_binary(p, false));
}

// Environment reports pasted in the log (collect_env, nvidia-smi, …) describe the machine the
// log came from: their facts replace this machine's (explain/report.hpp), unless --facts names
// the machine; the log's findings and check's rules on those facts are joined (rules/report.cpp).
int diagnose(const GlobalOptions& g, const ExplainOptions& o, LogFacts log, const std::string& head) {
  const Kb& kb = Kb::get();
  ReportFacts reports = parse_reports(head, kb);
  bool from_reports = g.facts_file.empty() && !reports.empty();
  Facts facts = from_reports ? reports.facts : facts_for(g, o, !log.events.empty());
  facts.log = std::move(log);
  if (!o.no_probe && !from_reports) scan_named_binaries(facts, g);
  Findings findings = without_ignored(
      explain_rules(derive(facts, kb), kb, from_reports ? reports.reports : std::vector<EnvReport>{}, reports.sources), g.ignore);
  print_report(g, facts.log, findings, reports);
  return exit_code_for(findings, g);
}

constexpr size_t kReportHead = 4u << 20;  // ReportLimits::max_bytes

int explain_file(const GlobalOptions& g, const ExplainOptions& o) {
  if (o.args.size() > 1) throw UsageError("explain takes one FILE (or -); to run a command use: cuda-doctor explain -- CMD ARGS…");
  std::string path = o.args.empty() ? "-" : o.args.front();
  if (path == "-" && isatty(STDIN_FILENO)) throw UsageError("explain: give a log FILE, pipe a log on stdin, or use -- CMD ARGS…");
  if (path == "-" && g.facts_file == "-") throw UsageError("explain: the log and --facts cannot both come from stdin");
  ScanLimits limits;
  limits.keep_head = kReportHead;
  std::string head;
  LogFacts log = scan_file(path, matcher_for(Kb::get()), limits, &head);
  return diagnose(g, o, std::move(log), head);
}

// Runs the command with live pass-through (its stdout goes to stderr under --json, so
// stdout stays one JSON document) and scans its output as it comes.
LogFacts run_and_scan(const GlobalOptions& g, const ExplainOptions& o, ProcessResult& r, std::string& head) {
  ScanLimits limits;
  limits.keep_head = kReportHead;
  LogScanner scanner(matcher_for(Kb::get()), limits);
  FILE* out_sink = g.json ? stderr : stdout;
  ProcessOptions p;
  p.timeout = std::chrono::hours(24 * 365);  // a training job may run for days; the user stops it
  p.max_output = 1u << 20;                   // keep the tail only; the scanner has seen everything
  p.tool_child = false;                      // the user's command keeps the user's environment
  p.foreground = true;                       // Ctrl-C stops the command, then we diagnose; it may read stdin
  p.on_stdout = [&](std::string_view chunk) {
    std::fwrite(chunk.data(), 1, chunk.size(), out_sink);
    std::fflush(out_sink);
    scanner.feed(chunk, 0);
  };
  p.on_stderr = [&](std::string_view chunk) {
    std::fwrite(chunk.data(), 1, chunk.size(), stderr);
    scanner.feed(chunk, 1);
  };
  r = run_process(o.args, p);
  if (!r.started) throw UsageError(fmt::format("explain: cannot run {}: {}", o.args.front(), r.start_error));
  scanner.finish();
  LogFacts log = scanner.take();
  head = scanner.take_head();
  log.source = join(o.args, " ");
  log.command = o.args;
  log.command_exit = r.signal == 0 && !r.timed_out ? r.exit_code : -1;
  log.command_signal = r.signal;
  if (r.timed_out) log.command_error = r.describe();
  return log;
}

int explain_command(const GlobalOptions& g, const ExplainOptions& o) {
  if (o.args.empty()) throw UsageError("explain --: no command given");
  ProcessResult r;
  std::string head;
  LogFacts log = run_and_scan(g, o, r, head);
  if (r.ok() && log.events.empty() && parse_reports(head, Kb::get()).empty()) {
    std::fprintf(stderr, "cuda-doctor: %s exited 0; no known error in its output\n", shown(o.args.front()).c_str());
    return exit_code::ok;
  }
  std::fprintf(stderr, "\ncuda-doctor: %s %s; diagnosing its output\n", shown(o.args.front()).c_str(),
               r.describe().c_str());
  LogFacts command;  // how it ended, kept past the move into the facts
  command.command_exit = log.command_exit, command.command_signal = log.command_signal, command.command_error = log.command_error;
  int findings_rc = diagnose(g, o, std::move(log), head);
  return explain_command_exit_status(command, findings_rc, o.findings_exit);
}

}  // namespace

void register_explain(CLI::App& app, GlobalOptions& g, int& rc) {
  static ExplainOptions opts;
  auto* cmd = app.add_subcommand("explain", "Explain a failing log or command: the causal CUDA error and the fix for this machine");
  cmd->add_option("input", opts.args, "Log FILE (or - for stdin); or, after --, a command and its arguments to run and diagnose");
  cmd->add_flag("--no-probe", opts.no_probe, "Do not read this machine: diagnose the log alone (or with --facts FILE)");
  cmd->add_flag("--findings-exit", opts.findings_exit,
                "With -- CMD: exit with the findings' code (0/1/2) instead of the command's own exit status");
  cmd->footer(
      "Exit status: FILE mode: 0 nothing identified, 2 an error identified (1 warnings with --strict), 3 unreadable input.\n"
      "-- CMD mode: the command's own status when it failed (128+N for signal N), else the findings' code;\n"
      "--findings-exit always uses the findings' code. See docs/explain.md.");
  cmd->callback([&] {
    rc = command_mode(opts.args) ? explain_command(g, opts) : explain_file(g, opts);
  });
}

}  // namespace cd
