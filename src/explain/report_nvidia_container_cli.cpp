// `nvidia-container-cli info` (asked for in every nvidia-docker / container-toolkit bug
// template, often with `-k -d /dev/tty` so its I/W log lines surround it):
//   NVRM version:   440.44
//   CUDA version:   10.2
//
//   Device Index:   0
//   Device Minor:   0
//   Model:          TITAN Xp
//   ...
//   Architecture:   6.1
// "NVRM version" is what NVML reports as the driver version (the user-space library's) and
// "CUDA version" the newest CUDA that driver runs; each device block gives the GPU's name and
// its compute capability. Anchor: "NVRM version:" followed by a bare version (the
// /proc/driver/nvidia/version line names the kernel module instead and is read elsewhere).
#include <fmt/format.h>
#include <re2/re2.h>

#include "explain/report.hpp"
#include "util/strings.hpp"

namespace cd {

void parse_nvidia_container_cli(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  static const RE2 anchor(R"(^\s*NVRM version:\s+(\d+\.\d+(?:\.\d+)?)\s*$)");
  static const RE2 cuda(R"(^\s*CUDA version:\s+(\d+\.\d+)\s*$)");
  static const RE2 index(R"(^\s*Device Index:\s+(\d{1,4})\s*$)");
  static const RE2 model(R"(^\s*Model:\s+(\S.*?)\s*$)");
  static const RE2 arch(R"(^\s*Architecture:\s+(\d{1,2})\.(\d)\s*$)");
  std::string version, value;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].text.find("NVRM version:") == std::string_view::npos ||
        !RE2::FullMatch(lines[i].text, anchor, &version))
      continue;
    size_t r = out.add_report("nvidia-container-cli info", lines[i].number, lines[i].number);
    out.driver_version(version);
    std::string driver_cuda;
    uint64_t last = lines[i].number;
    GpuInfo* g = nullptr;
    int major = 0, minor = 0, n = -1;
    std::string name;
    auto finish_device = [&] {
      if (!g) return;
      if (!name.empty()) out.name_gpu(*g, name);
      if (major > 0) out.set_cc(*g, major, minor);
      out.fact(r, fmt::format("GPU {}: {}{}", g->nvml_index, g->name,
                              g->cc_major ? fmt::format(" (sm_{}{})", g->cc_major, g->cc_minor) : ""));
      g = nullptr, name.clear(), major = minor = 0;
    };
    size_t end = std::min(lines.size(), i + 1 + out.limits().max_block);
    for (size_t j = i + 1; j < end; ++j) {
      const ReportLine& l = lines[j];
      out.at(l.number);
      if (l.fence) break;
      std::string_view t = trim(l.text);
      if (t.empty()) continue;
      if (RE2::FullMatch(l.text, cuda, &value)) {
        if (driver_cuda.empty()) driver_cuda = value, out.driver_cuda(value);
      } else if (RE2::FullMatch(l.text, index, &n)) {
        finish_device();
        g = out.gpu(n, "");
      } else if (g && RE2::FullMatch(l.text, model, &value)) {
        name = value;
      } else if (g && RE2::FullMatch(l.text, arch, &major, &minor)) {
      } else {
        // The block's other "Key:   value" lines; anything else (a log line, prose) ends it.
        std::string k, v;
        if (!report_key_value(l.text, k, v) ||
            !(k == "device minor" || k == "brand" || k == "gpu uuid" || k == "bus location"))
          break;
      }
      last = l.number;
    }
    finish_device();
    out.fact(r, "driver " + version + (driver_cuda.empty() ? "" : " (runs CUDA <= " + driver_cuda + ")"));
    out.end_report(r, last);
  }
}

}  // namespace cd
