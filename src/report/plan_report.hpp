#pragma once
// `plan` renderers (report/plan_text.cpp): the plan derive/plan.cpp decided, printed.
#include <string>

#include "derive/plan.hpp"
#include "report/report.hpp"

namespace cd {

// The machine in one line, then each step: its mark, title, why, and the commands to paste;
// -v adds the releases passed over and every source.
std::string render_plan_text(const Plan& plan, const ReportOptions& opts);
// schema cuda-doctor/plan/v1 (docs/plan.md).
std::string render_plan_json(const Plan& plan);

}  // namespace cd
