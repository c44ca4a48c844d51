// vLLM's `python collect_env.py` / `vllm collect-env`: torch's collect_env (parsed by
// report_collect_env.cpp) plus "vLLM Version: 0.6.3" (padded to a column since 0.8:
// "vLLM Version                 : 0.8.5.post1"), "vLLM Build Flags:" with "CUDA Archs: …",
// the nvidia-smi topology (report_nvidia_smi_topo.cpp) and, since 0.6.4, an
// "Environment Variables:" list of NAME=value lines. Anchor: the "vLLM Version" key.
#include <fmt/format.h>
#include <re2/re2.h>

#include "explain/report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

const RE2& anchor() {
  static const RE2 re(R"(^\s*vLLM Version\s*:\s*(\S+))");
  return re;
}

void read_block(const std::vector<ReportLine>& lines, size_t start, ReportBuilder& out) {
  std::string version, archs, name, value;
  RE2::PartialMatch(lines[start].text, anchor(), &version);
  size_t r = out.add_report("vllm collect_env", lines[start].number, lines[start].number);
  out.package("vllm", version, "pip");
  out.fact(r, "vllm " + version);
  static const RE2 arch_re(R"(CUDA Archs:\s*([^;]+))");
  static const RE2 env_re(R"(^\s*([A-Z][A-Z0-9_]{1,63})=(.*)$)");
  static const RE2 next_report(R"(^\s*(PyTorch version|vLLM Version)\s*:)");
  size_t end = std::min(lines.size(), start + out.limits().max_block);
  uint64_t last = lines[start].number;
  for (size_t i = start + 1; i < end; ++i) {
    const ReportLine& l = lines[i];
    out.at(l.number);
    if (l.fence || RE2::PartialMatch(l.text, next_report)) break;
    if (trim(l.text).empty()) continue;
    last = l.number;
    if (RE2::PartialMatch(l.text, arch_re, &archs)) {
      std::string a(trim(archs));
      if (!report_value(a).empty()) out.fact(r, "vLLM built for CUDA archs " + a);
    } else if (RE2::PartialMatch(l.text, env_re, &name, &value)) {
      out.env(name, value);
      if (name == "CUDA_VISIBLE_DEVICES" || name == "TORCH_CUDA_ARCH_LIST") out.fact(r, name + "=" + value);
    }
  }
  out.end_report(r, last);
}

}  // namespace

void parse_vllm_env(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].text.find("vLLM Version") != std::string_view::npos && RE2::PartialMatch(lines[i].text, anchor()))
      read_block(lines, i, out);
}

}  // namespace cd
