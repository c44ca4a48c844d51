#include "probe/python_envs.hpp"

#include <sys/stat.h>

#include <set>

#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {

namespace {

struct Finder {
  const ProbeOptions& opts;
  const Root& root;
  std::string home;
  std::vector<EnvLocation> envs;

  void add(const std::string& prefix_in, const std::string& found_by, bool is_default = false,
           const std::string& interpreter = {}) {
    if (prefix_in.empty()) return;
    auto resolved = root.resolve(prefix_in);
    if (!resolved || !root.is_dir(*resolved)) return;
    const std::string& prefix = *resolved;
    for (auto& e : envs)
      if (e.prefix == prefix) {  // the same env reached another way
        if (std::find(e.found_by.begin(), e.found_by.end(), found_by) == e.found_by.end()) e.found_by.push_back(found_by);
        e.is_default = e.is_default || is_default;
        return;
      }
    EnvLocation env;
    env.prefix = prefix;
    env.interpreter = interpreter;
    if (env.interpreter.empty())
      for (const char* name : {"bin/python3", "bin/python"})
        if (root.exists(path_join(prefix_in, name)) || root.is_symlink(path_join(prefix_in, name))) {
          env.interpreter = path_join(prefix_in, name);
          break;
        }
    if (env.interpreter.empty() && root.glob(path_join(prefix, "lib"), "python*").empty()) return;  // not an env
    env.found_by.push_back(found_by);
    env.is_default = is_default;
    describe(env);
    envs.push_back(std::move(env));
  }

  // Kind, version and site-packages from the layout.
  void describe(EnvLocation& env) {
    const std::string& p = env.prefix;
    std::string cfg = root.read(path_join(p, "pyvenv.cfg"), 64 * 1024).value_or("");
    bool system_site = false;
    std::string base_home;
    if (!cfg.empty()) {
      env.kind = "venv";
      for (const auto& line : split(cfg, '\n')) {
        auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        std::string key(trim(std::string_view(line).substr(0, eq)));
        std::string value(trim(std::string_view(line).substr(eq + 1)));
        if ((key == "version" || key == "version_info") && env.version.empty()) {
          env.version = value.substr(0, value.find(".final"));
          env.version_source = "pyvenv.cfg";
        }
        if (key == "include-system-site-packages") system_site = to_lower(value) == "true";
        if (key == "home") base_home = value;
      }
    } else if (root.is_dir(path_join(p, "conda-meta"))) {
      env.kind = "conda";
      auto metas = root.glob(path_join(p, "conda-meta"), "python-[0-9]*.json");
      if (!metas.empty()) {
        std::string name = path_basename(metas.front());  // python-3.11.5-h955ad1f_0.json
        env.version = split(name, '-').at(1);
        env.version_source = "conda-meta";
      }
    } else if (contains(p, "/.pyenv/versions/") || contains(p, "/pyenv/versions/")) {
      env.kind = "pyenv";
      std::string name = path_basename(p);
      if (Version::parse(name)) {
        env.version = name;
        env.version_source = "pyenv version dir";
      }
    } else {
      env.kind = "system";
    }

    std::vector<std::string> dirs;
    std::string xy;
    for (const char* lib : {"lib", "lib64"})
      for (const auto& libdir : root.glob(path_join(p, lib), "python[23]*")) {
        std::string name = path_basename(libdir);  // python3.12
        if (xy.empty() && name.find('.') != std::string::npos) xy = name.substr(6);
        for (const char* sub : {"site-packages", "dist-packages"}) dirs.push_back(path_join(libdir, sub));
      }
    if (env.version.empty() && !xy.empty()) {
      env.version = xy;
      env.version_source = "lib/python" + xy;
    }
    if (env.kind == "system") {
      // Debian/Ubuntu: packages in lib/python3/dist-packages and /usr/local/lib/pythonX.Y/dist-packages.
      dirs.push_back(path_join(p, "lib/python3/dist-packages"));
      if (p == "/usr" && !xy.empty()) dirs.push_back("/usr/local/lib/python" + xy + "/dist-packages");
    }
    if (env.kind != "venv" || system_site) {
      if (!home.empty() && !xy.empty()) dirs.push_back(path_join(home, ".local/lib/python" + xy + "/site-packages"));
    }
    if (system_site && !base_home.empty()) {
      std::string base = path_dirname(base_home);
      if (!xy.empty()) dirs.push_back(path_join(base, "lib/python" + xy + "/site-packages"));
      dirs.push_back(path_join(base, "lib/python3/dist-packages"));
    }
    std::set<std::string> seen;
    for (const auto& d : dirs) {
      auto r = root.resolve(d);
      if (r && root.is_dir(*r) && seen.insert(*r).second) env.site_packages.push_back(*r);
    }
  }

  std::string pyenv_root() const {
    std::string r = opts.env_or("PYENV_ROOT");
    if (r.empty() && !home.empty()) r = path_join(home, ".pyenv");
    return r;
  }

  // Which version a pyenv shim runs: PYENV_VERSION, .python-version up from $PWD, the global file.
  std::string pyenv_version() const {
    std::string v = opts.env_or("PYENV_VERSION");
    if (v.empty()) {
      std::string dir = opts.env_or("PWD");
      while (!dir.empty() && v.empty()) {
        if (auto text = root.read(path_join(dir, ".python-version"), 4096)) v = *text;
        if (dir == "/") break;
        dir = path_dirname(dir);
      }
    }
    if (v.empty()) v = root.read(path_join(pyenv_root(), "version"), 4096).value_or("system");
    auto parts = split(std::string(trim(v)), '\n');
    v = parts.empty() ? "system" : std::string(trim(parts.front()));
    return split(v, ':').empty() ? "system" : split(v, ':').front();
  }

  // PATH's python3: a venv/conda bin dir keeps its prefix (its python is a symlink out of it).
  void from_path() {
    std::string path = opts.env_or("PATH");
    for (const char* name : {"python3", "python"}) {
      std::string exe = root_which(root, name, path);
      if (exe.empty()) continue;
      if (contains(exe, "/shims/")) {
        std::string v = pyenv_version();
        if (v != "system") {
          add(path_join(pyenv_root(), "versions/" + v), "PATH", true);
          return;
        }
        // pyenv "system": the next python3 on PATH outside the shims dir.
        std::vector<std::string> rest;
        for (const auto& d : split(path, ':'))
          if (!contains(d, "/shims")) rest.push_back(d);
        exe = root_which(root, name, join(rest, ":"));
        if (exe.empty()) continue;
      }
      std::string prefix = path_dirname(path_dirname(exe));
      bool env_dir = root.is_file(path_join(prefix, "pyvenv.cfg")) || root.is_dir(path_join(prefix, "conda-meta"));
      if (!env_dir)
        if (auto real = root.resolve(exe)) prefix = path_dirname(path_dirname(*real));
      add(prefix, "PATH", true, exe);
      return;
    }
  }

  void from_conda() {
    std::vector<std::string> bases;
    std::string conda_prefix = opts.env_or("CONDA_PREFIX");
    if (auto at = conda_prefix.find("/envs/"); at != std::string::npos) bases.push_back(conda_prefix.substr(0, at));
    else if (!conda_prefix.empty()) bases.push_back(conda_prefix);
    if (auto exe = opts.env_or("CONDA_EXE"); !exe.empty()) bases.push_back(path_dirname(path_dirname(exe)));
    for (const char* d : {"miniconda3", "anaconda3", "miniforge3", "mambaforge", ".conda"})
      if (!home.empty()) bases.push_back(path_join(home, d));
    for (const char* d : {"/opt/conda", "/opt/miniconda3", "/opt/miniforge3", "/opt/anaconda3", "/usr/local/miniconda3"})
      bases.push_back(d);
    if (!home.empty())
      if (auto list = root.read(path_join(home, ".conda/environments.txt"), 256 * 1024))
        for (const auto& line : split(*list, '\n'))
          if (auto l = std::string(trim(line)); !l.empty() && l[0] == '/') add(l, "conda env list");
    for (const auto& base : bases) {
      if (root.is_dir(path_join(base, "conda-meta"))) add(base, "conda env list");
      for (const auto& env : root.glob(path_join(base, "envs"), "*")) add(env, "conda env list");
    }
    for (const auto& dir : conda_envs_dirs(bases))
      for (const auto& env : root.glob(dir, "*")) add(env, "conda envs_dirs");
  }

  // Extra env folders: $CONDA_ENVS_PATH / $CONDA_ENVS_DIRS and `envs_dirs:` in the
  // condarc files conda reads (user, XDG, system, each install's own).
  std::vector<std::string> conda_envs_dirs(const std::vector<std::string>& bases) {
    std::vector<std::string> dirs;
    for (const char* var : {"CONDA_ENVS_PATH", "CONDA_ENVS_DIRS"})
      for (const auto& d : split(opts.env_or(var), ':')) dirs.push_back(expand_home(d));
    std::vector<std::string> rcs = {opts.env_or("CONDARC"), "/etc/conda/.condarc", "/etc/conda/condarc"};
    if (!home.empty())
      for (const char* rc : {".condarc", ".conda/.condarc", ".conda/condarc", ".config/conda/.condarc", ".config/conda/condarc"})
        rcs.push_back(path_join(home, rc));
    for (const auto& base : bases) rcs.push_back(path_join(base, ".condarc"));
    for (const auto& rc : rcs)
      if (!rc.empty())
        if (auto text = root.read(rc, 256 * 1024))
          for (const auto& d : condarc_envs_dirs(*text)) dirs.push_back(expand_home(d));
    return dirs;
  }

  std::string expand_home(const std::string& dir) const {
    if (dir == "~" || dir.rfind("~/", 0) == 0) return home.empty() ? std::string() : home + dir.substr(1);
    return dir;
  }

  // Environments made by other tools: virtualenvwrapper, poetry, pipx, uv tools.
  void from_env_managers() {
    std::string workon = opts.env_or("WORKON_HOME");
    std::string data = opts.env_or("XDG_DATA_HOME");
    if (data.empty() && !home.empty()) data = path_join(home, ".local/share");
    std::string cache = opts.env_or("XDG_CACHE_HOME");
    if (cache.empty() && !home.empty()) cache = path_join(home, ".cache");
    std::string pipx = opts.env_or("PIPX_HOME");
    std::string uv = opts.env_or("UV_TOOL_DIR");
    const std::pair<std::string, const char*> dirs[] = {
        {workon.empty() && !home.empty() ? path_join(home, ".virtualenvs") : workon, "virtualenvwrapper"},
        {cache.empty() ? "" : path_join(cache, "pypoetry/virtualenvs"), "poetry"},
        {pipx.empty() ? (data.empty() ? "" : path_join(data, "pipx/venvs")) : path_join(pipx, "venvs"), "pipx"},
        {home.empty() ? "" : path_join(home, ".local/pipx/venvs"), "pipx"},
        {uv.empty() ? (data.empty() ? "" : path_join(data, "uv/tools")) : uv, "uv tool"},
    };
    for (const auto& [dir, by] : dirs)
      if (!dir.empty())
        for (const auto& env : root.glob(dir, "*")) add(env, by);
  }

  void from_pyenv() {
    for (const auto& v : root.glob(path_join(pyenv_root(), "versions"), "*")) {
      add(v, "pyenv");
      for (const auto& e : root.glob(path_join(v, "envs"), "*")) add(e, "pyenv");
    }
  }
};

// Symlinks are followed inside the root (a --root tree's absolute links stay in it).
bool executable(const Root& root, const std::string& path) {
  auto real = root.resolve(path);
  struct stat st;
  return real && root.stat(*real, &st) && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

}  // namespace

std::string root_which(const Root& root, const std::string& name, const std::string& path_env) {
  if (name.find('/') != std::string::npos) return executable(root, name) ? name : "";
  for (const auto& dir : split(path_env, ':')) {
    if (dir.empty() || dir[0] != '/') continue;  // relative PATH entries depend on the cwd
    std::string candidate = path_join(dir, name);
    if (executable(root, candidate)) return candidate;
  }
  return {};
}

std::string follow_wrapper(const Root& root, const std::string& path, const std::string& program) {
  auto text = root.read(path, 4096);
  if (!text || text->size() >= 4096 || text->rfind("#!", 0) != 0) return path;
  std::string needle = "/" + program;
  for (size_t at = text->find(needle); at != std::string::npos; at = text->find(needle, at + 1)) {
    size_t end = at + needle.size();
    if (end < text->size() && !std::isspace(static_cast<unsigned char>((*text)[end])) && (*text)[end] != '"' &&
        (*text)[end] != '\'')
      continue;
    size_t begin = text->find_last_of(" \t\n\"'=", at);
    begin = begin == std::string::npos ? 0 : begin + 1;
    std::string target = text->substr(begin, end - begin);
    if (!target.empty() && target[0] == '/' && target != path && (root.exists(target) || root.is_symlink(target)))
      return target;
  }
  return path;
}

namespace {

std::string yaml_scalar(std::string_view v) {
  if (auto hash = v.find(" #"); hash != std::string_view::npos) v = v.substr(0, hash);
  v = trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
  return std::string(v);
}

}  // namespace

std::vector<std::string> condarc_envs_dirs(std::string_view text) {
  std::vector<std::string> dirs;
  bool in_list = false;
  for (const auto& raw : split(text, '\n')) {
    std::string_view line = raw;
    std::string_view t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    bool top_level = line[0] != ' ' && line[0] != '\t' && line[0] != '-';
    if (top_level) {
      in_list = false;
      if (!t.starts_with("envs_dirs:")) continue;
      std::string_view rest = trim(t.substr(10));
      if (rest.starts_with("[")) {  // envs_dirs: [/a, ~/b]
        rest = rest.substr(1, rest.find(']') == std::string_view::npos ? std::string_view::npos : rest.find(']') - 1);
        for (const auto& item : split(rest, ','))
          if (auto d = yaml_scalar(item); !d.empty()) dirs.push_back(d);
      } else {
        in_list = rest.empty() || rest[0] == '#';
      }
      continue;
    }
    if (in_list && t.starts_with("-"))
      if (auto d = yaml_scalar(t.substr(1)); !d.empty()) dirs.push_back(d);
  }
  return dirs;
}

std::vector<EnvLocation> find_python_envs(const ProbeOptions& opts) {
  Finder f{opts, opts.root, opts.env_or("HOME"), {}};
  f.from_path();
  // The distribution's own interpreter, even when PATH prefers another one.
  for (const char* exe : {"/usr/bin/python3", "/usr/local/bin/python3"})
    if (root_which(opts.root, exe, "").size())
      if (auto real = opts.root.resolve(exe)) f.add(path_dirname(path_dirname(*real)), "system");
  f.add(opts.env_or("VIRTUAL_ENV"), "VIRTUAL_ENV");
  f.add(opts.env_or("CONDA_PREFIX"), "CONDA_PREFIX");
  f.from_conda();
  if (auto pwd = opts.env_or("PWD"); !pwd.empty()) f.add(path_join(pwd, ".venv"), ".venv");
  f.from_pyenv();
  f.from_env_managers();
  for (const auto& dir : opts.root.glob("/opt", "*"))
    for (const char* venv : {".venv", "venv"}) f.add(path_join(dir, venv), "/opt");
  return std::move(f.envs);
}

}  // namespace cd
