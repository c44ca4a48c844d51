// libs.* findings from facts.libs (probe/libs*.cpp + loader/): several copies of a
// CUDA library with different versions, the cuDNN a framework gets vs the one it
// was built for, a needed library found nowhere, and a library resolved from an
// older installation than the sibling that needs it (undefined versioned symbols).
#include <fmt/format.h>

#include <map>
#include <set>

#include "kb/pytorch.hpp"
#include "derive/derive_parts.hpp"
#include "rules/rules.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

const char* kEmulation = "ld.so emulation (DT_RPATH/DT_RUNPATH, LD_LIBRARY_PATH, ld.so.cache)";

std::string shown_version(const LibraryCopy& c) { return c.version.empty() ? "version unknown" : c.version; }


const LibraryCopy* copy_at(const Facts& f, const std::string& realpath) {
  for (const auto& c : f.libs.copies)
    if (!realpath.empty() && c.realpath == realpath) return &c;
  return nullptr;
}

const PythonEnv* env_of(const Facts& f, const std::string& prefix) {
  for (const auto& e : f.pythons)
    if (!prefix.empty() && e.prefix == prefix) return &e;
  return nullptr;
}

std::string python_of(const Facts& f, const std::string& prefix) { return python_cmd(env_of(f, prefix)); }

// A Requires-Dist entry without its environment marker: "nvidia-cudnn-cu13==9.19.0.56".
std::string requirement(const std::string& req) { return std::string(trim(req.substr(0, req.find(';')))); }

// The pinned version of a requirement ("nvidia-cudnn-cu13==9.19.0.56" → "9.19.0.56").
std::string pinned(const std::string& req) {
  std::string r = requirement(req);
  auto at = r.find("==");
  return at == std::string::npos ? "" : std::string(trim(r.substr(at + 2)));
}

// LD_LIBRARY_PATH without the given directories, as an export line.
std::string ldlp_without(const Facts& f, const std::set<std::string>& drop) {
  std::vector<std::string> keep;
  for (const auto& d : f.libs.ld_library_path)
    if (!drop.count(path_normalize(d))) keep.push_back(d);
  return keep.empty() ? "unset LD_LIBRARY_PATH" : "export LD_LIBRARY_PATH=" + join(keep, ":");
}

bool is_framework(const LibraryResolution& r) { return !r.env.empty(); }

// ---------------------------------------------------------------------------
// libs.duplicate_copies

void duplicate_copies(const Facts& f, Findings& out) {
  std::map<std::string, std::vector<const LibraryCopy*>> families;
  std::vector<std::string> order;
  for (const auto& c : f.libs.copies) {
    if (!main_library_name(c.name, c.soname)) continue;
    if (!families.count(c.name)) order.push_back(c.name);
    families[c.name].push_back(&c);
  }
  std::vector<std::string> same;  // families duplicated with one version: one info line each
  for (const auto& name : order) {
    const auto& copies = families[name];
    if (copies.size() < 2) continue;
    bool differ = false;
    for (const auto* c : copies) differ |= !same_version(c->version, copies.front()->version);
    // Which copy each consumer gets.
    std::vector<const LibraryResolution*> users;
    for (const auto& r : f.libs.resolutions)
      if (r.name == name && main_library_name(name, r.soname) && !r.path.empty()) users.push_back(&r);
    if (!differ) {
      std::vector<std::string> where;
      for (const auto* c : copies) where.push_back(path_dirname(c->path));
      same.push_back(fmt::format("{} {} ({})", name, shown_version(*copies.front()), join(where, ", ")));
      continue;
    }

    std::vector<std::string> versions;
    for (const auto* c : copies) versions.push_back(shown_version(*c));
    // A toolkit next to a framework's wheels is the usual set-up (one to build, one to
    // run): info. A distro/conda/LD_LIBRARY_PATH copy in reach of every process: warning.
    bool loose = false;
    for (const auto* c : copies)
      loose |= c->on_ld_library_path || c->origin == "system" || c->origin == "LD_LIBRARY_PATH" ||
               c->origin == "other" || c->origin.rfind("conda:", 0) == 0;
    Finding x = new_finding("libs.duplicate_copies", loose ? Severity::warning : Severity::info,
                            fmt::format("{} ({})", name, copies.front()->soname),
                            fmt::format("{} copies of {} ({})", copies.size(), name, join(versions, ", ")));
    for (const auto* c : copies)
      x.evidence.push_back({fmt::format("{} {} at {} [{}{}]", name, shown_version(*c), c->path, c->origin,
                                        c->in_ld_cache ? ", in ld.so.cache" : ""),
                            c->version_source.empty() ? "file" : c->version_source});
    const LibraryResolution* framework_pick = nullptr;
    const LibraryResolution* plain_pick = nullptr;
    for (const auto* r : users) {
      const LibraryCopy* c = copy_at(f, r->realpath);
      x.evidence.push_back({fmt::format("{} gets {} {} via {}", r->consumer, r->path, c ? shown_version(*c) : "",
                                        r->detail.empty() ? r->via : r->detail),
                            kEmulation});
      if (const PythonEnv* env = env_of(f, r->env); env && env->deep.ran) {
        const auto& mapped = env->deep.loaded_libraries;
        bool seen = std::find(mapped.begin(), mapped.end(), r->realpath) != mapped.end() ||
                    std::find(mapped.begin(), mapped.end(), r->path) != mapped.end();
        x.evidence.push_back({fmt::format("{} {} in the process after `import torch`", r->realpath,
                                          seen ? "is mapped" : "is NOT mapped (the emulation and the process disagree)"),
                              "--deep: /proc/self/maps"});
      }
      if (is_framework(*r) && !framework_pick) framework_pick = r;
      if (!is_framework(*r)) plain_pick = r;
    }
    if (framework_pick) {
      const LibraryCopy* fc = copy_at(f, framework_pick->realpath);
      x.title += fmt::format(": {} loads {}", framework_pick->consumer, fc ? shown_version(*fc) + " from " + fc->origin : framework_pick->path);
      if (plain_pick && plain_pick->realpath != framework_pick->realpath) {
        const LibraryCopy* pc = copy_at(f, plain_pick->realpath);
        x.title += fmt::format(", everything else gets {} ({})", pc ? shown_version(*pc) : plain_pick->path, plain_pick->via);
      }
    }
    // A directory on LD_LIBRARY_PATH (a toolkit's lib dir) ahead of the copy the framework's own
    // RUNPATH names (its wheel's): the same finding `libs FILE` gives for one process.
    if (framework_pick && framework_pick->via == "LD_LIBRARY_PATH" && framework_pick->shadowed_via.rfind("RUNPATH", 0) == 0) {
      x.title += fmt::format("; LD_LIBRARY_PATH's {} shadows the copy its {} names", path_dirname(framework_pick->path),
                             framework_pick->shadowed_via);
      x.evidence.push_back({fmt::format("with LD_LIBRARY_PATH unset {} gets {} via {}", framework_pick->consumer,
                                        framework_pick->shadowed, framework_pick->shadowed_via),
                            kEmulation});
      x.fix.push_back(ldlp_without(f, {path_normalize(path_dirname(framework_pick->path))}));
    }
    // collect_env lists what `ldconfig -p` shows for cuDNN, not what torch maps.
    if (name == "cudnn" && framework_pick) {
      for (const auto* c : copies)
        if (c->in_ld_cache && c->realpath != framework_pick->realpath) {
          x.evidence.push_back({fmt::format("`python -m torch.utils.collect_env` reports cuDNN {} ({}) from `ldconfig -p`, "
                                            "but torch loads {}", shown_version(*c), c->path, framework_pick->path),
                                "torch/utils/collect_env.py get_cudnn_version"});
          break;
        }
    }
    x.explanation = "The loader takes one copy per process by search order: a framework's DT_RPATH points at its pip "
                    "wheel, while programs and extensions without RPATH get the LD_LIBRARY_PATH / ld.so.cache copy. "
                    "Two versions in reach means tools report the wrong one, and an extension built against the other "
                    "copy can fail with undefined symbols or version errors in the same process.";
    // Severity policy (docs/findings.md): a warning only when the stray copy already wins where it
    // hurts — it is on LD_LIBRARY_PATH, or a framework resolves to it. A copy only in ld.so.cache that
    // the frameworks pass over is info, and the finding names when it would win.
    bool wins_now = false;
    for (const auto* c : copies) wins_now |= c->on_ld_library_path || c->origin == "LD_LIBRARY_PATH";
    for (const auto* r : users)
      if (const LibraryCopy* c = copy_at(f, r->realpath); c && is_framework(*r))
        wins_now |= c->origin == "system" || c->origin == "other" || c->origin.rfind("conda:", 0) == 0;
    if (loose && !wins_now) {
      x.severity = Severity::info;
      std::string dirs;
      for (const auto* c : copies)
        if (!c->origin.starts_with("wheel:")) dirs += (dirs.empty() ? "" : ", ") + path_dirname(c->path);
      x.explanation += fmt::format(" Today every framework here loads its own copy; the other one wins in a process "
                                   "that loads it first (a program or extension without RPATH imported before the "
                                   "framework), or for libraries found through RUNPATH as soon as LD_LIBRARY_PATH "
                                   "includes {}.", dirs);
    }
    x.fix.push_back("# see which copy a running process really maps (replace PID)");
    x.fix.push_back(fmt::format("grep -E 'lib{}[._]' /proc/PID/maps", name));
    if (framework_pick && plain_pick && plain_pick->realpath != framework_pick->realpath) {
      x.fix.push_back("# either give everything the framework's copy");
      x.fix.push_back(fmt::format("export LD_LIBRARY_PATH={}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}", path_dirname(framework_pick->path)));
      if (const LibraryCopy* pc = copy_at(f, plain_pick->realpath); pc && pc->origin == "system") {
        x.fix.push_back("# or remove the other copy if nothing needs it (find its package first)");
        x.fix.push_back(fmt::format("dpkg -S {} || rpm -qf {}", pc->realpath, pc->realpath));
      }
    }
    out.push_back(std::move(x));
  }
  if (!same.empty()) {
    Finding x = new_finding(
        "libs.duplicate_copies", Severity::info, "CUDA libraries",
        same.size() == 1 ? "1 CUDA library exists in several copies of the same version"
                         : fmt::format("{} CUDA libraries exist in several copies of the same version", same.size()));
    for (const auto& s : same) x.evidence.push_back({s, "file names, wheel RECORD, toolkit version.json"});
    x.explanation = "Same-version copies (a toolkit next to pip wheels) are normal: each program loads one of them.";
    out.push_back(std::move(x));
  }
}

// ---------------------------------------------------------------------------
// libs.cudnn_mismatch

// "91900" (torch.backends.cudnn.version()) → "9.19.0"; other forms pass through.
std::string cudnn_int_version(const std::string& s) {
  if (s.size() < 4 || s.find('.') != std::string::npos) return s;
  int v = std::atoi(s.c_str());
  if (v >= 90000) return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);  // cuDNN 9: MMmmpp
  return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);                   // cuDNN ≤ 8: Mmpp
}

void cudnn_mismatch(const Facts& f, const Kb& kb, Findings& out) {
  for (const auto& r : f.libs.resolutions) {
    if (r.name != "cudnn" || !is_framework(r) || !main_library_name("cudnn", r.soname) || r.path.empty()) continue;
    const PythonEnv* env = env_of(f, r.env);
    // What the framework expects: its pin, else the installed wheel, else the release's wheel.
    std::string expected, expected_src;
    if (!pinned(r.provided_by).empty()) expected = pinned(r.provided_by), expected_src = "Requires-Dist " + requirement(r.provided_by);
    if (expected.empty() && env)
      for (const auto& p : env->packages)
        if (p.name.rfind("nvidia-cudnn", 0) == 0 && !p.version.empty()) expected = p.version, expected_src = p.name + " installed in " + env->prefix;
    if (expected.empty() && env && !env->torch.version.empty()) {
      std::string variant = torch_variant(kb, env->torch.version, env->torch.cuda);
      if (auto w = torch_wheel(kb, env->torch.version, variant); w && !w->cudnn.empty())
        expected = w->cudnn, expected_src = "kb: torch " + w->torch + " " + variant + " wheel (" + w->source + ")";
    }
    const LibraryCopy* got = copy_at(f, r.realpath);
    std::string runtime = got ? got->version : "";
    std::string runtime_src = got ? got->version_source : "";
    // cuDNN 9's libcudnn.so is a shim: cudnnGetVersion and every other call go to the
    // libcudnn_graph it dlopens, searched after LD_LIBRARY_PATH (its RUNPATH is $ORIGIN).
    // Another copy's graph library means the version torch sees, and the one that runs, is that one.
    const LibraryResolution* graph = nullptr;
    for (const auto& g : f.libs.resolutions)
      if (g.consumer == r.consumer && g.soname.rfind("libcudnn_graph.so", 0) == 0 && !g.path.empty()) graph = &g;
    const LibraryCopy* gc = graph ? copy_at(f, graph->realpath) : nullptr;
    if (got && gc && gc->realpath != got->realpath && !gc->version.empty() && !same_version(gc->version, got->version)) {
      Finding x = new_finding("libs.cudnn_mismatch", Severity::error, r.consumer,
                              fmt::format("{} loads cuDNN {} ({}) but its sub-libraries {} ({} via {}): the first cuDNN call fails",
                                          r.consumer, shown_version(*got), r.path, shown_version(*gc), path_dirname(graph->path), graph->via));
      x.evidence.push_back({fmt::format("gets {} ({}) via {}", r.path, shown_version(*got), r.detail.empty() ? r.via : r.detail), kEmulation});
      x.evidence.push_back({fmt::format("{} dlopens {} → {} ({}) via {}", path_basename(r.path), graph->soname, graph->path,
                                        shown_version(*gc), graph->detail.empty() ? graph->via : graph->detail),
                            kEmulation});
      x.explanation = fmt::format(
          "libcudnn.so is only a front: cudnnGetVersion and every other call run in the sub-libraries it loads at first use, "
          "and those are found through LD_LIBRARY_PATH before libcudnn's own directory. torch then sees cuDNN {} and refuses "
          "it (\"cuDNN version incompatibility\"), or cuDNN stops with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH. The import itself works.",
          shown_version(*gc));
      if (graph->via == "LD_LIBRARY_PATH") x.fix.push_back(ldlp_without(f, {path_normalize(path_dirname(graph->path))}));
      x.fix.push_back(fmt::format("export LD_LIBRARY_PATH={}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}", path_dirname(r.path)));
      out.push_back(std::move(x));
      continue;
    }
    if (env && env->deep.ran && !env->deep.cudnn_version.empty())
      runtime = cudnn_int_version(env->deep.cudnn_version), runtime_src = "--deep: torch.backends.cudnn.version()";
    if (expected.empty() || runtime.empty() || same_version(expected, runtime)) continue;
    auto e = Version::parse(expected), g = Version::parse(runtime);
    bool major = e && g && e->major() != g->major();
    bool older = e && g && !major && *g < *e;
    Finding x = new_finding("libs.cudnn_mismatch", major || older ? Severity::error : Severity::warning, r.consumer,
                            fmt::format("{} gets cuDNN {} but expects {}", r.consumer, runtime, expected));
    x.evidence.push_back({fmt::format("expects cuDNN {}", expected), expected_src});
    x.evidence.push_back({fmt::format("gets {} ({}) via {}", r.path, runtime, r.detail.empty() ? r.via : r.detail),
                          runtime_src.empty() ? kEmulation : runtime_src});
    x.explanation = major ? "A different cuDNN major version cannot serve this build: the import or the first cuDNN call fails."
                    : older ? "torch refuses a cuDNN older than the one it was built with (\"cuDNN version incompatibility\")."
                            : "A newer cuDNN minor usually works but is not the tested combination.";
    std::string py = python_of(f, r.env);
    if (!r.provided_by.empty() && !pinned(r.provided_by).empty())
      x.fix.push_back(fmt::format("{} -m pip install '{}'", py, requirement(r.provided_by)));
    else
      x.fix.push_back(fmt::format("{} -m pip install 'nvidia-cudnn-cu{}=={}'", py, env && !env->torch.cuda.empty() ? env->torch.cuda.substr(0, env->torch.cuda.find('.')) : "13", expected));
    if (r.via == "LD_LIBRARY_PATH") x.fix.push_back(ldlp_without(f, {path_normalize(path_dirname(r.path))}));
    out.push_back(std::move(x));
  }
}

// ---------------------------------------------------------------------------
// libs.not_found

void not_found(const Facts& f, Findings& out) {
  for (const auto& r : f.libs.resolutions) {
    if (!is_framework(r) || !r.path.empty()) continue;
    Finding x = new_finding("libs.not_found", Severity::error, r.consumer,
                            fmt::format("{}: {} cannot be loaded", r.consumer, r.soname));
    x.evidence.push_back({fmt::format("{} needs {}: {}", r.requested_by, r.soname, r.detail), kEmulation});
    for (const auto& t : r.tried) x.evidence.push_back({"tried " + t, kEmulation});
    x.explanation = r.via == "error"
                        ? "The loader stops at the first file with the right name that is not a usable ELF library."
                        : "No directory the loader searches for this object holds the library, so importing the framework fails.";
    std::string py = python_of(f, r.env);
    if (!r.provided_by.empty()) x.fix.push_back(fmt::format("{} -m pip install --force-reinstall '{}'", py, requirement(r.provided_by)));
    for (const auto& c : f.libs.copies)
      if (c.soname == r.soname) {
        x.fix.push_back(fmt::format("# or use the copy at {} ({})", c.path, shown_version(c)));
        x.fix.push_back(fmt::format("export LD_LIBRARY_PATH={}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}", path_dirname(c.path)));
        break;
      }
    if (x.fix.empty() && env_of(f, r.env))
      x.fix.push_back(fmt::format("{} -m pip install --force-reinstall torch   # restores its nvidia-* wheels", py));
    else if (x.fix.empty())  // a program outside Python (a pasted ldd): point the loader at a copy
      x.fix = {fmt::format("ldconfig -p | grep {}   # is a copy installed at all?", r.soname),
               "# install the CUDA package that ships it (toolkit, cuDNN, NCCL) or add its directory:",
               "export LD_LIBRARY_PATH=/path/to/its/dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"};
    out.push_back(std::move(x));
  }
}

// ---------------------------------------------------------------------------
// libs.symbol_conflict: a CUDA library gets a dependency from another, older
// installation although its own directory has the matching one
// (pytorch#111469: wheel libcusparse + toolkit libnvJitLink on LD_LIBRARY_PATH).

void symbol_conflict(const Facts& f, Findings& out) {
  for (const auto& r : f.libs.resolutions) {
    if (r.path.empty() || r.requested_by.empty()) continue;
    if (!r.missing_symbols.empty()) {  // read from the files: the import fails
      const LibraryCopy* got = copy_at(f, r.realpath);
      Finding x =
          new_finding("libs.symbol_conflict", Severity::error, r.consumer,
                      fmt::format("{} needs symbols that {} ({}) does not define", path_basename(r.requested_by),
                                  r.path, got ? shown_version(*got) : "version unknown"));
      x.evidence.push_back({fmt::format("{} → {} via {}", r.requested_by, r.path, r.detail.empty() ? r.via : r.detail), kEmulation});
      x.evidence.push_back({fmt::format("undefined: {} (version {})", join(r.missing_symbols, ", "), r.soname),
                            ".gnu.version_r / .dynsym of both files"});
      x.explanation = "The loader finds this copy first, but it is older than the one the library was built against, so "
                      "the import stops with \"undefined symbol: …, version " + r.soname + "\".";
      if (r.via == "LD_LIBRARY_PATH") x.fix.push_back(ldlp_without(f, {path_normalize(path_dirname(r.path))}));
      x.fix.push_back(fmt::format("export LD_LIBRARY_PATH={}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}", path_dirname(r.requested_by)));
      out.push_back(std::move(x));
      continue;
    }
    std::string dir = path_dirname(r.requested_by);
    if (path_dirname(r.path) == dir) continue;
    const LibraryCopy* sibling = nullptr;
    for (const auto& c : f.libs.copies)
      if (c.soname == r.soname && (path_dirname(c.path) == dir ||
                                   std::find(c.also_at.begin(), c.also_at.end(), dir) != c.also_at.end()))
        sibling = &c;
    const LibraryCopy* got = copy_at(f, r.realpath);
    if (!sibling || !got || sibling->realpath == got->realpath) continue;
    auto sv = Version::parse(sibling->version), gv = Version::parse(got->version);
    if (!sv || !gv || sv->empty() || gv->empty() || !(*gv < *sv)) continue;
    Finding x =
        new_finding("libs.symbol_conflict", Severity::warning, r.consumer,
                    fmt::format("{} needs {} {} from its own directory but gets {} {}", path_basename(r.requested_by),
                                r.soname, sibling->version, got->version, got->origin));
    x.evidence.push_back({fmt::format("{} → {} via {}", r.requested_by, r.path, r.detail.empty() ? r.via : r.detail), kEmulation});
    x.evidence.push_back({fmt::format("matching copy {} {} next to it", sibling->path, sibling->version), sibling->version_source});
    x.explanation = "CUDA libraries of one release call each other's newest versioned symbols; an older copy found "
                    "first (usually through LD_LIBRARY_PATH) gives \"undefined symbol: …, version lib…\" at import.";
    if (r.via == "LD_LIBRARY_PATH")
      x.fix.push_back(ldlp_without(f, {path_normalize(path_dirname(r.path))}));
    x.fix.push_back(fmt::format("export LD_LIBRARY_PATH={}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}", dir));
    out.push_back(std::move(x));
  }
}

// --deep read /proc/self/maps after `import torch`: two files of one library
// mapped in one process is the conflict itself, not just a risk.
void loaded_twice(const Facts& f, Findings& out) {
  for (const auto& env : f.pythons) {
    if (!env.deep.ran) continue;
    std::map<std::string, std::vector<std::string>> by_family;
    for (const auto& path : env.deep.loaded_libraries)
      for (const auto& c : f.libs.copies)
        if ((c.realpath == path || c.path == path) && main_library_name(c.name, c.soname)) {
          auto& v = by_family[c.name];
          if (std::find(v.begin(), v.end(), c.realpath) == v.end()) v.push_back(c.realpath);
        }
    for (const auto& [name, files] : by_family) {
      if (files.size() < 2) continue;
      Finding x = new_finding(
          "libs.duplicate_copies", Severity::error, env.prefix,
          fmt::format("{} copies of {} are loaded in one python process ({})", files.size(), name, env.prefix));
      for (const auto& file : files) {
        const LibraryCopy* c = copy_at(f, file);
        x.evidence.push_back({fmt::format("mapped: {} ({})", file, c ? shown_version(*c) : "?"), "--deep: /proc/self/maps"});
      }
      x.explanation = "Two files with the same library in one process means two sets of symbols and state: calls "
                      "can reach either copy, which fails with undefined symbols, version errors or crashes.";
      x.fix.push_back("# keep only the framework's copy in reach: drop the other directory from LD_LIBRARY_PATH");
      std::set<std::string> drop;
      for (const auto& file : files) drop.insert(path_dirname(file));
      x.fix.push_back(ldlp_without(f, drop));
      out.push_back(std::move(x));
    }
  }
}

}  // namespace

Findings libs_rules(const Model& m, const Kb& kb) {
  const Facts& f = m.facts;
  Findings out;
  not_found(f, out);
  cudnn_mismatch(f, kb, out);
  symbol_conflict(f, out);
  loaded_twice(f, out);
  duplicate_copies(f, out);
  return out;
}

}  // namespace cd
