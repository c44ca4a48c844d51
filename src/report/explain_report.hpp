#pragma once
// `explain` output: what was read (a log file, stdin or a command), then the findings, or a
// line saying no known signature matched (explain never guesses a cause).
#include <string>
#include <vector>

#include "facts/finding.hpp"
#include "facts/log.hpp"
#include "report/report.hpp"

namespace cd {

std::string render_explain_text(const LogFacts& log, const std::vector<Finding>& findings, const ReportOptions& opts);
std::string render_explain_markdown(const LogFacts& log, const std::vector<Finding>& findings);
// The "explain" findings document (schema cuda-doctor/explain/v1) with the log under "log".
std::string render_explain_json(const LogFacts& log, const std::vector<Finding>& findings);

}  // namespace cd
