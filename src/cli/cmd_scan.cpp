// `scan`: read the kernel images inside binaries and give the verdict per GPU.
#include <chrono>
#include <cstdio>
#include <future>

#include "binary/scan.hpp"
#include "cli/options.hpp"
#include "derive/judge_targets.hpp"
#include "derive/model.hpp"
#include "util/escape.hpp"
#include "report/exit_status.hpp"
#include "report/scan_report.hpp"
#include "rules/rules.hpp"
#include "util/errors.hpp"
#include "util/root.hpp"
#include "util/term.hpp"

namespace cd {
namespace {

struct ScanCli {
  std::vector<std::string> paths;
  std::vector<std::string> gpus;
  std::string driver;
  bool kernels = false;
  size_t threads = 0;
};

// Default paths: every Python environment's site-packages and the toolkits' lib dirs
// (probed into `facts`, whose environments the fixes name).
std::vector<std::string> default_paths(Facts& facts, const ProbeOptions& popts) {
  std::vector<std::string> out = default_scan_paths(facts, popts);
  if (out.empty()) throw UsageError("no Python site-packages or CUDA toolkit found: name the files or directories to scan");
  return out;
}

// `root`: the paths lie under --root (the default paths), so links in them resolve inside it.
void scan_files(const std::vector<std::string>& paths, const ScanCli& c, ScanReport& report, const Root& root) {
  Progress progress("scanning");
  ScanOptions sopts;
  sopts.kernels = c.kernels;
  sopts.threads = c.threads;
  sopts.root = root;
  sopts.progress = [&](size_t done, size_t total, const std::string& path) { progress.update(done, total, path_basename(path)); };
  auto start = std::chrono::steady_clock::now();
  report.binaries = scan_paths(paths, sopts, &report.stats);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.finish();
  for (const auto& e : report.stats.walk_errors) report.notes.push_back(e);
}

void print_scan(const GlobalOptions& g, const ScanReport& report, const Findings& findings) {
  print_out(g.json ? render_scan_json(report, findings) : render_scan_text(report, findings, report_options(g)));
}

// Nothing could be read at all (a missing path, one unreadable file): the tool could not
// run, and says why in one line on stderr (docs/usage.md).
int scan_exit_code(const ScanReport& report, const Findings& findings, const GlobalOptions& g) {
  std::string why = scan_could_not_run(report);
  int rc = exit_status(findings, g.strict, !why.empty());
  if (rc == exit_code::cannot_run) std::fprintf(stderr, "cuda-doctor: %s\n", shown(why).c_str());
  return rc;
}

int run_scan(const GlobalOptions& g, const ScanCli& c) {
  const Kb& kb = Kb::get();
  ProbeOptions popts = probe_options(g);
  popts.driver_nvml_first = true;  // only the GPUs' compute capability and the driver's CUDA are needed
  ScanReport report;
  report.targets = targets_from_flags(c.gpus, c.driver, kb);
  // The live GPUs and driver come from a child process (cuInit/NVML, ~0.25 s): read them while the files are scanned.
  Facts machine, envs;  // envs: the Python environments and toolkits, for the default paths and the fixes
  std::future<void> driver_probe;
  if (needs_this_machine(report.targets)) driver_probe = std::async(std::launch::async, [&] { probe_driver(machine, popts); });
  std::vector<std::string> paths = c.paths.empty() ? default_paths(envs, popts) : c.paths;
  scan_files(paths, c, report, c.paths.empty() ? popts.root : Root());  // named paths are host paths
  if (driver_probe.valid()) driver_probe.get(), add_this_machine(report.targets, derive(machine, kb));
  if (report.targets.gpus.empty()) report.notes.push_back("no GPU found on this machine: listing images only (pass --gpu to judge)");
  // The arch rules judge exactly what the report shows: these GPUs, this driver, these scans.
  Facts facts = facts_for_judging(std::move(envs), report.targets, report.binaries);
  Model model = derive(facts, kb);
  Findings findings = without_ignored(arch_rules(model, kb), g.ignore);
  sort_by_severity(findings);
  report.verdicts = model.verdicts;
  print_scan(g, report, findings);
  return scan_exit_code(report, findings, g);
}

}  // namespace

void register_scan(CLI::App& app, GlobalOptions& g, int& rc) {
  static ScanCli opts;
  auto* scan = app.add_subcommand("scan", "Read the kernel images inside binaries and say, per GPU, whether they will run");
  scan->add_option("paths", opts.paths,
                   "Files or directories (default: every Python environment's site-packages and the CUDA toolkits' lib dirs)");
  repeatable(scan->add_option("--gpu", opts.gpus,
                              "Judge for this GPU instead of this machine's: sm_89, 8.9, \"RTX 4090\", H100 (repeatable, or A,B)"));
  scan->add_option("--driver", opts.driver, "Judge for this driver: 550.54 (driver version), 12.4 (CUDA version)");
  scan->add_flag("--kernels", opts.kernels, "Decompress the images and name the kernels that would fail");
  scan->add_option("--threads", opts.threads, "Files read in parallel (default: one per core)");
  scan->callback([&] { rc = run_scan(g, opts); });
}

}  // namespace cd
