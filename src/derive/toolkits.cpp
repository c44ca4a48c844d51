// Toolkits for `toolkits` and `use`: per toolkit what it targets, which compilers it takes and
// whether the driver runs what it builds; which toolkit a request names; and the variables
// `use` sets. The switch is a pure function of the environment: every PATH / LD_LIBRARY_PATH
// entry that lies inside a known toolkit (its real path, so /usr/local/cuda/bin counts as the
// toolkit the link points at) is dropped, the chosen toolkit's bin / lib dir go first, and all
// other entries keep their order. A conda env's prefix is never dropped (it is the env, not
// only a toolkit). The first `use` saves the four variables (_CUDA_DOCTOR_*_WAS) so `--off`
// restores them; when the user changed PATH since, `--off` drops only what `use` added.
#include "derive/toolkits.hpp"

#include <fmt/format.h>

#include "derive/derive_parts.hpp"
#include "kb/drivers.hpp"
#include "kb/toolkits.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"

namespace cd {

namespace {

const char* const kVars[] = {"PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH"};

bool under(const std::string& path, const std::string& dir) {
  return !dir.empty() && (path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                                          (dir.back() == '/' || path[dir.size()] == '/')));
}

// Roots whose entries `use` may drop: not a conda env (its prefix holds the env's own bin
// and lib), never a system prefix such as /usr.
bool droppable(const Toolkit& tk) {
  if (tk.origin.rfind("conda:", 0) == 0) return false;
  for (const char* sys : {"/", "/usr", "/usr/local", "/opt"})
    if (tk.root == sys) return false;
  return true;
}

std::string real_dir(const std::string& entry, const std::map<std::string, std::string>& resolved) {
  auto it = resolved.find(entry);
  return it != resolved.end() ? it->second : path_normalize(entry);
}

bool of_toolkit(const std::string& entry, const std::vector<Toolkit>& toolkits,
                const std::map<std::string, std::string>& resolved) {
  if (entry.empty()) return false;
  std::string real = real_dir(entry, resolved);
  std::string plain = path_normalize(entry);
  for (const auto& tk : toolkits)
    if (droppable(tk) && (under(real, tk.root) || under(plain, tk.root))) return true;
  return false;
}

// `value` without toolkit entries, `first` (when not empty) in front.
std::string switched(const std::string* value, const std::string& first, const std::vector<Toolkit>& toolkits,
                     const std::map<std::string, std::string>& resolved, std::vector<std::string>* removed) {
  std::vector<std::string> out;
  if (!first.empty()) out.push_back(first);
  if (value)
    for (const auto& e : split(*value, ':', true)) {
      if (of_toolkit(e, toolkits, resolved)) {
        if (removed && e != first) removed->push_back(e);
        continue;
      }
      out.push_back(e);
    }
  return join(out, ":");
}

const std::string* get(const EnvMap& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

std::string bin_dir(const Toolkit& tk) { return path_join(tk.root, "bin"); }

}  // namespace

const char* driver_fit_name(DriverFit f) {
  switch (f) {
    case DriverFit::runs: return "runs";
    case DriverFit::minor_compat: return "minor-version compatibility";
    case DriverFit::too_old: return "too old";
    case DriverFit::unknown: break;
  }
  return "unknown";
}

ToolkitView toolkit_view(const Toolkit& tk, const DriverModel& driver, const Kb& kb) {
  ToolkitView v;
  v.tk = &tk;
  v.version = Version::parse(tk.version).value_or(Version{});
  v.usable = !tk.nvcc.empty();
  v.gcc_max = tk.host_gcc_max;
  v.clang_max = tk.host_clang_max;
  v.compiler_limit_source = tk.host_config;
  if (v.version.empty()) return v;
  if (auto row = toolkit_support(kb, v.version)) {
    if (v.gcc_max == 0 && v.clang_max == 0) {
      v.gcc_max = row->max_gcc;
      v.clang_max = row->max_clang;
      v.compiler_limit_source = "data/toolkits.toml: " + row->source;
    }
    v.sm_min = row->sm_min;
    v.sm_max = row->sm_max;
    v.arch_source = "data/toolkits.toml: " + row->source;
  }
  const DriversKb& dk = drivers_kb(kb);
  if (const CudaRelease* rel = first_release(dk, v.version)) v.driver_needed = rel->linux_min;
  v.driver_cuda = driver.cuda;
  if (driver.cuda.empty()) return v;
  if (v.version.cuda_int() <= driver.cuda.cuda_int()) {
    v.driver = DriverFit::runs;
  } else {
    const MinorCompatFloor* floor = minor_compat_floor(dk, v.version.major());
    bool same_major = v.version.major() == driver.cuda.major() && v.version.major() >= 11;
    v.driver = same_major && floor && (driver.version.empty() || driver.version >= floor->linux_min)
                   ? DriverFit::minor_compat
                   : DriverFit::too_old;
  }
  return v;
}

std::vector<ToolkitView> toolkit_views(const Facts& f, const DriverModel& driver, const Kb& kb) {
  std::vector<ToolkitView> out;
  for (const auto& tk : f.toolkit.toolkits) out.push_back(toolkit_view(tk, driver, kb));
  return out;
}

ToolkitPick pick_toolkit(const std::vector<Toolkit>& toolkits, const std::string& spec, const std::string& torch_cuda) {
  ToolkitPick pick;
  auto newest = [&](auto&& matches) {
    const Toolkit* best = nullptr;
    std::optional<Version> best_v;
    for (const auto& tk : toolkits) {
      auto v = Version::parse(tk.version);
      if (tk.nvcc.empty() || !v || !matches(*v)) continue;
      if (!best || *v > *best_v) best = &tk, best_v = v;
    }
    return best;
  };
  if (!spec.empty() && spec.front() == '/') {
    std::string want = path_normalize(spec);
    for (const auto& tk : toolkits)
      if (tk.root == want) pick.toolkit = &tk;
    if (!pick.toolkit) pick.error = fmt::format("{} is not a CUDA toolkit", spec);
    return pick;
  }
  if (spec == "latest") {
    pick.toolkit = newest([](const Version&) { return true; });
    if (!pick.toolkit) pick.error = "no CUDA toolkit with nvcc is installed";
    return pick;
  }
  std::string wanted = spec;
  if (spec == "torch") {
    if (torch_cuda.empty()) {
      pick.error = "no CUDA build of torch in the active environment (VIRTUAL_ENV, CONDA_PREFIX or python3 on PATH)";
      return pick;
    }
    wanted = torch_cuda;
  }
  auto v = Version::parse(wanted);
  bool digits_and_dots = !wanted.empty() && wanted.find_first_not_of("0123456789.") == std::string::npos &&
                         wanted.front() != '.' && wanted.back() != '.' && wanted.find("..") == std::string::npos;
  if (!v || !digits_and_dots || v->parts.size() > 3 || v->major() == 0) {
    pick.error = fmt::format("unknown toolkit '{}': give a version (12, 12.4, 12.4.1), a toolkit's path, torch or latest",
                             spec);
    return pick;
  }
  size_t n = v->parts.size();
  pick.toolkit = newest([&](const Version& have) {
    for (size_t i = 0; i < n; ++i)
      if (i >= have.parts.size() || have.parts[i] != v->parts[i]) return false;
    return true;
  });
  if (!pick.toolkit) {
    pick.missing = *v;
    pick.error = fmt::format("CUDA {} is not installed{}", wanted,
                             spec == "torch" ? " (the active torch was built with it)" : "");
  }
  return pick;
}

const PythonEnv* active_torch_env(const Facts& f) {
  auto has_torch = [](const PythonEnv& py) { return !py.torch.version.empty() && !py.torch.cuda.empty(); };
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const std::string* prefix = f.getenv(var))
      for (const auto& py : f.pythons)
        if (py.prefix == *prefix) return has_torch(py) ? &py : nullptr;
  for (const auto& py : f.pythons)
    if (py.is_default && has_torch(py)) return &py;
  return nullptr;
}

Facts as_if_used(const Facts& f, const Toolkit& target, const PythonEnv* torch_env) {
  Facts out = f;
  ToolkitFacts& t = out.toolkit;
  t.toolkits.clear();
  Toolkit chosen = target;
  chosen.selected_by = {"PATH", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH"};
  t.toolkits.push_back(chosen);
  for (const auto& tk : f.toolkit.toolkits)
    if (tk.origin.rfind("conda:", 0) == 0 && tk.root != target.root) {
      Toolkit other = tk;
      other.selected_by.clear();
      t.toolkits.push_back(other);
    }
  t.path_nvcc = target.nvcc;
  t.cuda_home = target.root;
  t.cuda_home_var = "CUDA_HOME";
  t.ld_library_path_toolkits = {target.root};
  out.pythons.clear();
  if (torch_env) out.pythons.push_back(*torch_env);
  return out;
}

std::vector<std::string> install_commands(const Version& cuda, const Kb& kb, const DistroModel& distro) {
  const DriversKb& dk = drivers_kb(kb);
  std::string mm = cuda.major_minor();
  std::vector<std::string> out;
  if (const CudaRelease* rel = first_release(dk, cuda)) {
    std::string full = fmt::format("{}.0", mm);
    std::string file = fmt::format("cuda_{}_{}_linux.run", full, rel->linux_min.text);
    out.push_back("# runfile: the toolkit only (not the driver), into its own directory:");
    out.push_back(fmt::format("wget https://developer.download.nvidia.com/compute/cuda/{}/local_installers/{}", full, file));
    out.push_back(fmt::format("sudo sh {} --silent --toolkit --toolkitpath=/usr/local/cuda-{} --no-man-page", file, mm));
  }
  if (std::string pkg = toolkit_install_command(kb, distro, cuda); !pkg.starts_with("#")) {  // "#": none for this distribution
    out.push_back("# or with the distribution's package manager:");
    out.push_back(pkg);
  }
  out.push_back("# or into a conda env:");
  out.push_back(fmt::format("conda install -c nvidia cuda-toolkit={}", mm));
  out.push_back("# or nvcc alone from pip wheels:");
  if (cuda.major() >= 13)
    out.push_back(fmt::format("pip install 'nvidia-cuda-nvcc=={}.*'", mm));
  else
    out.push_back(fmt::format("pip install 'nvidia-cuda-nvcc-cu{}=={}.*'", cuda.major(), mm));
  return out;
}

std::string release_problem(const Version& cuda, const Kb& kb) {
  const DriversKb& dk = drivers_kb(kb);
  if (dk.releases.empty()) return {};
  bool minor = cuda.parts.size() > 1;
  auto same = [&](const Version& r) { return r.major() == cuda.major() && (!minor || r.minor() == cuda.minor()); };
  std::optional<Version> below, above, newest;
  for (const auto& r : dk.releases) {
    Version mm = *Version::parse(r.cuda.major_minor());
    if (same(mm)) return {};
    if (!newest || *newest < mm) newest = mm;
    if (mm < cuda && (!below || *below < mm)) below = mm;
    if (cuda < mm && (!above || mm < *above)) above = mm;
  }
  std::string asked = minor ? cuda.major_minor() : std::to_string(cuda.major());
  if (!below)  // the table starts where the drivers it knows start; older CUDAs did exist
    return fmt::format("CUDA {} is older than any release cuda-doctor knows (the oldest is {})", asked,
                       above->major_minor());
  if (!above)
    return fmt::format("CUDA {} is newer than any release cuda-doctor knows (the newest is {}); if NVIDIA has released "
                       "it since, its install commands are at https://developer.nvidia.com/cuda-toolkit-archive",
                       asked, newest->major_minor());
  return fmt::format("CUDA {} was never released (the releases nearest to it: {} and {})", asked, below->major_minor(),
                     above->major_minor());
}

std::vector<std::string> system_commands(const Toolkit& target, const ToolkitFacts& t) {
  bool via_link = target.root.rfind("/usr/local/", 0) == 0;
  std::string home = via_link ? "/usr/local/cuda" : target.root;
  std::string lib = target.lib_dir.empty() ? path_join(home, "lib64")
                                           : path_join(home, target.lib_dir.substr(target.root.size() + 1));
  std::vector<std::string> out = {
      fmt::format("# Make CUDA {} ({}) the default for every user and login shell; run these as root.",
                  target.version.empty() ? "?" : target.version, target.root),
      "# Not root's ~/.bashrc: only root's interactive bash reads it, so other users, other shells, login shells,",
      "# cron, systemd services and `ssh host cmd` never see it (\"nvcc: command not found\").",
      ""};
  if (via_link) {
    out.push_back("# 1. /usr/local/cuda -> this toolkit (/etc/profile.d/cuda.sh below follows the link):");
    if (!t.alternatives_cuda.empty() || t.usr_local_cuda.empty()) {
      out.push_back(fmt::format("sudo update-alternatives --install /usr/local/cuda cuda {} {}", target.root,
                                Version::parse(target.version).value_or(Version{}).cuda_int() / 10));
      out.push_back(fmt::format("sudo update-alternatives --set cuda {}", target.root));
      out.push_back(fmt::format("# without update-alternatives: sudo ln -sfn {} /usr/local/cuda", target.root));
    } else {
      out.push_back(fmt::format("sudo ln -sfn {} /usr/local/cuda", target.root));
    }
  } else {
    out.push_back("# 1. (not under /usr/local: /usr/local/cuda stays as it is; the profile names the toolkit itself)");
  }
  out.push_back("# 2. every login shell (sh, bash, zsh read /etc/profile.d):");
  out.push_back("sudo tee /etc/profile.d/cuda.sh >/dev/null <<'EOF'");
  out.push_back(fmt::format("export CUDA_HOME={}", home));
  out.push_back(fmt::format("export CUDA_PATH={}", home));
  out.push_back(fmt::format(R"(case ":$PATH:" in *":{0}/bin:"*) ;; *) export PATH={0}/bin:$PATH ;; esac)", home));
  out.push_back("EOF");
  out.push_back("# 3. every program, not only shells (the loader's search path instead of LD_LIBRARY_PATH):");
  out.push_back(fmt::format("echo {} | sudo tee /etc/ld.so.conf.d/cuda.conf >/dev/null && sudo ldconfig", lib));
  out.push_back("# fish users: fish does not read /etc/profile.d; add to /etc/fish/conf.d/cuda.fish:");
  out.push_back(fmt::format("#   set -gx CUDA_HOME {0}; set -gx CUDA_PATH {0}; fish_add_path -g {0}/bin", home));
  return out;
}

std::string saved_name(const std::string& var) { return "_CUDA_DOCTOR_" + var + "_WAS"; }

ShellPlan plan_use(const std::vector<Toolkit>& toolkits, const Toolkit& target, const EnvMap& env,
                   const std::map<std::string, std::string>& resolved) {
  ShellPlan plan;
  if (!get(env, kOrigVars)) {
    std::vector<std::string> set;
    for (const char* var : kVars)
      if (const std::string* v = get(env, var)) {
        set.push_back(var);
        plan.vars.push_back({saved_name(var), *v});
      }
    plan.vars.push_back({kOrigVars, join(set, " ")});
  }
  std::vector<Toolkit> all = toolkits;
  if (std::none_of(all.begin(), all.end(), [&](const Toolkit& t) { return t.root == target.root; })) all.push_back(target);
  std::string path = switched(get(env, "PATH"), target.nvcc.empty() ? "" : bin_dir(target), all, resolved, &plan.removed);
  plan.vars.push_back({"PATH", path, true});
  std::string ld = switched(get(env, "LD_LIBRARY_PATH"), target.lib_dir, all, resolved, &plan.removed);
  if (ld.empty() && !get(env, "LD_LIBRARY_PATH")) plan.vars.push_back({"LD_LIBRARY_PATH", std::nullopt, true});
  else plan.vars.push_back({"LD_LIBRARY_PATH", ld, true});
  plan.vars.push_back({"CUDA_HOME", target.root});
  plan.vars.push_back({"CUDA_PATH", target.root, true});
  plan.vars.push_back({kActiveVar, target.root});
  plan.rehash = true;
  return plan;
}

ShellPlan plan_off(const std::vector<Toolkit>& toolkits, const EnvMap& env,
                   const std::map<std::string, std::string>& resolved) {
  ShellPlan plan;
  const std::string* orig_vars = get(env, kOrigVars);
  if (!orig_vars) {
    plan.note = "nothing to undo: `cuda-doctor use` has not switched this shell";
    return plan;
  }
  auto was_set = split(*orig_vars, ' ');
  auto original = [&](const std::string& var) -> std::optional<std::string> {
    if (std::find(was_set.begin(), was_set.end(), var) == was_set.end()) return std::nullopt;
    const std::string* v = get(env, saved_name(var));
    return v ? std::optional<std::string>(*v) : std::nullopt;
  };
  const std::string* active_root = get(env, kActiveVar);
  const Toolkit* active = nullptr;
  for (const auto& tk : toolkits)
    if (active_root && tk.root == *active_root) active = &tk;
  std::vector<std::string> changed;
  for (const char* var : kVars) {
    std::optional<std::string> orig = original(var);
    bool list = std::string(var) != "CUDA_HOME";
    if (std::string(var) == "PATH" || std::string(var) == "LD_LIBRARY_PATH") {
      const std::string* now = get(env, var);
      std::string added;
      if (active) added = std::string(var) == "PATH" ? (active->nvcc.empty() ? "" : bin_dir(*active)) : active->lib_dir;
      else if (active_root) added = std::string(var) == "PATH" ? path_join(*active_root, "bin") : "";
      // What `use` made of the original: when PATH still reads so, the original comes back whole.
      std::optional<std::string> expected;
      if (active) {
        std::string e = switched(orig ? &*orig : nullptr, added, toolkits, resolved, nullptr);
        if (!(e.empty() && !orig)) expected = e;
      }
      if (!now || (expected && *now == *expected) || (!expected && !orig && (!now || now->empty()))) {
        plan.vars.push_back({var, orig, true});
        continue;
      }
      if (now && !orig && !added.empty() && *now == added) {
        plan.vars.push_back({var, std::nullopt, true});
        continue;
      }
      std::vector<std::string> keep;
      for (const auto& e : split(*now, ':', true))
        if (added.empty() || e != added) keep.push_back(e);
      plan.vars.push_back({var, join(keep, ":"), true});
      changed.push_back(var);
      continue;
    }
    plan.vars.push_back({var, orig, list});
  }
  for (const char* var : kVars) plan.vars.push_back({saved_name(var), std::nullopt});
  plan.vars.push_back({kOrigVars, std::nullopt});
  plan.vars.push_back({kActiveVar, std::nullopt});
  plan.rehash = true;
  if (!changed.empty())
    plan.note = fmt::format("{} changed since `cuda-doctor use`: removed only the entries it added", join(changed, " and "));
  return plan;
}

}  // namespace cd
