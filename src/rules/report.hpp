#pragma once
// explain's rules when the log carries pasted environment reports (rules/report.cpp).
#include <vector>

#include "derive/model.hpp"
#include "facts/finding.hpp"
#include "facts/report.hpp"
#include "kb/kb.hpp"

namespace cd {

// check's rules on the partial facts of pasted environment reports (m.facts are the reports'),
// kept only where they conclude from what a report shows; each names the reports it came from.
std::vector<Finding> report_rules(const Model& m, const Kb& kb, const std::vector<EnvReport>& reports);
// explain's findings: log_rules, then (when `reports` is not empty, so m.facts are theirs)
// report_rules whose id the log did not already give; errors first, the log's cause ahead of
// equal severities.
std::vector<Finding> explain_rules(const Model& m, const Kb& kb, const std::vector<EnvReport>& reports);

}  // namespace cd
