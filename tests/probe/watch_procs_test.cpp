// probe/watch_procs: /proc/PID/stat parsing (a comm with spaces and parens) and the tree of
// real child processes, found from ppid links, with the busy one's CPU ticks growing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/watch_procs.hpp"

TEST(WatchProcs, ParsesStatWithAnAwkwardComm) {
  cd::ProcTick t;
  std::string stat = "4242 (a) b (c)) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 30 0 0 20 0 3 0 12345 1000 100 "
                     "1 1 1 1 1 1 0 0 0 0 0 0 0 17 3 0 0 7 0 0";
  ASSERT_TRUE(cd::parse_proc_stat(stat, t));
  EXPECT_EQ(t.pid, 4242);
  EXPECT_EQ(t.comm, "a) b (c)");
  EXPECT_EQ(t.state, "S");
  EXPECT_EQ(t.ppid, 17);
  EXPECT_EQ(t.cpu_ticks, 280u);
  EXPECT_EQ(t.blkio_ticks, 7u);
  EXPECT_FALSE(cd::parse_proc_stat("garbage", t));
}

TEST(WatchProcs, FollowsARealTreeAndItsCpu) {
  pid_t parent = fork();
  if (parent == 0) {
    pid_t busy = fork();
    if (busy == 0) {
      volatile unsigned long spin = 0;
      for (;;) spin = spin + 1;
    }
    for (;;) pause();
  }
  cd::ProcTreeSampler tree;
  tree.set_roots({parent});
  usleep(300000);
  auto first = tree.sample(true);
  usleep(400000);
  auto second = tree.sample(false);  // known members only
  kill(-parent, SIGKILL);
  for (const auto& p : second)
    if (p.pid != parent) kill(p.pid, SIGKILL);
  kill(parent, SIGKILL);
  waitpid(parent, nullptr, 0);
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(first[0].pid, parent);
  EXPECT_EQ(first[1].ppid, parent);
  EXPECT_GT(second[1].cpu_ticks, first[1].cpu_ticks) << "the busy child's CPU grows";
  uint64_t total = 0, iowait = 0, idle = 0;
  EXPECT_TRUE(tree.system_cpu(total, iowait, idle));
  EXPECT_GT(total, idle);
}
