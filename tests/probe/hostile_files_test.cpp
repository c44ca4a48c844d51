// Probes on hostile trees (issue 12): a FIFO where a file is expected never blocks and
// becomes a note (#4); an ld.so.conf include bomb costs one read per file (#5).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

#include "loader/ldconf.hpp"
#include "probe/driver_probe.hpp"
#include "probe/probe.hpp"
#include "probe/python_packages.hpp"

namespace cd {
namespace {

namespace fs = std::filesystem;

// Runs fn in a child that SIGALRM kills after `seconds`: a hang fails the test instead of
// hanging the suite. fn's return value is the verdict.
bool passes_within(int seconds, const std::function<bool()>& fn) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(static_cast<unsigned>(seconds));
    _exit(fn() ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

class Hostile : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("cd_hostile_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    fs::create_directories(base_);
  }
  void TearDown() override { fs::remove_all(base_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((base_ / rel).parent_path());
    std::ofstream(base_ / rel) << text;
  }
  void fifo(const std::string& rel) {
    fs::create_directories((base_ / rel).parent_path());
    ASSERT_EQ(mkfifo((base_ / rel).c_str(), 0644), 0);
  }
  fs::path base_;
};

TEST_F(Hostile, FifoMetadataInSitePackagesIsANote) {
  fifo("sp/vllm-0.11.0.dist-info/METADATA");
  fifo("sp/torch-2.9.0.dist-info/INSTALLER");
  write("sp/torch-2.9.0.dist-info/METADATA", "Name: torch\nVersion: 2.9.0\n\n");
  for (Root root : {Root(base_.string()), Root()}) {
    std::string sp = root.is_host() ? (base_ / "sp").string() : "/sp";
    EXPECT_TRUE(passes_within(5, [&] {
      std::vector<std::string> notes;
      auto pkgs = scan_site_packages(root, sp, &notes);
      return pkgs.size() == 2 && notes.size() == 1 && notes[0] == sp + "/vllm-0.11.0.dist-info/METADATA: not a regular file (a FIFO), not read";
    })) << (root.is_host() ? "host" : "--root");
  }
}

// The note of a FIFO METADATA reaches Facts (and so `check -v` and snapshots), once even
// when two environments share the site dir; the package is still listed from its name.
TEST_F(Hostile, FifoMetadataNoteReachesFacts) {
  write("opt/app/.venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.12.3\n");
  write("opt/app/.venv/lib/python3.12/site-packages/torch-2.9.0.dist-info/METADATA", "Name: torch\nVersion: 2.9.0\n\n");
  fifo("opt/app/.venv/lib/python3.12/site-packages/vllm-0.11.0.dist-info/METADATA");
  EXPECT_TRUE(passes_within(10, [&] {
    Facts f;
    ProbeOptions o;
    o.root = Root(base_.string());
    o.env = {{"PATH", "/opt/app/.venv/bin:/usr/bin"}, {"HOME", "/root"}};
    probe_pythons(f, o);
    int found = 0;
    for (const auto& n : f.notes)
      found += n.probe == "python" &&
               n.message == "/opt/app/.venv/lib/python3.12/site-packages/vllm-0.11.0.dist-info/METADATA: "
                            "not a regular file (a FIFO), not read";
    bool listed = false;
    for (const auto& py : f.pythons)
      for (const auto& p : py.packages) listed |= p.name == "vllm" && p.version == "0.11.0";
    return found == 1 && listed;
  })) << "no hang, the package listed, exactly one python note";
}

TEST_F(Hostile, FifoDriverVersionUnderRootIsANote) {
  fifo("proc/driver/nvidia/version");
  write("sys/module/nvidia/version", "580.159.04\n");
  EXPECT_TRUE(passes_within(5, [&] {
    DriverFacts d;
    std::vector<std::string> notes;
    probe_driver_module(d, Root(base_.string()), &notes);
    return d.module_version == "580.159.04" && d.module_version_source == "/sys/module/nvidia/version" &&
           notes.size() == 1 && notes[0] == "/proc/driver/nvidia/version: not a regular file (a FIFO), not read";
  }));
}

// 8 files that each include the whole directory: 8^8 reads for a reader without memory.
TEST_F(Hostile, LdSoConfIncludeBombIsReadOncePerFile) {
  write("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  for (int i = 0; i < 8; ++i)
    write("etc/ld.so.conf.d/" + std::to_string(i) + ".conf",
          "include /etc/ld.so.conf.d/*.conf\ninclude *.conf\n/opt/lib" + std::to_string(i) + "\n");
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(passes_within(10, [&] {
    auto dirs = library_search_dirs(Root(base_.string()), {});
    int confs = 0;
    for (const auto& d : dirs) confs += d.dir.starts_with("/opt/lib");
    // Depth first, as ldconfig: 0.conf includes 1.conf … before its own line, so 7.conf comes first.
    return confs == 8 && dirs[0].dir == "/opt/lib7" && dirs[0].via == "/etc/ld.so.conf.d/7.conf";
  })) << "the driver probe's ld.so.conf reading did not finish or lost directories";
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// The driver probe reads ld.so.conf as ldconfig does (the loader's reader): a relative
// directory and a "hwcap" line are not directories, "DIR=type" names DIR.
TEST_F(Hostile, DriverSearchDirsUseTheLoadersReader) {
  write("etc/ld.so.conf", "relative/lib\nhwcap 0 nosegneg\n/usr/local/nvidia/lib64=libc6\ninclude a.conf\n");
  write("etc/a.conf", "/opt/a\n");
  auto dirs = library_search_dirs(Root(base_.string()), {});
  ASSERT_GE(dirs.size(), 2u);
  EXPECT_EQ(dirs[0].dir, "/usr/local/nvidia/lib64");
  EXPECT_EQ(dirs[0].via, "/etc/ld.so.conf");
  EXPECT_EQ(dirs[1].dir, "/opt/a");
  EXPECT_EQ(dirs[1].via, "/etc/a.conf");
  std::vector<LdConfDir> loader = read_ld_so_conf(Root(base_.string()));
  ASSERT_EQ(loader.size(), 2u);
  EXPECT_EQ(loader[1].dir, dirs[1].dir);
}

}  // namespace
}  // namespace cd
