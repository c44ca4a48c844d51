// libs.* findings for one process of `cuda-doctor libs` (FILE…, --python, --pid): the same
// ids check uses, about what this one process loads.
#include <fmt/format.h>

#include "rules/rules.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {

namespace {

// " via RULE" for a load the emulation resolved; "" for a file read from /proc/PID/maps, which
// says what is mapped, not which rule found it.
std::string via(const LoadedLibrary& l) {
  if (l.via.empty()) return "";
  return " via " + (l.detail.empty() ? l.via : l.detail);
}

// Earlier loads first: "startup" < "first_call" < "on_demand" ("" for --pid counts as startup).
int load_rank(const std::string& loads) { return loads == "on_demand" ? 2 : loads == "first_call" ? 1 : 0; }

// ", at the first call" / ", on demand" for a library loaded after the start.
std::string loaded_when(const LoadedLibrary& l) {
  return l.loads == "first_call" ? ", at the first call" : l.loads == "on_demand" ? ", on demand" : "";
}

}  // namespace

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
      x.evidence.push_back({fmt::format("{} {}{}", p.kind == "pid" ? "mapped" : "loads", f->realpath, via(*f)), source});
    x.explanation = "Two files of one library in one process mean two sets of symbols and state: calls reach either "
                    "copy, which fails with undefined symbols, version errors or crashes (two majors, .so.12 and .so.13, "
                    "are two runtimes that do not share contexts or handles).";
    x.fix.push_back(fmt::format("grep -E 'lib{}[._-]' /proc/PID/maps", family));
    x.fix.push_back("# keep one installation in reach: drop the other's directory from LD_LIBRARY_PATH, or the package that brings it");
    out.push_back(std::move(x));
  }
  bool cudnn_reported = false;
  // cuDNN 9's shim and the sub-libraries it dlopened from another installation (LD_LIBRARY_PATH
  // first). cudnnGetVersion answers for libcudnn_graph, so a graph of another version fails the
  // first cuDNN call; ops/cnn/adv are loaded only by the calls that need them, which then fail.
  const LibWinner* shim = nullptr;
  for (const auto& w : v.libraries)
    if (w.load->soname.rfind("libcudnn.so.", 0) == 0 && !shim) shim = &w;
  std::vector<const LoadedLibrary*> subs;  // of another major.minor than the shim, from another directory
  const LoadedLibrary* graph = nullptr;
  for (const auto& w : v.libraries) {
    const LoadedLibrary& l = *w.load;
    if (!shim || l.family != "cudnn" || main_library_name("cudnn", l.soname) ||
        path_dirname(shim->load->realpath) == path_dirname(l.realpath))
      continue;
    auto a = Version::parse(shim->load->version), b = Version::parse(l.version);
    if (!a || !b || a->parts.size() < 2 || b->parts.size() < 2 || (a->parts[0] == b->parts[0] && a->parts[1] == b->parts[1])) continue;
    subs.push_back(&l);
    if (l.soname.rfind("libcudnn_graph.so.", 0) == 0) graph = &l;
  }
  if (!subs.empty()) {
    // The earliest of them says when cuDNN fails.
    const LoadedLibrary* first = graph;
    for (const auto* l : subs)
      if (!first || load_rank(l->loads) < load_rank(first->loads)) first = l;
    std::vector<std::string> names;
    for (const auto* l : subs) names.push_back(l->soname);
    std::string what = graph ? "its sub-libraries are" : join(names, ", ") + (subs.size() > 1 ? " are" : " is");
    std::string when = first->loads == "on_demand" ? "the first call that needs them fails" : "the first cuDNN call fails";
    Finding x = new_finding("libs.cudnn_mismatch", Severity::error, p.subject,
                            fmt::format("{}: libcudnn.so is {} but {} {} ({}{}): {}", p.subject, shim->load->version, what,
                                        first->version, path_dirname(first->path), via(*first), when));
    x.evidence.push_back({fmt::format("{} ({})", shim->load->realpath, shim->load->version), source});
    for (const auto* l : subs)
      x.evidence.push_back({fmt::format("{} dlopens {} → {} ({}){}{}", path_basename(shim->load->path), l->soname, l->realpath,
                                        l->version, via(*l), loaded_when(*l)),
                            source});
    x.explanation = graph ? "libcudnn.so is only a front: cudnnGetVersion and every other call run in the sub-libraries it loads at "
                            "first use, found through LD_LIBRARY_PATH before its own directory. torch then refuses the version "
                            "(\"cuDNN version incompatibility\") or cuDNN stops with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH."
                          : "libcudnn.so is only a front: it loads libcudnn_ops, _cnn and _adv only when a call needs them, found "
                            "through LD_LIBRARY_PATH before its own directory. The import and the first calls work; the first call "
                            "that needs one of them stops with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH.";
    x.fix.push_back(fmt::format("# take {} off LD_LIBRARY_PATH, or put {} before it", path_dirname(first->path), path_dirname(shim->load->path)));
    x.fix.push_back(fmt::format("export LD_LIBRARY_PATH={}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}", path_dirname(shim->load->path)));
    out.push_back(std::move(x));
    cudnn_reported = true;
  }
  // The toolkit's link-time libcuda in place of the driver's: every CUDA call fails.
  for (const auto& l : p.loads) {
    bool libcuda = path_basename(l.name).rfind("libcuda.so", 0) == 0 || l.soname.rfind("libcuda.so", 0) == 0;
    if (!l.stub || !libcuda || l.unloaded || l.via == "already loaded") continue;
    Finding x = new_finding("driver.stub_library", Severity::error, p.subject,
                            fmt::format("{} loads the toolkit's stub libcuda ({}) instead of the driver's: every CUDA call "
                                        "fails with CUDA_ERROR_STUB_LIBRARY (34)", p.subject, l.path));
    x.evidence.push_back({l.requested_by.empty() ? fmt::format("mapped {}", l.path)
                                                 : fmt::format("{} needs {} → {}{}", l.requested_by, l.name, l.path, via(l)),
                          source});
    if (!l.shadowed.empty())
      x.evidence.push_back({fmt::format("with LD_LIBRARY_PATH unset it gets {}{} via {}", l.shadowed,
                                        l.shadowed_version.empty() ? "" : " (" + l.shadowed_version + ")", l.shadowed_via),
                            source});
    x.explanation = "The CUDA toolkit's stubs/libcuda.so exists only so programs can link without a driver; loaded at run "
                    "time it answers every call with error 34 (\"CUDA driver is a stub library\"). Link-time paths belong in "
                    "LIBRARY_PATH or -L, never in LD_LIBRARY_PATH, ld.so.conf or an RPATH.";
    std::string dir = path_dirname(l.path);
    if (l.via == "LD_LIBRARY_PATH") {
      std::vector<std::string> keep;
      for (const auto& d : p.ld_library_path)
        if (path_normalize(d) != path_normalize(dir)) keep.push_back(d);
      x.fix.push_back(keep.empty() ? "unset LD_LIBRARY_PATH" : "export LD_LIBRARY_PATH=" + join(keep, ":"));
      x.fix.push_back("# and remove it where it is set (~/.bashrc, the Dockerfile's ENV, the job script)");
    } else if (l.via == "ld.so.cache" || l.via == "default path") {
      x.fix.push_back(fmt::format("grep -rn '{}' /etc/ld.so.conf /etc/ld.so.conf.d/   # remove that line", dir));
      x.fix.push_back(fmt::format("sudo rm {}   # a link ldconfig made to the stub", path_join(dir, "libcuda.so.1")));
      x.fix.push_back("sudo ldconfig");
    } else {
      x.fix.push_back(fmt::format("# relink {} without {} in its RPATH/RUNPATH (give it to the linker with -L only)",
                                  path_basename(l.requested_by), dir));
    }
    out.push_back(std::move(x));
  }
  // A directory on LD_LIBRARY_PATH (a toolkit's lib dir, usually) ahead of the copy the
  // requesting library's own RUNPATH names (a pip wheel's): LD_LIBRARY_PATH comes first.
  for (const auto& w : v.libraries) {
    const LoadedLibrary& l = *w.load;
    if (l.via != "LD_LIBRARY_PATH" || l.shadowed.empty() || l.stub || l.shadowed_via.rfind("RUNPATH", 0) != 0) continue;
    if (cudnn_reported && l.family == "cudnn") continue;  // libs.cudnn_mismatch names it
    bool differ = !l.version.empty() && !l.shadowed_version.empty() && !same_version(l.version, l.shadowed_version);
    Finding x = new_finding(
        "libs.duplicate_copies", differ ? Severity::warning : Severity::info, p.subject,
        fmt::format("{}: {} comes from {} (LD_LIBRARY_PATH{}) instead of {} that {} names{}", p.subject, l.soname.empty() ? l.name : l.soname,
                    path_dirname(l.path), w.origin.empty() ? "" : ", " + w.origin, path_dirname(l.shadowed), l.shadowed_via,
                    differ ? fmt::format(" ({} instead of {})", l.version, l.shadowed_version) : ""));
    x.evidence.push_back({fmt::format("{} needs {} → {} ({}) via LD_LIBRARY_PATH", l.requested_by, l.name, l.path,
                                      l.version.empty() ? "version unknown" : l.version),
                          source});
    x.evidence.push_back({fmt::format("with LD_LIBRARY_PATH unset: {} ({}) via {}", l.shadowed,
                                      l.shadowed_version.empty() ? "version unknown" : l.shadowed_version, l.shadowed_via),
                          source});
    x.explanation = "The loader searches LD_LIBRARY_PATH before a library's own RUNPATH, so a toolkit's lib dir there replaces "
                    "the copies a framework's wheels were built and tested with. A different version can fail with "
                    "undefined symbols (libs.symbol_conflict) or misbehave; the same version only makes the answer depend "
                    "on the environment.";
    std::string dir = path_dirname(l.path);
    std::vector<std::string> keep;
    for (const auto& d : p.ld_library_path)
      if (path_normalize(d) != path_normalize(dir)) keep.push_back(d);
    x.fix.push_back(keep.empty() ? "unset LD_LIBRARY_PATH" : "export LD_LIBRARY_PATH=" + join(keep, ":"));
    x.fix.push_back(fmt::format("# or only where the toolkit is needed (building): LD_LIBRARY_PATH={} make …", dir));
    out.push_back(std::move(x));
  }
  for (const auto* f : v.failed) {
    // What fails depends on when the library loads: the start, its loader's first call, or
    // only the call that needs it (NVRTC's builtins: the first compile).
    std::string asker = f->requested_by.find('/') != std::string::npos ? path_basename(f->requested_by) : f->requested_by;
    std::string when = f->loads == "first_call"  ? fmt::format(": the first call of {} fails", asker)
                       : f->loads == "on_demand" ? fmt::format(": {} loads it on demand, the first call that needs it fails", asker)
                                                 : "";
    Finding x = new_finding("libs.not_found", f->loads == "on_demand" ? Severity::warning : Severity::error, p.subject,
                            fmt::format("{}: {} cannot be loaded{}", p.subject, f->name, when));
    x.evidence.push_back({fmt::format("{} needs {}: {}", f->requested_by, f->name, f->detail), source});
    for (const auto& t : f->tried) x.evidence.push_back({"tried " + t, source});
    x.explanation = f->via == "error" ? "The loader stops at the first file with the right name that is not a usable ELF library."
                    : f->loads == "startup"
                        ? "No directory the loader searches for this object holds the library: the program (or the dlopen) fails."
                        : "No directory the loader searches for this object holds the library. It is dlopened after the start, so "
                          "the program starts and only the call that loads it fails.";
    x.fix.push_back(fmt::format("cuda-doctor libs --env LD_LIBRARY_PATH=DIR {}   # try a directory that has it", p.kind == "file" ? p.subject : "FILE"));
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace cd
