// `verify` and `bench`: run the GPU steps (gpu/verify_runner) and report them.
// verify: steps, measurements next to expected figures, findings, exit code.
// bench: the measurements alone, as an aligned table or --json.
#include <unistd.h>

#include <fmt/format.h>

#include "cli/options.hpp"
#include "derive/model.hpp"
#include "gpu/verify_runner.hpp"
#include "probe/verify_env.hpp"
#include "report/report.hpp"
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

Color status_color(StepStatus s) {
  return s == StepStatus::pass ? Color::green : s == StepStatus::fail ? Color::red : Color::gray;
}

std::string pad(const std::string& s, size_t w) {
  size_t dw = display_width(s);
  return s + std::string(dw < w ? w - dw : 0, ' ');
}

std::string gpus_text(const VerifyFacts& v, const Style& st) {
  std::string out;
  for (const VerifyGpu& gp : v.gpus) {
    std::string link = gp.pcie_gen ? fmt::format("  PCIe Gen{} x{}", gp.pcie_gen, gp.pcie_width) : "";
    out += fmt::format("  {}  {}  cc {}  {} SMs  {:.1f} GiB  {}{}\n", st.paint("GPU " + std::to_string(gp.index), Color::bold),
                       gp.name, gp.cc, gp.sm_count, gp.total_mem_gib, gp.pci_bus_id, link);
  }
  return out;
}

std::string measurements_text(const VerifyFacts& v, const Style& st) {
  std::vector<std::vector<std::string>> rows{{"measurement", "where", "value", "expected", "%", "how"}};
  for (const Measurement& m : v.measurements) {
    std::string exp = m.expected > 0 ? fmt::format("{:.0f} {}", m.expected, m.unit) : "-";
    std::string pct = m.expected > 0 ? fmt::format("{:.0f}%", 100 * m.value / m.expected) : "";
    rows.push_back({m.name, m.gpu, fmt::format("{:.1f} {}", m.value, m.unit), exp, pct, m.note});
  }
  std::vector<size_t> w(6, 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < 5; ++i) w[i] = std::max(w[i], display_width(r[i]));
  std::string out;
  for (size_t k = 0; k < rows.size(); ++k) {
    const auto& r = rows[k];
    bool low = k > 0 && v.measurements[k - 1].threshold > 0 && v.measurements[k - 1].value < v.measurements[k - 1].threshold;
    std::string line = fmt::format("  {}  {}  {:>{}}  {:>{}}  {:>{}}  {}", pad(r[0], w[0]), pad(r[1], w[1]), r[2], w[2],
                                   r[3], w[3], r[4], w[4], r[5]);
    out += (k == 0 ? st.paint(line, Color::gray) : low ? st.paint(line, Color::yellow) : line) + "\n";
  }
  return out;
}

std::string steps_text(const VerifyFacts& v, const Style& st) {
  size_t wn = 0, wg = 0;
  for (const VerifyStep& s : v.steps) wn = std::max(wn, display_width(s.name)), wg = std::max(wg, display_width(s.gpu));
  std::string out;
  for (const VerifyStep& s : v.steps) {
    const char* mark = s.status == StepStatus::pass ? "✔" : s.status == StepStatus::fail ? "✖" : "–";
    out += fmt::format("  {} {:<9} {}  {}  {:>6.2f} s  {}\n", st.paint(mark, status_color(s.status)), s.layer,
                       pad(s.name, wn), pad(s.gpu, wg), s.seconds, s.detail);
  }
  return out;
}

void print_json(const std::string& kind, const VerifyFacts& v, const Findings& findings) {
  print_out(render_json(kind, findings, {{"verify", v}}) + "\n");
}

int run_verify_cmd(const GlobalOptions& g, const VerifyOptions& o) {
  Facts facts;
  facts.verify = run(g, o);
  const Kb& kb = Kb::get();
  Findings findings = without_ignored(verify_rules(derive(facts, kb), kb), g.ignore);
  const VerifyFacts& v = facts.verify;
  if (g.json) {
    print_json("verify", v, findings);
    return exit_code_for(findings, g);
  }
  Style st = g.no_color ? Style::plain() : Style::for_fd(STDOUT_FILENO);
  std::string out = st.paint(fmt::format("cuda-doctor verify{}", v.quick ? " --quick" : ""), Color::bold);
  if (v.driver_cuda_version)
    out += fmt::format("  driver CUDA {}.{}, {}", v.driver_cuda_version / 1000, v.driver_cuda_version % 1000 / 10, v.libcuda);
  out += "\n" + gpus_text(v, st) + "\n" + st.paint("Steps", Color::bold) + "\n" + steps_text(v, st);
  if (!v.measurements.empty())
    out += "\n" + st.paint("Measurements", Color::bold) + "\n" + measurements_text(v, st);
  if (!findings.empty()) {
    ReportOptions r;
    r.style = st;
    r.verbose = g.verbose;
    out += "\n" + st.paint("Findings", Color::bold) + "\n" + render_findings_text(findings, r);
  }
  out += fmt::format("\n{} in {:.1f} s\n", summary_line(findings), v.seconds);
  print_out(out);
  return exit_code_for(findings, g);
}

int run_bench_cmd(const GlobalOptions& g, const VerifyOptions& o) {
  Facts facts;
  facts.verify = run(g, o);
  const VerifyFacts& v = facts.verify;
  if (g.json) {
    print_out(json_text(nlohmann::json{{"schema", "cuda-doctor/bench/v1"}, {"gpus", v.gpus}, {"measurements", v.measurements},
                                       {"seconds", v.seconds}},
                        2) +
              "\n");
  } else {
    Style st = g.no_color ? Style::plain() : Style::for_fd(STDOUT_FILENO);
    print_out(v.measurements.empty() ? "no measurements: run `cuda-doctor verify` to see why\n"
                                     : measurements_text(v, st));
  }
  for (const VerifyStep& s : v.steps)
    if (s.status == StepStatus::fail) return exit_code::errors;
  return v.measurements.empty() ? exit_code::cannot_run : exit_code::ok;
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
