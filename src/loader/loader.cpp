#include "loader/loader.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <fstream>

#include <fmt/format.h>

#include "util/errors.hpp"

namespace cd {

const char* load_time_name(LoadTime t) {
  switch (t) {
    case LoadTime::startup: return "startup";
    case LoadTime::first_call: return "first_call";
    case LoadTime::on_demand: return "on_demand";
  }
  return "?";
}

// ---------------------------------------------------------------------------
// Configuration

LoaderConfig default_loader_config(const Root& root, int e_machine) {
  LoaderConfig c;
  std::string triplet = e_machine == 183 ? "aarch64-linux-gnu" : e_machine == 21 ? "powerpc64le-linux-gnu" : "x86_64-linux-gnu";
  c.platform = e_machine == 183 ? "aarch64" : e_machine == 21 ? "powerpc64le" : "x86_64";
  // `ld.so --help` on Debian 12 / Ubuntu 24.04 prints this system search path and
  // expands $LIB to lib/<triplet>; lib64 distributions use /lib64:/usr/lib64 and "lib64".
  if (root.is_dir("/usr/lib/" + triplet) || root.is_dir("/lib/" + triplet)) {
    c.lib = "lib/" + triplet;
    c.default_dirs = {"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"};
  } else {
    c.lib = "lib64";
    c.default_dirs = {"/lib64", "/usr/lib64"};
  }
  return c;
}

std::vector<std::string> split_search_path(std::string_view value) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= value.size(); ++i) {
    if (i == value.size() || value[i] == ':' || value[i] == ';') {
      if (i > start) out.emplace_back(value.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::vector<std::string> subdirs_from_ld_debug(std::string_view trace, std::string_view probe_dir) {
  std::vector<std::string> out;
  std::string key = "search path=" + std::string(probe_dir);
  size_t at = trace.find(key);
  if (at == std::string_view::npos) return out;
  size_t end = trace.find_first_of("\t\n", at);
  std::string_view list = trace.substr(at + 12, end == std::string_view::npos ? std::string_view::npos : end - at - 12);
  std::string prefix = std::string(probe_dir) + "/";
  for (const auto& d : split_search_path(list)) {
    if (d.rfind(prefix, 0) != 0) continue;  // the directory itself ends the list
    std::string sub = d.substr(prefix.size());
    // Legacy lists repeat a name when AT_PLATFORM and a hwcap share it ("x86_64"); once is enough.
    if (std::find(out.begin(), out.end(), sub) == out.end()) out.push_back(sub);
  }
  return out;
}

const char* via_name(Via v) {
  switch (v) {
    case Via::path: return "path";
    case Via::loaded: return "already loaded";
    case Via::rpath: return "RPATH";
    case Via::ld_library_path: return "LD_LIBRARY_PATH";
    case Via::runpath: return "RUNPATH";
    case Via::ld_cache: return "ld.so.cache";
    case Via::default_dir: return "default path";
    case Via::not_found: return "not found";
    case Via::error: return "error";
  }
  return "?";
}

// ---------------------------------------------------------------------------
// LoaderSystem: cached reads

LoaderSystem::LoaderSystem(Root root, LoaderConfig config) : root_(std::move(root)), config_(std::move(config)) {}

const LdCache& LoaderSystem::cache() {
  if (cache_loaded_) return cache_;
  cache_loaded_ = true;
  auto data = read_file_sized(root_, "/etc/ld.so.cache", 64u << 20);
  if (!data) {
    cache_error_ = "/etc/ld.so.cache: cannot read";
    return cache_;
  }
  try {
    cache_ = parse_ld_so_cache(*data);
  } catch (const InputError& e) {
    cache_error_ = e.what();
  }
  return cache_;
}

const std::string& LoaderSystem::cache_error() {
  cache();
  return cache_error_;
}

std::string LoaderSystem::realpath(const std::string& path) {
  auto it = real_.find(path);
  if (it != real_.end()) return it->second;
  std::string r;
  // On the host, a file that is not a link is its resolved directory plus its name: the
  // directory is resolved once (cached here) instead of once per file in it, which was most
  // of the libs probe's time in directories of hundreds of files.
  std::string dir = path_dirname(path), base = path_basename(path);
  struct stat st;
  if (root_.is_host() && !path.empty() && path[0] == '/' && dir != path && base != "." && base != ".." &&
      lstat(path.c_str(), &st) == 0 && !S_ISLNK(st.st_mode))
    r = path_join(realpath(dir), base);
  else
    r = root_.resolve(path).value_or(path);
  real_.emplace(path, r);
  return r;
}

bool LoaderSystem::is_file(const std::string& path) {
  auto it = files_.find(path);
  if (it != files_.end()) return it->second;
  struct stat st;
  // On the host the kernel follows symlinks; under --root they must stay inside the root.
  std::string host = root_.is_host() ? path : root_.host_path(realpath(path));
  bool ok = stat(host.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  files_.emplace(path, ok);
  return ok;
}

const ElfDyn* LoaderSystem::elf(const std::string& path, std::string* error) {
  std::string real = realpath(path);
  auto it = elves_.find(real);
  if (it == elves_.end()) {
    ElfEntry entry;
    try {
      entry.dyn = std::make_unique<ElfDyn>(read_elf_dyn(root_, real));
    } catch (const InputError& e) {
      entry.error = root_.is_host() ? e.what() : without_prefix(e.what());
    }
    it = elves_.emplace(real, std::move(entry)).first;
  }
  if (!it->second.dyn && error) *error = it->second.error;
  return it->second.dyn.get();
}

std::string LoaderSystem::without_prefix(std::string msg) const {
  // Errors name host paths; show the in-root path the user knows.
  const std::string& p = root_.prefix();
  if (!p.empty() && msg.rfind(p, 0) == 0) msg.erase(0, p.size());
  return msg;
}

std::vector<SearchDir> LoaderSystem::expand(const std::string& list, const std::string& origin) const {
  std::vector<SearchDir> out;
  for (const auto& raw : split_search_path(list)) {
    std::string dir;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '$') {
        dir += raw[i];
        continue;
      }
      auto token = [&](std::string_view name) {
        std::string_view rest = std::string_view(raw).substr(i + 1);
        if (rest.substr(0, name.size()) == name &&
            (rest.size() == name.size() || !(std::isalnum(static_cast<unsigned char>(rest[name.size()])) || rest[name.size()] == '_')))
          return name.size();
        if (rest.size() >= name.size() + 2 && rest[0] == '{' && rest.substr(1, name.size()) == name && rest[name.size() + 1] == '}')
          return name.size() + 2;
        return size_t{0};
      };
      if (size_t n = token("ORIGIN")) dir += origin, i += n;
      else if (size_t n2 = token("LIB")) dir += config_.lib, i += n2;
      else if (size_t n3 = token("PLATFORM")) dir += config_.platform, i += n3;
      else dir += '$';  // not a dynamic string token: glibc keeps it literally
    }
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    out.push_back({dir, raw});
  }
  return out;
}

// ---------------------------------------------------------------------------
// Process: search and breadth-first loading

Process::Process(LoaderSystem& sys, const std::string& executable, const std::vector<std::string>& preload) : sys_(sys) {
  if (executable.empty()) {
    for (const auto& name : preload) dlopen(name);
    return;
  }
  std::string error;
  const ElfDyn* elf = sys_.elf(executable, &error);
  LoadedObject exe;
  exe.path = executable;
  exe.realpath = sys_.realpath(executable);
  exe.elf = elf;
  if (elf) exe.soname = elf->soname;
  objects_.push_back(std::move(exe));
  main_ = 0;
  Resolution how{executable, Via::path, elf ? "executable" : error, {}};
  requests_.push_back({-1, executable, elf ? 0 : -1, how});
  if (!elf) return;
  // The dynamic loader itself (PT_INTERP) is loaded before anything else: a DT_NEEDED
  // on "ld-linux-x86-64.so.2" matches it by soname.
  if (!elf->interp.empty() && sys_.is_file(elf->interp)) {
    LoadedObject rtld;
    rtld.path = elf->interp;
    rtld.realpath = sys_.realpath(elf->interp);
    rtld.elf = sys_.elf(elf->interp);
    if (rtld.elf) rtld.soname = rtld.elf->soname;
    rtld.names = {elf->interp};
    objects_.push_back(std::move(rtld));
  }
  // The preloads are mapped first; then the breadth-first walk goes over the executable's
  // DT_NEEDED and after them the preloads' (_dl_map_object_deps with the preloads appended).
  std::vector<int> roots{0};
  for (const auto& name : preload) {
    size_t at = requests_.size();
    int idx = load(name, 0);
    requests_[at].requester = -1;  // asked by LD_PRELOAD, searched as the executable's
    requests_[at].preload = true;
    if (idx >= 0) roots.push_back(idx);
  }
  load_dependencies(roots);
}

int Process::find(std::string_view name) const {
  for (size_t i = 0; i < objects_.size(); ++i) {
    const auto& o = objects_[i];
    if (o.unloaded) continue;
    if (o.path == name || o.soname == name || std::find(o.names.begin(), o.names.end(), name) != o.names.end())
      return static_cast<int>(i);
  }
  return -1;
}

bool Process::try_file(const std::string& path, Resolution& r) const {
  if (!sys_.is_file(path)) return false;
  std::string error;
  const ElfDyn* elf = sys_.elf(path, &error);
  if (!elf) {
    // ld.so stops at a file it cannot use as ELF ("invalid ELF header", "file too short").
    r.path.clear();
    r.via = Via::error;
    r.detail = error;
    return true;
  }
  const ElfDyn* ref = main_ >= 0 && objects_[main_].elf ? objects_[main_].elf : nullptr;
  if (!ref && !objects_.empty()) ref = objects_.front().elf;
  if (ref && !elf->compatible_with(*ref)) {
    r.tried.push_back(path + ": wrong ELF class or machine, skipped");
    return false;
  }
  r.path = path;
  return true;
}

void Process::try_dirs(const std::vector<SearchDir>& dirs, const std::string& name, Via via, const std::string& what,
                       Resolution& r) const {
  for (const auto& d : dirs) {
    if (d.dir.empty() || d.dir[0] != '/') {
      r.tried.push_back(fmt::format("{} (from {}): relative directory, depends on the current directory; skipped", d.dir, what));
      continue;
    }
    // ld.so tries the hwcaps subdirectories of each directory first (elf/dl-load.c open_path).
    for (const auto& sub : sys_.config().subdirs) {
      if (try_file(path_join(path_join(d.dir, sub), name), r)) {
        if (r.via != Via::error) {
          r.via = via;
          r.detail = fmt::format("{} ({}, subdirectory {})", what, d.raw, sub);
        }
        return;
      }
    }
    std::string cand = path_join(d.dir, name);
    if (try_file(cand, r)) {
      if (r.via != Via::error) {
        r.via = via;
        r.detail = d.raw == d.dir ? what : fmt::format("{} ({})", what, d.raw);
      }
      return;
    }
    r.tried.push_back(cand);
  }
}

Resolution Process::search(const std::string& name, int loader, bool ld_library_path) const {
  Resolution r;
  if (name.find('/') != std::string::npos) {  // a path: no search
    if (name[0] != '/') r.detail = name + ": relative path, depends on the current directory";
    else if (!try_file(name, r)) r.detail = name + ": cannot open shared object file: No such file or directory";
    else if (r.via != Via::error) r.via = Via::path, r.detail = "path";
    return r;
  }
  auto done = [&] { return !r.path.empty() || r.via == Via::error; };
  auto origin_of = [&](int i) {
    // The executable's $ORIGIN is its real directory (/proc/self/exe); a library's is
    // the directory it was opened from.
    return path_dirname(i == main_ ? objects_[i].realpath : objects_[i].path);
  };
  auto name_of = [&](int i) { return path_basename(objects_[i].path); };
  const ElfDyn* lelf = loader >= 0 ? objects_[loader].elf : nullptr;

  if (!lelf || !lelf->has_runpath) {
    bool did_main = false;
    for (int l = loader; l >= 0 && !done(); l = objects_[l].loader) {
      const ElfDyn* e = objects_[l].elf;
      if (e && e->effective_rpath())
        try_dirs(sys_.expand(e->rpath, origin_of(l)), name, Via::rpath, "RPATH of " + name_of(l), r);
      did_main |= l == main_;
    }
    if (!done() && !did_main && main_ >= 0 && main_ != loader && objects_[main_].elf &&
        objects_[main_].elf->effective_rpath())
      try_dirs(sys_.expand(objects_[main_].elf->rpath, origin_of(main_)), name, Via::rpath,
               "RPATH of the executable " + name_of(main_), r);
  }
  if (!done() && !sys_.config().secure && ld_library_path) {
    std::vector<SearchDir> dirs;
    for (const auto& d : sys_.config().ld_library_path) dirs.push_back({d, d});
    try_dirs(dirs, name, Via::ld_library_path, "LD_LIBRARY_PATH", r);
  }
  if (!done() && lelf && lelf->has_runpath)
    try_dirs(sys_.expand(lelf->runpath, origin_of(loader)), name, Via::runpath, "RUNPATH of " + name_of(loader), r);

  const ElfDyn* flag_owner = lelf ? lelf : (main_ >= 0 ? objects_[main_].elf : nullptr);
  bool nodeflib = flag_owner && flag_owner->nodeflib;
  if (!done() && !nodeflib) {
    const ElfDyn* ref = flag_owner ? flag_owner : (objects_.empty() ? nullptr : objects_.front().elf);
    int32_t flags = ref ? cache_flags_for_machine(ref->machine, ref->elf_class) : cache_flags_for_machine(62, 2);
    if (const LdCacheEntry* e = sys_.cache().find(name, flags)) {
      if (try_file(e->value, r)) {
        if (r.via != Via::error) r.via = Via::ld_cache, r.detail = "ld.so.cache";
      } else {
        r.tried.push_back(e->value + " (ld.so.cache entry)");
      }
    }
  }
  if (!done() && !nodeflib) {
    std::vector<SearchDir> dirs;
    for (const auto& d : sys_.config().default_dirs) dirs.push_back({d, d});
    try_dirs(dirs, name, Via::default_dir, "default path", r);
  }
  if (!done()) r.detail = name + ": cannot open shared object file: No such file or directory";
  return r;
}

int Process::load(const std::string& name, int requester) {
  LoadRequest req{requester, name, -1, {}};
  req.when = when_;
  int existing = find(name);
  if (existing >= 0) {
    req.object = existing;
    req.how = {objects_[existing].path, Via::loaded, "already loaded as " + objects_[existing].path, {}};
    requests_.push_back(std::move(req));
    return -2 - existing;  // known, not new
  }
  req.how = search(name, requester);
  if (req.how.path.empty()) {
    requests_.push_back(std::move(req));
    return -1;
  }
  // The same file under another name (dev/inode match in ld.so) is reused.
  std::string real = sys_.realpath(req.how.path);
  for (size_t i = 0; i < objects_.size(); ++i)
    if (!objects_[i].unloaded && objects_[i].realpath == real) {
      objects_[i].names.push_back(name);
      req.object = static_cast<int>(i);
      requests_.push_back(std::move(req));
      return -2 - static_cast<int>(i);
    }
  LoadedObject o;
  o.path = req.how.path;
  o.realpath = real;
  o.elf = sys_.elf(o.path);
  o.soname = o.elf ? o.elf->soname : "";
  o.names = {name};
  o.loader = requester;
  o.when = when_;
  objects_.push_back(std::move(o));
  req.object = static_cast<int>(objects_.size()) - 1;
  requests_.push_back(std::move(req));
  return static_cast<int>(objects_.size()) - 1;
}

void Process::load_dependencies(std::vector<int> first) {
  std::deque<int> queue(first.begin(), first.end());
  while (!queue.empty()) {
    int o = queue.front();
    queue.pop_front();
    if (!objects_[o].elf) continue;
    for (const auto& needed : objects_[o].elf->needed) {
      int idx = load(needed, o);
      if (idx >= 0) queue.push_back(idx);
    }
  }
}

int Process::dlopen(const std::string& name, int caller, LoadTime when) {
  if (caller < 0) caller = main_;
  if (caller >= 0 && objects_[caller].when > when) when = objects_[caller].when;
  struct Restore {
    LoadTime& at;
    LoadTime was;
    ~Restore() { at = was; }
  } restore{when_, when_};
  when_ = when;
  size_t first_request = requests_.size();
  int idx = load(name, caller);
  if (idx == -1) return -1;
  if (idx <= -2) return -2 - idx;
  load_dependencies({idx});
  // A dependency that cannot be found fails the whole dlopen, and ld.so unloads every
  // object the call brought in (elf/dl-open.c: _dl_close_worker on the error path).
  bool failed = false;
  for (size_t i = first_request; i < requests_.size(); ++i) failed |= requests_[i].object < 0;
  if (!failed) return idx;
  for (size_t i = static_cast<size_t>(idx); i < objects_.size(); ++i) objects_[i].unloaded = true;
  for (size_t i = first_request; i < requests_.size(); ++i) requests_[i].undone = true;
  return -1;
}

}  // namespace cd
