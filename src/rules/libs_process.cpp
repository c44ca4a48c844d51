// libs.* findings for one process of `cuda-doctor libs` (FILE…, --python, --pid): the same
// ids check uses, about what this one process loads.
#include <fmt/format.h>

#include "rules/rules.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {

Findings libs_process_rules(const ProcessView& v) {
  Findings out;
  const ProcessLibs& p = *v.process;
  const char* source = p.kind == "pid" ? "/proc/PID/maps" : "ld.so emulation (loader/)";
  for (const auto& [family, files] : v.twice) {
    std::vector<std::string> names;
    for (const auto* f : files) names.push_back(fmt::format("{} ({})", path_basename(f->realpath), f->version.empty() ? "version unknown" : f->version));
    Finding x = new_finding("libs.duplicate_copies", Severity::error, p.subject,
                            fmt::format("{} copies of {} in one process ({}): {}", files.size(), family, p.subject, join(names, ", ")));
    for (const auto* f : files)
      x.evidence.push_back({fmt::format("{} {}{}", p.kind == "pid" ? "mapped" : "loads", f->realpath,
                                        f->via.empty() ? "" : " via " + (f->detail.empty() ? f->via : f->detail)),
                            source});
    x.explanation = "Two files of one library in one process mean two sets of symbols and state: calls reach either "
                    "copy, which fails with undefined symbols, version errors or crashes (two majors, .so.12 and .so.13, "
                    "are two runtimes that do not share contexts or handles).";
    x.fix.push_back(fmt::format("grep -E 'lib{}[._-]' /proc/PID/maps", family));
    x.fix.push_back("# keep one installation in reach: drop the other's directory from LD_LIBRARY_PATH, or the package that brings it");
    out.push_back(std::move(x));
  }
  // cuDNN 9's shim and the libcudnn_graph it dlopened from another installation
  // (LD_LIBRARY_PATH first): cudnnGetVersion answers for the graph library.
  const LibWinner* shim = nullptr;
  const LibWinner* graph = nullptr;
  for (const auto& w : v.libraries) {
    if (w.load->soname.rfind("libcudnn.so.", 0) == 0 && !shim) shim = &w;
    if (w.load->soname.rfind("libcudnn_graph.so.", 0) == 0 && !graph) graph = &w;
  }
  if (shim && graph && path_dirname(shim->load->realpath) != path_dirname(graph->load->realpath)) {
    auto a = Version::parse(shim->load->version), b = Version::parse(graph->load->version);
    bool differ = a && b && a->parts.size() >= 2 && b->parts.size() >= 2 && (a->parts[0] != b->parts[0] || a->parts[1] != b->parts[1]);
    if (differ) {
      Finding x = new_finding("libs.cudnn_mismatch", Severity::error, p.subject,
                              fmt::format("{}: libcudnn.so is {} but its sub-libraries are {} ({} via {}): the first cuDNN call fails",
                                          p.subject, shim->load->version, graph->load->version, path_dirname(graph->load->path), graph->load->via));
      x.evidence.push_back({fmt::format("{} ({})", shim->load->realpath, shim->load->version), source});
      x.evidence.push_back({fmt::format("{} dlopens {} → {} ({}) via {}", path_basename(shim->load->path), graph->load->soname,
                                        graph->load->realpath, graph->load->version, graph->load->detail.empty() ? graph->load->via : graph->load->detail),
                            source});
      x.explanation = "libcudnn.so is only a front: cudnnGetVersion and every other call run in the sub-libraries it loads at "
                      "first use, found through LD_LIBRARY_PATH before its own directory. torch then refuses the version "
                      "(\"cuDNN version incompatibility\") or cuDNN stops with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH.";
      x.fix.push_back(fmt::format("# take {} off LD_LIBRARY_PATH, or put {} before it", path_dirname(graph->load->path), path_dirname(shim->load->path)));
      x.fix.push_back(fmt::format("export LD_LIBRARY_PATH={}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}", path_dirname(shim->load->path)));
      out.push_back(std::move(x));
    }
  }
  for (const auto* f : v.failed) {
    Finding x = new_finding("libs.not_found", Severity::error, p.subject,
                            fmt::format("{}: {} cannot be loaded", p.subject, f->name));
    x.evidence.push_back({fmt::format("{} needs {}: {}", f->requested_by, f->name, f->detail), source});
    for (const auto& t : f->tried) x.evidence.push_back({"tried " + t, source});
    x.explanation = f->via == "error" ? "The loader stops at the first file with the right name that is not a usable ELF library."
                                      : "No directory the loader searches for this object holds the library: the program (or the dlopen) fails.";
    x.fix.push_back(fmt::format("cuda-doctor libs --env LD_LIBRARY_PATH=DIR {}   # try a directory that has it", p.kind == "file" ? p.subject : "FILE"));
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace cd
