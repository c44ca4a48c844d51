// `cat /proc/driver/nvidia/version`: "NVRM version: NVIDIA UNIX x86_64 Kernel Module
// 535.104.05  Sat Aug 19 01:15:15 UTC 2023" (the open modules: "NVIDIA UNIX Open Kernel Module
// for x86_64  570.86.15  Release Build …"; aarch64 and POWER name their arch) and "GCC
// version: …". The loaded kernel module's version; nvidia-smi's driver version is the
// user-space library's, so the two side by side show a Driver/library mismatch.
#include <re2/re2.h>

#include "explain/report.hpp"

namespace cd {

void parse_proc_driver_version(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  static const RE2 re(R"(NVRM version: NVIDIA UNIX (?:Open )?(?:\S+ )?Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)\s)");
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = lines[i].text;
    std::string version;
    if (t.find("NVRM version:") != std::string_view::npos && RE2::PartialMatch(t, re, &version)) {
      size_t r = out.add_report("/proc/driver/nvidia/version", lines[i].number, lines[i].number);
      out.module_version(version, "");
      out.fact(r, "kernel module " + version);
    }
  }
}

}  // namespace cd
