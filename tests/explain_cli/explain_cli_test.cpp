// End to end: the built cuda-doctor on the log corpus, recorded facts, commands and
// hostile input.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "util/strings.hpp"
#include "util/subprocess.hpp"

namespace cd {
namespace {

const std::string kLogs = std::string(CD_FIXTURES) + "/logs/";
const std::string kFacts = kLogs + "facts_h200_driver535.json";

ProcessResult doctor(std::vector<std::string> args) {
  args.insert(args.begin(), CD_BINARY);
  ProcessOptions o;
  o.timeout = std::chrono::seconds(60);
  o.env_set["NO_COLOR"] = "1";
  return run_process(args, o);
}

nlohmann::json json_of(const ProcessResult& r) {
  try {
    return nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << r.out.substr(0, 400) << "\n" << r.err.substr(0, 400);
    return {};
  }
}

std::vector<std::string> split_tsv(const std::string& line) { return split(line, '\t', true); }

// Every corpus case: the first finding is the expected causal id, the other ids appear
// (as findings or consequences), and the exit code follows the severity.
TEST(ExplainCli, CorpusRanksTheCauseFirst) {
  std::ifstream in(kLogs + "expected.tsv");
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto cols = split_tsv(line);
    ProcessResult r = doctor({"explain", "--no-probe", "--json", kLogs + cols[0]});
    nlohmann::json j = json_of(r);
    const auto& findings = j["findings"];
    std::string first = findings.empty() ? "-" : findings[0]["id"].get<std::string>();
    EXPECT_EQ(first, cols[1]) << cols[0];
    std::string all;
    for (const auto& f : findings) {
      all += f["id"].get<std::string>() + " ";
      for (const auto& c : f["consequences"]) all += c.get<std::string>() + " ";
    }
    if (cols.size() > 2) {
      for (const auto& id : split(cols[2], ',')) {
        EXPECT_NE(all.find(id), std::string::npos) << cols[0] << " lacks " << id;
      }
    }
    bool error = !findings.empty() && findings[0]["severity"] == "error";
    EXPECT_EQ(r.exit_code, error ? 2 : 0) << cols[0];
    EXPECT_EQ(j["schema"], "cuda-doctor/explain/v1");
    ++cases;
  }
  EXPECT_GE(cases, 48);
}

TEST(ExplainCli, NothingMatchedSaysSoAndExitsZero) {
  ProcessResult r = doctor({"explain", "--no-probe", kLogs + "noisy_clean_training.log"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("No known CUDA error signature"), std::string::npos);
}

TEST(ExplainCli, ReadsStdinAndMarkdown) {
  ProcessResult r = doctor({"explain", "--no-probe", "--markdown", kLogs + "oom_jax.log"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("`memory.oom`"), std::string::npos);
  ProcessResult s = run_process({"/bin/sh", "-c", std::string("cat ") + kLogs + "oom_jax.log | " + CD_BINARY + " explain --no-probe --json -"});
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.out.find("memory.oom"), std::string::npos);
}

TEST(ExplainCli, UnreadableFileExitsThree) {
  ProcessResult r = doctor({"explain", "--no-probe", "/nonexistent/log.txt"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("cannot read /nonexistent/log.txt"), std::string::npos);
}

// --- joins with recorded facts ---

nlohmann::json explain_with_facts(const std::string& log) {
  ProcessResult r = doctor({"explain", "--json", "--facts", kFacts, kLogs + log});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  return json_of(r);
}

std::string evidence_of(const nlohmann::json& f) {
  std::string s;
  for (const auto& e : f["evidence"]) s += e["fact"].get<std::string>() + "\n";
  return s;
}
std::string fix_of(const nlohmann::json& f) {
  std::string s;
  for (const auto& e : f["fix"]) s += e.get<std::string>() + "\n";
  return s;
}

TEST(ExplainJoin, NoKernelImageNamesGpuAndBinaryArchs) {
  auto f = explain_with_facts("no_kernel_image_extension.log")["findings"][0];
  EXPECT_EQ(f["id"], "arch.no_kernel_image");
  std::string ev = evidence_of(f);
  EXPECT_NE(ev.find("NVIDIA H200, sm_90"), std::string::npos) << ev;
  EXPECT_NE(ev.find("SASS sm_80 sm_86"), std::string::npos) << ev;
  EXPECT_NE(fix_of(f).find("TORCH_CUDA_ARCH_LIST=\"9.0\""), std::string::npos);
}

TEST(ExplainJoin, DriverTooOldComparesDriverAndBuildCuda) {
  auto f = explain_with_facts("driver_too_old_torch.log")["findings"][0];
  std::string ev = evidence_of(f);
  EXPECT_NE(ev.find("driver 535.104.05 supports CUDA up to 12.2"), std::string::npos) << ev;
  EXPECT_NE(ev.find("built for CUDA 12.4"), std::string::npos) << ev;
  EXPECT_NE(fix_of(f).find("/whl/cu121"), std::string::npos) << fix_of(f);  // newest variant <= the driver
}

// The fix speaks the machine's package manager: the recorded Ubuntu machine's apt, the same
// machine recorded as Rocky Linux 9's dnf.
TEST(ExplainJoin, ModuleRebuildUsesTheMachinesPackageManager) {
  auto f = explain_with_facts("driver_module_not_built_modprobe.log")["findings"][0];
  EXPECT_EQ(f["id"], "driver.module_not_built");
  EXPECT_NE(fix_of(f).find("sudo apt install linux-headers-$(uname -r)\n"), std::string::npos) << fix_of(f);
  std::ifstream in(kFacts);
  nlohmann::json facts = nlohmann::json::parse(in);
  facts["host"]["os"] = "Rocky Linux 9.4 (Blue Onyx)";
  facts["host"]["os_id"] = "rocky", facts["host"]["os_like"] = "rhel centos fedora", facts["host"]["os_version"] = "9.4";
  std::string path = testing::TempDir() + "facts_rocky.json";
  std::ofstream(path) << facts.dump();
  ProcessResult r = doctor({"explain", "--json", "--facts", path, kLogs + "driver_module_not_built_modprobe.log"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  std::string fix = fix_of(json_of(r)["findings"][0]);
  EXPECT_NE(fix.find("sudo dnf install kernel-devel-$(uname -r) kernel-headers-$(uname -r)\n"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("apt"), std::string::npos) << fix;
}

TEST(ExplainJoin, OomListsHoldersAndDeadOnes) {
  auto j = explain_with_facts("oom_torch_detailed.log");
  auto f = j["findings"][0];
  EXPECT_EQ(f["id"], "memory.oom");
  std::string ev = evidence_of(f);
  EXPECT_NE(ev.find("pid 4242 (python3) holds 40960 MiB"), std::string::npos) << ev;
  EXPECT_NE(ev.find("pid 5151 (?) holds 39000 MiB — process is gone"), std::string::npos) << ev;
  EXPECT_NE(fix_of(f).find("kill 4242"), std::string::npos);
  bool dead = false;
  for (const auto& g : j["findings"]) dead |= g["id"] == "memory.held_by_dead_process";
  EXPECT_TRUE(dead);
}

TEST(ExplainJoin, LibraryNotFoundListsCopiesAndTheVariableThatReachesThem) {
  auto f = explain_with_facts("libs_not_found_cudart12.log")["findings"][0];
  EXPECT_EQ(f["id"], "libs.not_found");
  std::string ev = evidence_of(f);
  EXPECT_NE(ev.find("a copy exists: /usr/local/cuda-12.8/lib64/libcudart.so.12"), std::string::npos) << ev;
  EXPECT_EQ(ev.find("libcudart.so.13 ("), std::string::npos);  // another major is not a copy of it
  EXPECT_NE(fix_of(f).find("export LD_LIBRARY_PATH=/usr/local/cuda-12.8/lib64"), std::string::npos) << fix_of(f);
}

TEST(ExplainJoin, NotVisibleBlamesEmptyCudaVisibleDevices) {
  auto f = explain_with_facts("not_visible_torch.log")["findings"][0];
  EXPECT_NE(evidence_of(f).find("CUDA_VISIBLE_DEVICES=''"), std::string::npos);
  EXPECT_NE(fix_of(f).find("unset CUDA_VISIBLE_DEVICES"), std::string::npos);
}

TEST(ExplainJoin, StubAndWrongEnvironment) {
  auto stub = explain_with_facts("stub_library_34.log")["findings"][0];
  EXPECT_NE(evidence_of(stub).find("stub directory on the library search path: /usr/local/cuda-13.0/lib64/stubs"), std::string::npos);
  ProcessResult r = run_process({"/bin/sh", "-c", "printf \"ModuleNotFoundError: No module named 'flash_attn'\\n\" | " + std::string(CD_BINARY) +
                                                      " explain --json --facts " + kFacts + " -"});
  auto f = json_of(r)["findings"][0];
  EXPECT_EQ(f["id"], "framework.wrong_environment");
  EXPECT_NE(evidence_of(f).find("flash-attn 2.7.4 is installed for /home/u/.conda/envs/ml/bin/python"), std::string::npos) << evidence_of(f);
}

TEST(ExplainJoin, XidOnTheGpuShowsEcc) {
  auto f = explain_with_facts("xid_fallen_off_bus.log")["findings"][0];
  std::string ev = evidence_of(f);
  EXPECT_NE(ev.find("Xid 79: GPU has fallen off the bus"), std::string::npos) << ev;
  EXPECT_NE(ev.find("uncorrected ECC 2"), std::string::npos) << ev;
}

// --- explain -- CMD ---

TEST(ExplainCommand, PassesOutputThroughAndKeepsTheCommandsStatus) {
  ProcessResult r = doctor({"explain", "--no-probe", "--", "/bin/sh", "-c", "echo hello-out; echo 'RuntimeError: CUDA error: out of memory' >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("hello-out"), std::string::npos);
  EXPECT_NE(r.err.find("RuntimeError: CUDA error: out of memory"), std::string::npos);
  EXPECT_NE(r.out.find("memory.oom"), std::string::npos);
}

TEST(ExplainCommand, FindingsExitAndSuccessfulCommands) {
  ProcessResult a = doctor({"explain", "--no-probe", "--findings-exit", "--", "/bin/sh", "-c", "echo 'CUDA error: out of memory'; exit 3"});
  EXPECT_EQ(a.exit_code, 2);
  ProcessResult b = doctor({"explain", "--no-probe", "--", "/bin/true"});
  EXPECT_EQ(b.exit_code, 0);
  EXPECT_NE(b.err.find("no known error"), std::string::npos);
  // Succeeded but printed a known error: the findings decide.
  ProcessResult c = doctor({"explain", "--no-probe", "--", "/bin/sh", "-c", "echo 'CUDA error: an illegal memory access was encountered'"});
  EXPECT_EQ(c.exit_code, 2);
  // Failed with nothing known: its status, and no invented cause.
  ProcessResult d = doctor({"explain", "--no-probe", "--", "/bin/sh", "-c", "echo bye; exit 5"});
  EXPECT_EQ(d.exit_code, 5);
  EXPECT_NE(d.out.find("No known CUDA error signature"), std::string::npos);
}

// Ctrl-C goes to the terminal's foreground process group, cuda-doctor's: the command
// must stop, and cuda-doctor must ignore it and still diagnose. The script sends that
// Ctrl-C to its parent's group (field 5 of /proc/PPID/stat); doctor() starts
// cuda-doctor in a group of its own, so nothing else receives it.
TEST(ExplainCommand, CtrlCStopsTheCommandAndTheDiagnosisStillComes) {
  ProcessResult r = doctor({"explain", "--no-probe", "--", "/bin/sh", "-c",
                            "echo 'CUDA error: out of memory'; kill -INT -$(cut -d' ' -f5 /proc/$PPID/stat); sleep 5"});
  EXPECT_EQ(r.signal, 0) << "cuda-doctor itself was interrupted";
  EXPECT_EQ(r.exit_code, 130);  // 128 + SIGINT, the command's status
  EXPECT_NE(r.err.find("killed by signal 2"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("memory.oom"), std::string::npos);
  EXPECT_LT(r.seconds, 4.0);
}

TEST(ExplainCommand, TheCommandReadsOurStdin) {
  ProcessResult r = run_process({"/bin/sh", "-c", "echo typed-answer | " + std::string(CD_BINARY) +
                                                     " explain --no-probe -- /bin/sh -c 'read x; echo got:$x'"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("got:typed-answer"), std::string::npos) << r.out;
}

TEST(ExplainCommand, JsonKeepsStdoutPureAndSignalsMap) {
  ProcessResult r = doctor({"explain", "--no-probe", "--json", "--", "/bin/sh", "-c", "echo noise; echo 'CUDA error: out of memory'; kill -9 $$"});
  EXPECT_EQ(r.exit_code, 128 + 9);
  auto j = json_of(r);
  EXPECT_EQ(j["log"]["command_signal"], 9);
  EXPECT_EQ(j["findings"][0]["id"], "memory.oom");
  EXPECT_NE(r.err.find("noise"), std::string::npos);
}

TEST(ExplainCommand, MissingCommandExitsThree) {
  ProcessResult r = doctor({"explain", "--no-probe", "--", "/nonexistent/cmd"});
  EXPECT_EQ(r.exit_code, 3);
}

// --- hostile input ---

TEST(ExplainHostile, TenMegabyteLineGarbageAndInvalidUtf8) {
  std::string path = std::string(CD_BUILD_DIR) + "/explain_hostile.log";
  {
    std::ofstream out(path, std::ios::binary);
    std::mt19937 rng(7);
    std::string junk(2u << 20, '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    out << junk << "\n" << std::string(10u << 20, 'A') << "RuntimeError: CUDA error: out of memory\xff\xfe\n" << junk;
  }
  ProcessResult r = doctor({"explain", "--no-probe", "--json", path});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  auto j = json_of(r);
  EXPECT_EQ(j["findings"][0]["id"], "memory.oom");
  EXPECT_GE(j["log"]["long_lines"].get<int>(), 1);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

// A library named in the error line is scanned live: its real kernel images (built
// here by nvcc for sm_75 only) appear as evidence.
TEST(ExplainScanHook, NamedLibraryIsScanned) {
  const std::string nvcc = "/usr/local/cuda/bin/nvcc";
  ProcessOptions slow;
  slow.timeout = std::chrono::seconds(120);
  if (access(nvcc.c_str(), X_OK) != 0) GTEST_SKIP() << "no nvcc";
  std::string dir = std::string(CD_BUILD_DIR) + "/explain_scan_hook";
  ProcessResult mk = run_process({"/bin/sh", "-c", "mkdir -p " + dir + " && printf '__global__ void k(int* p) { p[0] = 1; }\\n' > " + dir +
                                                       "/k.cu && " + nvcc + " -gencode arch=compute_75,code=sm_75 -shared -Xcompiler -fPIC -o " + dir +
                                                       "/libk75.so " + dir + "/k.cu"},
                                 slow);
  ASSERT_TRUE(mk.ok()) << mk.err;
  ProcessResult r = run_process({"/bin/sh", "-c", "echo 'RuntimeError: " + dir + "/libk75.so: CUDA error: no kernel image is available for execution on the device' | " +
                                                      std::string(CD_BINARY) + " explain --json -"},
                                slow);
  EXPECT_EQ(r.exit_code, 2);
  auto j = nlohmann::json::parse(r.out);
  std::string ev;
  for (const auto& e : j["findings"][0]["evidence"]) ev += e["fact"].get<std::string>() + "\n";
  EXPECT_NE(ev.find("libk75.so: SASS sm_75; PTX none"), std::string::npos) << ev;
}

}  // namespace
}  // namespace cd
