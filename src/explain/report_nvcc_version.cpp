// `nvcc --version` / `nvcc -V`: "nvcc: NVIDIA (R) Cuda compiler driver" … "Cuda compilation
// tools, release 12.4, V12.4.131" (CUDA 7 to 13; "release 8.0, V8.0.61"). Anchor: the
// "Cuda compilation tools" line; the "V" version is the toolkit's full version.
#include <re2/re2.h>

#include "explain/report.hpp"

namespace cd {

void parse_nvcc_version(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  static const RE2 re(R"(Cuda compilation tools, release (\d+\.\d+), V(\d+\.\d+(?:\.\d+)?))");
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].text.find("Cuda compilation tools") == std::string_view::npos) continue;
    std::string release, full;
    if (!RE2::PartialMatch(lines[i].text, re, &release, &full)) continue;
    // Part of collect_env / SGLang's report ("NVCC: Cuda compilation tools…"): that report says it.
    if (lines[i].text.find("NVCC:") != std::string_view::npos) continue;
    uint64_t first = i > 0 && lines[i - 1].text.find("nvcc") != std::string_view::npos ? lines[i - 1].number : lines[i].number;
    size_t r = out.add_report("nvcc --version", first, lines[i].number);
    out.toolkit(full, "");
    out.fact(r, "nvcc " + full);
  }
}

}  // namespace cd
