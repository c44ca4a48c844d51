// `verify` and `bench` renderers. Which measurement is below its expected figure comes
// from the model (derive/verify.cpp); this file only lays it out. Everything the child
// processes reported (GPU names, bus ids, library paths, step details, notes) came from the
// driver and libraries and goes through shown() (issue 12 #7).
#include <fmt/format.h>

#include "report/verify_report.hpp"
#include "util/escape.hpp"

namespace cd {
namespace {

Color status_color(StepStatus s) {
  return s == StepStatus::pass ? Color::green : s == StepStatus::fail ? Color::red : Color::gray;
}

const char* status_mark(StepStatus s) { return s == StepStatus::pass ? "✔" : s == StepStatus::fail ? "✖" : "–"; }

std::string pad(const std::string& s, size_t w) {
  size_t dw = display_width(s);
  return s + std::string(dw < w ? w - dw : 0, ' ');
}

std::string gpus_text(const VerifyFacts& v, const Style& st) {
  std::string out;
  for (const VerifyGpu& gp : v.gpus) {
    std::string link = gp.pcie_gen ? fmt::format("  PCIe Gen{} x{}", gp.pcie_gen, gp.pcie_width) : "";
    out += fmt::format("  {}  {}  cc {}  {} SMs  {:.1f} GiB  {}{}\n", st.paint("GPU " + std::to_string(gp.index), Color::bold),
                       shown(gp.name), shown(gp.cc), gp.sm_count, gp.total_mem_gib, shown(gp.pci_bus_id), link);
  }
  return out;
}

std::string measurements_text(const Model& model, const Style& st) {
  std::vector<std::vector<std::string>> rows{{"measurement", "where", "value", "expected", "%", "how"}};
  for (const MeasurementModel& mm : model.measurements) {
    const Measurement& m = *mm.measurement;
    std::string unit = shown(m.unit);
    std::string exp = m.expected > 0 ? fmt::format("{:.0f} {}", m.expected, unit) : "-";
    std::string pct = m.expected > 0 ? fmt::format("{:.0f}%", mm.percent) : "";
    rows.push_back({shown(m.name), shown(m.gpu), fmt::format("{:.1f} {}", m.value, unit), exp, pct, shown(m.note)});
  }
  std::vector<size_t> w(6, 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < 5; ++i) w[i] = std::max(w[i], display_width(r[i]));
  std::string out;
  for (size_t k = 0; k < rows.size(); ++k) {
    const auto& r = rows[k];
    bool low = k > 0 && model.measurements[k - 1].below_expected;
    std::string line = fmt::format("  {}  {}  {:>{}}  {:>{}}  {:>{}}  {}", pad(r[0], w[0]), pad(r[1], w[1]), r[2], w[2],
                                   r[3], w[3], r[4], w[4], r[5]);
    out += (k == 0 ? st.paint(line, Color::gray) : low ? st.paint(line, Color::yellow) : line) + "\n";
  }
  return out;
}

std::string steps_text(const VerifyFacts& v, const Style& st) {
  size_t wn = 0, wg = 0;
  for (const VerifyStep& s : v.steps)
    wn = std::max(wn, display_width(shown(s.name))), wg = std::max(wg, display_width(shown(s.gpu)));
  std::string out;
  for (const VerifyStep& s : v.steps)
    out += fmt::format("  {} {:<9} {}  {}  {:>6.2f} s  {}\n", st.paint(status_mark(s.status), status_color(s.status)),
                       shown(s.layer), pad(shown(s.name), wn), pad(shown(s.gpu), wg), s.seconds, shown(s.detail));
  return out;
}

}  // namespace

std::string render_verify_text(const Model& m, const std::vector<Finding>& findings, const ReportOptions& opts) {
  const VerifyFacts& v = m.facts.verify;
  const Style& st = opts.style;
  std::string out = st.paint(fmt::format("cuda-doctor verify{}", v.quick ? " --quick" : ""), Color::bold);
  if (v.driver_cuda_version)
    out += fmt::format("  driver CUDA {}.{}, {}", v.driver_cuda_version / 1000, v.driver_cuda_version % 1000 / 10, shown(v.libcuda));
  out += "\n" + gpus_text(v, st) + "\n" + st.paint("Steps", Color::bold) + "\n" + steps_text(v, st);
  if (!m.measurements.empty()) out += "\n" + st.paint("Measurements", Color::bold) + "\n" + measurements_text(m, st);
  if (!findings.empty()) out += "\n" + st.paint("Findings", Color::bold) + "\n" + render_findings_text(findings, opts);
  out += fmt::format("\n{} in {:.1f} s\n", summary_line(findings), v.seconds);
  return out;
}

std::string render_verify_json(const Model& m, const std::vector<Finding>& findings) {
  return render_json("verify", findings, {{"verify", m.facts.verify}}) + "\n";
}

std::string render_bench_text(const Model& m, const ReportOptions& opts) {
  if (m.measurements.empty()) return "no measurements: run `cuda-doctor verify` to see why\n";
  return measurements_text(m, opts.style);
}

std::string render_bench_json(const Model& m) {
  const VerifyFacts& v = m.facts.verify;
  return json_text(nlohmann::json{{"schema", "cuda-doctor/bench/v1"}, {"gpus", v.gpus}, {"measurements", v.measurements},
                                  {"seconds", v.seconds}},
                   2) +
         "\n";
}

}  // namespace cd
