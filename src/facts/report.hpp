#pragma once
// A pasted environment report that explain found in a log (explain/report.hpp): its format,
// where it is, and the facts it showed, as the report stated them. The partial Facts parsed
// from the reports travel beside it (explain's JSON: "reports" and "report_facts").
#include <cstdint>
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

struct EnvReport {
  std::string kind;  // "collect_env", "vllm collect_env", "sglang check_env", "ds_report", "nvidia-smi", …
  uint64_t first_line = 0;
  uint64_t last_line = 0;
  std::vector<std::string> facts;  // "torch 2.7.0+cu128 (CUDA 12.8)", "GPU 0: NVIDIA GeForce GTX 1080 (sm_61)"
};
CD_JSON(EnvReport, kind, first_line, last_line, facts)

}  // namespace cd
