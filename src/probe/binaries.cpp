// Kernel images of every CUDA binary in each Python environment's site-packages
// (torch, nvidia-* wheels, flash_attn, vllm, xformers, custom extensions…), read from
// the fatbin headers by binary/scan. Records only; rules/arch.cpp judges them.
#include <fmt/format.h>

#include "binary/scan.hpp"
#include "probe/probe.hpp"
#include "util/strings.hpp"

namespace cd {

void probe_binaries(Facts& facts, const ProbeOptions& opts) {
  if (!opts.scan_binaries) return;
  std::vector<std::string> dirs;
  for (const auto& env : facts.pythons)
    for (const auto& sp : env.site_packages) {
      std::string host = opts.root.host_path(sp);
      if (std::find(dirs.begin(), dirs.end(), host) == dirs.end()) dirs.push_back(host);
    }
  if (dirs.empty()) return;
  ScanStats stats;
  ScanOptions so;
  so.root = opts.root;
  if (opts.scan_focus) so.focus = &opts.scan_focus->focus;
  so.loadable_only = true;  // the rest is dropped below: not even opened (a cold archive is a chain of reads)
  std::vector<BinaryScan> found = scan_paths(dirs, so, &stats);
  int cut = 0, cut_files = 0, tables = 0;
  std::vector<int> cut_for;
  for (auto& b : found) {
    if (b.containers_cut > 0 || b.dispatch_cut) {
      cut += b.containers_cut;
      tables += b.dispatch_cut;
      ++cut_files;
      cut_for = b.cut_for;
    }
    b.path = opts.root.inner_path(b.path);  // rules match paths against in-root site-packages
    for (const auto& n : b.notes) facts.notes.push_back({"binaries", n});
    b.notes.clear();
    for (auto& g : b.groups) g.kernels.clear();
    // Only what the loader maps: standalone .ptx/.cubin/.fatbin files in site-packages are
    // data (often test inputs) that a program loads explicitly, not kernels of the framework.
    bool loadable = b.format == "shared library" || b.format == "executable";
    if (loadable && (b.containers > 0 || b.dispatch_containers > 0)) facts.binaries.push_back(std::move(b));
  }
  for (const auto& e : stats.walk_errors) facts.notes.push_back({"binaries", e});
  if (cut_files > 0) {
    std::vector<std::string> names;
    for (int sm : cut_for) names.push_back(fmt::format("sm_{}", sm));
    std::vector<std::string> what;
    if (cut > 0) what.push_back(fmt::format("{} containers up to their SASS for it", cut));
    // A library's own kernel table (cuFFT's .ldata) is searched from a container a probe found, and
    // only until one serves the GPUs; not at all where a module of the library served them already.
    if (tables > 0)
      what.push_back(fmt::format("{} kernel table{} only until a container served it", tables, tables == 1 ? "" : "s"));
    facts.notes.push_back({"binaries", fmt::format("{} file{} read only as far as {} verdicts for {} need: {} "
                                                   "(`cuda-doctor scan` reads every architecture)",
                                                   cut_files, cut_files == 1 ? " was" : "s were",
                                                   cut_files == 1 ? "its" : "their", join(names, ", "),
                                                   join(what, "; "))});
  }
}

}  // namespace cd
