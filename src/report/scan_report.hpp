#pragma once
// `scan` output: one line per binary grouped by package (archs, PTX, verdict per GPU),
// container groups with -v, a summary line, then the arch.* findings.
#include <string>
#include <vector>

#include "binary/scan.hpp"
#include "derive/judge_targets.hpp"
#include "facts/finding.hpp"
#include "report/report.hpp"

namespace cd {

struct ScanReport {
  std::vector<BinaryScan> binaries;
  std::vector<std::vector<GpuVerdict>> verdicts;  // [binary][gpu] (binary/verdict.hpp)
  JudgeTargets targets;              // the GPUs and driver judged for, and where they came from
  ScanStats stats;
  double seconds = 0;
  std::vector<std::string> notes;    // about the run itself ("no GPU found: pass --gpu")
};

std::string render_scan_text(const ScanReport& r, const std::vector<Finding>& findings, const ReportOptions& opts);
// The "scan" JSON document (schema cuda-doctor/scan/v1; docs/scan.md).
std::string render_scan_json(const ScanReport& r, const std::vector<Finding>& findings);

}  // namespace cd
