// `nvidia-smi -q`: "==============NVSMI LOG==============", "Driver Version : 535.104.05",
// "CUDA Version : 12.2", "Attached GPUs : 8", then per GPU a "GPU 00000000:18:00.0" header and
// indented sections ("Product Name : …", "Persistence Mode : Enabled", "FB Memory Usage" >
// "Total : 81559 MiB", "Compute Mode", "ECC Errors" > "Volatile" > "DRAM Uncorrectable : 0" — or
// "Double Bit" > "Total" before Ampere —, "Retired Pages" > "Pending Page Blacklist" / "Pending
// Page Retirement", "Remapped Rows" > "Pending" / "Remapping Failure Occurred", "GPU Link Info" >
// "PCIe Generation" / "Link Width" > "Max" / "Current"). A section is a line without " : ";
// its depth is its indentation, so a key's path is the stack of sections above it.
#include <fmt/format.h>
#include <re2/re2.h>

#include "explain/report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

size_t indent_of(std::string_view s) {
  size_t n = 0;
  for (char c : s) {
    if (c == ' ') ++n;
    else if (c == '\t') n += 4;
    else break;
  }
  return n;
}

bool has(const std::vector<std::pair<size_t, std::string>>& path, std::string_view name) {
  for (const auto& p : path)
    if (p.second == name) return true;
  return false;
}

int64_t number(std::string_view v) {
  v = trim(v);
  if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string_view::npos) return -1;
  return std::atoll(std::string(v).c_str());
}

int link_number(std::string_view v) {  // "16x", "4"
  std::string s(trim(v));
  if (!s.empty() && s.back() == 'x') s.pop_back();
  int64_t n = number(s);
  return n > 0 && n < 64 ? static_cast<int>(n) : 0;
}

struct GpuState {
  GpuInfo* gpu = nullptr;
  int64_t uncorrectable = -1;
};

void read_key(const std::vector<std::pair<size_t, std::string>>& path, const std::string& key, const std::string& value,
              GpuState& s, ReportBuilder& out, size_t r) {
  GpuInfo* g = s.gpu;
  if (!g) {
    if (key == "driver version") out.driver_version(value), out.fact(r, "driver " + value);
    else if (key == "cuda version") out.driver_cuda(value), out.fact(r, "driver runs CUDA <= " + value);
    return;
  }
  std::string v = to_lower(trim(value));
  auto mark = [&](const char* what) { out.mark(fmt::format("gpu.{}.{}", g->nvml_index, what)); };
  if (key == "product name") {
    out.name_gpu(*g, value);
  } else if (key == "persistence mode") {
    g->persistence_mode = v == "enabled" ? "on" : v == "disabled" ? "off" : "";
    mark("persistence");
  } else if (key == "compute mode") {
    g->compute_mode = v == "default" ? "default" : v == "exclusive_process" ? "exclusive_process" : v == "prohibited" ? "prohibited" : "";
    mark("compute_mode");
  } else if (key == "total" && has(path, "fb memory usage")) {
    if (int64_t n = number(value.substr(0, value.find(' '))); n >= 0) g->memory_total_mib = static_cast<uint64_t>(n);
  } else if (key == "used" && has(path, "fb memory usage")) {
    if (int64_t n = number(value.substr(0, value.find(' '))); n >= 0) g->memory_used_mib = static_cast<uint64_t>(n);
  } else if (has(path, "ecc errors") && has(path, "volatile") &&
             (contains(key, "uncorrectable") || (key == "total" && has(path, "double bit")))) {
    if (int64_t n = number(value); n >= 0) s.uncorrectable = std::max<int64_t>(s.uncorrectable, 0) + n;
    if (number(value) > 0) mark("ecc");
  } else if (has(path, "retired pages") && (key == "pending page blacklist" || key == "pending page retirement" || key == "pending")) {
    if (v == "yes" || v == "no") g->retired_pages_pending = v == "yes";
    if (v == "yes") mark("retired");
  } else if (has(path, "remapped rows") && key == "pending") {
    if (v == "yes" || v == "no") g->remapped_rows_pending = v == "yes";
    if (v == "yes") mark("remap");
  } else if (has(path, "remapped rows") && key == "remapping failure occurred") {
    if (v == "yes" || v == "no") g->remapping_failed = v == "yes";
    if (v == "yes") mark("remap");
  } else if (has(path, "pcie generation") && (key == "max" || key == "current")) {
    (key == "max" ? g->pcie_gen_max : g->pcie_gen_current) = link_number(value);
    mark("link");
  } else if (has(path, "link width") && (key == "max" || key == "current")) {
    (key == "max" ? g->pcie_width_max : g->pcie_width_current) = link_number(value);
  }
}

void finish_gpu(GpuState& s, ReportBuilder& out, size_t r) {
  if (!s.gpu) return;
  GpuInfo& g = *s.gpu;
  if (s.uncorrectable >= 0) g.ecc_uncorrected_volatile = s.uncorrectable;
  out.fact(r, fmt::format("GPU {}: {}{}{}", g.nvml_index, g.name, g.cc_major ? fmt::format(" (sm_{}{})", g.cc_major, g.cc_minor) : "",
                          g.ecc_uncorrected_volatile > 0 ? fmt::format(", {} volatile uncorrectable ECC errors", g.ecc_uncorrected_volatile) : ""));
  s = {};
}

void read_log(const std::vector<ReportLine>& lines, size_t start, ReportBuilder& out) {
  size_t r = out.add_report("nvidia-smi -q", lines[start].number, lines[start].number);
  static const RE2 gpu_header(R"(^GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$)");
  std::vector<std::pair<size_t, std::string>> path;
  GpuState s;
  int next_index = 0;
  uint64_t last = lines[start].number;
  std::string bus;
  size_t end = std::min(lines.size(), start + out.limits().max_block * 4);
  for (size_t i = start; i < end; ++i) {
    const ReportLine& l = lines[i];
    out.at(l.number);
    if (l.fence || (i > start && l.text.find("NVSMI LOG") != std::string_view::npos)) break;
    std::string_view t = trim(l.text);
    if (t.empty()) continue;
    last = l.number;
    size_t indent = indent_of(l.text);
    while (!path.empty() && path.back().first >= indent) path.pop_back();
    if (indent == 0 && RE2::FullMatch(t, gpu_header, &bus)) {
      finish_gpu(s, out, r);
      s.gpu = out.gpu(next_index++, "");
      if (s.gpu && s.gpu->pci_bus_id.empty()) s.gpu->pci_bus_id = bus;
      path.clear();
      continue;
    }
    size_t colon = t.find(" : ");
    if (colon == std::string_view::npos && t.back() == ':') colon = t.size() - 1;
    if (colon == std::string_view::npos && t.find(':') == std::string_view::npos) {
      path.push_back({indent, to_lower(t)});
      continue;
    }
    std::string key, value;
    if (!report_key_value(t, key, value)) continue;
    read_key(path, key, value, s, out, r);
  }
  finish_gpu(s, out, r);
  out.end_report(r, last);
}

}  // namespace

void parse_nvidia_smi_q(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  static const RE2 driver_line(R"(^\s*Driver Version\s+:\s*\d)");
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = lines[i].text;
    bool log = t.find("NVSMI LOG") != std::string_view::npos;
    // Without the banner: "Driver Version  : …" followed by "Attached GPUs" within a few lines.
    if (!log && t.find("Driver Version") != std::string_view::npos && RE2::PartialMatch(t, driver_line))
      for (size_t j = i + 1; j < std::min(lines.size(), i + 6) && !log; ++j)
        log = lines[j].text.find("Attached GPUs") != std::string_view::npos;
    if (!log) continue;
    read_log(lines, i, out);
    while (i + 1 < lines.size() && !lines[i + 1].fence && lines[i + 1].text.find("NVSMI LOG") == std::string_view::npos) ++i;
  }
}

}  // namespace cd
