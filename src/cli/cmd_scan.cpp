// `scan`: read the kernel images inside binaries and give the verdict per GPU.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <set>

#include <fmt/format.h>

#include "binary/scan.hpp"
#include "cli/options.hpp"
#include "derive/judge_targets.hpp"
#include "derive/model.hpp"
#include "kb/arch.hpp"
#include "kb/drivers.hpp"
#include "kb/gpus.hpp"
#include "report/escape.hpp"
#include "report/exit_status.hpp"
#include "report/scan_report.hpp"
#include "rules/rules.hpp"
#include "util/errors.hpp"
#include "util/root.hpp"
#include "util/term.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

struct ScanCli {
  std::vector<std::string> paths;
  std::vector<std::string> gpus;
  std::string driver;
  bool kernels = false;
  size_t threads = 0;
};

std::vector<GpuTarget> gpus_from_flags(const std::vector<std::string>& names, const Kb& kb) {
  std::vector<GpuTarget> out;
  for (const auto& n : names) {
    auto q = find_gpu(kb, n);
    if (!q) throw UsageError(fmt::format("--gpu {}: unknown GPU (try sm_89, 8.9, \"RTX 4090\" or H100)", n));
    out.push_back({q->sm, q->name});
  }
  return out;
}

// --driver 550.54 (a driver version), 12.4 (a CUDA version) or 12040 (cuDriverGetVersion).
DriverTarget driver_from_flag(const std::string& text, const Kb& kb) {
  auto v = Version::parse(text);
  if (!v || v->empty()) throw UsageError(fmt::format("--driver {}: expected a driver version like 550.54", text));
  if (v->parts.size() == 1 && v->major() >= 1000) return {v->major(), ""};
  if (v->major() < 100) return {v->cuda_int(), ""};
  DriverTarget d{0, text};
  if (auto c = cuda_for_driver(drivers_kb(kb), *v)) d.cuda = c->cuda.cuda_int();
  return d;
}

// Default paths: every Python environment's site-packages and the toolkits' lib dirs
// (probed into `facts`).
std::vector<std::string> default_paths(Facts& facts, const ProbeOptions& popts) {
  probe_pythons(facts, popts);
  probe_toolkits(facts, popts);
  const Root& root = popts.root;
  std::vector<std::string> in_root;
  for (const auto& env : facts.pythons) in_root.insert(in_root.end(), env.site_packages.begin(), env.site_packages.end());
  for (const auto& tk : facts.toolkit.toolkits) {
    in_root.push_back(path_join(tk.root, "lib64"));
    for (const auto& target : root.list(path_join(tk.root, "targets"))) in_root.push_back(path_join(tk.root, "targets/" + target + "/lib"));
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& p : in_root) {
    std::string host = root.host_path(p);
    if (root.is_dir(p) && seen.insert(host).second) out.push_back(host);
  }
  if (out.empty()) throw UsageError("no Python site-packages or CUDA toolkit found: name the files or directories to scan");
  return out;
}

// --gpu and --driver; empty when not given.
JudgeTargets targets_from_flags(const ScanCli& c, const Kb& kb) {
  JudgeTargets t;
  if (!c.gpus.empty()) t.gpus = gpus_from_flags(c.gpus, kb), t.gpu_source = "--gpu";
  if (!c.driver.empty()) t.driver = driver_from_flag(c.driver, kb), t.driver_source = "--driver";
  return t;
}

// This machine's GPUs and driver fill what the flags left open (the driver only when
// neither flag was given: a --gpu question is about that GPU, not this driver).
void add_live_targets(JudgeTargets& t, const ScanCli& c, const Model& live) {
  if (t.gpus.empty()) t.gpus = live.targets, t.gpu_source = "this machine";
  if (!c.gpus.empty() || !c.driver.empty()) return;
  t.driver = live.driver_target;
  if (t.driver.cuda || !t.driver.version.empty()) t.driver_source = "this machine";
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
  if (g.json) return print_out(render_scan_json(report, findings));
  ReportOptions r;
  r.style = g.no_color ? Style::plain() : Style::for_fd(STDOUT_FILENO);
  r.verbose = g.verbose;
  print_out(render_scan_text(report, findings, r));
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
  JudgeTargets targets = targets_from_flags(c, kb);
  // The live GPUs and driver come from a child process (cuInit/NVML, ~0.25 s): read them while the files are scanned.
  Facts live_facts, envs;  // envs: the Python environments and toolkits, for the default paths and the fixes
  bool live = targets.gpus.empty() || (c.gpus.empty() && c.driver.empty());
  std::future<void> driver_probe;
  if (live) driver_probe = std::async(std::launch::async, [&] { probe_driver(live_facts, popts); });
  std::vector<std::string> paths = c.paths.empty() ? default_paths(envs, popts) : c.paths;
  ScanReport report;
  scan_files(paths, c, report, c.paths.empty() ? popts.root : Root());  // named paths are host paths
  if (live) driver_probe.get(), add_live_targets(targets, c, derive(live_facts, kb));
  if (targets.gpus.empty()) report.notes.push_back("no GPU found on this machine: listing images only (pass --gpu to judge)");
  // The arch rules judge exactly what the report shows: these GPUs, this driver, these scans.
  Facts facts = facts_for_judging(std::move(envs), targets, report.binaries);
  Model model = derive(facts, kb);
  Findings findings = without_ignored(arch_rules(model, kb), g.ignore);
  sort_by_severity(findings);
  report.gpus = targets.gpus, report.gpu_source = targets.gpu_source;
  report.driver = targets.driver, report.driver_source = targets.driver_source;
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
