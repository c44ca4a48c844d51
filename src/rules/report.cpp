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
#include <re2/re2.h>

#include "rules/report.hpp"
#include "rules/rules.hpp"
#include "util/strings.hpp"

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

std::string lookup(const std::map<std::string, std::string>& sources, const std::string& key) {
  auto it = sources.find(key);
  return it == sources.end() ? std::string() : it->second;
}

// The first source whose key starts with `prefix` (the first GPU, any library).
std::string first_with(const std::map<std::string, std::string>& sources, const std::string& prefix) {
  auto it = sources.lower_bound(prefix);
  return it != sources.end() && it->first.starts_with(prefix) ? it->second : std::string();
}

// "GPU 3" in the evidence text or the finding's subject: the GPU it is about.
std::string gpu_key(const std::string& fact, const std::string& subject) {
  static const RE2 re(R"(\bGPU (\d+)\b)");
  std::string n;
  if (RE2::PartialMatch(fact, re, &n) || RE2::PartialMatch(subject, re, &n)) return "gpu." + n;
  return "";
}

std::string gpu_label(const std::string& fact, const std::string& subject, const std::string& what,
                      const std::map<std::string, std::string>& sources) {
  std::string key = gpu_key(fact, subject);
  std::string s;
  if (!key.empty() && !what.empty()) s = lookup(sources, key + "." + what);
  if (s.empty() && !key.empty()) s = lookup(sources, key);
  if (s.empty() && !what.empty()) {  // the one GPU a report showed that detail of
    for (const auto& [k, v] : sources)
      if (k.starts_with("gpu.") && k.ends_with("." + what)) return v;
  }
  return s.empty() ? first_with(sources, "gpu.") : s;
}

}  // namespace

std::string report_source_label(const std::string& live, const std::string& fact, const std::string& subject,
                                const std::map<std::string, std::string>& sources) {
  // "NVML" labels the driver's version and the GPUs NVML lists alike.
  if (live == "NVML") return contains(fact, "driver") ? lookup(sources, "driver.version") : gpu_label(fact, subject, "", sources);
  if (live == "nvmlSystemGetDriverVersion") return lookup(sources, "driver.version");
  if (live == "nvmlSystemGetCudaDriverVersion" || live == "cuDriverGetVersion") return lookup(sources, "driver.cuda");
  if (live.starts_with("knowledge base: driver branch")) {  // the driver's CUDA from its version: say where the version came from
    std::string v = lookup(sources, "driver.version");
    return v.empty() ? "" : v + "; " + live;
  }
  if (live == "NVML / driver API (facts.driver.gpus)") return gpu_label(fact, subject, "", sources);
  static constexpr std::pair<std::string_view, std::string_view> kDevice[] = {
      {"nvmlDeviceGetTotalEccErrors", "ecc"},     {"nvmlDeviceGetRemappedRows", "remap"},
      {"nvmlDeviceGetRetiredPagesPendingStatus", "retired"}, {"nvmlDeviceGetCurrPcieLink", "link"},
      {"nvmlDeviceGetComputeMode", "compute_mode"}, {"nvmlDeviceGetPersistenceMode", "persistence"},
  };
  for (const auto& [fn, what] : kDevice)
    if (live.starts_with(fn)) return gpu_label(fact, subject, std::string(what), sources);
  if (live.starts_with("nvmlDevice")) return gpu_label(fact, subject, "", sources);
  if (live.starts_with("ld.so emulation")) {
    for (const auto& [k, v] : sources)
      if (k.starts_with("lib.") && contains(fact, k.substr(4))) return v;
    return first_with(sources, "lib.");
  }
  return "";
}

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

Findings explain_rules(const Model& m, const Kb& kb, const std::vector<EnvReport>& reports,
                       const std::map<std::string, std::string>& sources) {
  Findings out = log_rules(m, kb);
  if (reports.empty()) return out;
  std::set<std::string> have;
  for (const auto& f : out) have.insert(f.id);
  for (Finding& f : report_rules(m, kb, reports))
    if (have.insert(f.id + "\n" + f.subject).second && !have.count(f.id)) out.push_back(std::move(f));
  // The facts are the reports': name where in the log each was read, not the live query
  // that would have given it on this machine.
  for (Finding& f : out)
    for (Evidence& e : f.evidence)
      if (std::string label = report_source_label(e.source, e.fact, f.subject, sources); !label.empty()) e.source = label;
  sort_by_severity(out);
  return out;
}

}  // namespace cd
