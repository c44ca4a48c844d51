#include "facts/finding.hpp"

#include <algorithm>

namespace cd {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::ok: return "ok";
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
  }
  return "?";
}

Severity worst(const std::vector<Finding>& findings) {
  Severity w = Severity::ok;
  for (const auto& f : findings) w = std::max(w, f.severity);
  return w;
}

void sort_by_severity(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
}

}  // namespace cd
