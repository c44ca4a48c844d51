// `nvidia-smi`'s default table, every layout since the 3xx drivers:
//   | NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |
//   |   0  NVIDIA A100-SXM4-40GB      On   | 00000000:04:00.0 Off |                    0 |
//   | N/A   30C    P0    58W / 400W |   1404MiB / 40537MiB |      0%      Default |
// (older ones without "CUDA Version" and with "MB" for MiB, the 6xx header's "KMD Version" /
// "CUDA UMD Version", Windows rows with WDDM/TCC instead of On/Off, rows indented by a tab when
// pasted). The header gives the driver and the newest CUDA it runs ("CUDA Version" is the
// driver's limit, not a toolkit); each GPU its name, persistence mode, bus id, volatile
// uncorrectable ECC count, memory and compute mode. Also nvidia-smi's answer when NVML fails on
// a mismatch: "NVML library version: 580.178".
//
// The table is read as logical rows, not lines: the 91-column table of current drivers pasted
// from an 80-column terminal, or soft-wrapped by an issue tracker or a mail client, reaches a
// report with every row broken over two or more lines ("… | Volatile Un" + "corr. ECC |").
// A row starts with '|' or '+' and is whole when it ends with '|' or '+' and has as many
// column bars as the border above it; until then the lines after it are its continuation,
// joined back as the terminal cut them (glued when the line was cut at a common terminal
// width, else with a space). The fields are then read from the joined rows.
#include <fmt/format.h>
#include <re2/re2.h>

#include "explain/report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

const RE2& header() {
  static const RE2 re(
      R"(NVIDIA-SMI\s+(\d+\.\d+(?:\.\d+)?)\s+(?:Driver|KMD) Version:\s*(\d+\.\d+(?:\.\d+)?)(?:\s+CUDA (?:UMD )?Version:\s*(\d+\.\d+|N/A))?)");
  return re;
}

// The first line of a table header: "| NVIDIA-SMI 535.104.05 …", whatever follows on that line.
const RE2& header_start() {
  static const RE2 re(R"(^\s*\|\s*NVIDIA-SMI\s+\d)");
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

// Widths terminals and paste boxes cut lines at (a line of exactly that length was cut inside
// a word: its continuation is glued back without a space).
bool terminal_width(size_t n) {
  for (size_t w : {80u, 100u, 120u, 128u, 132u, 136u, 140u, 150u, 160u, 180u, 200u, 240u, 256u})
    if (n == w) return true;
  return false;
}

size_t bars(std::string_view t) {
  size_t n = 0;
  for (char c : t) n += c == '|' || c == '+';
  return n;
}

// "+----+----+", "|====+====|" (a wrapped border may carry spaces where it was joined).
bool is_border(std::string_view t) {
  size_t rules = 0;
  for (char c : t) {
    if (c == '-' || c == '=') ++rules;
    else if (c != '+' && c != '|' && c != ' ' && c != '\t') return false;
  }
  return rules >= 3;
}

struct Row {
  std::string text;
  uint64_t first = 0, last = 0;  // input line numbers
  size_t expected = 0;           // column bars of the border above it (0: none seen yet)
  size_t last_len = 0;           // length of the last physical line appended
  bool whole() const {
    std::string_view t = trim(text);
    return !t.empty() && (t.back() == '|' || t.back() == '+') && bars(t) >= expected;
  }
};

// The table's rows from lines[start] (its header) on: up to a blank line, a fence, a line
// that neither starts a row nor continues an unfinished one, or max_block lines.
std::vector<Row> table_rows(const std::vector<ReportLine>& lines, size_t start, size_t max_block) {
  std::vector<Row> rows;
  size_t expected = 0;
  size_t end = std::min(lines.size(), start + max_block);
  for (size_t i = start; i < end; ++i) {
    const ReportLine& l = lines[i];
    std::string_view t = trim(l.text);
    if (l.fence || t.empty()) break;
    bool starts = t.front() == '|' || t.front() == '+';
    if (!rows.empty() && !rows.back().whole() && rows.back().last + 1 == l.number) {
      Row& r = rows.back();
      // Each row is at most a few physical lines: a runaway join means this is no table.
      if (r.text.size() > 4096) break;
      bool glued = terminal_width(r.last_len) && !l.text.empty() && l.text.front() != ' ' && l.text.front() != '\t';
      if (glued) r.text += l.text;
      else r.text += " " + std::string(trim(l.text));
      r.last = l.number;
      r.last_len = l.text.size();
    } else if (starts) {
      if (!rows.empty() && is_border(trim(rows.back().text))) expected = bars(trim(rows.back().text));
      rows.push_back({std::string(l.text), l.number, l.number, expected, l.text.size()});
    } else {
      break;  // the table ended: this line is something else
    }
  }
  return rows;
}

void read_table(const std::vector<ReportLine>& lines, size_t start, ReportBuilder& out) {
  std::vector<Row> rows = table_rows(lines, start, out.limits().max_block);
  std::string smi, driver, cuda;
  // The header is the first row when the table starts there, else the line itself (a header
  // pasted alone, inside a sentence).
  std::string_view head = rows.empty() ? lines[start].text : std::string_view(rows.front().text);
  if (!RE2::PartialMatch(head, header(), &smi, &driver, &cuda)) return;
  size_t r = out.add_report("nvidia-smi", lines[start].number, rows.empty() ? lines[start].number : rows.front().last);
  out.driver_version(driver);
  out.driver_cuda(cuda);
  out.fact(r, "driver " + driver + (cuda.empty() || cuda == "N/A" ? "" : " (runs CUDA <= " + cuda + ")"));
  static const RE2 row1(
      R"(^\s*\|\s*(\d+)\s+(.+?)\s+(On|Off|WDDM|TCC)\s*\|\s*([0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+\S+\s*\|\s*(\S*)\s*\|)");
  static const RE2 row2(R"(^\s*\|.*?\|\s*(\d+)\s*(?:MiB|MB)\s*/\s*(\d+)\s*(?:MiB|MB)\s*\|\s*\S+\s+(.+?)\s*\|)");
  GpuInfo* current = nullptr;
  uint64_t last = rows.empty() ? lines[start].number : rows.front().last;
  std::string index, name, persistence, bus, ecc, used, total, mode;
  for (size_t k = 1; k < rows.size(); ++k) {
    const Row& row = rows[k];
    if (to_lower(row.text).find("processes:") != std::string::npos) break;
    out.at(row.first);
    last = row.last;
    if (RE2::PartialMatch(row.text, row1, &index, &name, &persistence, &bus, &ecc)) {
      current = out.gpu(std::atoi(index.c_str()), name);
      if (!current) continue;
      if (current->pci_bus_id.empty()) current->pci_bus_id = bus;
      if (persistence == "On" || persistence == "Off") {
        current->persistence_mode = to_lower(persistence);
        out.mark(fmt::format("gpu.{}.persistence", current->nvml_index));
      }
      if (!ecc.empty() && ecc.find_first_not_of("0123456789") == std::string::npos && ecc.size() < 10) {
        current->ecc_uncorrected_volatile = std::atoll(ecc.c_str());
        if (current->ecc_uncorrected_volatile > 0) out.mark(fmt::format("gpu.{}.ecc", current->nvml_index));
      }
      out.fact(r, fmt::format("GPU {}: {}{}{}", index, name,
                              current->cc_major ? fmt::format(" (sm_{}{})", current->cc_major, current->cc_minor) : "",
                              current->ecc_uncorrected_volatile > 0 ? fmt::format(", {} uncorrectable ECC errors", ecc) : ""));
    } else if (current && RE2::PartialMatch(row.text, row2, &used, &total, &mode)) {
      if (used.size() < 10 && total.size() < 10) {
        current->memory_used_mib = std::strtoull(used.c_str(), nullptr, 10);
        current->memory_total_mib = std::strtoull(total.c_str(), nullptr, 10);
      }
      std::string m = compute_mode(mode);
      if (!m.empty()) {
        current->compute_mode = m;
        out.mark(fmt::format("gpu.{}.compute_mode", current->nvml_index));
      }
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
    if (t.find("NVIDIA-SMI") != std::string_view::npos &&
        (RE2::PartialMatch(t, header_start()) || RE2::PartialMatch(t, header()))) {
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
