// `cuda-doctor libs`: one process's libraries. FILE… and --python are emulated with loader/
// (nothing is loaded); --pid reads /proc/PID/maps and /proc/PID/environ of a live process.
#include <fstream>
#include <set>
#include <sstream>

#include "loader/cudnn.hpp"
#include "loader/nvrtc.hpp"
#include "probe/libs_internal.hpp"
#include "probe/libs_process.hpp"
#include "probe/python_envs.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

LoaderConfig config_for(const ProbeOptions& opts) {
  LoaderConfig config = default_loader_config(opts.root);
  config.subdirs = host_search_subdirs(opts.root);
  if (auto v = opts.getenv("LD_LIBRARY_PATH")) config.ld_library_path = split_search_path(*v);
  return config;
}

// LD_PRELOAD is split on spaces and colons (ld.so(8)).
std::vector<std::string> split_preload(const std::string& v) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : v + " ") {
    if (c == ' ' || c == ':' || c == '\t') {
      if (!cur.empty()) out.push_back(cur), cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

void classify(LoadedLibrary& l, const std::map<std::string, std::string>& versions) {
  std::string file = path_basename(l.realpath.empty() ? l.path : l.realpath);
  if (const CudaLibFamily* f = cuda_lib_family(file)) l.family = f->name;
  if (l.family.empty() && !l.soname.empty())
    if (const CudaLibFamily* f = cuda_lib_family(l.soname)) l.family = f->name;
  if (l.family.empty())  // not found: the name asked for
    if (const CudaLibFamily* f = cuda_lib_family(path_basename(l.name))) l.family = f->name;
  auto it = versions.find(l.realpath);
  l.version = it != versions.end() ? it->second : l.family.empty() ? "" : version_from_filename(file);
}

std::vector<LoadedLibrary> loads_of(const Process& proc, const std::map<std::string, std::string>& versions) {
  std::vector<int> depth(proc.objects().size(), 0);
  std::vector<LoadedLibrary> out;
  for (const auto& req : proc.requests()) {
    LoadedLibrary l;
    l.name = req.name;
    l.requested_by = req.preload ? "LD_PRELOAD" : req.requester >= 0 ? proc.objects()[req.requester].path : "dlopen";
    if (req.requester < 0 && !req.preload && req.how.via == Via::path && req.object == 0) l.requested_by = "executable";
    l.depth = req.requester >= 0 ? depth[req.requester] + 1 : (req.preload ? 1 : 0);
    if (req.object >= 0) {
      const LoadedObject& o = proc.objects()[req.object];
      if (req.how.via != Via::loaded && static_cast<size_t>(req.object) < depth.size()) depth[req.object] = l.depth;
      l.path = o.path;
      l.realpath = o.realpath;
      l.soname = o.soname;
      l.unloaded = o.unloaded;
    }
    l.loads = load_time_name(req.object >= 0 ? proc.objects()[req.object].when : req.when);
    l.via = via_name(req.how.via);
    l.detail = req.how.detail;
    l.tried = req.how.tried;
    classify(l, versions);
    l.stub = !l.path.empty() && contains(path_dirname(l.path) + "/", "/stubs/");
    // What the same request gets with LD_LIBRARY_PATH unset: the copy this one shadows.
    if (req.how.via == Via::ld_library_path) {
      Resolution alt = proc.search(req.name, req.requester, false);
      if (!alt.path.empty() && proc.system().realpath(alt.path) != l.realpath) {
        l.shadowed = alt.path;
        l.shadowed_via = alt.detail.empty() ? via_name(alt.via) : alt.detail;
        std::string real = proc.system().realpath(alt.path);
        auto it = versions.find(real);
        l.shadowed_version = it != versions.end() ? it->second : version_from_filename(path_basename(real));
      }
    }
    out.push_back(std::move(l));
  }
  return out;
}

std::map<std::string, std::string> versions_of(const Facts& facts) {
  std::map<std::string, std::string> out;
  for (const auto& c : facts.libs.copies)
    if (!c.version.empty()) out.emplace(c.realpath, c.version);
  return out;
}

// /proc files report size 0: read to the end (bounded).
std::optional<std::string> read_proc(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string out;
  char buf[65536];
  while (in && out.size() < max_bytes) {
    in.read(buf, sizeof buf);
    out.append(buf, static_cast<size_t>(in.gcount()));
  }
  return out;
}

}  // namespace

ProcessLibs probe_libs_file(const Facts& facts, const ProbeOptions& opts, const std::string& file) {
  LoaderSystem sys(opts.root, config_for(opts));
  ProcessLibs out;
  out.subject = file;
  out.kind = "file";
  out.ld_library_path = sys.config().ld_library_path;
  out.preload = split_preload(opts.env_or("LD_PRELOAD"));
  std::string error;
  const ElfDyn* elf = sys.elf(file, &error);
  if (!elf) {
    out.error = error.empty() ? file + ": cannot read" : error;
    return out;
  }
  // An executable starts as a program does; a library is dlopened by a program without RPATH.
  bool exe = !elf->interp.empty();
  Process proc(sys, exe ? file : "", out.preload);
  if (!exe) proc.dlopen(file);
  // What cuDNN and NVRTC dlopen later (at a first call, or when a call needs it) is part of
  // what the program gets, marked with when.
  auto versions = versions_of(facts);
  load_cudnn_sublibs(proc, [&](int i) {
    auto it = versions.find(proc.objects()[i].realpath);
    return it != versions.end() ? it->second : version_from_filename(path_basename(proc.objects()[i].realpath));
  });
  load_nvrtc_builtins(proc);
  out.loads = loads_of(proc, versions_of(facts));
  return out;
}

ProcessLibs probe_libs_python(const Facts& facts, const ProbeOptions& opts, const std::string& python) {
  ProcessLibs out;
  out.kind = "python";
  const PythonEnv* env = nullptr;
  for (const auto& e : facts.pythons) {
    bool has_torch = false;
    for (const auto& sp : e.site_packages) has_torch |= opts.root.is_file(path_join(sp, "torch/lib/libtorch_cuda.so"));
    bool named = python.empty() ? has_torch
                                : e.interpreter == python || (!e.prefix.empty() && python.rfind(e.prefix + "/", 0) == 0);
    if (named && !env) env = &e;
  }
  out.subject = "import torch in " + (env ? env->interpreter : python.empty() ? std::string("any python") : python);
  if (!env) {
    out.error = python.empty() ? "no Python environment with a CUDA build of torch found"
                               : python + ": not a Python environment cuda-doctor found (try its bin/python)";
    return out;
  }
  LoaderSystem sys(opts.root, config_for(opts));
  out.ld_library_path = sys.config().ld_library_path;
  out.preload = split_preload(opts.env_or("LD_PRELOAD"));
  LibsProbe p{sys, facts, {}, {}, {}, {}, {}, {}};
  for (const auto& c : facts.libs.copies)
    if (!c.version.empty()) p.versions.emplace(c.realpath, c.version);
  Process proc(sys, env->interpreter, out.preload);
  bool torch = false;
  for (const auto& sp : env->site_packages)
    if (!torch) torch = import_torch(p, *env, sp, proc);
  if (!torch) out.error = env->interpreter + ": this environment has no CUDA build of torch";
  out.loads = loads_of(proc, p.versions);
  return out;
}

ProcessLibs probe_libs_pid(const Facts& facts, const ProbeOptions& opts, int pid) {
  ProcessLibs out;
  out.subject = fmt::format("pid {}", pid);
  out.kind = "pid";
  std::string base = fmt::format("/proc/{}", pid);
  auto comm = read_proc(base + "/comm", 4096);
  if (comm) out.subject += " (" + std::string(trim(*comm)) + ")";
  auto maps = read_proc(base + "/maps", 64u << 20);
  if (!maps) {
    out.error = fmt::format("{}/maps: cannot read (no such process, or not ours)", base);
    return out;
  }
  // /proc is the running system's, whatever --root says.
  auto versions = versions_of(facts);
  std::set<std::string> seen;
  for (const auto& line : split(*maps, '\n')) {
    auto slash = line.find(" /");
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash + 1);
    if (path.size() > 10 && path.substr(path.size() - 10) == " (deleted)") path.resize(path.size() - 10);
    if (!seen.insert(path).second) continue;
    LoadedLibrary l;
    l.path = l.realpath = path;  // the kernel shows the file's real path
    classify(l, versions);
    if (!l.family.empty()) {  // its DT_SONAME, read from the file itself
      try {
        l.soname = read_elf_dyn(path).soname;
      } catch (const InputError&) {
      }
    }
    out.mapped.push_back(std::move(l));
  }
  // The environment it started with (what it would search), when we may read it.
  if (auto env = read_proc(base + "/environ", 4u << 20)) {
    for (const auto& kv : split(*env, '\0')) {
      if (kv.rfind("LD_LIBRARY_PATH=", 0) == 0) out.ld_library_path = split_search_path(kv.substr(16));
      if (kv.rfind("LD_PRELOAD=", 0) == 0) out.preload = split_preload(kv.substr(11));
    }
  }
  (void)opts;
  return out;
}

}  // namespace cd

namespace cd {

Facts probe_libs_machine(const ProbeOptions& opts) {
  ProbeOptions o = opts;
  o.toolkit_compilers = false;  // no loader answer depends on gcc's version (and it is a child process)
  Facts f;
  auto envs = find_python_envs(o);
  probe_toolkits(f, o, envs);
  probe_pythons(f, o, envs);
  probe_libs(f, o);
  return f;
}

}  // namespace cd
