// `python -m torch.utils.collect_env` (and the copies vLLM and others ship), every format
// since torch 0.4: "PyTorch version: 1.0.0" … "Nvidia driver version: 410.79" in the old
// flat form, the same keys padded to a column ("PyTorch version              : 2.5.1+cu124")
// under "=== System Info ===" banners in vLLM ≥ 0.8, GPU lists on the key's line or on the
// lines after it, "[pip3] torch==…" / "[conda] pytorch 1.10.2 py3.7_cuda10.2… pytorch" rows.
// Anchor: a "PyTorch version" key; the block runs to a fence, the next anchor or max_block lines.
#include <fmt/format.h>
#include <re2/re2.h>

#include "explain/report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

const RE2& anchor() {
  static const RE2 re(R"(^\s*PyTorch version\s*(?::\s*|\s+)(\d\S*))");
  return re;
}
const RE2& gpu_line() {  // "GPU 0: NVIDIA GeForce RTX 3090" (optionally after the key)
  static const RE2 re(R"(^\s*GPU (\d+):\s*(.+?)\s*(?:\(UUID:.*)?$)");
  return re;
}
const RE2& pip_row() {  // "[pip3] torch==2.0.0+cu118", "[pip] numpy==1.24.1"
  static const RE2 re(R"(^\s*\[pip3?\]\s+([A-Za-z0-9_.\-]+)==(\d\S*))");
  return re;
}
const RE2& conda_row() {  // "[conda] pytorch  1.10.2  py3.7_cuda10.2_cudnn7.6.5_0  pytorch"
  static const RE2 re(R"(^\s*\[conda\]\s+([A-Za-z0-9_.\-]+)\s+(\d\S*)(?:\s+(\S+))?)");
  return re;
}

struct Block {
  size_t report;
  std::string torch_version, torch_cuda;
  bool cuda_known = false;
  bool in_gpus = false;
  uint64_t torch_line = 0;  // "CUDA used to build PyTorch" (else the anchor)
};

void read_gpu(std::string_view text, ReportBuilder& out, Block& b) {
  int index = 0;
  std::string name;
  if (!RE2::PartialMatch(text, gpu_line(), &index, &name)) return;
  if (GpuInfo* g = out.gpu(index, name))
    out.fact(b.report, fmt::format("GPU {}: {}{}", index, g->name,
                                   g->cc_major ? fmt::format(" (sm_{}{})", g->cc_major, g->cc_minor) : ""));
}

// One "key: value" line of the block.
void read_key(const std::string& key, const std::string& value, ReportBuilder& out, Block& b) {
  std::string_view v = report_value(value);
  if (key == "cuda used to build pytorch") {
    b.torch_cuda = std::string(v);
    b.cuda_known = to_lower(trim(value)) == "none" || !v.empty();
  } else if (key == "rocm used to build pytorch" && !v.empty()) {
    out.fact(b.report, "ROCm build " + std::string(v));
  } else if (key == "os") {
    out.os(v);
  } else if (key == "python version") {
    out.python_version(v);
  } else if (key == "python platform") {
    out.kernel(v);
  } else if (key == "is cuda available") {
    out.cuda_available(to_lower(v) == "true" || to_lower(v) == "yes");
    out.fact(b.report, "CUDA available: " + std::string(v));
  } else if (key == "cuda runtime version" && !v.empty()) {
    out.toolkit(v, "CUDA runtime version, i.e. nvcc --version");
    out.fact(b.report, "nvcc " + std::string(v));
  } else if (key == "nvidia driver version" && !v.empty()) {
    out.driver_version(v);
    out.fact(b.report, "driver " + std::string(v));
  } else if (key == "gpu models and configuration") {
    b.in_gpus = true;
    if (!v.empty()) read_gpu(v, out, b);
  }
}

void read_block(const std::vector<ReportLine>& lines, size_t start, ReportBuilder& out) {
  std::string torch;
  RE2::PartialMatch(lines[start].text, anchor(), &torch);
  Block b;
  b.report = out.add_report("collect_env", lines[start].number, lines[start].number);
  b.torch_version = torch;
  size_t end = std::min(lines.size(), start + out.limits().max_block);
  size_t last = start;
  std::string key, value, name, version, build;
  for (size_t i = start + 1; i < end; ++i) {
    const ReportLine& l = lines[i];
    out.at(l.number);
    if (l.fence || RE2::PartialMatch(l.text, anchor())) break;
    if (trim(l.text).empty()) {
      b.in_gpus = false;
      continue;
    }
    last = i;
    if (b.in_gpus && RE2::PartialMatch(l.text, gpu_line())) {
      read_gpu(l.text, out, b);
      continue;
    }
    b.in_gpus = false;
    if (RE2::PartialMatch(l.text, pip_row(), &name, &version)) {
      out.package(name, version, "pip");
    } else if (RE2::PartialMatch(l.text, conda_row(), &name, &version, &build)) {
      // conda's pytorch package names its CUDA in the build string: py3.7_cuda10.2_cudnn7.6.5_0
      if (name == "pytorch") {
        std::string cuda;
        static const RE2 cuda_build(R"(cuda(\d+\.\d+))");
        if (RE2::PartialMatch(build, cuda_build, &cuda) && !b.cuda_known) b.torch_cuda = cuda, b.cuda_known = true;
        out.package("torch", version, "conda");
      } else {
        out.package(name, version, "conda");
      }
    } else if (report_key_value(l.text, key, value)) {
      if (key == "cuda used to build pytorch") b.torch_line = l.number;
      read_key(key, value, out, b);
    }
  }
  out.at(b.torch_line ? b.torch_line : lines[start].number);
  out.torch(b.torch_version, b.torch_cuda, b.cuda_known);
  if (!report_value(b.torch_version).empty())
    out.fact(b.report, fmt::format("torch {}{}", b.torch_version,
                                   b.cuda_known ? (b.torch_cuda.empty() ? " (CPU build)" : " (CUDA " + b.torch_cuda + ")") : ""));
  out.end_report(b.report, lines[last].number);
}

}  // namespace

void parse_collect_env(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].text.find("PyTorch version") != std::string_view::npos && RE2::PartialMatch(lines[i].text, anchor()))
      read_block(lines, i, out);
}

}  // namespace cd
