// `plan --for build`: what compiling a CUDA extension against the planned torch needs, after the
// driver and torch steps (derive/plan.cpp).
//
// Toolkit: torch.version.cuda's major.minor of the torch built against (the installed one when it
// is already right, else the planned wheel's); a toolkit of that major.minor on the machine is
// used as it is, otherwise the newest release of it (Table 3 gives its update number and the
// driver the runfile bundles) is installed with `--toolkit --silent --toolkitpath=/usr/local/cuda-X.Y`
// — the toolkit alone, never the driver — or NVIDIA's apt package. nvcc must accept the host gcc
// (the toolkit's own host_config.h, else data/toolkits.toml) and target every local GPU.
// Environment: CUDA_HOME at that directory, TORCH_CUDA_ARCH_LIST from the GPUs' compute
// capabilities (mixed cards: "8.0;8.6;8.9"), MAX_JOBS = min(CPUs / 2, memory GiB / 20), at least
// 1 (flash-attention's own rule, data/plan.toml [max_jobs]).
// Tools: what uv's --torch-backend=auto takes here (the driver's floor table, in uv's order —
// never the compute capability) and whether that build has kernels for these GPUs; what conda
// and pixi see (__cuda = the driver's CUDA); the overrides a machine without the GPU needs.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "derive/plan.hpp"
#include "derive/derive_parts.hpp"
#include "kb/arch.hpp"
#include "kb/drivers.hpp"
#include "kb/gpus.hpp"
#include "kb/plan.hpp"
#include "kb/pytorch.hpp"
#include "kb/toolkits.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [k, v] : vars) text = replace_all(std::move(text), "{" + k + "}", v);
  return text;
}

const PlanStep* step(const Plan& p, const std::string& id) {
  for (const auto& s : p.steps)
    if (s.id == id) return &s;
  return nullptr;
}

// The torch the extension is built against: the installed one when the plan keeps it.
struct BuildTorch {
  std::string release, variant;
  Version cuda;
};

BuildTorch build_torch(const Plan& p) {
  const PlanStep* t = step(p, "torch");
  if (t && t->status == "ok" && !p.request.installed.empty()) {
    const InstalledTorch& inst = p.request.installed.front();
    return {Version::parse(inst.version).value_or(Version{}).major_minor(), inst.variant,
            cuda_from_tag(inst.variant).value_or(Version{})};
  }
  if (p.torch.found) return {p.torch.pick.release, p.torch.pick.variant, p.torch.pick.cuda};
  return {};
}

std::string arch_list(const std::vector<GpuTarget>& gpus) {
  std::set<int> sms;
  for (const auto& g : gpus) sms.insert(g.sm);
  std::vector<std::string> out;
  for (int sm : sms) out.push_back(cc_name(sm));
  return join(out, ";");
}

// The newest release of CUDA X.Y: its X.Y.N and the driver its runfile bundles.
struct Runfile {
  std::string version, driver;
};

std::optional<Runfile> runfile_release(const DriversKb& dk, const Version& cuda) {
  const CudaRelease* best = nullptr;
  for (const auto& r : dk.releases)
    if (r.cuda.major() == cuda.major() && r.cuda.minor() == cuda.minor() && (!best || r.linux_min > best->linux_min)) best = &r;
  if (!best) return std::nullopt;
  int patch = -1;
  if (best->release == "GA") patch = 0;
  else if (best->release.starts_with("Update ")) patch = std::atoi(best->release.c_str() + 7);
  if (patch < 0) return std::nullopt;
  return Runfile{fmt::format("{}.{}.{}", cuda.major(), cuda.minor(), patch), best->linux_min.text};
}

int gcc_major(const std::string& v) { return Version::parse(v).value_or(Version{}).major(); }

struct ToolkitResult {
  std::string home;        // CUDA_HOME for the env step
  std::string host_cxx;    // g++-N to use instead of the default gcc; "" = the default is fine
};

ToolkitResult toolkit_step(Plan& p, const Kb& kb, const BuildTorch& bt) {
  const Version& cuda = bt.cuda;
  const PlanRequest& rq = p.request;
  const PlanKb& pk = plan_kb(kb);
  std::string mm = cuda.major_minor();
  PlanStep s{"toolkit", "do", "", {}, {}, {pk.runfile_source}};
  ToolkitResult r{"/usr/local/cuda-" + mm, ""};
  const PlanToolkit* have = nullptr;
  for (const auto& t : rq.toolkits)
    if (Version::parse(t.version).value_or(Version{}).major_minor() == mm) have = &t;
  auto support = toolkit_support(kb, cuda);
  if (support) s.sources.push_back(support->source);
  int max_gcc = have && have->host_gcc_max ? have->host_gcc_max : support ? support->max_gcc : 0;
  // The runfile installs the toolkit alone, never the driver: wget + sh, or "" when none is recorded.
  auto runfile_commands = [&]() -> std::vector<std::string> {
    auto rf = runfile_release(drivers_kb(kb), cuda);
    if (!rf) return {};
    std::string url = fill(pk.runfile_url, {{"version", rf->version}, {"driver", rf->driver},
                                            {"suffix", rq.host_arch == "aarch64" ? "_sbsa" : ""}});
    std::string file = url.substr(url.rfind('/') + 1);
    return {"wget " + url, fmt::format("sudo sh {} {}", file, fill(pk.runfile_flags, {{"mm", mm}}))};
  };
  if (have) {
    s.status = "ok";
    s.title = fmt::format("CUDA {} toolkit at {} matches torch's CUDA {}", have->version, have->root, mm);
    r.home = have->root;
    // A build plan is often replayed elsewhere (a Dockerfile, a fresh box): the same toolkit's runfile.
    if (rq.os != "windows")
      if (auto cmds = runfile_commands(); !cmds.empty()) {
        s.details.push_back(fmt::format("elsewhere (a Dockerfile, another machine): the CUDA {} runfile, toolkit only", mm));
        s.commands = std::move(cmds);
      }
  } else if (rq.os == "windows") {
    s.title = fmt::format("install the CUDA {} toolkit (Windows installer from https://developer.nvidia.com/cuda-downloads)", mm);
  } else {
    s.title = fmt::format("install the CUDA {} toolkit (torch.version.cuda {}): the toolkit alone, never the driver", mm, mm);
    if (auto cmds = runfile_commands(); !cmds.empty()) {
      s.commands = std::move(cmds);
    } else {
      s.details.push_back(fmt::format("no runfile of CUDA {} is recorded (data/cuda_drivers.toml)", mm));
    }
    if (std::string pkg = toolkit_install_command(kb, rq.distro, cuda); !pkg.starts_with("#")) s.commands.push_back("# or: " + pkg);
    s.details.push_back(fmt::format("torch {} ({}) was built with CUDA {}: its extensions compile with the same major.minor", bt.release, bt.variant, mm));
  }
  if (support && support->sm_min && support->sm_max)
    for (const auto& g : rq.gpus)
      if (g.sm < support->sm_min || g.sm > support->sm_max)
        s.details.push_back(fmt::format("nvcc {} cannot target {} (it compiles sm_{} to sm_{})", mm, sm_name(g.sm), support->sm_min, support->sm_max));
  int gcc = gcc_major(rq.host_gcc);
  if (gcc && max_gcc && gcc > max_gcc) {
    HostCompilerInstall hci = host_compiler_install(kb, rq.distro, "gcc", max_gcc);
    r.host_cxx = hci.cxx;
    s.details.push_back(fmt::format("nvcc {} accepts gcc up to {}; the host gcc is {}: build with g++ {}", mm, max_gcc, rq.host_gcc, max_gcc));
    s.commands.push_back(hci.install);
    if (s.status == "ok") s.status = "do";
  } else if (gcc && max_gcc) {
    s.details.push_back(fmt::format("host gcc {} is within nvcc {}'s limit (gcc <= {})", rq.host_gcc, mm, max_gcc));
  }
  p.steps.push_back(std::move(s));
  return r;
}

void env_step(Plan& p, const Kb& kb, const ToolkitResult& tk) {
  const PlanRequest& rq = p.request;
  const PlanKb& pk = plan_kb(kb);
  PlanStep s{"env", "do", "set the build environment (this shell, or the Dockerfile's ENV)", {}, {}, {pk.max_jobs_source}};
  s.commands.push_back("export CUDA_HOME=" + tk.home);
  s.commands.push_back("export PATH=\"$CUDA_HOME/bin:$PATH\"");
  p.arch_list = arch_list(rq.gpus);
  if (!p.arch_list.empty()) {
    s.commands.push_back(fmt::format("export TORCH_CUDA_ARCH_LIST=\"{}\"", p.arch_list));
    s.details.push_back(fmt::format("TORCH_CUDA_ARCH_LIST: the compute capability of each GPU ({})", p.arch_list));
    if (!rq.torch_cuda_arch_list.empty() && rq.torch_cuda_arch_list != p.arch_list)
      s.details.push_back(fmt::format("this environment has TORCH_CUDA_ARCH_LIST={}", rq.torch_cuda_arch_list));
  } else {
    s.details.push_back("no GPU given: name the target with --gpu; without a GPU to detect, TORCH_CUDA_ARCH_LIST must be set");
  }
  p.max_jobs = max_jobs_for(rq.cpus, rq.memory_mib, pk.gib_per_job, pk.cores_per_job);
  if (p.max_jobs) {
    p.max_jobs_rule = fmt::format("min({} CPUs / {}, {:.0f} GiB / {} GiB per job)", rq.cpus, pk.cores_per_job,
                                  static_cast<double>(rq.memory_mib) / 1024.0, pk.gib_per_job);
    s.commands.push_back(fmt::format("export MAX_JOBS={}", p.max_jobs));
    s.details.push_back("MAX_JOBS: " + p.max_jobs_rule + ", at least 1: nvcc jobs of flash-attn-sized extensions take several GB each");
  } else {
    s.details.push_back("MAX_JOBS: CPUs and memory unknown (pass --cpus N --memory GiB); about one job per 20 GiB");
  }
  if (!tk.host_cxx.empty()) s.commands.push_back("export CUDAHOSTCXX=" + tk.host_cxx);
  p.steps.push_back(std::move(s));
}

// What uv's --torch-backend=auto takes for `release` on this driver, in uv's order; "" = CPU.
std::string uv_pick(const PlanKb& pk, const PlanRequest& rq, const TorchRelease& rel) {
  if (!rq.has_driver || rq.driver.empty()) return {};
  bool windows = rq.os == "windows";  // uv inside WSL2 is a Linux uv
  for (const auto& b : pk.uv) {
    const Version& floor = windows ? b.windows_min : b.linux_min;
    if (floor.empty() || rq.driver < floor) continue;
    if (std::find(rel.variants.begin(), rel.variants.end(), b.variant) != rel.variants.end()) return b.variant;
  }
  return {};
}

}  // namespace

int max_jobs_for(int cpus, uint64_t memory_mib, int gib_per_job, int cores_per_job) {
  if (cpus <= 0 || memory_mib == 0 || gib_per_job <= 0 || cores_per_job <= 0) return 0;
  int by_cores = cpus / cores_per_job;
  int by_memory = static_cast<int>(memory_mib / 1024 / static_cast<uint64_t>(gib_per_job));
  return std::max(1, std::min(by_cores, by_memory));
}

// The uv / conda / pixi step: shown for --for build, and for run when uv would install a build
// without kernels for a GPU here.
void add_tool_step(Plan& p, const Kb& kb, bool always) {
  const PlanRequest& rq = p.request;
  const PlanKb& pk = plan_kb(kb);
  BuildTorch bt = build_torch(p);
  auto rel = bt.release.empty() ? std::nullopt : torch_release(kb, bt.release);
  if (!rel) return;
  PlanStep s{"tools", "info", "", {}, {}, {}};
  std::string uv = uv_pick(pk, rq, *rel);
  bool uv_wrong = false;
  if (uv.empty()) {
    s.title = rq.has_driver ? fmt::format("uv --torch-backend=auto: no PyTorch CUDA index for driver {}: the CPU wheel", rq.driver.text)
                            : "uv --torch-backend=auto: no driver here, so the CPU wheel";
  } else {
    auto wheel = torch_wheel(kb, bt.release, uv);
    std::vector<std::string> missing;
    for (const auto& g : rq.gpus) {
      Verdict v = wheel ? judge_arch_list(wheel->arch_list, g.sm, arch_rules(kb)) : Verdict::no_cuda_code;
      if (v != Verdict::native && v != Verdict::jit) missing.push_back(sm_name(g.sm));
    }
    uv_wrong = !missing.empty();
    s.title = fmt::format("uv --torch-backend=auto takes torch {} from {}: {}", bt.release, uv,
                          uv_wrong ? "no kernels for " + join(missing, ", ") + " (it reads the driver, never the GPU)"
                                   : uv == bt.variant ? "the same build" : "it runs here; the plan's " + bt.variant + " is its pick for these GPUs");
    if (!pk.uv.empty()) s.sources.push_back(pk.uv.front().source);
  }
  if (!always && !uv_wrong) return;
  s.details.push_back(rq.driver_cuda.empty() ? "conda and pixi: no __cuda virtual package without a driver: CUDA builds are not chosen"
                                             : fmt::format("conda and pixi see __cuda={} (the driver's CUDA) and pick builds by it alone", rq.driver_cuda.major_minor()));
  std::string driver = p.torch.found && !p.torch.driver_min_text.empty() ? p.torch.driver_min_text : rq.driver.text;
  s.details.push_back("on a machine without this GPU (CI, docker build), set what detection cannot see:");
  s.commands.push_back("export " + fill(pk.override_uv, {{"variant", bt.variant}, {"driver", driver}}));
  s.commands.push_back("export " + fill(pk.override_conda, {{"cuda", bt.cuda.major_minor()}}));
  s.sources.push_back(pk.override_source);
  p.steps.push_back(std::move(s));
}

void add_build_steps(Plan& p, const Kb& kb) {
  BuildTorch bt = build_torch(p);
  p.build_cuda = bt.cuda;
  if (bt.cuda.empty()) {
    p.steps.push_back({"toolkit", "blocked", "no torch to build against: see the torch step", {}, {}, {}});
    return;
  }
  ToolkitResult tk = toolkit_step(p, kb, bt);
  env_step(p, kb, tk);
}

}  // namespace cd
