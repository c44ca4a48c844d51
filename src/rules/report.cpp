// check's rules on a pasted environment report (explain/report.hpp). The report's partial
// Facts go through the same derive and the same check rules as a live machine; what a report
// does not show is not an observation of absence (a collect_env without a driver line does
// not mean "no driver"), so only the rules that conclude from what is present keep their
// findings: the driver's CUDA against torch's and the toolkit's (driver.too_old /
// minor_compat), module vs library (driver.library_mismatch), the GPU's architecture against
// torch's arch list (arch.unsupported_by_framework, arch.arch_list_mismatch), a CPU-only torch,
// package pins, nvcc vs torch's CUDA, ECC / remapping / link state, a Prohibited compute mode,
// and CUDA libraries ldd could not find. Each finding says which report it came from.
#include <set>

#include <fmt/format.h>

#include "rules/report.hpp"
#include "rules/rules.hpp"

namespace cd {
namespace {

constexpr std::string_view kFromPresentFacts[] = {
    "driver.too_old",        "driver.minor_compat",          "driver.library_mismatch", "driver.persistence_off",
    "arch.unsupported_by_framework", "arch.arch_list_mismatch", "device.hardware_fault", "device.busy_or_unavailable",
    "device.degraded_link",  "framework.cpu_build",          "framework.pins_conflict", "toolkit.version_mismatch",
    "libs.not_found",
};

bool from_present_facts(const std::string& id) {
  for (std::string_view k : kFromPresentFacts)
    if (id == k) return true;
  return false;
}

std::string reports_line(const std::vector<EnvReport>& reports) {
  std::vector<std::string> parts;
  for (const auto& r : reports) {
    if (parts.size() == 6) {
      parts.push_back("…");
      break;
    }
    parts.push_back(r.first_line == r.last_line ? fmt::format("{} (line {})", r.kind, r.first_line)
                                                : fmt::format("{} (lines {}-{})", r.kind, r.first_line, r.last_line));
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

Findings report_rules(const Model& m, const Kb& kb, const std::vector<EnvReport>& reports) {
  Findings out;
  if (reports.empty()) return out;
  std::string where = "pasted " + reports_line(reports);
  for (Finding& f : check_rules(m, kb)) {
    if (!from_present_facts(f.id)) continue;
    f.evidence.insert(f.evidence.begin(), {"from the environment report in the log, not this machine: " + where, m.facts.log.source});
    out.push_back(std::move(f));
  }
  return out;
}

Findings explain_rules(const Model& m, const Kb& kb, const std::vector<EnvReport>& reports) {
  Findings out = log_rules(m, kb);
  if (reports.empty()) return out;
  std::set<std::string> have;
  for (const auto& f : out) have.insert(f.id);
  for (Finding& f : report_rules(m, kb, reports))
    if (have.insert(f.id + "\n" + f.subject).second && !have.count(f.id)) out.push_back(std::move(f));
  sort_by_severity(out);
  return out;
}

}  // namespace cd
