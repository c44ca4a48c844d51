// `verify` and `bench`: run the GPU steps (gpu/verify_runner), derive, report
// (report/verify_text.cpp). verify: steps, measurements, findings; bench: the measurements alone.
#include "cli/options.hpp"
#include "derive/model.hpp"
#include "gpu/verify_runner.hpp"
#include "probe/verify_env.hpp"
#include "report/exit_status.hpp"
#include "report/verify_report.hpp"
#include "rules/rules.hpp"
#include "util/errors.hpp"
#include "util/subprocess.hpp"
#include "util/term.hpp"

namespace cd {

namespace {

struct VerifyOptions {
  bool quick = false;
  double step_timeout_s = 60;
};

VerifyFacts run(const GlobalOptions& g, const VerifyOptions& o) {
  gpu::VerifyPlan plan;
  plan.exe = self_exe();
  plan.quick = o.quick;
  plan.step_timeout = timeout_ms(o.step_timeout_s);
  VerifyEnvironment env = find_verify_environment(probe_options(g));
  plan.python = env.python;
  plan.lib_dirs = env.lib_dirs;
  Progress progress("verify");
  size_t n = 0;
  plan.on_step = [&](const std::string& what) { progress.update(n++, 0, what); };
  VerifyFacts v = gpu::run_verify(plan, Kb::get());
  progress.finish();
  return v;
}

int run_verify_cmd(const GlobalOptions& g, const VerifyOptions& o) {
  Facts facts;
  facts.verify = run(g, o);
  const Kb& kb = Kb::get();
  Model model = derive(facts, kb);
  Findings findings = without_ignored(verify_rules(model, kb), g.ignore);
  print_out(g.json ? render_verify_json(model, findings) : render_verify_text(model, findings, report_options(g)));
  return exit_code_for(findings, g);
}

int run_bench_cmd(const GlobalOptions& g, const VerifyOptions& o) {
  Facts facts;
  facts.verify = run(g, o);
  const Kb& kb = Kb::get();
  Model model = derive(facts, kb);
  print_out(g.json ? render_bench_json(model) : render_bench_text(model, report_options(g)));
  // Judged like verify (a failed step is an error, --strict and --ignore apply); no
  // measurement at all means bench could not do its job.
  Findings findings = without_ignored(verify_rules(model, kb), g.ignore);
  return exit_status(findings, g.strict, model.measurements.empty());
}

}  // namespace

void register_verify(CLI::App& app, GlobalOptions& g, int& rc) {
  static VerifyOptions opts;
  auto* verify = app.add_subcommand("verify", "Run the stack on the GPUs: driver, JIT, kernels, memory, cuBLAS, P2P, "
                                              "NCCL, torch; measure against the hardware's figures");
  verify->add_flag("--quick", opts.quick, "Only the fast steps (no P2P, NCCL, torch; small buffers)");
  verify->add_option("--step-timeout", opts.step_timeout_s, "Seconds each GPU step may take before it counts as hung")
      ->default_val(60)
      ->check(seconds_validator());
  verify->callback([&] { rc = run_verify_cmd(g, opts); });

  auto* bench = app.add_subcommand("bench", "Print only verify's measurements (bandwidth, GEMM, P2P, NCCL) as a table");
  bench->add_flag("--quick", opts.quick, "Small buffers, fewer steps");
  bench->add_option("--step-timeout", opts.step_timeout_s, "Seconds each GPU step may take")
      ->default_val(60)
      ->check(seconds_validator());
  bench->callback([&] { rc = run_bench_cmd(g, opts); });
}

}  // namespace cd
