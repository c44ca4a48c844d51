// Issue 12, end to end with the built cuda-doctor: a FIFO or a device named directly is
// reported and never read (#11, #4), a single unreadable path gives one line on stderr and
// exit 3 (#12), corrupt input says "corrupt" with its notes and is counted (#10), and
// malformed-fatbin notes stay bounded (#1).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>


namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Runs cuda-doctor with a 60 s timeout (a hang is rc 124).
Result run(const std::string& args) {
  std::string base = std::string(CD_BUILD_DIR) + "/hostile-cli-" + std::to_string(getpid());
  std::string cmd = "NO_COLOR=1 timeout 60 " + std::string(CD_BINARY) + " " + args + " >" + base + ".out 2>" + base + ".err";
  int status = std::system(cmd.c_str());
  Result r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  unlink((base + ".out").c_str());
  unlink((base + ".err").c_str());
  return r;
}

std::string temp_dir() {
  std::string d = std::string(CD_BUILD_DIR) + "/hostile-cli-dir-" + std::to_string(getpid());
  std::system(("rm -rf " + d + " && mkdir -p " + d).c_str());
  return d;
}

}  // namespace

TEST(ScanHostile, DeviceNamedDirectlyIsReportedNotRead) {
  Result r = run("scan /dev/zero --gpu sm_90");
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("zero  /dev/zero: not read: a character device"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "cuda-doctor: /dev/zero: not read: a character device\n");
}

TEST(ScanHostile, FifoNamedDirectlyIsReportedNextToOtherFiles) {
  std::string d = temp_dir();
  std::string fifo = d + "/libk.so";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  Result alone = run("scan " + fifo + " --gpu sm_90");
  EXPECT_EQ(alone.rc, 3) << alone.out << alone.err;
  EXPECT_EQ(alone.err, "cuda-doctor: " + fifo + ": not read: a FIFO\n");
  // Named with a readable file, it is one line of the report and the scan goes on.
  std::ofstream(d + "/plain.so") << "not an ELF";
  Result both = run("scan " + fifo + " " + d + "/plain.so --gpu sm_90 --json");
  EXPECT_EQ(both.rc, 0) << both.out << both.err;
  auto j = nlohmann::json::parse(both.out);
  ASSERT_EQ(j["binaries"].size(), 2u) << both.out;
  EXPECT_EQ(j["binaries"][0]["error"], fifo + ": not read: a FIFO");
  // Inside a scanned directory the FIFO is never opened either (no hang, rc 0).
  EXPECT_EQ(run("scan " + d + " --gpu sm_90").rc, 0);
  std::system(("rm -rf " + d).c_str());
}

TEST(ScanHostile, MissingPathSaysWhyOnStderr) {
  Result r = run("scan /nonexistent/libx.so --gpu sm_90");
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.err, "cuda-doctor: /nonexistent/libx.so: No such file or directory\n");
}

TEST(ScanHostile, CorruptFilesSayCorruptAndAreCounted) {
  std::string d = temp_dir();
  std::ofstream(d + "/bad.ptx") << ".version 9.x\n.target sm_90\n";
  std::ofstream(d + "/ok.ptx") << ".version 9.0\n.target sm_90\n.visible .entry k()\n{\n ret;\n}\n";
  Result r = run("scan " + d + "/bad.ptx " + d + "/ok.ptx --gpu sm_90");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("bad.ptx  corrupt (1 problem)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: malformed PTX in " + d + "/bad.ptx at offset 0x0: bad .version \"9.x\""), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("; 1 corrupt"), std::string::npos) << r.out;
  Result j = run("scan " + d + "/bad.ptx " + d + "/ok.ptx --gpu sm_90 --json");
  auto json = nlohmann::json::parse(j.out);
  EXPECT_EQ(json["stats"]["corrupt"], 1);
  EXPECT_EQ(json["binaries"][0]["problems"], 1);
  std::system(("rm -rf " + d).c_str());
}

// The reproducer at 4 MiB: 524288 bad headers were 524288 notes on main; now one.
TEST(ScanHostile, RepeatedMagicIsOneNote) {
  std::string d = temp_dir();
  {
    std::ofstream f(d + "/amp.so", std::ios::binary);
    const unsigned char rec[8] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 0, 0};
    for (int i = 0; i < (4 << 17); ++i) f.write(reinterpret_cast<const char*>(rec), 8);
  }
  Result r = run("scan " + d + "/amp.so --gpu sm_90 --driver 580.65 --json");
  EXPECT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["binaries"].size(), 1u);
  ASSERT_EQ(j["binaries"][0]["notes"].size(), 1u) << j["binaries"][0]["notes"].size();
  EXPECT_NE(j["binaries"][0]["notes"][0].get<std::string>().find("524286 more fatbin magic numbers"), std::string::npos);
  EXPECT_EQ(j["stats"]["corrupt"], 1);
  std::system(("rm -rf " + d).c_str());
}
