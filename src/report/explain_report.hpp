#pragma once
// `explain` output: what was read (a log file, stdin or a command), then the findings, or a
// line saying no known signature matched (explain never guesses a cause).
#include <string>
#include <vector>

#include "facts/facts.hpp"
#include "facts/finding.hpp"
#include "facts/log.hpp"
#include "facts/report.hpp"
#include "report/report.hpp"

namespace cd {

// Pasted environment reports found in the log are listed after the header, each with the facts it showed.
std::string render_explain_text(const LogFacts& log, const std::vector<Finding>& findings, const ReportOptions& opts,
                                const std::vector<EnvReport>& reports = {});
std::string render_explain_markdown(const LogFacts& log, const std::vector<Finding>& findings,
                                    const std::vector<EnvReport>& reports = {});
// The "explain" findings document (schema cuda-doctor/explain/v1) with the log under "log" and,
// when the log carried environment reports, them under "reports" and the partial facts parsed
// from them under "report_facts".
std::string render_explain_json(const LogFacts& log, const std::vector<Finding>& findings,
                                const std::vector<EnvReport>& reports = {}, const Facts* report_facts = nullptr);

}  // namespace cd
