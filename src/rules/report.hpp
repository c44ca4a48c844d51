#pragma once
// explain's rules when the log carries pasted environment reports (rules/report.cpp).
#include <map>
#include <string>
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
// equal severities. With reports, every evidence line whose source names a live-machine query
// (NVML, cuDriverGetVersion, the loader emulation, …) is relabelled with the place in the
// log the fact was read from (`sources`: ReportBuilder::sources, "nvidia-smi line 37").
std::vector<Finding> explain_rules(const Model& m, const Kb& kb, const std::vector<EnvReport>& reports,
                                   const std::map<std::string, std::string>& sources = {});
// The source label of a fact a report gave, for an evidence line that `live_source` (a
// check rule's label for the same fact on a live machine) would name; "" when the label is
// not one of a live machine's (a document, the knowledge base, the log file itself).
std::string report_source_label(const std::string& live_source, const std::string& fact, const std::string& subject,
                                const std::map<std::string, std::string>& sources);

}  // namespace cd
