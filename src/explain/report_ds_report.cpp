// DeepSpeed's `ds_report`: the op table ("async_io ....... [NO] ....... [OKAY]") and, after
// "DeepSpeed general environment info:", dotted key/value lines: "torch version
// .................... 2.1.0+cu121", "torch cuda version ............... 12.1", "torch hip
// version ................ None", "nvcc version ..................... 12.2", "deepspeed info
// ................... 0.12.6, unknown, unknown", "deepspeed wheel compiled w. ...... torch 2.1,
// cuda 12.1". Anchor: the "DeepSpeed general environment info" line.
#include <fmt/format.h>
#include <re2/re2.h>

#include "explain/report.hpp"
#include "util/strings.hpp"

namespace cd {

void parse_ds_report(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].text.find("DeepSpeed general environment info") == std::string_view::npos) continue;
    size_t r = out.add_report("ds_report", lines[i].number, lines[i].number);
    std::string key, value, torch_version, torch_cuda;
    bool cuda_known = false;
    uint64_t last = lines[i].number, torch_line = lines[i].number;
    size_t end = std::min(lines.size(), i + 40);
    for (size_t j = i + 1; j < end; ++j) {
      const ReportLine& l = lines[j];
      out.at(l.number);
      if (l.fence) break;
      if (trim(l.text).empty()) continue;
      if (l.text.find("...") == std::string_view::npos || !report_key_value(l.text, key, value)) break;
      last = l.number;
      if (key == "torch version") {
        torch_version = value;
      } else if (key == "torch cuda version") {
        torch_line = l.number;
        torch_cuda = std::string(report_value(value));
        cuda_known = to_lower(trim(value)) == "none" || !torch_cuda.empty();
      } else if (key == "torch hip version" && !report_value(value).empty()) {
        out.fact(r, "torch HIP " + value);
      } else if (key == "nvcc version" && !report_value(value).empty()) {
        out.toolkit(value, "nvcc version");
        out.fact(r, "nvcc " + value);
      } else if (key == "deepspeed info") {
        std::string v(trim(value.substr(0, value.find(','))));
        out.package("deepspeed", v, "pip");
        out.fact(r, "deepspeed " + v);
      } else if (key == "deepspeed wheel compiled w.") {
        out.fact(r, "deepspeed wheel compiled with " + value);
      }
    }
    out.at(torch_line);
    out.torch(torch_version, torch_cuda, cuda_known);
    if (!torch_version.empty())
      out.fact(r, fmt::format("torch {}{}", torch_version, cuda_known ? (torch_cuda.empty() ? " (CPU build)" : " (CUDA " + torch_cuda + ")") : ""));
    out.end_report(r, last);
  }
}

}  // namespace cd
