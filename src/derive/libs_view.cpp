#include "derive/libs_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "util/root.hpp"

namespace cd {
namespace {

const LibraryCopy* copy_at(const Facts& f, const std::string& realpath) {
  for (const auto& c : f.libs.copies)
    if (!realpath.empty() && c.realpath == realpath) return &c;
  return nullptr;
}

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// Why `c` lost to `w` for this process (the loader's search order, ld.so(8)).
std::string why_lost(const LibraryCopy& c, const LoadedLibrary& w, const ProcessLibs& p) {
  std::string dir = path_dirname(c.path);
  for (const auto& t : w.tried)
    if (t.rfind(c.path, 0) == 0 && t.size() > c.path.size()) return "passed over: " + t.substr(c.path.size() + 2);
  if (!w.shadowed.empty()) {
    std::string sdir = path_normalize(path_dirname(w.shadowed));
    if (sdir == path_normalize(dir) || contains(c.also_at, sdir))
      return fmt::format("{} finds it, but LD_LIBRARY_PATH comes first", w.shadowed_via);
  }
  if (w.via == "already loaded" || w.via == "path")
    return fmt::format("{} was loaded first ({}); the first copy of a soname wins process-wide", w.realpath, w.via == "path" ? "by path" : "earlier request");
  if (contains(p.ld_library_path, dir))
    return w.via == "RPATH" ? "on LD_LIBRARY_PATH, which comes after the RPATH that found the winner"
                            : "on LD_LIBRARY_PATH, after the winner's directory";
  if (c.in_ld_cache) return fmt::format("in ld.so.cache, which comes after {}", w.via);
  return fmt::format("{} is on no search path of {} (RPATH/RUNPATH, LD_LIBRARY_PATH, ld.so.cache, default dirs)", dir,
                     w.requested_by == "dlopen" || w.requested_by == "executable" ? "this program" : path_basename(w.requested_by));
}

}  // namespace

ProcessView derive_libs_view(const ProcessLibs& p, const Facts& facts) {
  ProcessView v;
  v.process = &p;
  const std::vector<LoadedLibrary>& src = p.kind == "pid" ? p.mapped : p.loads;
  std::set<std::string> sonames;
  std::map<std::string, std::vector<const LoadedLibrary*>> by_family;
  for (const auto& l : src) {
    // A stub libcuda is not a CUDA-family library, but it is what this process gets instead of
    // the driver's: listed with them (driver.stub_library says why it matters).
    if (l.family.empty() && !(l.stub && !l.path.empty() && !l.unloaded && l.via != "already loaded")) {
      if (l.path.empty() && l.depth == 1) v.failed.push_back(&l);
      continue;
    }
    if (l.path.empty()) {
      v.failed.push_back(&l);
      continue;
    }
    if (l.unloaded) continue;
    std::string key = l.soname.empty() ? path_basename(l.realpath) : l.soname;
    if (l.family.empty()) {
      if (sonames.insert(key).second) v.libraries.push_back({&l, "", {}});
      continue;
    }
    auto& fam = by_family[l.family];
    if (std::none_of(fam.begin(), fam.end(), [&](const LoadedLibrary* x) { return x->realpath == l.realpath; })) fam.push_back(&l);
    if (!sonames.insert(key).second) continue;
    LibWinner w;
    w.load = &l;
    const LibraryCopy* mine = copy_at(facts, l.realpath);
    if (mine) w.origin = mine->origin;
    for (const auto& c : facts.libs.copies)
      if (c.soname == key && c.realpath != l.realpath)
        w.losers.push_back({c.path, c.version, c.origin, p.kind == "pid" ? "not mapped in this process" : why_lost(c, l, p)});
    v.libraries.push_back(std::move(w));
  }
  // Only the main library of a family counts for "loaded twice" (cuDNN's sub-libraries are one cuDNN).
  for (auto& [family, files] : by_family) {
    std::vector<const LoadedLibrary*> main;
    for (const auto* f : files)
      if (main_library_name(family, path_basename(f->realpath))) main.push_back(f);
    if (main.size() > 1) v.twice.emplace_back(family, main);
  }
  return v;
}

}  // namespace cd
