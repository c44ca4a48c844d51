#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

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

namespace {

// Open descriptors of this process (entries of /proc/self/fd, less the one listing them).
std::set<int> open_fds() {
  std::set<int> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) out.insert(std::stoi(e.path().filename()));
  std::set<int> still;
  for (int fd : out)
    if (fcntl(fd, F_GETFD) != -1) still.insert(fd);
  return still;
}

// Lets the process open exactly `free` more descriptors: fills every gap below the highest
// open one, then lowers RLIMIT_NOFILE. Restores both when it goes out of scope.
class FdBudget {
 public:
  explicit FdBudget(int free) {
    getrlimit(RLIMIT_NOFILE, &old_);
    int highest = *open_fds().rbegin();
    for (int fd = dup(2); fd >= 0; fd = dup(2)) {
      if (fd > highest) {
        close(fd);
        break;
      }
      fillers_.push_back(fd);
    }
    rlimit lowered = old_;
    lowered.rlim_cur = static_cast<rlim_t>(highest + 1 + free);
    setrlimit(RLIMIT_NOFILE, &lowered);
  }
  ~FdBudget() {
    setrlimit(RLIMIT_NOFILE, &old_);
    for (int fd : fillers_) close(fd);
  }

 private:
  rlimit old_{};
  std::vector<int> fillers_;
};

}  // namespace

// Fault injection with the real system call: room for no pipe or one pipe only, so the
// first or the second fails. A pipe already opened must be closed again (they leaked before).
TEST(Subprocess, AFailedPipeLeaksNoDescriptor) {
  for (int room : {0, 2}) {
    std::set<int> before = open_fds();
    cd::ProcessResult r;
    {
      FdBudget budget(room);
      r = cd::run_process({"true"});
    }
    EXPECT_FALSE(r.started);
    EXPECT_NE(r.start_error.find("pipe: "), std::string::npos) << r.start_error;
    EXPECT_EQ(open_fds(), before) << "room for " << room / 2 << " pipe(s)";
  }
  std::set<int> before = open_fds();
  EXPECT_TRUE(cd::run_process({"true"}).ok());
  EXPECT_FALSE(cd::run_process({"/nonexistent/cmd"}).started);  // exec fails: its pipes closed too
  EXPECT_EQ(open_fds(), before);
}

// posix_spawn, not fork: our pages are never made copy-on-write, so the threads that go on
// writing while a child starts (the scan beside the driver child) take no fault per page.
// After a fork each page of this 64 MiB buffer would fault once on its next write.
TEST(Subprocess, StartingAChildLeavesOurMemoryWritableWithoutFaults) {
  const size_t size = 64u << 20;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  madvise(p, size, MADV_NOHUGEPAGE);  // 4 KiB pages: a fork would cost 16,384 faults, not 32
  auto* bytes = static_cast<volatile unsigned char*>(p);
  for (size_t i = 0; i < size; i += 4096) bytes[i] = 1;
  ASSERT_TRUE(cd::run_process({"true"}).ok());
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  for (size_t i = 0; i < size; i += 4096) bytes[i] = 2;
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_minflt - before.ru_minflt, 1000);
  munmap(p, size);
}

TEST(Subprocess, RunsInTheGivenDirectoryWithOurEnvironmentChanges) {
  cd::ProcessOptions o;
  o.cwd = "/usr";
  o.env_set = {{"CD_TEST_VALUE", "a b"}};
  o.env_unset = {"HOME"};
  auto r = cd::run_process({"sh", "-c", "pwd; echo \"$CD_TEST_VALUE|${HOME-unset}|$CUDA_CACHE_DISABLE\""}, o);
  EXPECT_EQ(r.out, "/usr\na b|unset|1\n") << r.err;
  o.cwd = "/no/such/directory";
  auto bad = cd::run_process({"true"}, o);
  EXPECT_FALSE(bad.started);
  EXPECT_NE(bad.start_error.find("/no/such/directory: No such file or directory"), std::string::npos) << bad.start_error;
}

// stdin is /dev/null and the child leads its own process group (a timeout kills all of it).
TEST(Subprocess, ChildLeadsItsOwnGroupWithNullInput) {
  auto r = cd::run_process({"sh", "-c", "cat; set -- $(cat /proc/$$/stat); echo $5 $$"});
  ASSERT_TRUE(r.ok()) << r.err;
  std::istringstream in(r.out);
  long pgid = 0, pid = -1;
  in >> pgid >> pid;
  EXPECT_EQ(pgid, pid) << r.out;
}
