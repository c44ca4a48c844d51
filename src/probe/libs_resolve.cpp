// Which copy of each CUDA library a framework gets: an emulated `import torch`
// (libtorch_global_deps.so, then torch/_C*.so and its DT_NEEDED tree, then the
// cuDNN sub-libraries libcudnn.so dlopens and NVRTC's builtins), jax's CUDA plugins, and a program
// without RPATH (what LD_LIBRARY_PATH / ld.so.cache give everything else).
#include <set>

#include "loader/cudnn.hpp"
#include "loader/nvrtc.hpp"
#include "probe/libs_internal.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

std::string dist_name(std::string_view req) {
  std::string out;
  for (char c : req) {
    if (c == ' ' || c == ';' || c == '<' || c == '>' || c == '=' || c == '!' || c == '~' || c == '[' || c == '(') break;
    out += (c == '_' || c == '.') ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

const PythonPackage* package(const PythonEnv& env, const std::string& name) {
  for (const auto& p : env.packages)
    if (p.name == name) return &p;
  return nullptr;
}

// The framework's Requires-Dist entry that ships a family ("nvidia-cudnn-cu13==9.19.0.56").
std::string provided_by(const PythonPackage* pkg, const CudaLibFamily& fam) {
  if (!pkg) return "";
  std::string toolkit;
  for (const auto& req : pkg->requires_dist) {
    std::string n = dist_name(req);
    if (n.rfind(fam.wheel, 0) == 0) return req;
    if (n == "cuda-toolkit" && !fam.toolkit_key.empty()) toolkit = req;  // cu13 wheels: one meta-package
  }
  return toolkit;
}

struct Consumer {
  std::string label;
  const PythonEnv* env = nullptr;
  const PythonPackage* pkg = nullptr;
  std::vector<std::string> preload_dirs;  // torch/__init__.py's fallback: <site-packages>/nvidia/*/lib
};

void record(LibsProbe& p, const Process& proc, const Consumer& c, std::vector<LibraryResolution>& out) {
  std::set<std::string> seen;
  for (const auto& req : proc.requests()) {
    const LoadedObject* obj = req.object >= 0 ? &proc.objects()[req.object] : nullptr;
    std::string soname = obj && !obj->soname.empty() ? obj->soname : path_basename(req.name);
    const CudaLibFamily* fam = cuda_lib_family(soname);
    if (!fam || !seen.insert(soname).second) continue;  // the first request decides, process-wide
    // A library dlopened after the import (cuDNN's sub-libraries, NVRTC's builtins): a missing
    // one fails only the calls that need it, not the import, so only found ones count.
    if (!obj && req.when != LoadTime::startup) continue;
    LibraryResolution r;
    r.consumer = c.label;
    r.env = c.env ? c.env->prefix : "";
    r.requested_by = req.requester >= 0 ? proc.objects()[req.requester].path : "dlopen";
    r.name = fam->name;
    r.soname = soname;
    r.via = via_name(req.how.via);
    r.detail = req.how.detail;
    if (obj) {
      r.path = obj->path;
      r.realpath = obj->realpath;
    }
    for (size_t i = 0; i < req.how.tried.size() && i < 12; ++i) r.tried.push_back(req.how.tried[i]);
    // Through LD_LIBRARY_PATH: the copy it shadows (what the same request gets without it).
    if (obj && req.how.via == Via::ld_library_path) {
      Resolution alt = proc.search(req.name, req.requester, false);
      if (!alt.path.empty() && p.sys.realpath(alt.path) != obj->realpath) {
        r.shadowed = alt.path;
        r.shadowed_via = alt.detail.empty() ? via_name(alt.via) : alt.detail;
      }
    }
    if (!obj && req.how.via == Via::not_found) {
      for (const auto& dir : c.preload_dirs) {
        std::string cand = path_join(dir, soname);
        if (!p.sys.is_file(cand)) continue;
        r.path = cand;
        r.realpath = p.sys.realpath(cand);
        r.via = "preload by torch/__init__.py";
        r.detail = "torch/__init__.py _preload_cuda_deps globs sys.path for nvidia/*/lib when the loader fails";
        break;
      }
    }
    r.provided_by = provided_by(c.pkg, *fam);
    // A CUDA library taking a sibling from another directory: check the versioned
    // symbols it needs are there (pytorch#111469: wheel cusparse + toolkit nvJitLink).
    if (obj && req.requester >= 0) {
      const LoadedObject& user = proc.objects()[req.requester];
      if (cuda_lib_family(path_basename(user.realpath)) && path_dirname(user.realpath) != path_dirname(obj->realpath)) {
        const ElfSymbols* need = p.symbols_of(user.realpath);
        const ElfSymbols* have = p.symbols_of(obj->realpath);
        if (need && have) r.missing_symbols = missing_symbols(*need, soname, *have);
      }
    }
    out.push_back(std::move(r));
  }
}

// The (folder, pattern) pairs of torch/__init__.py's _preload_cuda_deps list, in order:
// ("cublas", "libcublasLt.so.*[0-9]"), … Read from the installed file, so each torch
// release's own list and order is used.
std::vector<std::pair<std::string, std::string>> preload_list(const std::string& init) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t at = init.find("def _preload_cuda_deps");
  if (at == std::string::npos) return out;
  size_t end = init.find("\ndef ", at + 1);
  std::string body = init.substr(at, end == std::string::npos ? std::string::npos : end - at);
  auto quoted = [&](size_t& i, std::string& v) {
    while (i < body.size() && (body[i] == ' ' || body[i] == '\n')) ++i;
    if (i >= body.size() || body[i] != '"') return false;
    size_t close = body.find('"', i + 1);
    if (close == std::string::npos) return false;
    v = body.substr(i + 1, close - i - 1);
    i = close + 1;
    return true;
  };
  for (size_t i = body.find('('); i != std::string::npos; i = body.find('(', i + 1)) {
    size_t j = i + 1;
    std::string folder, pattern;
    if (!quoted(j, folder)) continue;
    while (j < body.size() && body[j] == ' ') ++j;
    if (j >= body.size() || body[j] != ',') continue;
    ++j;
    if (!quoted(j, pattern) || pattern.rfind("lib", 0) != 0) continue;
    out.emplace_back(folder, pattern);
  }
  return out;
}

}  // namespace

bool import_torch(LibsProbe& p, const PythonEnv& env, const std::string& sp, Process& proc) {
  const Root& root = p.sys.root();
  std::string torch = path_join(sp, "torch");
  std::string lib = path_join(torch, "lib");
  if (!p.sys.is_file(path_join(lib, "libtorch_cuda.so"))) return false;  // CPU build or no torch here
  std::string init = read_file_sized(root, path_join(torch, "__init__.py"), 4u << 20).value_or("");
  std::string global_deps = path_join(lib, "libtorch_global_deps.so");
  if (p.sys.is_file(global_deps)) proc.dlopen(global_deps);  // ctypes.CDLL(..., RTLD_GLOBAL) in torch/__init__.py
  // Newer torch (2.9+): after loading the global deps, if /proc/self/maps shows a libcudart.so,
  // _preload_cuda_deps() ctypes.CDLLs the first sys.path match of each library by its path
  // (nvidia/<folder>/lib, nvidia/cu<major>/lib, <folder>/lib). A required one missing raises
  // ValueError, which ends the preloading (the caller's `except Exception: pass`).
  bool cudart = false;
  for (const auto& o : proc.objects()) cudart |= !o.unloaded && o.path.find("libcudart.so") != std::string::npos;
  if (cudart && init.find("_preload_cuda_deps()") != std::string::npos && init.find("/proc/self/maps") != std::string::npos) {
    std::string major = env.torch.cuda.substr(0, env.torch.cuda.find('.'));
    for (const auto& [folder, pattern] : preload_list(init)) {
      std::string found;
      for (const auto& s : env.site_packages) {
        std::vector<std::string> dirs = {path_join(s, "nvidia/" + folder + "/lib")};
        if (!major.empty()) dirs.push_back(path_join(s, "nvidia/cu" + major + "/lib"));
        dirs.push_back(path_join(s, folder + "/lib"));
        for (const auto& d : dirs)
          if (auto m = root.glob(d, pattern); !m.empty() && found.empty()) found = m.front();
        if (!found.empty()) break;
      }
      if (found.empty()) break;
      proc.dlopen(found);
    }
  }
  auto ext = root.glob(torch, "_C.*.so");
  if (ext.empty()) ext = root.glob(torch, "_C*.so");
  if (!ext.empty()) proc.dlopen(ext.front());  // from torch._C import *
  if (proc.find("libtorch_cuda.so") < 0) proc.dlopen(path_join(lib, "libtorch_cuda.so"));
  // After the import: cuDNN's sub-libraries (its first call, a call that needs them) and
  // NVRTC's builtins (the first compile), each marked with when it loads.
  load_cudnn_sublibs(proc, [&](int i) {
    const std::string& real = proc.objects()[i].realpath;
    auto it = p.versions.find(real);
    return it == p.versions.end() ? version_from_filename(path_basename(real)) : it->second;
  });
  load_nvrtc_builtins(proc);
  return true;
}

namespace {

void torch_consumer(LibsProbe& p, const PythonEnv& env, const std::string& sp, std::vector<LibraryResolution>& out) {
  const Root& root = p.sys.root();
  Consumer c;
  c.env = &env;
  c.pkg = package(env, "torch");
  std::string version = !env.torch.version.empty() ? env.torch.version : c.pkg ? c.pkg->version : "";
  c.label = "torch " + (version.empty() ? std::string("?") : version) + " (" + (env.prefix.empty() ? sp : env.prefix) + ")";
  if (read_file_sized(root, path_join(sp, "torch/__init__.py"), 4u << 20).value_or("").find("_preload_cuda_deps") != std::string::npos)
    for (const auto& s : env.site_packages)
      for (const auto& sub : root.list(path_join(s, "nvidia"))) c.preload_dirs.push_back(path_join(s, "nvidia/" + sub + "/lib"));
  Process proc(p.sys, env.interpreter);
  if (import_torch(p, env, sp, proc)) record(p, proc, c, out);
}

void jax_consumers(LibsProbe& p, const PythonEnv& env, const std::string& sp, std::vector<LibraryResolution>& out) {
  const Root& root = p.sys.root();
  std::string plugins = path_join(sp, "jax_plugins");
  for (const auto& d : root.list(plugins)) {
    if (d.find("cuda") == std::string::npos) continue;
    for (const auto& so : root.glob(path_join(plugins, d), "*.so")) {
      Consumer c;
      c.env = &env;
      c.label = "jax plugin " + d + " (" + (env.prefix.empty() ? sp : env.prefix) + ")";
      for (const auto& pkg : env.packages)
        if (pkg.name.rfind("jax-cuda", 0) == 0 && pkg.name.find("plugin") != std::string::npos) c.pkg = &pkg;
      Process proc(p.sys, env.interpreter);
      proc.dlopen(so);
      record(p, proc, c, out);
    }
  }
}

}  // namespace

std::vector<LibraryResolution> resolve_consumers(LibsProbe& p, const std::vector<LibraryCopy>& copies) {
  std::vector<LibraryResolution> out;
  for (const auto& c : copies)
    if (!c.version.empty()) p.versions.emplace(c.realpath, c.version);
  for (const auto& env : p.facts.pythons)
    for (const auto& sp : env.site_packages) {
      torch_consumer(p, env, sp, out);
      jax_consumers(p, env, sp, out);
    }

  // Everything else (a program or extension without RPATH): LD_LIBRARY_PATH, ld.so.cache, default dirs.
  Process plain(p.sys, "");
  std::set<std::string> sonames;
  for (const auto& c : copies) {
    if (c.origin.rfind("torch/lib", 0) == 0 || !sonames.insert(c.soname).second) continue;
    Resolution r = plain.search(c.soname, -1);
    LibraryResolution lr;
    lr.consumer = "a program without RPATH";
    lr.name = c.name;
    lr.soname = c.soname;
    lr.path = r.path;
    lr.realpath = r.path.empty() ? "" : p.sys.realpath(r.path);
    lr.via = via_name(r.via);
    lr.detail = r.detail;
    out.push_back(std::move(lr));
  }
  return out;
}

}  // namespace cd
