// probe_libs: every copy of the CUDA libraries that matter and which copy each
// framework gets, computed with the loader/ emulation (no library is loaded).
#include <chrono>

#include "loader/ldconf.hpp"
#include "probe/libs_internal.hpp"
#include "probe/probe.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

namespace cd {

const LibPlace* LibsProbe::place_of(const std::string& path) const {
  const LibPlace* best = nullptr;
  for (const auto& pl : places)
    if (path.rfind(pl.prefix + "/", 0) == 0 && (!best || pl.prefix.size() > best->prefix.size())) best = &pl;
  return best;
}

const DistOwner* LibsProbe::owner_of(const LibPlace& place, const std::string& basename) {
  if (place.dist_info_dir.empty()) return nullptr;
  auto it = owners.find(place.dist_info_dir);
  if (it == owners.end()) {
    // RECORD of each nvidia-* wheel lists the files it installed ("nvidia/cudnn/lib/libcudnn.so.9,sha256=…").
    std::map<std::string, DistOwner> files;
    const Root& root = sys.root();
    for (const auto& d : root.list(place.dist_info_dir)) {
      if (d.size() < 11 || d.substr(d.size() - 10) != ".dist-info" || to_lower(d).rfind("nvidia", 0) != 0) continue;
      std::string stem = d.substr(0, d.size() - 10);
      auto dash = stem.find('-');
      if (dash == std::string::npos) continue;
      DistOwner owner{replace_all(to_lower(stem.substr(0, dash)), "_", "-"), stem.substr(dash + 1), d};
      auto record = read_file_sized(root, path_join(path_join(place.dist_info_dir, d), "RECORD"), 4u << 20);
      if (!record) continue;
      for (const auto& line : split(*record, '\n')) {
        std::string file = line.substr(0, line.find(','));
        if (file.find("/lib/lib") != std::string::npos) files.emplace(path_basename(file), owner);
      }
    }
    it = owners.emplace(place.dist_info_dir, std::move(files)).first;
  }
  auto f = it->second.find(basename);
  return f == it->second.end() ? nullptr : &f->second;
}

const std::string* LibsProbe::toolkit_version(const std::string& root, const std::string& key) {
  auto it = toolkit_versions.find(root);
  if (it == toolkit_versions.end()) {
    std::map<std::string, std::string> versions;
    if (auto text = read_file_sized(sys.root(), path_join(root, "version.json"), 1u << 20)) {
      try {
        auto j = nlohmann::json::parse(*text);
        for (auto& [k, v] : j.items())
          if (v.is_object() && v.contains("version") && v["version"].is_string()) versions[k] = v["version"];
      } catch (const std::exception&) {
        notes.push_back({"libs", root + "/version.json: not valid JSON"});
      }
    }
    it = toolkit_versions.emplace(root, std::move(versions)).first;
  }
  auto v = it->second.find(key);
  return v == it->second.end() ? nullptr : &v->second;
}

const ElfSymbols* LibsProbe::symbols_of(const std::string& realpath) {
  auto it = symbols.find(realpath);
  if (it == symbols.end()) {
    std::optional<ElfSymbols> syms;
    try {
      syms = read_elf_symbols(sys.root().host_path(realpath));
    } catch (const InputError& e) {
      notes.push_back({"libs", e.what()});
    }
    it = symbols.emplace(realpath, std::move(syms)).first;
  }
  return it->second ? &*it->second : nullptr;
}

namespace {

std::vector<LibPlace> places_of(const Facts& facts, const Root& root) {
  std::vector<LibPlace> out;
  for (const auto& tk : facts.toolkit.toolkits) {
    if (tk.root.empty()) continue;
    std::string di = root.is_dir(path_join(tk.root, "dist-info")) ? path_join(tk.root, "dist-info") : "";
    out.push_back({tk.root, "toolkit", tk.root, di});
  }
  for (const auto& env : facts.pythons) {
    if (!env.prefix.empty() && (env.kind == "conda" || root.is_dir(path_join(env.prefix, "conda-meta"))))
      out.push_back({env.prefix, "conda", env.prefix, ""});
    for (const auto& sp : env.site_packages) {
      out.push_back({sp, "wheel", env.prefix.empty() ? sp : env.prefix, sp});
      out.push_back({path_join(sp, "torch/lib"), "bundled", env.prefix.empty() ? sp : env.prefix, ""});
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> host_search_subdirs(const Root& root) {
  if (!root.is_host()) return {};  // another tree's ld.so is not ours to run
  static const std::vector<std::string> cached = [] {
    // The real ld.so lists, for a directory on LD_LIBRARY_PATH, every subdirectory it
    // tries: ask it (--list loads nothing) instead of re-deriving CPU levels and glibc's version.
    std::string exe = self_exe();
    std::string interp = "/lib64/ld-linux-x86-64.so.2";
    try {
      if (auto d = read_elf_dyn(exe); !d.interp.empty()) interp = d.interp;
    } catch (const InputError&) {
    }
    const std::string probe_dir = "/nonexistent-cuda-doctor-probe";
    ProcessOptions o;
    o.timeout = std::chrono::milliseconds(3000);
    o.env_set = {{"LD_DEBUG", "libs"}, {"LD_LIBRARY_PATH", probe_dir}};
    o.env_unset = {"LD_DEBUG_OUTPUT", "LD_PRELOAD"};
    auto r = run_process({interp, "--list", exe}, o);
    return subdirs_from_ld_debug(r.err + r.out, probe_dir);
  }();
  return cached;
}

void probe_libs(Facts& facts, const ProbeOptions& opts) {
  auto start = std::chrono::steady_clock::now();
  LoaderConfig config = default_loader_config(opts.root);
  config.subdirs = host_search_subdirs(opts.root);
  if (auto v = opts.getenv("LD_LIBRARY_PATH")) config.ld_library_path = split_search_path(*v);
  LoaderSystem sys(opts.root, config);

  LibsFacts& libs = facts.libs;
  libs.ld_library_path = config.ld_library_path;
  libs.default_dirs = config.default_dirs;
  const LdCache& cache = sys.cache();
  libs.ld_cache_format = cache.format;
  if (!sys.cache_error().empty()) facts.notes.push_back({"libs", sys.cache_error()});
  std::vector<std::string> conf_errors;
  for (const auto& d : read_ld_so_conf(opts.root, &conf_errors)) libs.ld_so_conf_dirs.push_back(d.dir);
  for (auto& e : conf_errors) facts.notes.push_back({"libs", std::move(e)});

  LibsProbe p{sys, facts, places_of(facts, opts.root), {}, {}, {}, {}, {}};
  libs.copies = find_library_copies(p);
  if (opts.libs_consumers) libs.resolutions = resolve_consumers(p, libs.copies);
  facts.notes.insert(facts.notes.end(), p.notes.begin(), p.notes.end());
  libs.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace cd
