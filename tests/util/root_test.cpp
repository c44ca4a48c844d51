// Root under a prefix resolves every path inside the root, like chroot (issue 12 #3),
// and reads only regular files (issue 12 #4). Each tree is built in a temporary directory
// next to a "host side" directory that a link might try to reach.
#include "util/root.hpp"

#include "util/regular_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

namespace cd {
namespace {

namespace fs = std::filesystem;

// Runs fn in a child that SIGALRM kills after `seconds`: a hang fails the test instead of
// hanging the suite.
bool finishes_within(int seconds, const std::function<void()>& fn) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(static_cast<unsigned>(seconds));
    fn();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

class RootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("cd_root_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    fs::create_directories(base_ / "root");
    fs::create_directories(base_ / "host_side");
    write("host_side/secret", "HOST");
  }
  void TearDown() override { fs::remove_all(base_); }

  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((base_ / rel).parent_path());
    std::ofstream(base_ / rel) << text;
  }
  void link(const std::string& target, const std::string& rel) {
    fs::create_directories((base_ / rel).parent_path());
    fs::create_symlink(target, base_ / rel);
  }
  std::string root_dir() const { return (base_ / "root").string(); }
  std::string host_side() const { return (base_ / "host_side").string(); }

  fs::path base_;
};

TEST_F(RootTest, AbsoluteLinkTargetsStartAtTheRoot) {
  write("root/opt/real/os-release", "PRETTY_NAME=\"inside\"\n");
  link("/opt/real/os-release", "root/etc/os-release");
  link(host_side() + "/secret", "root/etc/leak");  // absolute host path: means <root>/<that path>
  Root r(root_dir());
  EXPECT_EQ(r.read("/etc/os-release").value_or(""), "PRETTY_NAME=\"inside\"\n");
  EXPECT_FALSE(r.read("/etc/leak"));
  EXPECT_FALSE(r.exists("/etc/leak"));
  EXPECT_EQ(r.resolve("/etc/os-release").value_or(""), "/opt/real/os-release");
  EXPECT_EQ(r.host_path("/etc/os-release"), root_dir() + "/opt/real/os-release");
}

TEST_F(RootTest, DotDotNeverClimbsAboveTheRoot) {
  write("root/secret", "ROOT");
  link("../../../../../../../../host_side/secret", "root/a/b/up");
  link("../host_side", "root/sib");  // one level up from the root: the host side
  Root r(root_dir());
  EXPECT_FALSE(r.read("/a/b/up"));  // <root>/host_side/secret does not exist
  EXPECT_FALSE(r.is_dir("/sib"));
  EXPECT_TRUE(r.list("/sib").empty());
  EXPECT_EQ(r.read("/../../secret").value_or(""), "ROOT");
  write("root/host_side/secret", "IN ROOT");
  EXPECT_EQ(r.read("/a/b/up").value_or(""), "IN ROOT");
  EXPECT_EQ(r.read("/sib/secret").value_or(""), "IN ROOT");
}

TEST_F(RootTest, LinkToSlashIsTheRootNotTheHost) {
  write("root/usr/lib/libin.so", "x");
  link("/", "root/usr/lib/python3/site-packages/slash");
  Root r(root_dir());
  EXPECT_EQ(r.list("/usr/lib/python3/site-packages/slash"), (std::vector<std::string>{"usr"}));
  EXPECT_TRUE(r.is_file("/usr/lib/python3/site-packages/slash/usr/lib/libin.so"));
  EXPECT_FALSE(r.exists("/usr/lib/python3/site-packages/slash/etc/hostname"));
  EXPECT_EQ(r.glob("/usr/lib/python3/site-packages/slash/usr/lib", "*.so").size(), 1u);
}

TEST_F(RootTest, IntermediateLinksAndReadlink) {
  write("root/real/dir/f", "F");
  link("/real/dir", "root/l1");
  link("l1/../dir/f", "root/l2");  // physical "..": l1 is /real/dir, its parent /real
  Root r(root_dir());
  EXPECT_EQ(r.read("/l1/f").value_or(""), "F");
  EXPECT_EQ(r.read("/l2").value_or(""), "F");
  EXPECT_EQ(r.readlink("/l1").value_or(""), "/real/dir");
  EXPECT_TRUE(r.is_symlink("/l1"));
  EXPECT_FALSE(r.is_symlink("/l1/f"));
  EXPECT_FALSE(r.readlink("/real"));
  EXPECT_EQ(r.resolve("/l2").value_or(""), "/real/dir/f");
  EXPECT_EQ(r.resolve("/l1/missing/x").value_or(""), "/real/dir/missing/x");  // a missing tail is kept
}

TEST_F(RootTest, LinkLoopsStop) {
  link("/b", "root/a");
  link("/a", "root/b");
  link("self/x", "root/self");
  Root r(root_dir());
  EXPECT_FALSE(r.resolve("/a"));
  EXPECT_FALSE(r.read("/a"));
  EXPECT_FALSE(r.read("/self"));
  EXPECT_EQ(r.host_path("/a/x"), "");  // nothing can open it
  // Exactly kMaxLinks links resolve; one more is a loop.
  write("root/t", "T");
  link("/t", "root/c0");
  for (int i = 1; i <= Root::kMaxLinks; ++i) link("/c" + std::to_string(i - 1), "root/c" + std::to_string(i));
  EXPECT_EQ(r.read("/c" + std::to_string(Root::kMaxLinks - 1)).value_or(""), "T");
  EXPECT_FALSE(r.read("/c" + std::to_string(Root::kMaxLinks)));
}

TEST_F(RootTest, HostPathHasNoLinkForTheKernelToFollow) {
  write("root/opt/lib/libx.so", "X");
  link(host_side(), "root/usr");  // absolute: <root><host_side>, missing
  link("/opt/lib", "root/lib64");
  Root r(root_dir());
  EXPECT_EQ(r.host_path("/lib64/libx.so"), root_dir() + "/opt/lib/libx.so");
  std::string p = r.host_path("/usr/secret");
  EXPECT_NE(p.find(root_dir() + "/"), std::string::npos);
  struct stat st;
  EXPECT_NE(stat(p.c_str(), &st), 0) << p << " reaches the host side";
}

// The time-of-check/time-of-use window: a path resolved (or walked) while it had no link, then a
// directory in it swapped for a link to the host before the file is opened. Opening the
// resolved host path by name follows the new link out of the root; opening through the root's
// descriptor resolves it inside the root (what the scanner and the loader do).
TEST_F(RootTest, FileOpenedThroughTheRootFollowsNoLinkSwappedInAfterTheWalk) {
  write("root/lib/libx.so", "INSIDE");
  write("host_side/libx.so", "HOST");
  Root r(root_dir());
  std::string walked = r.host_path("/lib/libx.so");
  ASSERT_EQ(walked, root_dir() + "/lib/libx.so");
  fs::rename(base_ / "root/lib", base_ / "root/lib.old");
  link(host_side(), "root/lib");  // the swap: an absolute link to the host side

  auto text = [](const RegularFile& f) {
    std::string s(f.size(), '\0');
    return f.ok() && pread(f.fd(), s.data(), s.size(), 0) == static_cast<ssize_t>(s.size()) ? s : std::string("(none)");
  };
  EXPECT_EQ(text(RegularFile(walked)), "HOST") << "the window this test is about is not there";
  RegularFile through_root(r, r.inner_path(walked));
  EXPECT_FALSE(through_root.ok()) << "read " << text(through_root) << " outside the root";
  EXPECT_EQ(r.read("/lib/libx.so"), std::nullopt);
  EXPECT_EQ(text(RegularFile(r, "/lib.old/libx.so")), "INSIDE");
}

TEST_F(RootTest, FifoIsNotRead) {
  ASSERT_EQ(mkfifo((base_ / "root/fifo").c_str(), 0644), 0);
  link("/fifo", "root/proc/driver/nvidia/version");
  for (Root r : {Root(root_dir()), Root()}) {
    std::string path = r.is_host() ? root_dir() + "/fifo" : "/proc/driver/nvidia/version";
    EXPECT_TRUE(finishes_within(5, [&] {
      std::string why;
      bool got = r.read(path, 1u << 20, &why).has_value();
      _exit(!got && why == "not a regular file (a FIFO)" ? 0 : 1);
    })) << (r.is_host() ? "host" : "--root") << ": read of a FIFO blocked or was not refused";
  }
}

TEST_F(RootTest, DevicesAndDirectoriesAreNotRead) {
  Root host;
  std::string why;
  EXPECT_FALSE(host.read("/dev/zero", 1u << 20, &why));
  EXPECT_EQ(why, "not a regular file (a character device)");
  EXPECT_FALSE(host.read("/", 16, &why));
  EXPECT_EQ(why, "not a regular file (a directory)");
  // procfs files are regular (size 0) and still read to their end.
  EXPECT_NE(host.read("/proc/self/status").value_or("").find("Name:"), std::string::npos);
}

TEST_F(RootTest, ReadCapsAndPlainTree) {
  write("root/big", std::string(10000, 'a'));
  Root r(root_dir());
  EXPECT_EQ(r.read("/big", 100).value_or("").size(), 100u);
  EXPECT_EQ(r.read("/big").value_or("").size(), 10000u);
  EXPECT_TRUE(r.is_dir("/"));
  EXPECT_EQ(r.resolve("/").value_or(""), "/");
  EXPECT_EQ(r.resolve("/./x/../big").value_or(""), "/big");
  EXPECT_FALSE(Root(root_dir() + "/nonexistent").exists("/"));
}

}  // namespace
}  // namespace cd
