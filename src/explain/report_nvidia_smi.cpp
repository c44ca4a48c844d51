// `nvidia-smi`'s default table, every layout since the 3xx drivers:
//   | NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |
//   |   0  NVIDIA A100-SXM4-40GB      On   | 00000000:04:00.0 Off |                    0 |
//   | N/A   30C    P0    58W / 400W |   1404MiB / 40537MiB |      0%      Default |
// (older ones without "CUDA Version", Windows rows with WDDM/TCC instead of On/Off, rows
// indented by a tab when pasted). The header gives the driver and the newest CUDA it runs
// ("CUDA Version" is the driver's limit, not a toolkit); each GPU its name, persistence mode,
// bus id, volatile uncorrectable ECC count, memory and compute mode. Also nvidia-smi's answer
// when NVML fails on a mismatch: "NVML library version: 580.178".
#include <fmt/format.h>
#include <re2/re2.h>

#include "explain/report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

const RE2& header() {
  static const RE2 re(R"(NVIDIA-SMI\s+(\d+\.\d+(?:\.\d+)?)\s+Driver Version:\s*(\d+\.\d+(?:\.\d+)?)(?:\s+CUDA Version:\s*(\d+\.\d+|N/A))?)");
  return re;
}

std::string compute_mode(std::string_view m) {
  std::string s = to_lower(trim(m));
  if (s == "default") return "default";
  if (s == "e. process" || s == "exclusive_process") return "exclusive_process";
  if (s == "e. thread") return "exclusive_thread";
  if (s == "prohibited") return "prohibited";
  return "";
}

void read_table(const std::vector<ReportLine>& lines, size_t start, ReportBuilder& out) {
  std::string smi, driver, cuda;
  RE2::PartialMatch(lines[start].text, header(), &smi, &driver, &cuda);
  size_t r = out.add_report("nvidia-smi", lines[start].number, lines[start].number);
  out.driver_version(driver);
  out.driver_cuda(cuda);
  out.fact(r, "driver " + driver + (cuda.empty() || cuda == "N/A" ? "" : " (runs CUDA <= " + cuda + ")"));
  static const RE2 row1(
      R"(^\s*\|\s*(\d+)\s+(.+?)\s+(On|Off|WDDM|TCC)\s*\|\s*([0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+\S+\s*\|\s*(\S*)\s*\|)");
  static const RE2 row2(R"(^\s*\|.*?\|\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*\S+\s+(.+?)\s*\|)");
  GpuInfo* current = nullptr;
  uint64_t last = lines[start].number;
  size_t end = std::min(lines.size(), start + out.limits().max_block);
  std::string index, name, persistence, bus, ecc, used, total, mode;
  for (size_t i = start + 1; i < end; ++i) {
    const ReportLine& l = lines[i];
    std::string_view t = trim(l.text);
    if (l.fence || (!t.starts_with("|") && !t.starts_with("+"))) break;
    if (t.find("Processes:") != std::string_view::npos) break;
    last = l.number;
    if (RE2::PartialMatch(l.text, row1, &index, &name, &persistence, &bus, &ecc)) {
      current = out.gpu(std::atoi(index.c_str()), name);
      if (!current) continue;
      if (current->pci_bus_id.empty()) current->pci_bus_id = bus;
      if (persistence == "On" || persistence == "Off") current->persistence_mode = to_lower(persistence);
      if (!ecc.empty() && ecc.find_first_not_of("0123456789") == std::string::npos && ecc.size() < 10)
        current->ecc_uncorrected_volatile = std::atoll(ecc.c_str());
      out.fact(r, fmt::format("GPU {}: {}{}{}", index, name,
                              current->cc_major ? fmt::format(" (sm_{}{})", current->cc_major, current->cc_minor) : "",
                              current->ecc_uncorrected_volatile > 0 ? fmt::format(", {} uncorrectable ECC errors", ecc) : ""));
    } else if (current && RE2::PartialMatch(l.text, row2, &used, &total, &mode)) {
      if (used.size() < 10 && total.size() < 10) {
        current->memory_used_mib = std::strtoull(used.c_str(), nullptr, 10);
        current->memory_total_mib = std::strtoull(total.c_str(), nullptr, 10);
      }
      std::string m = compute_mode(mode);
      if (!m.empty()) current->compute_mode = m;
      if (m == "prohibited" || m == "exclusive_process") out.fact(r, fmt::format("GPU {} compute mode {}", current->nvml_index, m));
      current = nullptr;
    }
  }
  out.end_report(r, last);
}

}  // namespace

void parse_nvidia_smi(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  static const RE2 nvml_lib(R"(^\s*NVML library version:\s*(\d+\.\d+(?:\.\d+)?))");
  std::string version;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = lines[i].text;
    if (t.find("NVIDIA-SMI") != std::string_view::npos && RE2::PartialMatch(t, header())) {
      read_table(lines, i, out);
    } else if (t.find("NVML library version") != std::string_view::npos && RE2::PartialMatch(t, nvml_lib, &version)) {
      // The line nvidia-smi prints after "Failed to initialize NVML: Driver/library version mismatch".
      size_t r = out.add_report("nvidia-smi", lines[i].number, lines[i].number);
      out.nvml_library_version(version);
      out.fact(r, "NVML library " + version + " (Driver/library version mismatch)");
    }
  }
}

}  // namespace cd
