#pragma once
// A Finding: what rules, explain and verify produce and what every report renders.
// Ids are the stable ones of docs/findings.md.
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

enum class Severity { ok = 0, info = 1, warning = 2, error = 3 };

NLOHMANN_JSON_SERIALIZE_ENUM(Severity, {{Severity::ok, "ok"}, {Severity::info, "info"}, {Severity::warning, "warning"}, {Severity::error, "error"}})

const char* severity_name(Severity s);

struct Evidence {
  std::string fact;    // "driver 535.104.05 supports CUDA ≤ 12.2"
  std::string source;  // "/proc/driver/nvidia/version", "cuDriverGetVersion", "torch/version.py"
};
CD_JSON(Evidence, fact, source)

struct Finding {
  std::string id;        // "driver.too_old"
  Severity severity = Severity::info;
  std::string layer;     // driver | device | toolkit | arch | framework | libs | nccl | memory | platform | perf
  std::string subject;   // what it is about: "GPU 0", "torch 2.5.1+cu124 in /opt/venv", a file
  std::string title;     // one line
  std::vector<Evidence> evidence;
  std::string explanation;       // one or two sentences
  std::vector<std::string> fix;  // exact commands, in order ("# ..." lines are comments)
  std::vector<std::string> consequences;  // explain: later errors caused by this one
};
CD_JSON(Finding, id, severity, layer, subject, title, evidence, explanation, fix, consequences)

// Highest severity among findings (ok when empty).
Severity worst(const std::vector<Finding>& findings);
// Sorts errors first, then warnings, info, ok; stable within a severity.
void sort_by_severity(std::vector<Finding>& findings);

}  // namespace cd
