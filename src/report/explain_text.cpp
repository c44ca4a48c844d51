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

}  // namespace

std::string render_explain_text(const LogFacts& log, const std::vector<Finding>& findings, const ReportOptions& opts) {
  std::string out = fmt::format("cuda-doctor explain: {} ({} lines)\n\n", what_was_read(log), log.lines);
  if (findings.empty()) return out + "  No known CUDA error signature found: nothing to explain (cuda-doctor never guesses a cause).\n";
  return out + render_findings_text(findings, opts) + "  " + summary_line(findings) + "\n";
}

std::string render_explain_markdown(const LogFacts& log, const std::vector<Finding>& findings) {
  std::string out = fmt::format("## cuda-doctor explain: `{}`\n\n{} lines read, {} signature matches.\n\n", what_was_read(log),
                                log.lines, log.events.size() + log.events_dropped);
  return out + (findings.empty() ? "No known CUDA error signature found: nothing to explain.\n" : render_findings_markdown(findings));
}

std::string render_explain_json(const LogFacts& log, const std::vector<Finding>& findings) {
  return render_json("explain", findings, {{"log", log}}) + "\n";
}

}  // namespace cd
