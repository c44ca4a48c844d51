#pragma once
// `ps` renderers (report/ps_text.cpp).
#include "report/report.hpp"

namespace cd {

// Per GPU: memory and its processes; the device-file holders without a context; the
// warnings and errors in full (all findings with -v).
std::string render_ps_text(const Model& m, const std::vector<Finding>& findings, const ReportOptions& opts);
// schema cuda-doctor/ps/v1 (docs/json-schema.md).
std::string render_ps_json(const Model& m, const std::vector<Finding>& findings);

}  // namespace cd
