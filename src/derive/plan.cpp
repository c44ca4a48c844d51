// The plan for a machine (`cuda-doctor plan`), decided here and only here.
//
// Algorithm. (1) What the GPUs need of a driver: the first CUDA that targets each (gpus.toml
// first_cuda → its Table-3 driver) and the last driver branch that still drives it (Kepler
// R470, Maxwell/Pascal/Volta R580). (2) If the machine's driver drives every GPU, look for a
// torch that runs on it; if there is no driver, it is too old or too new for a GPU, or no torch
// runs on it, plan a driver instead — the knowledge base's default branch (R580), lowered to the
// GPUs' last branch, raised to the newest GPU's first — and look again on that driver.
// (3) Looking for a torch: releases newest first (or only the pinned one), skipping those
// without wheels for the Python; per CUDA wheel variant, how it runs on the driver (directly
// when the driver's CUDA is at least the wheel's; through minor-version compatibility when the
// major is the same, from CUDA 11 on and the driver is at the major's floor) and, per GPU, its
// recorded arch list judged by binary/verdict (native SASS, or PTX JIT — JIT only when the
// driver runs the wheel directly: minor-version compatibility cannot JIT newer PTX). The best
// variant of the first release that has one: native for every GPU, then direct, then the
// newest CUDA (through minor-version compatibility: the oldest, nearest the driver). (4) The torch already installed in the default environment is judged the same
// way: when it runs and covers every GPU, the step says it is already right.
// Sources: CUDA Toolkit release notes Tables 2-3 and the CUDA Compatibility guide (driver
// rules, data/cuda_drivers.toml), PyTorch RELEASE.md / build_cuda.sh (data/pytorch.toml).
#include "derive/plan.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "derive/derive_parts.hpp"
#include "kb/arch.hpp"
#include "kb/drivers.hpp"
#include "kb/gpus.hpp"
#include "kb/plan.hpp"
#include "kb/pytorch.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

struct Ctx {
  const PlanRequest& rq;
  const Kb& kb;
  const DriversKb& dk;
  const PlanKb& pk;
};

// What the GPUs need of a driver.
struct GpuNeeds {
  Version min_cuda;       // the newest GPU's first CUDA
  std::string min_gpu;    // its label
  std::string min_source;
  int cap_branch = 0;     // the oldest GPU's last driver branch; 0 = none
  std::string cap_gpu, cap_source;
  bool jetson = false;
  bool pre_turing = false;  // a GPU the open kernel modules do not drive
};

// The driver a search runs on: the machine's, or the one the plan installs.
struct DriverUse {
  bool present = false;
  Version version;  // may be empty (only the CUDA known)
  Version cuda;     // empty = unknown
};

bool windows_driver(const PlanRequest& rq) { return rq.os == "wsl" || rq.os == "windows"; }

std::string gpu_label(const GpuTarget& g) { return g.label(); }

GpuNeeds gpu_needs(const Ctx& c) {
  GpuNeeds n;
  for (const auto& g : c.rq.gpus) {
    const GpuModel* m = gpu_model_for_sm(c.kb, g.sm);
    if (!m) continue;
    n.jetson |= m->segment == "jetson";
    n.pre_turing |= g.sm < c.pk.open_module_min_sm;
    if (auto fc = Version::parse(m->first_cuda); fc && !fc->empty() && (n.min_cuda.empty() || *fc > n.min_cuda))
      n.min_cuda = *fc, n.min_gpu = gpu_label(g), n.min_source = m->first_cuda_source;
    if (m->last_driver_branch && (!n.cap_branch || m->last_driver_branch < n.cap_branch))
      n.cap_branch = m->last_driver_branch, n.cap_gpu = gpu_label(g), n.cap_source = m->last_driver_source;
  }
  return n;
}

// The driver Table 3 pairs with CUDA X.Y's first release on this OS; "" when not published.
std::string driver_min_text(const Ctx& c, const Version& cuda) {
  const CudaRelease* rel = first_release(c.dk, cuda);
  if (!rel) return {};
  return windows_driver(c.rq) ? rel->windows_min : rel->linux_min.text;
}

// Whether the machine's driver drives every GPU; `why` says what is wrong when not.
bool driver_drives_gpus(const Ctx& c, const GpuNeeds& n, std::string& why) {
  const PlanRequest& rq = c.rq;
  if (!rq.has_driver) return why = "no NVIDIA driver", false;
  if (!n.min_cuda.empty() && !rq.driver_cuda.empty() && rq.driver_cuda < n.min_cuda) {
    std::string min = driver_min_text(c, n.min_cuda);
    why = fmt::format("this driver (CUDA {}) predates {}: it needs {}CUDA {}", rq.driver_cuda.major_minor(), n.min_gpu,
                      min.empty() ? "" : "driver >= " + min + ", ", n.min_cuda.major_minor());
    return false;
  }
  if (n.cap_branch && !windows_driver(rq) && !rq.driver.empty() && rq.driver.major() > n.cap_branch) {
    why = fmt::format("driver branch {} no longer drives {}: the last branch for it is {}", rq.driver.major(), n.cap_gpu,
                      n.cap_branch);
    return false;
  }
  return true;
}

// The driver branch to install: the default one, no newer than the GPUs' last, no older than the newest GPU's first.
int planned_branch(const Ctx& c, const GpuNeeds& n) {
  int branch = c.dk.default_branch;
  if (n.cap_branch && n.cap_branch < branch) branch = n.cap_branch;
  auto cuda = cuda_for_driver(c.dk, Version::parse(std::to_string(branch)).value_or(Version{}));
  if (!n.min_cuda.empty() && cuda && cuda->cuda < n.min_cuda)
    if (int b = branch_for_cuda(c.dk, n.min_cuda)) branch = b;
  return branch;
}

DriverUse planned_driver(const Ctx& c, int branch) {
  DriverUse d;
  d.present = true;
  if (auto b = cuda_for_driver(c.dk, Version::parse(std::to_string(branch)).value_or(Version{}))) d.cuda = b->cuda;
  if (const CudaRelease* rel = d.cuda.empty() ? nullptr : first_release(c.dk, d.cuda)) d.version = rel->linux_min;
  return d;
}

RunMode run_mode(const Ctx& c, const Version& cuda, const DriverUse& d, std::string& why) {
  if (!d.present) return why = "no driver", RunMode::none;
  if (d.cuda.empty() || cuda <= d.cuda) return RunMode::direct;
  const MinorCompatFloor* floor = minor_compat_floor(c.dk, cuda.major());
  if (floor && cuda.major() == d.cuda.major()) {
    bool below = !windows_driver(c.rq) && !d.version.empty() && d.version < floor->linux_min;
    if (!below) return RunMode::minor_compat;
  }
  std::string min = driver_min_text(c, cuda);
  why = fmt::format("needs {}CUDA {} (this driver: CUDA {})", min.empty() ? "a driver for " : "driver >= " + min + ", ",
                    cuda.major_minor(), d.cuda.major_minor());
  return RunMode::none;
}

const std::vector<std::string>* arch_list_for(const Ctx& c, const TorchWheel& w) {
  if (c.rq.host_arch == "aarch64") return w.arch_list_aarch64.empty() ? nullptr : &w.arch_list_aarch64;
  return &w.arch_list;
}

TorchCandidate judge_candidate(const Ctx& c, const std::string& release, const std::string& variant, const DriverUse& d) {
  TorchCandidate t;
  t.release = release, t.variant = variant;
  t.cuda = cuda_from_tag(variant).value_or(Version{});
  std::string why;
  t.mode = run_mode(c, t.cuda, d, why);
  auto wheel = torch_wheel(c.kb, release, variant);
  const std::vector<std::string>* archs = wheel ? arch_list_for(c, *wheel) : nullptr;
  t.arch_list_known = archs != nullptr;
  if (wheel) t.arch_source = c.rq.host_arch == "aarch64" ? wheel->arch_aarch64_source : wheel->arch_source;
  std::vector<std::string> missing, jit_only;
  for (const auto& g : c.rq.gpus) {
    Verdict v = archs ? judge_arch_list(*archs, g.sm, arch_rules(c.kb)) : Verdict::no_cuda_code;
    t.per_gpu.push_back(v);
    if (v == Verdict::jit && t.mode == RunMode::minor_compat) jit_only.push_back(sm_name(g.sm));
    else if (v != Verdict::native && v != Verdict::jit && archs) missing.push_back(sm_name(g.sm));
  }
  if (!archs && !c.rq.gpus.empty()) t.why_not = fmt::format("its arch list ({}) is not recorded", c.rq.host_arch);
  else if (!missing.empty()) t.why_not = "no kernels for " + join(missing, ", ");
  else if (t.mode == RunMode::none) t.why_not = why;
  else if (!jit_only.empty())
    t.why_not = fmt::format("{} only by PTX JIT, which minor-version compatibility cannot do", join(jit_only, ", "));
  t.ok = t.why_not.empty();
  return t;
}

// Native for every GPU first, then a direct run, then the newest CUDA.
bool better(const TorchCandidate& a, const TorchCandidate& b) {
  auto native = [](const TorchCandidate& t) { return std::all_of(t.per_gpu.begin(), t.per_gpu.end(), [](Verdict v) { return v == Verdict::native; }); };
  if (native(a) != native(b)) return native(a);
  if ((a.mode == RunMode::direct) != (b.mode == RunMode::direct)) return a.mode == RunMode::direct;
  // Directly: the newest CUDA. Through minor-version compatibility: the one nearest the driver
  // (fewest APIs newer than it), as check's torch_variant_for does.
  return a.mode == RunMode::direct ? a.cuda > b.cuda : a.cuda < b.cuda;
}

bool python_fits(const TorchRelease& r, const std::string& python) {
  auto py = Version::parse(python);
  auto lo = Version::parse(r.python_min), hi = Version::parse(r.python_max);
  if (!py || py->empty()) return true;
  Version mm = Version::parse(py->major_minor()).value_or(*py);
  return (!lo || mm >= *lo) && (!hi || mm <= *hi);
}

// One release judged: its best variant, or why none fits.
struct ReleaseResult {
  const TorchRelease* release = nullptr;
  std::optional<TorchCandidate> best;
  std::string why_not;  // "cu126: no kernels for sm_120; cu130: needs driver >= …"
};

ReleaseResult judge_release(const Ctx& c, const TorchRelease& r, const DriverUse& d) {
  ReleaseResult out{&r, std::nullopt, {}};
  if (!python_fits(r, c.rq.python)) {
    out.why_not = fmt::format("no wheels for Python {} (it has {}-{})", c.rq.python, r.python_min, r.python_max);
    return out;
  }
  std::vector<std::string> whys;
  for (const auto& v : r.variants) {
    if (!cuda_from_tag(v)) continue;  // cpu, rocm
    TorchCandidate t = judge_candidate(c, r.torch, v, d);
    if (t.ok && (!out.best || better(t, *out.best))) out.best = t;
    if (!t.ok) whys.push_back(v + ": " + t.why_not);
  }
  if (!out.best) out.why_not = whys.empty() ? "no CUDA wheels" : join(whys, "; ");
  return out;
}

std::vector<const TorchRelease*> releases_newest_first(const Kb& kb) {
  std::vector<const TorchRelease*> out;
  for (const auto& r : torch_releases(kb)) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [](const TorchRelease* a, const TorchRelease* b) {
    return Version::parse(a->torch).value_or(Version{}) > Version::parse(b->torch).value_or(Version{});
  });
  return out;
}

std::string pin_release(const std::string& pin) {
  auto v = Version::parse(pin);
  return v ? v->major_minor() : std::string();
}

TorchPlan torch_plan(const Ctx& c, const TorchCandidate& t, const std::string& pin) {
  TorchPlan p;
  p.found = true;
  p.pick = t;
  bool exact = !pin.empty() && Version::parse(pin).value_or(Version{}).parts.size() >= 3;
  p.spec = exact ? "torch==" + pin : "torch==" + t.release + ".*";
  p.index_url = torch_index_url(c.kb, t.variant);
  auto rel = torch_release(c.kb, t.release);
  p.index_flag = rel && rel->install == "extra-index-url" ? "--extra-index-url" : "--index-url";
  p.driver_min_text = driver_min_text(c, t.cuda);
  if (const CudaRelease* r = first_release(c.dk, t.cuda)) p.driver_min = r->linux_min;
  if (const MinorCompatFloor* f = minor_compat_floor(c.dk, t.cuda.major())) p.compat_floor = f->linux_min;
  return p;
}

struct Search {
  std::optional<TorchCandidate> pick;
  std::vector<std::string> skipped;  // "torch 2.14: …" for releases before the pick (or the pin's)
};

Search search(const Ctx& c, const DriverUse& d, const std::string& pin) {
  Search s;
  std::string want = pin_release(pin);
  for (const TorchRelease* r : releases_newest_first(c.kb)) {
    if (!want.empty() && r->torch != want) continue;
    ReleaseResult res = judge_release(c, *r, d);
    if (res.best) {
      s.pick = res.best;
      break;
    }
    s.skipped.push_back(fmt::format("torch {}: {}", r->torch, res.why_not));
  }
  return s;
}

// A pin that cannot work: the working release nearest to it (newer first on a tie).
std::optional<TorchCandidate> nearest_release(const Ctx& c, const DriverUse& d, const std::string& pin) {
  Version want = Version::parse(pin_release(pin)).value_or(Version{});
  std::optional<TorchCandidate> best;
  int best_dist = 1 << 30;
  std::vector<const TorchRelease*> rels = releases_newest_first(c.kb);
  int pin_index = -1;
  for (size_t i = 0; i < rels.size(); ++i)
    if (Version::parse(rels[i]->torch).value_or(Version{}) == want) pin_index = static_cast<int>(i);
  for (size_t i = 0; i < rels.size(); ++i) {
    ReleaseResult res = judge_release(c, *rels[i], d);
    if (!res.best) continue;
    int dist = std::abs(static_cast<int>(i) - pin_index);
    if (dist < best_dist) best = res.best, best_dist = dist;  // newest first: a tie keeps the newer one
  }
  return best;
}

// ---- steps ----

std::string driver_desc(const PlanRequest& rq) {
  if (!rq.has_driver) return "no driver";
  std::string v = rq.driver.empty() ? "driver" : "driver " + rq.driver.text;
  return rq.driver_cuda.empty() ? v : fmt::format("{} (CUDA {})", v, rq.driver_cuda.major_minor());
}

std::vector<std::string> install_driver_commands(const Ctx& c, int branch) {
  std::vector<std::string> cmds;
  if (windows_driver(c.rq)) return cmds;
  if (c.rq.container) cmds.push_back("# on the host: a container uses the host's driver");
  std::vector<int> sms;
  for (const auto& g : c.rq.gpus) sms.push_back(g.sm);
  const DriverInstallKb* r = install_row(c.kb, c.rq.distro);
  std::string comment = r && !r->recommend.empty() ? "or: " + r->recommend : "";
  for (auto& x : driver_install_commands(c.kb, c.rq.distro, c.rq.host_arch, branch, driver_package(c.kb, branch, sms), comment))
    cmds.push_back(std::move(x));
  cmds.push_back("nvidia-smi   # must list the GPUs afterwards");
  return cmds;
}

PlanStep windows_driver_step(const Ctx& c, const TorchPlan& t, bool ok) {
  PlanStep s{"driver", ok ? "ok" : "do", "", {}, {}, {}};
  const PlanNote& note = c.rq.os == "wsl" ? c.pk.wsl : c.pk.windows;
  std::string need = t.found ? (t.driver_min_text.empty()
                                    ? fmt::format("Table 3 lists no Windows driver for CUDA {}", t.pick.cuda.major_minor())
                                    : fmt::format("Windows driver >= {} for CUDA {}", t.driver_min_text, t.pick.cuda.major_minor()))
                             : std::string("a current Windows driver");
  s.title = ok ? fmt::format("{} runs the plan's CUDA", driver_desc(c.rq)) : "install the NVIDIA Windows driver: " + need;
  if (ok) s.details.push_back(need);
  if (c.rq.os == "wsl") s.details.push_back(c.pk.wsl.text);
  else s.details.push_back(c.pk.windows.text);
  s.sources.push_back(note.source);
  return s;
}

PlanStep driver_step(const Ctx& c, const Plan& p, const GpuNeeds& n, bool keep, const std::string& why_change) {
  const PlanRequest& rq = c.rq;
  const TorchPlan& t = p.torch.found ? p.torch : p.nearest;
  if (n.jetson) return {"driver", "info", "the driver comes with JetPack (L4T)", {c.pk.jetson.text}, {}, {c.pk.jetson.source}};
  if (windows_driver(rq)) return windows_driver_step(c, t, keep);
  PlanStep s;
  s.id = "driver";
  s.sources.push_back("NVIDIA CUDA Toolkit release notes, Tables 2-3; CUDA Compatibility guide (data/cuda_drivers.toml)");
  if (keep) {
    s.status = "ok";
    if (!t.found) {
      s.title = driver_desc(rq);
      return s;
    }
    bool direct = t.pick.mode == RunMode::direct;
    s.title = fmt::format("{} runs torch {} {} {}", driver_desc(rq), t.pick.release, t.pick.variant,
                          direct ? "directly" : "through minor-version compatibility");
    if (direct && !t.driver_min_text.empty())
      s.details.push_back(fmt::format("CUDA {} needs driver >= {}", t.pick.cuda.major_minor(), t.driver_min_text));
    if (!direct) {
      s.details.push_back(fmt::format("CUDA {}.x runs on drivers >= {} with limits: no JIT of newer PTX, newer APIs may fail "
                                      "(cudaErrorCallRequiresNewerDriver, 36)",
                                      t.pick.cuda.major(), t.compat_floor.text));
      if (!t.driver_min_text.empty())
        s.details.push_back(fmt::format("optional: driver >= {} runs CUDA {} directly", t.driver_min_text, t.pick.cuda.major_minor()));
    }
    return s;
  }
  s.status = "do";
  Version cuda = p.planned_driver_cuda;
  s.title = fmt::format("{} the NVIDIA driver, branch {}{}", rq.has_driver ? "upgrade" : "install", p.driver_branch,
                        cuda.empty() ? "" : " (CUDA " + cuda.major_minor() + ")");
  if (rq.has_driver && n.cap_branch && p.driver_branch == n.cap_branch && !rq.driver.empty() && rq.driver.major() > n.cap_branch)
    s.title = fmt::format("install the NVIDIA driver, branch {} (CUDA {}) instead", p.driver_branch, cuda.major_minor());
  s.details.push_back(why_change);
  if (n.cap_branch && p.driver_branch == n.cap_branch) {
    s.details.push_back(fmt::format("{} is driven by branches up to {}", n.cap_gpu, n.cap_branch));
    s.sources.push_back(n.cap_source);
  }
  if (n.pre_turing) {
    s.details.push_back("the proprietary module: the open kernel modules (-open) drive Turing and newer only");
    s.sources.push_back(c.pk.open_module_source);
  }
  if (rq.gpus.empty()) s.details.push_back("no GPU given: pass --gpu NAME to plan for the GPU you will use");
  s.commands = install_driver_commands(c, p.driver_branch);
  return s;
}

std::string coverage_text(const PlanRequest& rq, const TorchCandidate& t) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < rq.gpus.size() && i < t.per_gpu.size(); ++i)
    parts.push_back(fmt::format("{} {}", sm_name(rq.gpus[i].sm), t.per_gpu[i] == Verdict::native ? "native" : "by PTX JIT"));
  return parts.empty() ? "no GPU to cover" : join(parts, ", ");
}

std::vector<std::string> install_commands(const Ctx& c, const TorchPlan& t, const std::string& python) {
  const PlanRequest& rq = c.rq;
  std::vector<std::string> cmds;
  std::string py = python.empty() ? "python" : python;
  std::string pip = fmt::format("{} -m pip install '{}' {} {}", py, t.spec, t.index_flag, t.index_url);
  std::string uv = fmt::format("uv pip install '{}' {} {}", t.spec, t.index_flag == "--index-url" ? "--index-url" : "--extra-index-url", t.index_url);
  const std::string& inst = rq.installer;
  if (!rq.installer_given || inst == "pip") cmds.push_back(pip);
  if (!rq.installer_given || inst == "uv") cmds.push_back(uv);
  if (inst == "conda") {
    auto rel = Version::parse(t.pick.release), last = Version::parse(c.pk.conda_last_release);
    if (rel && last && *rel <= *last)
      cmds.push_back(fmt::format("conda install pytorch=={}.* pytorch-cuda={} -c pytorch -c nvidia", t.pick.release,
                                 t.pick.cuda.major_minor()));
    else
      cmds.push_back(fmt::format("# PyTorch's conda channel ends with {}: in the conda environment use pip", c.pk.conda_last_release)),
          cmds.push_back(pip);
  }
  if (inst == "pixi") {
    cmds.push_back("# pixi.toml");
    std::string snippet = replace_all(replace_all(c.pk.pixi_snippet, "{spec}", t.spec.substr(5)), "{index}", t.index_url);
    for (auto& line : split(snippet, '\n')) cmds.push_back(line);
    cmds.push_back("pixi install");
  }
  return cmds;
}

// The installed torch, judged like a candidate; `why` says what is wrong with it.
bool installed_is_right(const Ctx& c, const InstalledTorch& inst, const DriverUse& d, const std::string& pin,
                        std::string& why, TorchCandidate& judged) {
  auto cv = cuda_from_tag(inst.variant);
  if (!cv) return why = fmt::format("torch {} is a CPU build", inst.version), false;
  judged.release = Version::parse(inst.version).value_or(Version{}).major_minor();
  judged.variant = inst.variant;
  judged.cuda = *cv;
  judged.mode = run_mode(c, *cv, d, why);
  if (judged.mode == RunMode::none) return why = fmt::format("torch {}: {}", inst.version, why), false;
  if (!pin.empty() && judged.release != pin_release(pin)) return why = fmt::format("torch {} is not the pinned {}", inst.version, pin), false;
  if (inst.arch_list.empty() && !c.rq.gpus.empty())
    return why = fmt::format("torch {}: what it was built for is unknown", inst.version), false;
  for (const auto& g : c.rq.gpus) {
    Verdict v = judge_arch_list(inst.arch_list, g.sm, arch_rules(c.kb));
    judged.per_gpu.push_back(v);
    if (v != Verdict::native && !(v == Verdict::jit && judged.mode == RunMode::direct))
      return why = fmt::format("torch {} has no kernels for {}", inst.version, sm_name(g.sm)), false;
  }
  return true;
}

PlanStep torch_step(const Ctx& c, Plan& p, const GpuNeeds& n, const DriverUse& d) {
  const PlanRequest& rq = c.rq;
  PlanStep s;
  s.id = "torch";
  if (n.jetson) {
    s.status = "info";
    s.title = "PyTorch for Jetson: NVIDIA's JetPack build";
    s.details = {c.pk.jetson.text, c.pk.jetson.url};
    s.sources = {c.pk.jetson.source};
    return s;
  }
  if (!p.torch.found) {
    s.status = "blocked";
    s.title = rq.torch_pin.empty() ? "no PyTorch build runs here"
                                   : fmt::format("torch {} cannot run here", rq.torch_pin);
    s.details = p.skipped;
    if (p.nearest.found) {
      s.details.push_back(fmt::format("nearest that works: torch {} {} ({})", p.nearest.pick.release, p.nearest.pick.variant,
                                      coverage_text(rq, p.nearest.pick)));
      s.commands = install_commands(c, p.nearest, rq.installed.empty() ? "" : rq.installed.front().python);
    }
    s.sources.push_back(p.nearest.found ? p.nearest.pick.arch_source : "data/pytorch.toml");
    return s;
  }
  const TorchPlan& t = p.torch;
  s.sources.push_back(t.pick.arch_source);
  std::string python = rq.installed.empty() ? "" : rq.installed.front().python;
  if (!rq.installed.empty()) {
    const InstalledTorch& inst = rq.installed.front();
    std::string why;
    TorchCandidate judged;
    if (installed_is_right(c, inst, d, rq.torch_pin, why, judged)) {
      s.status = "ok";
      s.title = fmt::format("torch {} in {} is already right", inst.version, inst.env);
      s.details.push_back(fmt::format("{}; runs {}", coverage_text(rq, judged),
                                      judged.mode == RunMode::direct ? "directly on the driver" : "through minor-version compatibility"));
      auto newest = Version::parse(t.pick.release), have = Version::parse(judged.release);
      if (newest && have && *newest > *have) {
        s.details.push_back(fmt::format("optional: the newest that fits is torch {} {}", t.pick.release, t.pick.variant));
        s.commands = install_commands(c, t, python);
      }
      s.sources.push_back(inst.arch_source);
      return s;
    }
    s.details.push_back(fmt::format("{} in {}", why, inst.env));
  }
  s.status = "do";
  s.title = fmt::format("install torch {} ({} wheel)", t.pick.release, t.pick.variant);
  s.details.insert(s.details.begin(), fmt::format("{}; runs {}", coverage_text(rq, t.pick),
                                                  t.pick.mode == RunMode::direct ? "directly on the driver" : "through minor-version compatibility"));
  if (windows_driver(rq) && rq.os == "windows") s.details.push_back("the recorded arch lists are the Linux wheels'");
  s.commands = install_commands(c, t, python);
  return s;
}

}  // namespace

const char* run_mode_name(RunMode m) {
  switch (m) {
    case RunMode::direct: return "direct";
    case RunMode::minor_compat: return "minor-version compatibility";
    case RunMode::none: break;
  }
  return "no";
}

std::string parse_torch_pin(const std::string& framework) {
  std::string f(trim(framework));
  if (f.empty() || f == "torch" || f == "pytorch") return {};
  std::string rest = f;
  if (f.starts_with("torch==")) rest = f.substr(7);
  else if (f.starts_with("pytorch==")) rest = f.substr(9);
  else if (!f.empty() && !std::isdigit(static_cast<unsigned char>(f[0])))
    throw UsageError(fmt::format("--framework {}: only torch is planned so far (torch or torch==2.X)", framework));
  auto v = Version::parse(rest);
  if (!v || v->empty() || !v->local.empty()) throw UsageError(fmt::format("--framework {}: expected torch==2.X or torch==2.X.Y", framework));
  return rest;
}

Plan make_plan(const PlanRequest& rq, const Kb& kb) {
  Ctx c{rq, kb, drivers_kb(kb), plan_kb(kb)};
  if (!rq.torch_pin.empty() && !torch_release(kb, rq.torch_pin)) {
    const auto& all = torch_releases(kb);
    throw UsageError(fmt::format("torch=={}: not a release the knowledge base knows (it has torch {} to {})", rq.torch_pin,
                                 all.empty() ? "?" : all.front().torch, all.empty() ? "?" : all.back().torch));
  }
  Plan p;
  p.request = rq;
  GpuNeeds n = gpu_needs(c);
  std::string why_change;
  bool keep = driver_drives_gpus(c, n, why_change);
  DriverUse d{rq.has_driver, rq.driver, rq.driver_cuda};
  if (d.present && d.version.empty() && !d.cuda.empty())
    if (const CudaRelease* r = first_release(c.dk, d.cuda)) d.version = r->linux_min;
  Search found;
  if (keep && !n.jetson) {
    found = search(c, d, rq.torch_pin);
    if (!found.pick) {
      // Nothing runs on this driver: would a planned one do?
      DriverUse planned = planned_driver(c, planned_branch(c, n));
      Search again = search(c, planned, rq.torch_pin);
      if (again.pick && (planned.cuda.empty() || d.cuda.empty() || planned.cuda > d.cuda)) {
        keep = false;
        why_change = fmt::format("no PyTorch build {}runs on {}", rq.torch_pin.empty() ? "" : "of torch " + rq.torch_pin + " ",
                                 driver_desc(rq));
        found = again;
        d = planned;
      }
    }
  }
  if (!keep && !n.jetson) {  // a Jetson's driver is JetPack's
    p.driver_branch = planned_branch(c, n);
    d = planned_driver(c, p.driver_branch);
    found = search(c, d, rq.torch_pin);
  }
  p.planned_driver_cuda = d.cuda;
  p.skipped = found.skipped;
  if (found.pick) p.torch = torch_plan(c, *found.pick, rq.torch_pin);
  else if (!n.jetson) {
    p.satisfiable = false;
    if (!rq.torch_pin.empty())
      if (auto near = nearest_release(c, d, rq.torch_pin)) p.nearest = torch_plan(c, *near, "");
  }
  p.steps.push_back(driver_step(c, p, n, keep, why_change));
  p.steps.push_back(torch_step(c, p, n, d));
  if (n.jetson) return p;
  if (rq.purpose == "build") add_build_steps(p, kb);
  add_tool_step(p, kb, rq.purpose == "build");
  return p;
}

void to_json(nlohmann::json& j, const PlanStep& s) {
  j = {{"id", s.id}, {"status", s.status}, {"title", s.title}, {"details", s.details}, {"commands", s.commands}, {"sources", s.sources}};
}

namespace {

nlohmann::json torch_json(const TorchPlan& t, const PlanRequest& rq) {
  if (!t.found) return nullptr;
  nlohmann::json gpus = nlohmann::json::array();
  for (size_t i = 0; i < rq.gpus.size() && i < t.pick.per_gpu.size(); ++i)
    gpus.push_back({{"gpu", rq.gpus[i].label()}, {"verdict", t.pick.per_gpu[i]}});
  return {{"release", t.pick.release}, {"variant", t.pick.variant}, {"cuda", t.pick.cuda.major_minor()},
          {"spec", t.spec}, {"index_url", t.index_url}, {"runs", run_mode_name(t.pick.mode)},
          {"driver_min", t.driver_min_text}, {"minor_compat_floor", t.compat_floor.text}, {"gpus", gpus},
          {"arch_source", t.pick.arch_source}};
}

}  // namespace

nlohmann::json plan_json(const Plan& p) {
  const PlanRequest& rq = p.request;
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : rq.gpus) gpus.push_back({{"sm", g.sm}, {"name", g.name}});
  nlohmann::json j = {
      {"schema", "cuda-doctor/plan/v1"},
      {"for", rq.purpose},
      {"machine",
       {{"gpus", gpus}, {"gpu_source", rq.gpu_source}, {"driver", rq.has_driver ? nlohmann::json(rq.driver.text) : nlohmann::json(nullptr)},
        {"driver_cuda", rq.driver_cuda.empty() ? "" : rq.driver_cuda.major_minor()}, {"driver_source", rq.driver_source},
        {"os", rq.os}, {"distribution", rq.distro.host_known ? rq.distro.label : ""}, {"arch", rq.host_arch}, {"python", rq.python}}},
      {"satisfiable", p.satisfiable},
      {"driver_branch", p.driver_branch ? nlohmann::json(p.driver_branch) : nlohmann::json(nullptr)},
      {"torch", torch_json(p.torch, rq)},
      {"nearest", torch_json(p.nearest, rq)},
      {"skipped", p.skipped},
      {"build", rq.purpose != "build" ? nlohmann::json(nullptr)
                                      : nlohmann::json{{"cuda", p.build_cuda.empty() ? "" : p.build_cuda.major_minor()},
                                                       {"torch_cuda_arch_list", p.arch_list},
                                                       {"max_jobs", p.max_jobs},
                                                       {"max_jobs_rule", p.max_jobs_rule}}},
      {"steps", p.steps}};
  return j;
}

}  // namespace cd
