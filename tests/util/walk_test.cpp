// walk_files under a Root with a prefix never leaves the root (issue 12 #3): links are
// followed inside it, and every file it returns can be opened without the kernel
// following a link out of it. The oracle is the set of inodes of the root's own files.
#include "util/walk.hpp"

#include <ftw.h>
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

namespace cd {
namespace {

namespace fs = std::filesystem;

std::set<std::pair<uint64_t, uint64_t>>* g_inodes;

std::set<std::pair<uint64_t, uint64_t>> inodes_under(const std::string& dir) {
  std::set<std::pair<uint64_t, uint64_t>> out;
  g_inodes = &out;
  nftw(dir.c_str(), [](const char*, const struct stat* st, int, FTW*) {
    g_inodes->insert({st->st_dev, st->st_ino});
    return 0;
  }, 16, FTW_PHYS);
  return out;
}

class WalkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("cd_walk_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    write("host_side/libsecret.so", "HOST");
    write("root/usr/lib/libin.so", "IN");
    write("root/sp/torch/lib/libtorch.so", "T");
  }
  void TearDown() override { fs::remove_all(base_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((base_ / rel).parent_path());
    std::ofstream(base_ / rel) << text;
  }
  void link(const std::string& target, const std::string& rel) { fs::create_symlink(target, base_ / rel); }
  std::string dir(const std::string& rel) const { return (base_ / rel).string(); }

  WalkResult walk(const std::vector<std::string>& paths) {
    WalkOptions o;
    o.root = Root(dir("root"));
    o.want = [](std::string_view name, bool) { return name.ends_with(".so"); };
    return walk_files(paths, o);
  }

  fs::path base_;
};

TEST_F(WalkTest, LinksOutOfTheRootAreFollowedInsideIt) {
  link(dir("host_side"), dir("root/sp/abs"));         // absolute host path: <root><host_side>, missing
  link("../../host_side", dir("root/sp/up"));          // climbs out: /host_side in the root
  link("/usr/lib/libin.so", dir("root/sp/libin.so"));  // absolute file link: the root's /usr/lib
  WalkResult w = walk({dir("root/sp")});
  auto own = inodes_under(dir("root"));
  std::set<std::string> names;
  for (const auto& f : w.files) {
    EXPECT_TRUE(own.count({f.dev, f.ino})) << f.path << " is not a file of the root";
    struct stat st;
    ASSERT_EQ(stat(f.open_path.c_str(), &st), 0) << f.open_path;
    EXPECT_TRUE(static_cast<uint64_t>(st.st_dev) == f.dev && static_cast<uint64_t>(st.st_ino) == f.ino) << f.open_path;
    names.insert(fs::path(f.path).filename().string());
  }
  EXPECT_EQ(names, (std::set<std::string>{"libin.so", "libtorch.so"}));
  for (const auto& f : w.files) {
    if (f.path.ends_with("libin.so")) {
      EXPECT_EQ(f.open_path, dir("root") + "/usr/lib/libin.so");
    }
  }
}

TEST_F(WalkTest, LinkToSlashWalksTheRootOnly) {
  link("/", dir("root/sp/slash"));
  WalkResult w = walk({dir("root/sp")});
  auto own = inodes_under(dir("root"));
  ASSERT_EQ(w.files.size(), 2u);  // libtorch.so and /usr/lib/libin.so through "slash"
  for (const auto& f : w.files) EXPECT_TRUE(own.count({f.dev, f.ino})) << f.path;
}

TEST_F(WalkTest, NamedPathsResolveInsideTheRoot) {
  link(dir("host_side/libsecret.so"), dir("root/sp/named.so"));
  link("/usr/lib/libin.so", dir("root/sp/in.so"));
  WalkResult w = walk({dir("root/sp/named.so"), dir("root/sp/in.so")});
  ASSERT_EQ(w.files.size(), 1u);
  EXPECT_EQ(w.files[0].path, dir("root/sp/in.so"));
  EXPECT_EQ(w.files[0].open_path, dir("root/usr/lib/libin.so"));
  EXPECT_EQ(w.errors.size(), 1u);  // named.so: no such file in the root
}

TEST_F(WalkTest, FifosAreSkippedNotOpened) {
  ASSERT_EQ(mkfifo(dir("root/sp/torch/lib/libfifo.so").c_str(), 0644), 0);
  WalkResult w = walk({dir("root/sp")});
  ASSERT_EQ(w.files.size(), 1u);
  EXPECT_TRUE(w.files[0].path.ends_with("libtorch.so"));
}

TEST_F(WalkTest, HostWalkStillFollowsLinksAnywhere) {
  link(dir("host_side"), dir("root/sp/abs"));
  WalkOptions o;
  o.want = [](std::string_view name, bool) { return name.ends_with(".so"); };
  WalkResult w = walk_files({dir("root/sp")}, o);
  ASSERT_EQ(w.files.size(), 2u);
  EXPECT_EQ(w.files[0].path, dir("root/sp/abs/libsecret.so"));
  EXPECT_EQ(w.files[0].open_path, w.files[0].path);
  EXPECT_TRUE(w.files[0].via_symlink == false);  // the last name is a real file name
}

// The read-ahead threads (a cold page cache) change nothing but the kernel's caches: the
// walk of a tree with hundreds of directories, links inside and out, and a FIFO gives the
// same files with them and without.
TEST_F(WalkTest, ReadAheadChangesNothing) {
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < 8; ++j) write("root/sp/pkg" + std::to_string(i) + "/sub" + std::to_string(j) + "/lib" + std::to_string(j) + ".so", "x");
  link("/usr", dir("root/sp/abs"));
  link("../../host_side", dir("root/sp/rel"));
  link("pkg3", dir("root/sp/pkg3_again"));
  ASSERT_EQ(mkfifo(dir("root/sp/pkg1/libfifo.so").c_str(), 0644), 0);
  auto run = [&](bool ahead) {
    WalkOptions o;
    o.root = Root(dir("root"));
    o.want = [](std::string_view name, bool) { return name.ends_with(".so"); };
    o.read_ahead = ahead ? ReadAhead::always : ReadAhead::never;
    return walk_files({dir("root/sp"), dir("root/usr")}, o);
  };
  WalkResult with = run(true), without = run(false);
  ASSERT_EQ(with.files.size(), without.files.size());
  EXPECT_GE(with.files.size(), 321u);
  for (size_t i = 0; i < with.files.size(); ++i) {
    EXPECT_EQ(with.files[i].path, without.files[i].path);
    EXPECT_EQ(with.files[i].open_path, without.files[i].open_path);
    EXPECT_EQ(with.files[i].ino, without.files[i].ino);
  }
  EXPECT_EQ(with.errors, without.errors);
}

// Nor do they ever open a directory outside the root, through a link relative or absolute:
// inotify on the host-side directory sees no open.
TEST_F(WalkTest, ReadAheadNeverOpensADirectoryOutsideTheRoot) {
  link(dir("host_side"), dir("root/sp/abs"));
  link("../../host_side", dir("root/sp/rel"));
  int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (in < 0) GTEST_SKIP() << "no inotify here: " << std::strerror(errno);
  ASSERT_GE(inotify_add_watch(in, dir("host_side").c_str(), IN_OPEN | IN_ACCESS), 0);
  WalkOptions ro;
  ro.root = Root(dir("root"));
  ro.want = [](std::string_view name, bool) { return name.ends_with(".so"); };
  ro.read_ahead = ReadAhead::always;
  WalkResult w = walk_files({dir("root/sp")}, ro);
  EXPECT_EQ(w.files.size(), 1u);
  char buf[4096];
  ssize_t got = read(in, buf, sizeof buf);
  EXPECT_LE(got, 0) << "something opened or read " << dir("host_side");
  // The oracle works: a walk of the host side itself is seen.
  WalkOptions o;
  o.want = [](std::string_view name, bool) { return name.ends_with(".so"); };
  walk_files({dir("host_side")}, o);
  EXPECT_GT(read(in, buf, sizeof buf), 0);
  close(in);
}

}  // namespace
}  // namespace cd
