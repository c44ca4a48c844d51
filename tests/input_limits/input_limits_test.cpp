// End-to-end regression tests of issue 12 (hostile and broken input) for what the
// user hands the tool directly: --facts files, --timeout, CUDA_DOCTOR_DATA, names that
// are not UTF-8, and the "never writes" promise of the children that touch the driver
// or Python (run against tests/fakes with a fresh HOME). Each ran into a crash, an
// unbounded read, a wrong finding, silence or a file write before its fix.
#include <gtest/gtest.h>

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "util/subprocess.hpp"

namespace {

struct ShRun {
  int code = -1;
  bool timed_out = false;
  std::string out, err;
};

// Runs `sh -c SCRIPT` with $DOCTOR set to the built binary and $LIMIT a 4 GiB address-space
// limit for the --facts runs (before the fix, --facts /dev/zero took all memory). The
// tool's own cache switches are removed, so what the children get is what cuda-doctor gives them.
ShRun sh(const std::string& script, std::map<std::string, std::string> env = {}) {
  cd::ProcessOptions o;
  o.timeout = std::chrono::seconds(60);
  o.env_set = {{"DOCTOR", CD_BINARY}, {"NO_COLOR", "1"}, {"CUDA_DOCTOR_PYTHON", ""}, {"LIMIT", "ulimit -v 4194304"}};
  for (auto& [k, v] : env) o.env_set[k] = v;
  std::string full = "unset CUDA_CACHE_DISABLE PYTHONDONTWRITEBYTECODE; " + script;
  cd::ProcessResult p = cd::run_process({"/bin/sh", "-c", full}, o);
  return {p.exit_code, p.timed_out, p.out, p.err};
}

std::string temp_dir() {
  char tmpl[] = "/tmp/cd-limits-XXXXXX";
  EXPECT_NE(mkdtemp(tmpl), nullptr);
  return tmpl;
}

void write_file(const std::string& path, const std::string& text, mode_t mode = 0644) {
  std::ofstream(path, std::ios::binary) << text;
  chmod(path.c_str(), mode);
}

// Every path under dir (relative), recursively.
void list_tree(const std::string& dir, const std::string& rel, std::vector<std::string>& out) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    out.push_back(rel + name);
    list_tree(dir + "/" + name, rel + name + "/", out);
  }
  closedir(d);
}

bool one_line(const std::string& err) { return !err.empty() && err.find('\n') == err.size() - 1; }

const std::string kFakes = CD_FAKES_DIR;
std::map<std::string, std::string> fake_driver_env() {
  return {{"CUDA_DOCTOR_LIBCUDA", kFakes + "/libcuda.so.1"},
          {"CUDA_DOCTOR_LIBNVML", kFakes + "/libnvidia-ml.so.1"},
          {"CUDA_DOCTOR_LIB_DIR", kFakes}};
}

}  // namespace

// #4: a FIFO named METADATA in a venv under --root blocked `check` for good; now `check -v`
// finishes and shows why the package's pins were not read.
TEST(InputLimits, FifoMetadataIsANoteInCheckVerbose) {
  std::string dir = temp_dir();
  std::string sp = dir + "/opt/app/.venv/lib/python3.12/site-packages";
  ASSERT_EQ(std::system(("mkdir -p '" + sp + "/vllm-0.11.0.dist-info'").c_str()), 0);
  write_file(dir + "/opt/app/.venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.12.3\n");
  ASSERT_EQ(mkfifo((sp + "/vllm-0.11.0.dist-info/METADATA").c_str(), 0644), 0);
  ShRun r = sh("timeout 20 \"$DOCTOR\" check --root \"$R\" -v --no-scan", {{"R", dir}});
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.code, 124) << "check hung on the FIFO";
  EXPECT_TRUE(r.code == 0 || r.code == 2) << r.code << r.err;
  EXPECT_NE(r.out.find("note python"), std::string::npos) << r.out;
  const std::string note =
      "/opt/app/.venv/lib/python3.12/site-packages/vllm-0.11.0.dist-info/METADATA: not a regular file (a FIFO), not read";
  EXPECT_NE(r.out.find(note), std::string::npos) << r.out;
  ASSERT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
}

// #8: a file name with a 0xff byte aborted the whole JSON document (rc 3, empty stdout).
TEST(InputLimits, NonUtf8FileNameKeepsJsonAlive) {
  std::string dir = temp_dir();
  std::string bad = dir + "/lib\xff" "cuda.so";
  ASSERT_EQ(std::system(("cp /usr/local/cuda/lib64/libcudart.so.13 '" + bad + "'").c_str()), 0);
  ShRun r = sh("\"$DOCTOR\" scan \"$F\" --json --gpu sm_90 --driver 580.65", {{"F", bad}});
  EXPECT_TRUE(r.code == 0 || r.code == 2) << r.code << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 200) << r.err;
  EXPECT_NE(r.out.find("lib\xef\xbf\xbd" "cuda.so"), std::string::npos);
  std::remove(bad.c_str());
  rmdir(dir.c_str());
}

// #9: --facts reads only a regular file or stdin, and at most 64 MiB of it.
TEST(InputLimits, FactsFromDevZeroIsRefusedAtOnce) {
  ShRun r = sh("$LIMIT; \"$DOCTOR\" check --facts /dev/zero");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "cuda-doctor: --facts /dev/zero: not a regular file\n");
}

TEST(InputLimits, FactsFromAFifoDoesNotHang) {
  std::string dir = temp_dir();
  std::string fifo = dir + "/facts.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ShRun r = sh("$LIMIT; timeout 20 \"$DOCTOR\" check --facts \"$F\"", {{"F", fifo}});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(r.err, "cuda-doctor: --facts " + fifo + ": not a regular file\n");
  unlink(fifo.c_str());
  rmdir(dir.c_str());
}

TEST(InputLimits, FactsFileAboveTheLimitIsRefusedBeforeReading) {
  std::string dir = temp_dir();
  std::string big = dir + "/big.json";
  write_file(big, "");
  ASSERT_EQ(truncate(big.c_str(), (64ll << 20) + 1), 0);  // sparse: costs no disk
  ShRun r = sh("$LIMIT; \"$DOCTOR\" check --facts \"$F\"", {{"F", big}});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "cuda-doctor: --facts " + big + ": 67108865 bytes is above the 64 MiB limit for an input file\n");
  std::remove(big.c_str());
  rmdir(dir.c_str());
}

TEST(InputLimits, FactsFromStdinStopAtTheLimit) {
  ShRun r = sh("$LIMIT; head -c 80000000 /dev/zero | \"$DOCTOR\" check --facts -");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "cuda-doctor: --facts - (stdin): more than the 64 MiB limit for an input file\n");
  ShRun ok = sh("$LIMIT; \"$DOCTOR\" check --facts - --json < \"$F\"", {{"F", std::string(CD_FIXTURES) + "/h200/facts.json"}});
  EXPECT_TRUE(ok.code == 0 || ok.code == 2) << ok.err;
  EXPECT_FALSE(nlohmann::json::parse(ok.out, nullptr, false).is_discarded());
}

// #13: a bad field is one line naming its path, exit 3 (not "internal error", not a wrapped number).
TEST(InputLimits, BadFactsFieldIsOneLineWithItsPath) {
  std::string dir = temp_dir();
  std::string f = dir + "/facts.json";
  write_file(f, R"({"schema":"cuda-doctor/facts/v1","driver":{"gpus":[{"name":"X","cc_major":2147483648}]}})");
  ShRun r = sh("$LIMIT; \"$DOCTOR\" check --facts \"$F\"", {{"F", f}});
  EXPECT_EQ(r.code, 3);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("driver.gpus[0].cc_major: 2147483648 is out of range"), std::string::npos) << r.err;
  write_file(f, R"({"schema":7})");
  r = sh("$LIMIT; \"$DOCTOR\" check --facts \"$F\"", {{"F", f}});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err, "cuda-doctor: " + f + ": schema: expected a string, got a number\n");
  std::remove(f.c_str());
  rmdir(dir.c_str());
}

// #14: --timeout 1e10 overflowed the clock: "driver query timed out after 0 s" and a
// false device.hardware_fault. It is clamped; NaN, inf and 0 are refused.
TEST(InputLimits, HugeTimeoutIsClampedNotOverflowed) {
  ShRun r = sh("\"$DOCTOR\" check --json --no-scan --timeout 1e10", fake_driver_env());
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out.substr(0, 300) << r.err;
  EXPECT_EQ(r.out.find("timed out"), std::string::npos) << r.out.substr(0, 2000);
  for (const auto& f : j["findings"]) EXPECT_NE(f["id"], "device.hardware_fault") << f.dump();
}

TEST(InputLimits, NonFiniteTimeoutIsRefused) {
  for (const char* t : {"nan", "inf", "-inf", "0", "-1"}) {
    ShRun r = sh(std::string("\"$DOCTOR\" check --no-scan --timeout ") + t, fake_driver_env());
    EXPECT_EQ(r.code, 3) << t;
    EXPECT_NE(r.err.find("--timeout"), std::string::npos) << t << ": " << r.err;
    EXPECT_NE(r.err.find("expected a number of seconds above 0"), std::string::npos) << t << ": " << r.err;
  }
}

TEST(InputLimits, HugeStepTimeoutIsClamped) {
  ShRun r = sh("\"$DOCTOR\" verify --quick --json --step-timeout 1e10", fake_driver_env());
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 2000) << r.err;
  EXPECT_EQ(r.out.find("no answer after"), std::string::npos) << r.out.substr(0, 2000);
}

// #16: a knowledge base that is not there used to be silent ("no known signature").
TEST(InputLimits, MissingKnowledgeBaseIsAnError) {
  std::string log = std::string(CD_FIXTURES) + "/logs/driver_too_old_torch.log";
  ShRun r = sh("\"$DOCTOR\" explain \"$F\"", {{"F", log}, {"CUDA_DOCTOR_DATA", "/nonexistent"}});
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_EQ(r.err, "cuda-doctor: knowledge base /nonexistent: not a directory\n");
  std::string dir = temp_dir();
  write_file(dir + "/gpus.toml", "[[gpu]]\nname = \"X\"\nsource = \"test\"\n");
  r = sh("\"$DOCTOR\" explain \"$F\"", {{"F", log}, {"CUDA_DOCTOR_DATA", dir}});
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("missing "), std::string::npos) << r.err;
  std::remove((dir + "/gpus.toml").c_str());
  r = sh("\"$DOCTOR\" explain \"$F\"", {{"F", log}, {"CUDA_DOCTOR_DATA", dir}});
  EXPECT_EQ(r.err, "cuda-doctor: knowledge base " + dir + ": no *.toml tables in it\n");
  rmdir(dir.c_str());
  r = sh("\"$DOCTOR\" explain \"$F\"", {{"F", log}, {"CUDA_DOCTOR_DATA", std::string(CD_SOURCE_DIR) + "/data"}});
  EXPECT_EQ(r.code, 2) << r.err;  // the whole knowledge base: the log's error is found
  EXPECT_EQ(r.err, "");
}

// #17: the driver writes its JIT cache to ~/.nv/ComputeCache unless CUDA_CACHE_DISABLE=1
// (the fake libcuda does the same with CD_FAKE_JIT_CACHE=1; the fake python is a CUDA
// program that does). With a fresh HOME, nothing may appear under it.
TEST(InputLimits, VerifyChildrenWriteNothingUnderHome) {
  std::string dir = temp_dir();
  std::string home = dir + "/home", python = dir + "/python3";
  ASSERT_EQ(mkdir(home.c_str(), 0700), 0);
  write_file(python,
             "#!/bin/sh\n"
             "[ \"$CUDA_CACHE_DISABLE\" = 1 ] || mkdir -p \"$HOME/.nv/ComputeCache\"\n"
             "[ \"$PYTHONDONTWRITEBYTECODE\" = 1 ] || mkdir -p \"$HOME/__pycache__\"\n"
             "echo \"no torch here\" >&2; exit 1\n",
             0755);
  auto env = fake_driver_env();
  env["HOME"] = home;
  env["CD_FAKE_JIT_CACHE"] = "1";
  env["CUDA_DOCTOR_PYTHON"] = python;
  ShRun r = sh("\"$DOCTOR\" verify --json", env);
  ASSERT_TRUE(nlohmann::json::parse(r.out, nullptr, false).is_object()) << r.out.substr(0, 300) << r.err;
  EXPECT_NE(r.out.find("no torch here"), std::string::npos) << "the fake python did not run";
  std::vector<std::string> written;
  list_tree(home, "", written);
  EXPECT_TRUE(written.empty()) << "verify wrote under HOME: " << written.front();

  ShRun c = sh("\"$DOCTOR\" check --json --no-scan", env);
  ASSERT_TRUE(nlohmann::json::parse(c.out, nullptr, false).is_object()) << c.err;
  EXPECT_NE(c.out.find("NVIDIA Fake GPU"), std::string::npos) << "the __driver child did not load the fake";
  list_tree(home, "", written);
  EXPECT_TRUE(written.empty()) << "check wrote under HOME: " << written.front();
  ASSERT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
}

// The fake really does write when the cache is not disabled (the test above can fail).
TEST(InputLimits, TheFakeDriverWritesItsCacheWhenAllowed) {
  std::string dir = temp_dir();
  auto env = fake_driver_env();
  env["HOME"] = dir;
  env["CD_FAKE_JIT_CACHE"] = "1";
  std::string explain_cmd = "\"$DOCTOR\" explain -- \"$DOCTOR\" __verify devices --device 0 >/dev/null 2>&1; ls -a \"$HOME/.nv/ComputeCache\"";
  ShRun r = sh(explain_cmd, env);
  EXPECT_NE(r.out.find("index"), std::string::npos) << r.out << r.err;
  ASSERT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
}
