#pragma once
// `cuda-doctor libs` renderers (report/libs_text.cpp).
#include <string>
#include <vector>

#include "derive/libs_view.hpp"
#include "report/report.hpp"


namespace cd {

std::string render_libs_text(const std::vector<ProcessView>& views, const std::vector<Finding>& findings, bool tree, const ReportOptions& opts);
// The "processes" array of `libs --json` (schema cuda-doctor/libs/v1, docs/json-schema.md).
nlohmann::json libs_json(const std::vector<ProcessView>& views);

}  // namespace cd
