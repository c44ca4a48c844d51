// `nvidia-smi topo -m` (also inside vLLM's and SGLang's reports): a header row of columns
// ("\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"), one row per GPU and NIC
// with the link between each pair (X, NV#, SYS, NODE, PHB, PXB, PIX), then a "Legend:".
// Facts holds no topology, so the report records what it shows: the GPU count and the kinds
// of GPU-to-GPU links (NVLink or only PCIe/SMP paths) as evidence for the NCCL findings.
#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>
#include <re2/re2.h>

#include "explain/report.hpp"
#include "util/strings.hpp"

namespace cd {

void parse_nvidia_smi_topo(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  static const RE2 head(R"(^\s*GPU0(?:\s+GPU\d+)*\s+(?:NIC\d+|mlx\S+|CPU Affinity)(?:\s|$))");
  static const RE2 row(R"(^\s*GPU(\d+)\s+(.*)$)");
  static const RE2 link(R"(^(X|NV\d+|SYS|NODE|PHB|PXB|PIX|SOC|PSB)$)");
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = lines[i].text;
    if (t.find("GPU0") == std::string_view::npos || !RE2::PartialMatch(t, head)) continue;
    // The GPU columns of the header.
    size_t gpu_columns = 0;
    for (const auto& c : split(std::string(t), '\t')) {
      for (const auto& w : split(c, ' '))
        if (w.starts_with("GPU") && w.size() > 3 && std::isdigit(static_cast<unsigned char>(w[3]))) ++gpu_columns;
    }
    size_t r = out.add_report("nvidia-smi topo -m", lines[i].number, lines[i].number);
    std::set<std::string> kinds;
    size_t rows = 0;
    uint64_t last = lines[i].number;
    std::string idx, rest;
    size_t end = std::min(lines.size(), i + 1 + 2 * out.limits().max_gpus);
    for (size_t j = i + 1; j < end; ++j) {
      const ReportLine& l = lines[j];
      out.at(l.number);
      if (l.fence || !RE2::PartialMatch(l.text, row, &idx, &rest)) break;
      last = l.number;
      ++rows;
      std::vector<std::string> cells;
      for (const auto& c : split(rest, '\t'))
        for (const auto& w : split(c, ' '))
          if (!w.empty()) cells.push_back(w);
      for (size_t k = 0; k < cells.size() && k < gpu_columns; ++k)
        if (RE2::FullMatch(cells[k], link) && cells[k] != "X") kinds.insert(cells[k].starts_with("NV") ? "NVLink (" + cells[k] + ")" : cells[k]);
    }
    size_t gpus = std::max(rows, gpu_columns);  // the header names every GPU; a pasted excerpt may cut rows
    out.fact(r, fmt::format("{} GPU{}{}", gpus, gpus == 1 ? "" : "s",
                            kinds.empty() ? "" : "; GPU-to-GPU links: " + join({kinds.begin(), kinds.end()}, ", ")));
    out.end_report(r, last);
  }
}

}  // namespace cd
