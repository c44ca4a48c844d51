// The lock of one environment and its diff against another machine.
//
// make_lock: the default Python environment (else the first with torch): its torch, variant,
// index URL (data/pytorch.toml), arch list (--deep, else the kb's record), the CUDA-relevant
// packages the python probe read from dist-info, the main CUDA libraries its frameworks resolve
// (EnvModel::main_libraries), the toolkit CUDA_HOME/PATH select, the GPUs' architectures, the
// driver floors of torch's CUDA (Table 3 directly, Table 2 through minor-version compatibility)
// and the variables that change what loads or builds.
// diff_lock: each of those against the model of this machine: the GPUs must be covered by the
// locked arch list (binary/verdict), the driver must run torch's CUDA, the same torch and
// package versions must be installed, the toolkit's major.minor and the variables must match;
// every difference carries the command that reproduces the locked state.
#include "derive/lock.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "derive/derive_parts.hpp"
#include "kb/arch.hpp"
#include "kb/drivers.hpp"
#include "kb/gpus.hpp"
#include "kb/pytorch.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

// Variables that change which libraries load or what a build targets.
constexpr const char* kLockedVariables[] = {"CUDA_HOME", "CUDA_PATH", "TORCH_CUDA_ARCH_LIST", "LD_LIBRARY_PATH",
                                            "LD_PRELOAD", "CUDA_MODULE_LOADING", "PYTORCH_CUDA_ALLOC_CONF",
                                            "NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "CUDAHOSTCXX"};

const EnvModel* locked_env(const Model& m) {
  for (const auto& e : m.envs)
    if (e.env->is_default && !e.env->torch.version.empty()) return &e;
  for (const auto& e : m.envs)
    if (!e.env->torch.version.empty()) return &e;
  for (const auto& e : m.envs)
    if (e.env->is_default && !e.env->packages.empty()) return &e;
  return nullptr;
}

const Toolkit* selected_toolkit(const Facts& f) {
  for (const auto& t : f.toolkit.toolkits)
    for (const auto& s : t.selected_by)
      if (s == "CUDA_HOME" || s == "PATH") return &t;
  return f.toolkit.toolkits.empty() ? nullptr : &f.toolkit.toolkits.front();
}

std::string mm(const std::string& v) { return Version::parse(v).value_or(Version{}).major_minor(); }

}  // namespace

LockDoc make_lock(const Model& m, const Kb& kb, const std::string& tool_version, const std::string& created_at) {
  const Facts& f = m.facts;
  const EnvModel* e = locked_env(m);
  if (!e) throw UsageError("nothing to lock: no Python environment with torch or CUDA packages was found");
  LockDoc l;
  l.tool_version = tool_version, l.created_at = created_at, l.hostname = f.host.hostname, l.os = f.host.os, l.arch = f.host.arch;
  for (const auto& t : m.targets) l.gpus.push_back({t.sm, t.name}), l.gpu_archs.push_back(sm_name(t.sm));
  l.driver = m.driver.version.text;
  l.driver_cuda = m.driver.cuda.empty() ? "" : m.driver.cuda.major_minor();
  if (const Toolkit* t = selected_toolkit(f)) l.toolkit_version = t->version, l.toolkit_root = t->root;
  l.env_prefix = e->env->prefix, l.python_version = e->env->version;
  l.torch_version = e->env->torch.version, l.torch_variant = e->torch_variant, l.torch_cuda = e->env->torch.cuda;
  if (!l.torch_variant.empty() && l.torch_variant != "cpu") l.index_url = torch_index_url(kb, l.torch_variant);
  else if (l.torch_variant == "cpu") l.index_url = torch_index_url(kb, "cpu");
  l.arch_list = e->torch_arch_list;
  if (auto cuda = Version::parse(l.torch_cuda); cuda && !cuda->empty()) {
    const DriversKb& dk = drivers_kb(kb);
    if (const CudaRelease* r = first_release(dk, *cuda)) l.driver_min = r->linux_min.text;
    if (const MinorCompatFloor* fl = minor_compat_floor(dk, cuda->major())) l.driver_compat_min = fl->linux_min.text;
  }
  for (const auto& p : e->env->packages) l.packages.push_back({p.name, p.version});
  for (const auto& lib : e->main_libraries)
    if (lib.found) l.libraries.push_back({lib.family, lib.soname, lib.version, lib.realpath});
  for (const char* v : kLockedVariables)
    if (const std::string* val = f.getenv(v)) l.env[v] = *val;
  return l;
}

nlohmann::json lock_json(const LockDoc& l) {
  nlohmann::json gpus = nlohmann::json::array(), pkgs = nlohmann::json::array(), libs = nlohmann::json::array();
  for (const auto& g : l.gpus) gpus.push_back({{"sm", g.sm}, {"name", g.name}});
  for (const auto& p : l.packages) pkgs.push_back({{"name", p.name}, {"version", p.version}});
  for (const auto& x : l.libraries) libs.push_back({{"family", x.family}, {"soname", x.soname}, {"version", x.version}, {"path", x.path}});
  return {{"schema", l.schema},
          {"tool_version", l.tool_version},
          {"created_at", l.created_at},
          {"machine", {{"hostname", l.hostname}, {"os", l.os}, {"arch", l.arch}, {"gpus", gpus}, {"driver", l.driver}, {"driver_cuda", l.driver_cuda}}},
          {"requires", {{"driver_min", l.driver_min}, {"driver_minor_compat_min", l.driver_compat_min}, {"gpu_archs", l.gpu_archs}}},
          {"toolkit", {{"version", l.toolkit_version}, {"root", l.toolkit_root}}},
          {"python", {{"prefix", l.env_prefix}, {"version", l.python_version}}},
          {"torch", {{"version", l.torch_version}, {"variant", l.torch_variant}, {"cuda", l.torch_cuda}, {"index_url", l.index_url}, {"arch_list", l.arch_list}}},
          {"packages", pkgs},
          {"libraries", libs},
          {"env", l.env}};
}

namespace {

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return {};
  const auto& v = j.at(key);
  if (v.is_null()) return {};
  if (!v.is_string()) throw InputError(fmt::format("'{}' is not a string", key));
  return v.get<std::string>();
}

std::vector<std::string> strs(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.is_object() || !j.contains(key)) return out;
  if (!j.at(key).is_array()) throw InputError(fmt::format("'{}' is not a list", key));
  for (const auto& v : j.at(key)) {
    if (!v.is_string()) throw InputError(fmt::format("'{}' holds a non-string", key));
    out.push_back(v.get<std::string>());
  }
  return out;
}

const nlohmann::json& obj(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!j.contains(key)) return empty;
  if (!j.at(key).is_object()) throw InputError(fmt::format("'{}' is not an object", key));
  return j.at(key);
}

const nlohmann::json& arr(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::array();
  if (!j.contains(key)) return empty;
  if (!j.at(key).is_array()) throw InputError(fmt::format("'{}' is not a list", key));
  return j.at(key);
}

LockDoc parse_lock(const nlohmann::json& j) {
  if (!j.is_object()) throw InputError("not a JSON object");
  LockDoc l;
  l.schema = str(j, "schema");
  if (l.schema != kLockSchema) throw InputError(fmt::format("schema '{}' is not {}", l.schema.substr(0, 60), kLockSchema));
  l.tool_version = str(j, "tool_version"), l.created_at = str(j, "created_at");
  const auto& m = obj(j, "machine");
  l.hostname = str(m, "hostname"), l.os = str(m, "os"), l.arch = str(m, "arch"), l.driver = str(m, "driver"), l.driver_cuda = str(m, "driver_cuda");
  for (const auto& g : arr(m, "gpus")) {
    if (!g.is_object() || !g.contains("sm") || !g["sm"].is_number_integer()) throw InputError("machine.gpus: each needs an integer 'sm'");
    l.gpus.push_back({g["sm"].get<int>(), str(g, "name")});
  }
  const auto& r = obj(j, "requires");
  l.driver_min = str(r, "driver_min"), l.driver_compat_min = str(r, "driver_minor_compat_min"), l.gpu_archs = strs(r, "gpu_archs");
  const auto& t = obj(j, "toolkit");
  l.toolkit_version = str(t, "version"), l.toolkit_root = str(t, "root");
  const auto& py = obj(j, "python");
  l.env_prefix = str(py, "prefix"), l.python_version = str(py, "version");
  const auto& tv = obj(j, "torch");
  l.torch_version = str(tv, "version"), l.torch_variant = str(tv, "variant"), l.torch_cuda = str(tv, "cuda"), l.index_url = str(tv, "index_url");
  l.arch_list = strs(tv, "arch_list");
  for (const auto& p : arr(j, "packages")) l.packages.push_back({str(p, "name"), str(p, "version")});
  for (const auto& x : arr(j, "libraries")) l.libraries.push_back({str(x, "family"), str(x, "soname"), str(x, "version"), str(x, "path")});
  for (const auto& [k, v] : obj(j, "env").items()) {
    if (!v.is_string()) throw InputError("env: values must be strings");
    l.env[k] = v.get<std::string>();
  }
  return l;
}

}  // namespace

LockDoc lock_from_text(const std::string& text, const std::string& origin) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw InputError(fmt::format("{}: not a cuda-doctor lock (not JSON)", origin));
  try {
    return parse_lock(j);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: not a cuda-doctor lock: {}", origin, e.what()));
  }
}

// ---- diff ----

namespace {

const EnvModel* here_env(const Model& m) {
  for (const auto& e : m.envs)
    if (e.env->is_default) return &e;
  return m.envs.empty() ? nullptr : &m.envs.front();
}

std::string pip_install(const EnvModel* e, const std::vector<std::string>& pins, const std::string& index) {
  std::string cmd = fmt::format("{} -m pip install", e ? e->python : "python3");
  for (const auto& p : pins) cmd += " '" + p + "'";
  if (!index.empty()) cmd += " --extra-index-url " + index;
  return cmd;
}

void diff_gpus(const LockDoc& l, const Model& m, const Kb& kb, LockDiff& d) {
  std::vector<std::string> here;
  for (const auto& t : m.targets) here.push_back(sm_name(t.sm));
  LockDiffRow r{"GPU", join(l.gpu_archs, ", "), here.empty() ? "none" : join(here, ", "), false, "", {}};
  std::vector<std::string> missing;
  for (const auto& t : m.targets) {
    Verdict v = judge_arch_list(l.arch_list, t.sm, arch_rules(kb));
    if (v != Verdict::native && v != Verdict::jit) missing.push_back(sm_name(t.sm));
  }
  if (m.targets.empty()) r.note = "no GPU here: the locked torch runs only on a GPU";
  else if (!missing.empty()) r.note = fmt::format("the locked torch has no kernels for {}: run `cuda-doctor plan` for a build that has", join(missing, ", "));
  else r.same = true, r.note = r.locked == r.here ? "" : "different GPUs, but the locked torch has kernels for them";
  d.rows.push_back(std::move(r));
}

void diff_driver(const LockDoc& l, const Model& m, const Kb& kb, LockDiff& d) {
  std::string need = l.driver_min.empty() ? "?" : ">= " + l.driver_min + (l.torch_cuda.empty() ? "" : " (CUDA " + mm(l.torch_cuda) + ")");
  std::string have = m.driver.version.empty() ? (m.driver.found ? "unknown" : "none")
                                               : m.driver.version.text + (m.driver.cuda.empty() ? "" : " (CUDA " + m.driver.cuda.major_minor() + ")");
  LockDiffRow r{"driver", need, have, false, "", {}};
  auto cuda = Version::parse(l.torch_cuda);
  if (!cuda || cuda->empty()) {
    r.same = true, r.note = "the locked torch has no CUDA";
  } else if (!m.driver.cuda.empty() && *cuda <= m.driver.cuda) {
    r.same = true;
  } else if (!m.driver.cuda.empty() && cuda->major() == m.driver.cuda.major() && !l.driver_compat_min.empty() &&
             m.driver.version >= Version::parse(l.driver_compat_min).value_or(Version{})) {
    r.same = true, r.note = "runs through minor-version compatibility (no JIT of newer PTX)";
  } else {
    int branch = branch_for_cuda(drivers_kb(kb), *cuda);
    if (!branch) branch = drivers_kb(kb).default_branch;
    r.note = m.driver.found ? "this driver is too old for the locked torch's CUDA" : "no NVIDIA driver here";
    for (auto& c : driver_install_commands(kb, m.distro, m.facts.host.arch, branch, driver_package(kb, branch, gpu_sms(m.gpus)),
                                           m.facts.platform.container.empty() ? "" : "on the host: a container uses the host's driver"))
      r.commands.push_back(std::move(c));
  }
  d.rows.push_back(std::move(r));
}

void diff_python(const LockDoc& l, const EnvModel* e, LockDiff& d) {
  std::string here_py = e ? e->env->version : "";
  LockDiffRow py{"python", mm(l.python_version), here_py.empty() ? "none" : mm(here_py), mm(l.python_version) == mm(here_py), "", {}};
  if (!py.same) py.note = fmt::format("the locked wheels are for Python {}", mm(l.python_version));
  d.rows.push_back(std::move(py));
  std::map<std::string, std::string> have;
  if (e)
    for (const auto& p : e->env->packages) have[p.name] = p.version;
  std::string here_torch = e ? e->env->torch.version : "";
  LockDiffRow t{"torch", l.torch_version + (l.torch_variant.empty() ? "" : " (" + l.torch_variant + ")"), here_torch.empty() ? "none" : here_torch,
                here_torch == l.torch_version, "", {}};
  if (!t.same && !l.torch_version.empty())
    t.commands.push_back(pip_install(e, {"torch==" + l.torch_version}, l.index_url));
  d.rows.push_back(std::move(t));
  std::vector<std::string> pins;
  for (const auto& p : l.packages) {
    if (p.name == "torch") continue;
    auto it = have.find(p.name);
    std::string h = it == have.end() ? "none" : it->second;
    bool same = h == p.version;
    d.rows.push_back({"package " + p.name, p.version, h, same, "", {}});
    if (!same) pins.push_back(p.name + "==" + p.version);
  }
  if (!pins.empty()) d.rows.back().commands.push_back(pip_install(e, pins, l.index_url));
}

void diff_toolkit(const LockDoc& l, const Model& m, LockDiff& d) {
  if (l.toolkit_version.empty()) return;
  std::string here;
  for (const auto& t : m.facts.toolkit.toolkits)
    if (mm(t.version) == mm(l.toolkit_version)) here = t.version + " " + t.root;
  LockDiffRow r{"toolkit", l.toolkit_version + " " + l.toolkit_root, here.empty() ? "none of " + mm(l.toolkit_version) : here, !here.empty(), "", {}};
  if (!r.same) r.note = fmt::format("extensions built against the locked torch need a CUDA {} toolkit: cuda-doctor plan --for build", mm(l.toolkit_version));
  d.rows.push_back(std::move(r));
}

void diff_env(const LockDoc& l, const Model& m, LockDiff& d) {
  for (const auto& [k, v] : l.env) {
    const std::string* h = m.facts.getenv(k);
    LockDiffRow r{"env " + k, v, h ? *h : "unset", h && *h == v, "", {}};
    if (!r.same) r.commands.push_back(fmt::format("export {}='{}'", k, v));
    d.rows.push_back(std::move(r));
  }
}

}  // namespace

LockDiff diff_lock(const LockDoc& l, const Model& m, const Kb& kb) {
  LockDiff d;
  d.locked_on = l.hostname + (l.created_at.empty() ? "" : ", " + l.created_at);
  const EnvModel* e = here_env(m);
  diff_gpus(l, m, kb, d);
  diff_driver(l, m, kb, d);
  diff_python(l, e, d);
  diff_toolkit(l, m, d);
  diff_env(l, m, d);
  for (const auto& r : d.rows) d.differences += r.same ? 0 : 1;
  return d;
}

nlohmann::json lock_diff_json(const LockDiff& d) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : d.rows)
    rows.push_back({{"what", r.what}, {"locked", r.locked}, {"here", r.here}, {"same", r.same}, {"note", r.note}, {"commands", r.commands}});
  return {{"schema", "cuda-doctor/plan-from-lock/v1"}, {"locked_on", d.locked_on}, {"differences", d.differences}, {"rows", rows}};
}

}  // namespace cd
