// `explain` renderers: a header naming what was read, then the findings.
#include <fmt/format.h>

#include "report/explain_report.hpp"
#include "util/escape.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

// The log's name as the user gave it: the file (or "-"), or the command that was run —
// escaped: a file name can hold a newline or a terminal sequence (issue 12 #7).
std::string what_was_read(const LogFacts& log) { return shown(log.command.empty() ? log.source : join(log.command, " ")); }

std::string where(const EnvReport& r) {
  return r.first_line == r.last_line ? fmt::format("line {}", r.first_line) : fmt::format("lines {}-{}", r.first_line, r.last_line);
}

// "  environment reports in the log (diagnosed as the machine they describe):" and a line each.
std::string reports_text(const std::vector<EnvReport>& reports, bool markdown) {
  if (reports.empty()) return {};
  std::string out = markdown ? "Environment reports in the log (diagnosed as the machine they describe):\n\n"
                             : "  environment reports in the log (diagnosed as the machine they describe):\n";
  for (const auto& r : reports) {
    std::vector<std::string> facts;
    for (const auto& f : r.facts) facts.push_back(shown(f));
    std::string what = facts.empty() ? std::string("nothing CUDA-related") : join(facts, " · ");
    out += markdown ? fmt::format("- `{}` ({}): {}\n", shown(r.kind), where(r), what)
                    : fmt::format("    {} ({}): {}\n", shown(r.kind), where(r), what);
  }
  return out + "\n";
}

}  // namespace

std::string render_explain_text(const LogFacts& log, const std::vector<Finding>& findings, const ReportOptions& opts,
                                const std::vector<EnvReport>& reports) {
  std::string out = fmt::format("cuda-doctor explain: {} ({} lines)\n\n", what_was_read(log), log.lines) + reports_text(reports, false);
  if (findings.empty() && !reports.empty())
    return out + "  No known CUDA error signature, and the reported environment shows nothing check would flag.\n";
  if (findings.empty()) return out + "  No known CUDA error signature found: nothing to explain (cuda-doctor never guesses a cause).\n";
  return out + render_findings_text(findings, opts) + "  " + summary_line(findings) + "\n";
}

std::string render_explain_markdown(const LogFacts& log, const std::vector<Finding>& findings,
                                    const std::vector<EnvReport>& reports) {
  std::string out = fmt::format("## cuda-doctor explain: `{}`\n\n{} lines read, {} signature matches.\n\n", what_was_read(log),
                                log.lines, log.events.size() + log.events_dropped) + reports_text(reports, true);
  return out + (findings.empty() ? "No known CUDA error signature found: nothing to explain.\n" : render_findings_markdown(findings));
}

std::string render_explain_json(const LogFacts& log, const std::vector<Finding>& findings,
                                const std::vector<EnvReport>& reports, const Facts* report_facts) {
  nlohmann::json extra = {{"log", log}};
  if (!reports.empty()) extra["reports"] = reports;
  if (report_facts) {
    nlohmann::json facts = *report_facts;
    facts.erase("log");  // the log is above; these are the reported machine's facts only
    extra["report_facts"] = std::move(facts);
  }
  return render_json("explain", findings, extra) + "\n";
}

}  // namespace cd
