#include <gtest/gtest.h>

#include "util/subprocess.hpp"

using namespace std::chrono_literals;

TEST(Subprocess, CapturesOutputAndExitCode) {
  auto r = cd::run_process({"sh", "-c", "echo out; echo err >&2; exit 7"});
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.describe(), "exit 7");
}

TEST(Subprocess, TimeoutKillsTheProcessGroup) {
  cd::ProcessOptions o;
  o.timeout = 300ms;
  auto r = cd::run_process({"sh", "-c", "sleep 30"}, o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.seconds, 5);
  EXPECT_NE(r.describe().find("timed out"), std::string::npos);
}

// A child that leaves something behind holding its stdout (libcuda helpers, daemons)
// must not make us wait for that something.
TEST(Subprocess, ReturnsWhenTheChildExitsEvenIfAGrandchildHoldsThePipe) {
  auto r = cd::run_process({"sh", "-c", "sleep 5 & echo hi"});
  EXPECT_EQ(r.out, "hi\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_LT(r.seconds, 2.0);
}

TEST(Subprocess, SignalsAndMissingProgramsAreReported) {
  auto crash = cd::run_process({"sh", "-c", "kill -SEGV $$"});
  EXPECT_EQ(crash.signal, 11);
  auto missing = cd::run_process({"/no/such/program"});
  EXPECT_FALSE(missing.started);
  EXPECT_NE(missing.start_error.find("/no/such/program"), std::string::npos);
}

TEST(Subprocess, IsolatedFunctionResult) {
  auto r = cd::run_isolated([] { return std::string("from child"); }, 5s);
  EXPECT_EQ(r.out, "from child");
  EXPECT_TRUE(r.ok());
}

// The driver child says "done" and then spends its exit closing GPU device files; the
// answer is complete at the done line, so the wait ends there, not at the exit.
TEST(Subprocess, DoneLineEndsTheWaitBeforeTheChildExits) {
  cd::ProcessOptions o;
  o.done_line = R"({"stage":"done")";
  auto r = cd::run_process({"sh", "-c", R"(echo '{"facts":1}'; printf '{"stage":"done","t":0.2}\n'; sleep 5; exit 3)"}, o);
  EXPECT_TRUE(r.ok());
  EXPECT_LT(r.seconds, 2.0);
  EXPECT_NE(r.out.find(R"({"facts":1})"), std::string::npos);
}

TEST(Subprocess, DoneLineCountsOnlyAtTheStartOfAWholeLine) {
  cd::ProcessOptions o;
  o.done_line = "DONE";
  // "DONE" inside a line, and a last "DONE" without its newline, are not the answer's end.
  auto r = cd::run_process({"sh", "-c", "echo 'not DONE'; sleep 0.3; printf DONE; sleep 0.3; exit 4"}, o);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_GE(r.seconds, 0.5);
}
