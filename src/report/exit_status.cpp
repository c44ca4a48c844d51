// Exit statuses: one policy for every subcommand (exit_status.hpp).
#include "report/exit_status.hpp"

#include "util/errors.hpp"

namespace cd {

int exit_status(const std::vector<Finding>& findings, bool strict) {
  Severity w = worst(findings);
  if (w == Severity::error) return exit_code::errors;
  if (w == Severity::warning && strict) return exit_code::warnings;
  return exit_code::ok;
}

int exit_status(const std::vector<Finding>& findings, bool strict, bool could_not_run) {
  int status = exit_status(findings, strict);
  return status == exit_code::ok && could_not_run ? exit_code::cannot_run : status;
}

std::string scan_could_not_run(const ScanReport& r) {
  if (r.binaries.size() == 1 && !r.binaries[0].error.empty()) return r.binaries[0].error;
  if (r.stats.files_examined == 0 && !r.stats.walk_errors.empty()) return r.stats.walk_errors.front();
  return {};
}

std::string gpus_could_not_run(const DriverFacts& d, bool other_root) {
  for (const auto& g : d.gpus)
    if (g.nvml_index >= 0) return {};  // the processes come from NVML: a GPU only cuInit knows is not enough
  if (other_root) return "no GPU to list: --root reads files only, and GPU processes need this machine's live driver";
  if (!d.query_error.empty()) return "no GPU to list: the NVIDIA driver query failed: " + d.query_error;
  if (!d.nvml_error.empty())
    return std::string("no GPU to list: ") + (d.module_loaded ? "" : "no NVIDIA driver is loaded; ") + "NVML: " + d.nvml_error;
  return d.module_loaded ? "no GPU to list: the NVIDIA driver reports no GPU" : "no GPU to list: no NVIDIA driver is loaded";
}

int explain_command_exit_status(const LogFacts& command, int findings_status, bool findings_exit) {
  bool failed = command.command_signal != 0 || command.command_exit != 0 || !command.command_error.empty();
  if (findings_exit || !failed) return findings_status;
  if (command.command_signal != 0) return 128 + command.command_signal;
  return command.command_exit > 0 ? command.command_exit : exit_code::cannot_run;  // -1: it never exited normally
}

}  // namespace cd
