#include "gpu/verify_expect.hpp"

#include <fmt/format.h>

#include "kb/perf.hpp"
#include "util/strings.hpp"

namespace cd::gpu {

namespace {

const VerifyGpu* gpu_of(const VerifyFacts& v, const std::string& label) {
  for (const VerifyGpu& g : v.gpus)
    if (label == "GPU " + std::to_string(g.index)) return &g;
  return v.gpus.empty() ? nullptr : &v.gpus.front();  // "0->1", "2 GPUs, 1 GiB": same model
}

// A measured ceiling is the reference; a datasheet figure is scaled by what is achievable.
void expect(Measurement& m, const PerfTable& t, double measured, double datasheet, const std::string& what,
            const std::string& source, bool judge = true) {
  if (measured > 0) {
    m.expected = measured;
    m.expected_source = "measured ceiling, " + what + " (" + source + ")";
  } else if (datasheet > 0) {
    m.expected = datasheet * t.datasheet_achievable;
    m.expected_source = fmt::format("{:.0f}% of datasheet {:g}, {} ({})", t.datasheet_achievable * 100, datasheet,
                                    what, source);
  } else {
    return;
  }
  if (judge) m.threshold = m.expected * t.below_expected_fraction;
}

}  // namespace

void add_expectations(VerifyFacts& v, const Kb& kb) {
  const PerfTable& t = perf_table(kb);
  for (Measurement& m : v.measurements) {
    const VerifyGpu* g = gpu_of(v, m.gpu);
    if (!g) continue;
    const GpuPerf* p = find_gpu_perf(kb, g->name);
    const std::string& n = m.name;
    if (n == "htod_pinned" || n == "dtoh_pinned") {
      const PcieLinkPerf* link = find_pcie_perf(kb, g->pcie_gen);
      if (!link || g->pcie_width <= 0) continue;
      double scale = g->pcie_width / 16.0;
      expect(m, t, link->x16_measured * scale, 0,
             fmt::format("PCIe Gen{} x{}", g->pcie_gen, g->pcie_width), link->source);
      continue;
    }
    // Which columns of the GPU's row this measurement is compared with: data/gpu_perf.toml [[measurement]].
    const PerfMeasurement* col = p ? find_perf_measurement(kb, n, m.gpu) : nullptr;
    if (!col) continue;
    std::string what = replace_all(col->label, "{model}", p->model);
    expect(m, t, perf_column(*p, col->measured), perf_column(*p, col->datasheet), what, p->source, col->judge);
  }
}

}  // namespace cd::gpu
