#include "kb/perf.hpp"

#include "kb/toml_access.hpp"

namespace cd {

const PerfTable& perf_table(const Kb& kb) {
  return kb.view<PerfTable>("gpu_perf", [](const Kb& k) {
    PerfTable t;
    if (const toml::table* j = kb_table(k, "gpu_perf")["judgement"].as_table()) {
      t.below_expected_fraction = row_num(*j, "below_expected_fraction").value_or(0.7);
      t.datasheet_achievable = row_num(*j, "datasheet_achievable").value_or(0.8);
      t.judgement_source = row_str(*j, "source");
    }
    for (const toml::table* row : kb_rows(k, "gpu_perf", "gpu")) {
      GpuPerf g;
      g.match = row_str(*row, "match");
      g.model = row_str(*row, "model");
      g.mem_bw_datasheet = row_num(*row, "mem_bw_datasheet").value_or(0);
      g.mem_bw_measured = row_num(*row, "mem_bw_measured").value_or(0);
      g.bf16_tflops = row_num(*row, "bf16_tflops").value_or(0);
      g.bf16_measured = row_num(*row, "bf16_measured").value_or(0);
      g.fp16_tflops = row_num(*row, "fp16_tflops").value_or(0);
      g.tf32_tflops = row_num(*row, "tf32_tflops").value_or(0);
      g.fp32_tflops = row_num(*row, "fp32_tflops").value_or(0);
      g.nvlink_p2p_gbs = row_num(*row, "nvlink_p2p_gbs").value_or(0);
      g.nccl_allreduce_busbw = row_num(*row, "nccl_allreduce_busbw").value_or(0);
      g.source = row_str(*row, "source");
      t.gpus.push_back(std::move(g));
    }
    for (const toml::table* row : kb_rows(k, "gpu_perf", "pcie")) {
      PcieLinkPerf p;
      p.gen = static_cast<int>(row_int(*row, "gen").value_or(0));
      p.x16_theoretical = row_num(*row, "x16_theoretical").value_or(0);
      p.x16_measured = row_num(*row, "x16_measured").value_or(0);
      p.source = row_str(*row, "source");
      t.pcie.push_back(std::move(p));
    }
    return t;
  });
}

const GpuPerf* find_gpu_perf(const Kb& kb, const std::string& device_name) {
  for (const GpuPerf& g : perf_table(kb).gpus)
    if (!g.match.empty() && device_name.find(g.match) != std::string::npos) return &g;
  return nullptr;
}

const PcieLinkPerf* find_pcie_perf(const Kb& kb, int gen) {
  for (const PcieLinkPerf& p : perf_table(kb).pcie)
    if (p.gen == gen) return &p;
  return nullptr;
}

}  // namespace cd
