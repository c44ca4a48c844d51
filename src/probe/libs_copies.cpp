// Finds every copy of the tracked CUDA libraries: LD_LIBRARY_PATH, ld.so.cache,
// ld.so.conf and default dirs, toolkits, python envs' nvidia/*/lib and torch/lib,
// conda envs' lib. One copy per real file; versions from file names, wheel RECORDs
// or the toolkit's version.json.
#include <set>

#include "probe/libs_internal.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

struct Found {
  std::string real;
  std::vector<std::string> paths;  // every dir/name that reaches it, in scan order
};

std::vector<std::string> candidate_dirs(LibsProbe& p) {
  const Root& root = p.sys.root();
  const Facts& f = p.facts;
  std::vector<std::string> dirs;
  std::set<std::string> seen;
  auto add = [&](const std::string& d) {
    std::string n = path_normalize(d);
    if (!n.empty() && n[0] == '/' && seen.insert(n).second) dirs.push_back(n);
  };
  for (const auto& d : p.sys.config().ld_library_path) add(d);
  for (const auto& e : p.sys.cache().entries)
    if (cuda_lib_family(path_basename(e.key))) add(path_dirname(e.value));
  for (const auto& d : f.libs.ld_so_conf_dirs) add(d);
  for (const auto& d : p.sys.config().default_dirs) add(d);
  for (const auto& tk : f.toolkit.toolkits) {
    add(path_join(tk.root, "lib64"));
    add(path_join(tk.root, "lib"));
    for (const auto& t : root.list(path_join(tk.root, "targets"))) add(path_join(tk.root, "targets/" + t + "/lib"));
  }
  for (const auto& env : f.pythons) {
    for (const auto& sp : env.site_packages) {
      std::string nv = path_join(sp, "nvidia");
      for (const auto& sub : root.list(nv)) add(path_join(nv, sub + "/lib"));
      add(path_join(sp, "torch/lib"));
    }
    if (!env.prefix.empty() && root.is_dir(path_join(env.prefix, "conda-meta"))) add(path_join(env.prefix, "lib"));
  }
  return dirs;
}

// The name among `paths` the loader would open: the one named like the soname.
std::string preferred_path(const Found& f, const std::string& soname) {
  for (const auto& p : f.paths)
    if (path_basename(p) == soname) return p;
  for (const auto& p : f.paths)
    if (path_dirname(p) == path_dirname(f.real)) return f.real;
  return f.paths.front();
}

std::string longest_version(const Found& f) {
  std::string best = version_from_filename(path_basename(f.real));
  for (const auto& p : f.paths) {
    std::string v = version_from_filename(path_basename(p));
    if (v.size() > best.size()) best = v;
  }
  return best;
}

size_t components(const std::string& v) { return v.empty() ? 0 : split(v, '.').size(); }

void set_version_and_origin(LibsProbe& p, const Found& f, LibraryCopy& c) {
  c.version = longest_version(f);
  if (!c.version.empty()) c.version_source = "file name";
  const LibPlace* place = p.place_of(c.realpath);
  if (!place) place = p.place_of(c.path);
  if (!place) return;
  for (const auto& name : {path_basename(c.path), path_basename(c.realpath), c.soname}) {
    const DistOwner* o = p.owner_of(*place, name);
    if (!o) continue;
    c.package = o->package;
    if (components(o->version) >= components(c.version)) c.version = o->version, c.version_source = o->dist_info;
    break;
  }
  if (place->kind == "toolkit") {
    c.origin = "toolkit:" + place->label;
    const CudaLibFamily* fam = cuda_lib_family(path_basename(c.path));
    if (fam && !fam->toolkit_key.empty() && components(c.version) < 3)
      if (const std::string* v = p.toolkit_version(place->label, fam->toolkit_key))
        c.version = *v, c.version_source = place->label + "/version.json";
  } else if (place->kind == "wheel") {
    c.origin = "wheel:" + (c.package.empty() ? std::string("nvidia") : c.package) + " (" + place->label + ")";
  } else if (place->kind == "bundled") {
    c.origin = "torch/lib (bundled) (" + place->label + ")";
  } else if (place->kind == "conda") {
    c.origin = "conda:" + place->label;
  }
}

}  // namespace

std::vector<LibraryCopy> find_library_copies(LibsProbe& p) {
  const Root& root = p.sys.root();
  std::vector<Found> found;
  std::map<std::string, size_t> by_real;
  for (const auto& dir : candidate_dirs(p)) {
    for (const auto& name : root.list(dir)) {
      if (!cuda_lib_family(name)) continue;
      std::string path = path_join(dir, name);
      if (!p.sys.is_file(path)) continue;  // dangling link, directory
      std::string real = p.sys.realpath(path);
      auto [it, fresh] = by_real.emplace(real, found.size());
      if (fresh) found.push_back({real, {}});
      found[it->second].paths.push_back(path);
    }
  }

  std::set<std::string> cached;  // real files ld.so.cache lists
  for (const auto& e : p.sys.cache().entries)
    if (cuda_lib_family(path_basename(e.key))) cached.insert(p.sys.realpath(e.value));
  std::set<std::string> ldlp;
  for (const auto& d : p.sys.config().ld_library_path) ldlp.insert(path_normalize(d)), ldlp.insert(p.sys.realpath(d));
  std::set<std::string> system_dirs(p.facts.libs.ld_so_conf_dirs.begin(), p.facts.libs.ld_so_conf_dirs.end());
  system_dirs.insert(p.sys.config().default_dirs.begin(), p.sys.config().default_dirs.end());

  std::vector<LibraryCopy> out;
  for (const auto& f : found) {
    LibraryCopy c;
    std::string error;
    const ElfDyn* elf = p.sys.elf(f.real, &error);
    if (!elf) {
      p.notes.push_back({"libs", error});
      continue;
    }
    c.realpath = f.real;
    c.soname = !elf->soname.empty() ? elf->soname : path_basename(f.real);
    const CudaLibFamily* fam = cuda_lib_family(c.soname);
    if (!fam) fam = cuda_lib_family(path_basename(f.real));
    if (!fam) continue;
    c.name = fam->name;
    c.path = preferred_path(f, c.soname);
    std::set<std::string> dirs_seen{path_dirname(c.path)};
    for (const auto& q : f.paths)
      if (dirs_seen.insert(path_dirname(q)).second) c.also_at.push_back(path_dirname(q));
    c.in_ld_cache = cached.count(f.real) > 0;
    for (const auto& q : f.paths) c.on_ld_library_path |= ldlp.count(path_dirname(q)) > 0;
    set_version_and_origin(p, f, c);
    if (c.origin.empty()) {
      bool system = false;
      for (const auto& q : f.paths) system |= system_dirs.count(path_dirname(q)) > 0;
      c.origin = system || c.in_ld_cache ? "system" : c.on_ld_library_path ? "LD_LIBRARY_PATH" : "other";
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace cd
