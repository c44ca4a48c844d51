#include "gpu/verify_expect.hpp"

#include <fmt/format.h>

#include "kb/perf.hpp"

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
    if (!p) continue;
    if (n == "dtod_copy_kernel" || n == "dtod_memcpy") {
      expect(m, t, p->mem_bw_measured, p->mem_bw_datasheet, p->model + " memory copy", p->source);
    } else if (n.rfind("gemm_", 0) == 0) {
      bool full_size = n.size() > 5 && n.substr(n.size() - 5) == "_8192";
      double datasheet = n.find("bf16") != std::string::npos   ? p->bf16_tflops
                         : n.find("fp16") != std::string::npos ? p->fp16_tflops
                         : n.find("tf32") != std::string::npos ? p->tf32_tflops
                                                               : p->fp32_tflops;
      double measured = n.find("bf16") != std::string::npos && full_size ? p->bf16_measured : 0;
      expect(m, t, measured, datasheet, p->model + " dense", p->source, full_size);
    } else if (n == "p2p_copy") {
      expect(m, t, p->nvlink_p2p_gbs, 0, "NVLink P2P (only if this pair is NVLink-connected)", p->source, false);
    } else if (n == "nccl_allreduce_busbw" && m.gpu.find("1 GiB") != std::string::npos) {
      expect(m, t, p->nccl_allreduce_busbw, 0, "NVLink/NVSwitch ring, NVLS off", p->source);
    }
  }
}

}  // namespace cd::gpu
