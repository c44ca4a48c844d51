// `plan`: the steps to a working stack for this machine, a recorded one (--facts) or one
// described by flags (--gpu, --driver, --os): derive/plan_request builds the question,
// derive/plan decides, report/plan_text prints. Read-only: it prints commands, runs none.
#include <future>

#include "cli/options.hpp"
#include "derive/model.hpp"
#include "derive/plan.hpp"
#include "derive/plan_request.hpp"
#include "kb/kb.hpp"
#include "probe/resources.hpp"
#include "report/plan_report.hpp"
#include "util/errors.hpp"

namespace cd {
namespace {

// What plan needs of this machine: host, environment, driver and GPUs (NVML first), the
// platform and the Python environments (their torch and arch lists), the toolkits for a build —
// no library or binary scans.
Facts probe_for_plan(const ProbeOptions& opts, bool build) {
  ProbeOptions o = opts;
  o.driver_nvml_first = true;
  Facts facts;
  probe_host(facts, o);
  probe_env(facts, o);
  Facts driver_part;
  auto driver = std::async(std::launch::async, [&] {
    probe_driver(driver_part, o);
    probe_platform(driver_part, o);
  });
  probe_pythons(facts, o);
  if (build) probe_toolkits(facts, o);
  driver.get();
  facts.driver = std::move(driver_part.driver);
  facts.platform = std::move(driver_part.platform);
  facts.notes.insert(facts.notes.end(), driver_part.notes.begin(), driver_part.notes.end());
  return facts;
}

int run_plan(const GlobalOptions& g, const PlanFlags& f) {
  const Kb& kb = Kb::get();
  PlanRequest rq;
  if (plan_needs_machine(f) || !g.facts_file.empty()) {
    Facts facts = load_or_probe(g, [&](const ProbeOptions& o) { return probe_for_plan(o, f.purpose == "build"); });
    Model model = derive(facts, kb);
    PlanFlags flags = f;
    if (g.facts_file.empty() && f.purpose == "build") {  // this machine's CPUs and memory, unless named
      BuildResources res = probe_build_resources(probe_options(g).root);
      if (!flags.cpus) flags.cpus = res.cpus;
      if (flags.memory_gib <= 0) flags.memory_gib = static_cast<double>(res.memory_mib) / 1024.0;
    }
    rq = plan_request(flags, &model, kb);
    if (!g.facts_file.empty() && rq.gpu_source == "this machine") rq.gpu_source = "--facts";
  } else {
    rq = plan_request(f, nullptr, kb);
  }
  Plan plan = make_plan(rq, kb);
  print_out(g.json ? render_plan_json(plan) : render_plan_text(plan, report_options(g)));
  return plan.satisfiable ? exit_code::ok : exit_code::errors;
}

}  // namespace

void register_plan(CLI::App& app, GlobalOptions& g, int& rc) {
  static PlanFlags f;
  static std::string from;
  auto* plan = app.add_subcommand("plan", "The exact steps to a working stack: driver, then the PyTorch build and its install command");
  plan->add_option("--for", f.purpose, "What the stack is for: run (default) or build (a toolkit, CUDA_HOME, TORCH_CUDA_ARCH_LIST, MAX_JOBS)");
  repeatable(plan->add_option("--gpu", f.gpus, "Plan for this GPU instead of this machine's: H100, \"RTX 4090\", sm_61, 8.9 (repeatable)"));
  plan->add_option("--driver", f.driver, "Plan for this driver: 550.54.14 (driver), 12.4 (its CUDA) or none");
  plan->add_option("--os", f.os, "linux, wsl or windows (default: this machine's)");
  plan->add_option("--arch", f.arch, "x86_64 or aarch64 (default: this machine's)");
  plan->add_option("--distro", f.distro, "Linux distribution for the driver and toolkit commands, as os-release names it: ubuntu-24.04, debian-12, rhel-9, opensuse-leap-15.6 (default: this machine's; Ubuntu's for a described machine)");
  plan->add_option("--python", f.python, "Python 3.X the wheels must fit (default: the default environment's)");
  plan->add_option("--framework", f.framework, "torch (the newest that fits) or torch==2.X[.Y]");
  plan->add_option("--cpus", f.cpus, "--for build: CPUs of the build machine (default: this machine's)");
  plan->add_option("--memory", f.memory_gib, "--for build: memory of the build machine in GiB (default: this machine's)");
  plan->add_option("--installer", f.installer, "pip, uv, conda or pixi (default: pip and uv commands)");
  plan->add_option("--from", from, "A cuda.lock written by `cuda-doctor lock`: what differs here and the commands to reproduce it");
  plan->callback([&] { rc = from.empty() ? run_plan(g, f) : run_plan_from_lock(g, from); });
}

}  // namespace cd
