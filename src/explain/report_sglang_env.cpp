// `python3 -m sglang.check_env`: "Python: 3.10.12 (main…)", "CUDA available: True",
// "GPU 0,1,2,3: NVIDIA A100-SXM4-80GB", "GPU 0,1,2,3 Compute Capability: 8.0" (since 0.2.10),
// "CUDA_HOME: /usr/local/cuda", "NVCC: Cuda compilation tools, release 12.1, V12.1.105",
// "CUDA Driver Version: 550.90.07", "PyTorch: 2.3.1+cu121", then "package: version" lines
// ("Module Not Found" for absent ones) up to "NVIDIA Topology:". Anchor: "CUDA Driver Version:"
// or "PyTorch: " next to "CUDA available:"; the block starts at the "Python:" line before it.
#include <fmt/format.h>
#include <re2/re2.h>

#include "explain/report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

const RE2& anchor() {
  static const RE2 re(R"(^\s*CUDA available:\s*(True|False)\s*$)");
  return re;
}

// "0,1,2,3" -> {0,1,2,3}
std::vector<int> indices(std::string_view list) {
  std::vector<int> out;
  for (const auto& s : split(list, ','))
    if (auto v = std::atoi(std::string(trim(s)).c_str()); v >= 0 && out.size() < 256 && !trim(s).empty()) out.push_back(v);
  return out;
}

void read_block(const std::vector<ReportLine>& lines, size_t at, ReportBuilder& out) {
  size_t start = at > 0 && lines[at - 1].text.find("Python:") != std::string_view::npos ? at - 1 : at;
  size_t r = out.add_report("sglang check_env", lines[start].number, lines[at].number);
  static const RE2 gpu_re(R"(^\s*GPU ([\d,]+):\s*(.+?)\s*$)");
  static const RE2 cc_re(R"(^\s*GPU ([\d,]+) Compute Capability:\s*(\d+)\.(\d+))");
  static const RE2 nvcc_re(R"(release \d+\.\d+, V(\d+\.\d+\.\d+))");
  static const RE2 pkg_re(R"(^\s*([A-Za-z][A-Za-z0-9_.\-]{0,63}):\s*(\d[^\s]*)\s*$)");
  std::string key, value, list, name, nvcc;
  int major = 0, minor = 0;
  uint64_t last = lines[at].number;
  bool sglang_seen = false;
  size_t end = std::min(lines.size(), at + 200);
  for (size_t i = start; i < end; ++i) {
    const ReportLine& l = lines[i];
    out.at(l.number);
    if (l.fence || (i > at && RE2::PartialMatch(l.text, anchor()))) break;
    if (l.text.find("NVIDIA Topology") != std::string_view::npos) break;
    if (trim(l.text).empty()) continue;
    last = l.number;
    if (RE2::PartialMatch(l.text, cc_re, &list, &major, &minor)) {
      for (int idx : indices(list))
        if (GpuInfo* g = out.gpu(idx, "")) out.set_cc(*g, major, minor);
      out.fact(r, fmt::format("GPU {} compute capability {}.{}", list, major, minor));
    } else if (RE2::PartialMatch(l.text, gpu_re, &list, &name)) {
      for (int idx : indices(list))
        if (GpuInfo* g = out.gpu(idx, name)) out.name_gpu(*g, name);
      out.fact(r, fmt::format("GPU {}: {}", list, name));
    } else if (report_key_value(l.text, key, value)) {
      if (key == "cuda driver version") {
        out.driver_version(value);
        out.fact(r, "driver " + value);
      } else if (key == "nvcc") {
        if (RE2::PartialMatch(value, nvcc_re, &nvcc)) out.toolkit(nvcc, "NVCC"), out.fact(r, "nvcc " + nvcc);
      } else if (key == "pytorch") {
        out.torch(value, "", false);
        out.fact(r, "torch " + value);
      } else if (key == "python") {
        out.python_version(value);
      } else if (key == "cuda_home") {
        out.env("CUDA_HOME", value);
      } else if (RE2::FullMatch(l.text, pkg_re, &name, &value)) {
        out.package(name, value, "pip");
        if (name == "sglang") sglang_seen = true, out.fact(r, "sglang " + value);
      }
    }
  }
  (void)sglang_seen;
  out.end_report(r, last);
}

}  // namespace

void parse_sglang_env(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].text.find("CUDA available") == std::string_view::npos || !RE2::PartialMatch(lines[i].text, anchor())) continue;
    // SGLang's report, not a printout that happens to say "CUDA available: True": a
    // "CUDA Driver Version:" or "PyTorch:" line follows within a few lines.
    bool sglang = false;
    for (size_t j = i + 1; j < std::min(lines.size(), i + 12) && !sglang; ++j)
      sglang = lines[j].text.find("CUDA Driver Version:") != std::string_view::npos ||
               lines[j].text.starts_with("PyTorch: ");
    if (sglang) read_block(lines, i, out);
  }
}

}  // namespace cd
