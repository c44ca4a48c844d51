#pragma once
// The exit status of every subcommand, decided here and nowhere else (docs/usage.md
// "Exit codes"; the numbers are util/errors.hpp exit_code::):
//   0  nothing wrong: ok and info findings, warnings unless --strict
//   1  warnings, only with --strict
//   2  at least one error finding
//   3  the tool could not run: bad arguments or unreadable input (main.cpp for thrown
//      UsageError/InputError), or a run that had nothing to work on (`could_not_run`)
// One exception, documented in docs/explain.md: `explain -- CMD` keeps the command's status.
#include <string>
#include <vector>

#include "facts/driver.hpp"
#include "facts/finding.hpp"
#include "facts/log.hpp"
#include "report/scan_report.hpp"

namespace cd {

// 0 / 1 (warnings with --strict) / 2 (an error), from the worst finding.
int exit_status(const std::vector<Finding>& findings, bool strict);
// The same, but 3 when the findings leave 0 and the run could not do its job at all (scan
// read nothing; bench measured nothing): "no findings" must not read as "healthy".
int exit_status(const std::vector<Finding>& findings, bool strict, bool could_not_run);

// scan: why nothing could be read — every path named was missing or unreadable, or the one
// file named could not be read; "" when something was read.
std::string scan_could_not_run(const ScanReport& r);

// ps / watch: why there is nothing to show — no GPU answered (no driver, NVML failed or hung,
// --root, which reads files only, or only cuInit answered); "" when NVML listed at least one GPU.
std::string gpus_could_not_run(const DriverFacts& d, bool other_root);

// explain -- CMD: the command's own status when it failed (128+N when signal N ended it, as
// a shell reports it), so wrapping a job keeps its result for scripts and CI; the findings'
// status when it succeeded, and always with --findings-exit.
int explain_command_exit_status(const LogFacts& command, int findings_status, bool findings_exit);

}  // namespace cd
