#include "kb/perf.hpp"

#include <fnmatch.h>

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
    for (const toml::table* row : kb_rows(k, "gpu_perf", "measurement")) {
      PerfMeasurement m{row_str(*row, "name"), row_str(*row, "gpu_contains"), row_str(*row, "measured"),
                        row_str(*row, "datasheet"), row_str(*row, "label"), true, row_str(*row, "source")};
      if (auto judge = (*row)["judge"].value<bool>()) m.judge = *judge;
      t.measurements.push_back(std::move(m));
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

const PerfMeasurement* find_perf_measurement(const Kb& kb, const std::string& name, const std::string& gpu) {
  for (const PerfMeasurement& m : perf_table(kb).measurements)
    if (fnmatch(m.name.c_str(), name.c_str(), 0) == 0 && gpu.find(m.gpu_contains) != std::string::npos) return &m;
  return nullptr;
}

double perf_column(const GpuPerf& g, const std::string& column) {
  static const std::pair<const char*, double GpuPerf::*> columns[] = {
      {"mem_bw_datasheet", &GpuPerf::mem_bw_datasheet}, {"mem_bw_measured", &GpuPerf::mem_bw_measured},
      {"bf16_tflops", &GpuPerf::bf16_tflops},           {"bf16_measured", &GpuPerf::bf16_measured},
      {"fp16_tflops", &GpuPerf::fp16_tflops},           {"tf32_tflops", &GpuPerf::tf32_tflops},
      {"fp32_tflops", &GpuPerf::fp32_tflops},           {"nvlink_p2p_gbs", &GpuPerf::nvlink_p2p_gbs},
      {"nccl_allreduce_busbw", &GpuPerf::nccl_allreduce_busbw}};
  for (const auto& [name, member] : columns)
    if (column == name) return g.*member;
  return 0;
}

}  // namespace cd
