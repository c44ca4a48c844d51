// report/exit_status: the one exit policy of docs/usage.md "Exit codes".
#include <gtest/gtest.h>

#include "report/exit_status.hpp"
#include "util/errors.hpp"

using namespace cd;

namespace {
std::vector<Finding> of(std::initializer_list<Severity> severities) {
  std::vector<Finding> out;
  for (Severity s : severities) out.push_back(Finding{"x.y", s, "", "", "", {}, "", {}, {}});
  return out;
}
}  // namespace

TEST(ExitStatus, WorstFindingDecidesAndWarningsNeedStrict) {
  EXPECT_EQ(exit_status({}, false), exit_code::ok);
  EXPECT_EQ(exit_status(of({Severity::ok, Severity::info}), true), exit_code::ok);
  EXPECT_EQ(exit_status(of({Severity::warning}), false), exit_code::ok);
  EXPECT_EQ(exit_status(of({Severity::warning}), true), exit_code::warnings);
  EXPECT_EQ(exit_status(of({Severity::info, Severity::error, Severity::warning}), false), exit_code::errors);
}

TEST(ExitStatus, NothingToWorkOnIsThreeUnlessFindingsSayMore) {
  EXPECT_EQ(exit_status({}, false, true), exit_code::cannot_run);
  EXPECT_EQ(exit_status(of({Severity::info}), true, true), exit_code::cannot_run);
  EXPECT_EQ(exit_status(of({Severity::error}), false, true), exit_code::errors);
  EXPECT_EQ(exit_status({}, false, false), exit_code::ok);
}

TEST(ExitStatus, ScanCouldNotRunOnlyWhenNothingWasRead) {
  ScanReport r;
  EXPECT_EQ(scan_could_not_run(r), "");
  r.stats.walk_errors = {"/nope: No such file or directory"};
  EXPECT_EQ(scan_could_not_run(r), "/nope: No such file or directory");
  r.stats.files_examined = 3;  // something was read: the missing path is a note
  EXPECT_EQ(scan_could_not_run(r), "");
  r = {};
  r.binaries.resize(1);
  r.binaries[0].error = "cannot open: Permission denied";
  EXPECT_EQ(scan_could_not_run(r), "cannot open: Permission denied");
  r.binaries.resize(2);  // one unreadable among several is a line of the report
  EXPECT_EQ(scan_could_not_run(r), "");
}

TEST(ExitStatus, ExplainCommandKeepsTheCommandsStatusWhenItFailed) {
  LogFacts cmd;
  cmd.command_exit = 0;
  EXPECT_EQ(explain_command_exit_status(cmd, exit_code::errors, false), exit_code::errors);  // a swallowed error
  cmd.command_exit = 7;
  EXPECT_EQ(explain_command_exit_status(cmd, exit_code::errors, false), 7);
  EXPECT_EQ(explain_command_exit_status(cmd, exit_code::errors, true), exit_code::errors);  // --findings-exit
  cmd.command_exit = -1, cmd.command_signal = 2;
  EXPECT_EQ(explain_command_exit_status(cmd, exit_code::ok, false), 130);
  cmd.command_signal = 0, cmd.command_error = "timed out after 1 s";
  EXPECT_EQ(explain_command_exit_status(cmd, exit_code::ok, false), exit_code::cannot_run);
}
