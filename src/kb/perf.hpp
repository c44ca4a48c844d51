#pragma once
// Expected performance per GPU model and PCIe link (data/gpu_perf.toml).
#include <optional>
#include <string>
#include <vector>

#include "kb/kb.hpp"

namespace cd {

struct GpuPerf {
  std::string match;   // substring of the device name
  std::string model;
  double mem_bw_datasheet = 0, mem_bw_measured = 0;       // GB/s, read + write
  double bf16_tflops = 0, bf16_measured = 0, fp16_tflops = 0, tf32_tflops = 0, fp32_tflops = 0;
  double nvlink_p2p_gbs = 0, nccl_allreduce_busbw = 0;
  std::string source;
};

// Which figures of a GpuPerf row a verify measurement is compared with.
struct PerfMeasurement {
  std::string name;          // glob over the measurement name ("gemm_bf16_*")
  std::string gpu_contains;  // and its gpu field must contain this ("" = any)
  std::string measured;      // column of a measured ceiling ("" = none)
  std::string datasheet;     // column of a datasheet figure ("" = none)
  std::string label;         // "{model} memory copy"
  bool judge = true;         // false: shown, never reported below expected
  std::string source;
};

struct PcieLinkPerf {
  int gen = 0;
  double x16_theoretical = 0, x16_measured = 0;  // GB/s one direction
  std::string source;
};

struct PerfTable {
  double below_expected_fraction = 0.7;
  double datasheet_achievable = 0.8;
  std::string judgement_source;
  std::vector<GpuPerf> gpus;
  std::vector<PcieLinkPerf> pcie;
  std::vector<PerfMeasurement> measurements;
};

const PerfTable& perf_table(const Kb& kb);
// The first row whose `match` occurs in `device_name`, or nullptr.
const GpuPerf* find_gpu_perf(const Kb& kb, const std::string& device_name);
const PcieLinkPerf* find_pcie_perf(const Kb& kb, int gen);
// The first [[measurement]] row for a measurement name and gpu field, or nullptr.
const PerfMeasurement* find_perf_measurement(const Kb& kb, const std::string& name, const std::string& gpu);
// A GpuPerf column by its data/gpu_perf.toml name ("bf16_tflops"); 0 when unknown or absent.
double perf_column(const GpuPerf& g, const std::string& column);

}  // namespace cd
