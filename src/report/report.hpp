#pragma once
// Renderers: model (facts and derived values) + findings -> text / JSON / Markdown. No logic
// about what is wrong, no derived values of their own.
#include <string>
#include <string_view>
#include <vector>

#include "derive/model.hpp"
#include "facts/finding.hpp"
#include "util/term.hpp"

namespace cd {

struct ReportOptions {
  Style style = Style::plain();
  int verbose = 0;
};

struct Checklist;

// `check`: the checklist on one screen, each error and warning with its first fix (check_summary.cpp).
std::string render_check_summary(const Model& model, const Checklist& checklist, const ReportOptions& opts);
// `check -v`: the four layers side by side, then every finding in full, errors first (check_text.cpp).
std::string render_check_text(const Model& model, const std::vector<Finding>& findings, const ReportOptions& opts);
std::string render_check_markdown(const Model& model, const std::vector<Finding>& findings);

// Findings alone (explain, verify, scan): grouped by severity, each with evidence and fix.
std::string render_findings_text(const std::vector<Finding>& findings, const ReportOptions& opts);
std::string render_findings_markdown(const std::vector<Finding>& findings);
// One line: "2 errors, 1 warning, 3 info".
std::string summary_line(const std::vector<Finding>& findings);

// {"schema": "cuda-doctor/<kind>/v1", "summary": …, "findings": […], <extra>…}
std::string render_json(std::string_view kind, const std::vector<Finding>& findings, const nlohmann::json& extra);

}  // namespace cd
