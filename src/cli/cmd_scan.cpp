// `scan`: read the kernel images inside binaries and give the verdict per GPU.
#include <unistd.h>

#include <chrono>
#include <future>
#include <set>

#include <fmt/format.h>

#include "binary/scan.hpp"
#include "cli/options.hpp"
#include "kb/arch.hpp"
#include "kb/drivers.hpp"
#include "kb/gpus.hpp"
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

// Default paths: every Python environment's site-packages and the toolkits' lib dirs.
std::vector<std::string> default_paths(const Facts& facts, const Root& root) {
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
  return out;
}

int run_scan(const GlobalOptions& g, const ScanCli& c) {
  const Kb& kb = Kb::get();
  ProbeOptions popts = probe_options(g);
  popts.driver_nvml_first = true;  // only the GPUs' compute capability and the driver's CUDA are needed
  ScanReport report;
  Facts facts;  // what the rules see: the targets and the scans

  if (!c.gpus.empty()) {
    report.gpus = gpus_from_flags(c.gpus, kb);
    report.gpu_source = "--gpu";
  }
  if (!c.driver.empty()) {
    report.driver = driver_from_flag(c.driver, kb);
    report.driver_source = "--driver";
  }
  // The live GPUs and driver come from a child process (cuInit/NVML, ~0.25 s): read them
  // while the files are scanned.
  bool live = report.gpus.empty() || (c.gpus.empty() && c.driver.empty());
  Facts live_facts;
  std::future<void> driver_probe;
  if (live) driver_probe = std::async(std::launch::async, [&] { probe_driver(live_facts, popts); });

  std::vector<std::string> paths = c.paths;
  if (paths.empty()) {
    probe_pythons(facts, popts);
    probe_toolkits(facts, popts);
    paths = default_paths(facts, popts.root);
    if (paths.empty()) throw UsageError("no Python site-packages or CUDA toolkit found: name the files or directories to scan");
  }

  Progress progress("scanning");
  ScanOptions sopts;
  sopts.kernels = c.kernels;
  sopts.threads = c.threads;
  sopts.progress = [&](size_t done, size_t total, const std::string& path) { progress.update(done, total, path_basename(path)); };
  auto start = std::chrono::steady_clock::now();
  report.binaries = scan_paths(paths, sopts, &report.stats);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.finish();
  for (const auto& e : report.stats.walk_errors) report.notes.push_back(e);
  if (live) {
    driver_probe.get();
    if (report.gpus.empty()) {
      for (const auto& gpu : live_facts.driver.gpus) {
        int sm = gpu.cc_major * 10 + gpu.cc_minor;
        if (sm && std::none_of(report.gpus.begin(), report.gpus.end(), [&](const GpuTarget& t) { return t.sm == sm; }))
          report.gpus.push_back({sm, gpu.name});
      }
      report.gpu_source = "this machine";
    }
    if (c.gpus.empty() && c.driver.empty()) {
      report.driver.cuda = live_facts.driver.cuda_driver_version;
      report.driver.version = !live_facts.driver.nvml_driver_version.empty() ? live_facts.driver.nvml_driver_version
                                                                             : live_facts.driver.module_version;
      if (report.driver.cuda || !report.driver.version.empty()) report.driver_source = "this machine";
    }
  }
  if (report.gpus.empty()) report.notes.push_back("no GPU found on this machine: listing images only (pass --gpu to judge)");
  judge_all(report.binaries, report.gpus, report.driver, arch_rules(kb));

  // The arch rules judge exactly what the report shows: these GPUs, this driver, these scans.
  facts.driver.gpus.clear();
  for (const auto& t : report.gpus) {
    GpuInfo info;
    info.name = t.name;
    info.cc_major = t.sm / 10;
    info.cc_minor = t.sm % 10;
    facts.driver.gpus.push_back(info);
  }
  facts.driver.cuda_driver_version = report.driver.cuda;
  facts.driver.nvml_driver_version = report.driver.version;
  facts.driver.module_version.clear();
  facts.binaries = report.binaries;
  facts.env.clear();
  Findings findings = without_ignored(arch_rules(facts, kb), g.ignore);
  sort_by_severity(findings);

  if (g.json) {
    print_out(render_scan_json(report, findings));
  } else {
    ReportOptions r;
    r.style = g.no_color ? Style::plain() : Style::for_fd(STDOUT_FILENO);
    r.verbose = g.verbose;
    print_out(render_scan_text(report, findings, r));
  }
  bool unreadable = std::any_of(report.binaries.begin(), report.binaries.end(), [](const BinaryScan& b) { return !b.error.empty(); });
  int rc = exit_code_for(findings, g);
  // Nothing could be read at all (a missing path, one unreadable file): the tool could not run.
  bool nothing_read = report.stats.files_examined == 0 && !report.stats.walk_errors.empty();
  if (rc == exit_code::ok && (nothing_read || (unreadable && report.binaries.size() == 1))) return exit_code::cannot_run;
  return rc;
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
