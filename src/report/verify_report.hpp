#pragma once
// `verify` and `bench` output: the GPUs, the steps layer by layer, the measurements next to
// their expected figures (judged in derive/verify.cpp), then the findings.
#include <string>
#include <vector>

#include "derive/model.hpp"
#include "facts/finding.hpp"
#include "report/report.hpp"

namespace cd {

// verify: header, GPUs, steps, measurements, findings and the summary line.
std::string render_verify_text(const Model& m, const std::vector<Finding>& findings, const ReportOptions& opts);
// The "verify" findings document (schema cuda-doctor/verify/v1) with the run under "verify".
std::string render_verify_json(const Model& m, const std::vector<Finding>& findings);

// bench: the measurements table alone, or a line saying there is none.
std::string render_bench_text(const Model& m, const ReportOptions& opts);
// {"schema": "cuda-doctor/bench/v1", "gpus", "measurements", "seconds"}
std::string render_bench_json(const Model& m);

}  // namespace cd
