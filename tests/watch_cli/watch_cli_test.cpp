// End-to-end `watch`: the built cuda-doctor with the fake NVML (tests/fakes/fake_nvml.cpp)
// scripting utilization, memory, clocks, throttle reasons and process lists, and real child
// processes for the CPU side (a busy loop, a sleeper, a stopped child, a zombie, a reaped
// PID, another user's, a host PID this namespace cannot see). The thresholds come from a
// copy of data/ with shorter minimum run times (CUDA_DOCTOR_DATA), so each run takes ~2 s.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "util/subprocess.hpp"

namespace fs = std::filesystem;

namespace {

struct DoctorRun {
  int code = -1;
  std::string out, err;
  nlohmann::json json;
};

fs::path scratch() {
  static fs::path dir = [] {
    // mkdtemp, not the PID: ctest starts hundreds of processes, PIDs repeat, and a directory
    // left by an earlier run with the same PID made copy_file fail with "File exists".
    std::string tmpl = (fs::temp_directory_path() / "cd-watch-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    fs::path d = tmpl;
    static const fs::path kRemove = d;
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(kRemove, ec);
    });
    fs::create_directories(d / "data");
    for (const auto& e : fs::directory_iterator(fs::path(CD_SOURCE_DIR) / "data"))
      if (e.path().extension() == ".toml") fs::copy_file(e.path(), d / "data" / e.path().filename());
    std::ifstream in(d / "data" / "watch.toml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text = std::regex_replace(text, std::regex("min_seconds = 5"), "min_seconds = 1.5");
    text = std::regex_replace(text, std::regex("min_samples = 10"), "min_samples = 8");
    text = std::regex_replace(text, std::regex("busy_cpu_cores = 0.5"), "busy_cpu_cores = 0.2");
    std::ofstream(d / "data" / "watch.toml") << text;
    return d;
  }();
  return dir;
}

DoctorRun doctor(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  cd::ProcessOptions o;
  o.timeout = std::chrono::seconds(60);
  o.env_set = {{"CUDA_DOCTOR_LIBNVML", std::string(CD_FAKES_DIR) + "/libnvidia-ml.so.1"},
               {"CUDA_DOCTOR_DATA", (scratch() / "data").string()},
               {"NO_COLOR", "1"}};
  for (auto& [k, v] : env) o.env_set[k] = v;
  args.insert(args.begin(), CD_BINARY);
  cd::ProcessResult p = cd::run_process(args, o);
  DoctorRun r{p.exit_code, p.out, p.err, {}};
  if (!p.out.empty() && p.out.front() == '{') r.json = nlohmann::json::parse(p.out, nullptr, false);
  return r;
}

std::vector<std::string> ids(const DoctorRun& r) {
  std::vector<std::string> out;
  for (const auto& f : r.json["findings"]) out.push_back(f["id"]);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// `sh -c` that writes "$$:MIB:GPU" (its own PID with a context) to the fake's process file,
// then execs CMD (same PID).
std::vector<std::string> job(const fs::path& pids, const std::string& gpu_ctx, const std::string& cmd) {
  return {"--", "sh", "-c", "echo $$:" + gpu_ctx + " > " + pids.string() + "; exec " + cmd};
}

const std::string kBusy = "timeout 2.5 sh -c 'while :; do :; done'";  // a CPU-bound child of the PID with the context

}  // namespace

TEST(WatchCli, NoDriverRunsTheCommandKeepsItsStatusAndSaysSoInOneLine) {
  std::map<std::string, std::string> none = {{"CUDA_DOCTOR_LIBNVML", "/nonexistent/libnvidia-ml.so.1"}};
  fs::path marker = scratch() / "ran";
  auto r = doctor({"watch", "--", "sh", "-c", "touch " + marker.string() + "; exit 7"}, none);
  EXPECT_EQ(r.code, 7) << r.err;
  EXPECT_TRUE(fs::exists(marker));
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("cuda-doctor watch: no GPU to sample: no NVIDIA driver is loaded"), std::string::npos) << r.err;
  r = doctor({"watch", "--", "true"}, none);
  EXPECT_EQ(r.code, 0) << r.err;
  // Nothing to run: the whole machine or --pid without a driver is exit 3, one line.
  r = doctor({"watch", "--duration", "1"}, none);
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = doctor({"watch", "--pid", std::to_string(getpid()), "--duration", "1"}, none);
  EXPECT_EQ(r.code, 3);
}

TEST(WatchCli, KeepsTheCommandsExitStatusAndSignal) {
  auto r = doctor({"watch", "--interval", "0.1", "--", "sh", "-c", "exit 5"});
  EXPECT_EQ(r.code, 5) << r.err;
  EXPECT_NE(r.out.find("exit 5"), std::string::npos) << r.out;
  r = doctor({"watch", "--interval", "0.1", "--", "sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(r.code, 128 + SIGTERM) << r.err;
  r = doctor({"watch", "--", "/nonexistent/cmd"});
  EXPECT_EQ(r.code, 127) << r.err;
}

TEST(WatchCli, BadArgumentsAreOneLineAndExit3) {
  for (auto args : std::vector<std::vector<std::string>>{{"watch", "--interval", "0.05", "--", "true"},
                                                         {"watch", "--interval", "2", "--", "true"},
                                                         {"watch", "--pid", "999999999"},
                                                         {"watch", "--plot", "/nonexistent/dir/x.svg", "--", "true"}}) {
    auto r = doctor(args);
    EXPECT_EQ(r.code, 3) << args[1];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(WatchCli, InputBoundJobIsToldFromABusyOne) {
  fs::path pids = scratch() / "pids-input";
  std::map<std::string, std::string> env = {{"CD_FAKE_NVML_PROCESSES", "@" + pids.string()}, {"CD_FAKE_NVML_UTIL", "0,0,0,3"}};
  auto r = doctor([&] {
    auto a = job(pids, "2048:0", kBusy);
    a.insert(a.begin(), {"watch", "--json", "--interval", "0.1"});
    return a;
  }(), env);
  ASSERT_TRUE(r.json.is_object()) << r.out << r.err;
  EXPECT_EQ(r.code, 124) << "timeout's own status is kept";
  EXPECT_TRUE(has(ids(r), "perf.input_bound")) << r.json["findings"].dump(1);
  EXPECT_TRUE(r.json["contexts_known"].get<bool>());
  EXPECT_GE(r.json["job_cpu_idle_cores"].get<double>(), 0.2);
  // The busy child has no context of its own: its CPU counts for GPU 0 through its parent.
  EXPECT_GE(r.json["gpus"][0]["cpu_mean_cores"].get<double>(), 0.2);
  bool worker = false;
  for (const auto& p : r.json["processes"]) worker |= p["comm"] == "sh" && p["gpus"].empty() && p["cpu_mean_cores"].get<double>() > 0.2;
  EXPECT_TRUE(worker) << r.json["processes"].dump(1);
  EXPECT_GE(r.json["samples"].size(), 15u);

  // The same job on a GPU kept busy: no input-bound finding.
  env["CD_FAKE_NVML_UTIL"] = "97,99,95";
  r = doctor([&] {
    auto a = job(pids, "2048:0", kBusy);
    a.insert(a.begin(), {"watch", "--json", "--interval", "0.1"});
    return a;
  }(), env);
  EXPECT_FALSE(has(ids(r), "perf.input_bound")) << r.json["findings"].dump(1);
  EXPECT_FALSE(has(ids(r), "perf.gpu_idle"));
  EXPECT_GT(r.json["gpus"][0]["mean_util"].get<double>(), 90);
}

TEST(WatchCli, IdleGpuAndIdleCpuIsWaitingNotInputBound) {
  fs::path pids = scratch() / "pids-wait";
  auto a = job(pids, "1024:0", "sleep 2.2");
  a.insert(a.begin(), {"watch", "--json", "--interval", "0.1"});
  auto r = doctor(a, {{"CD_FAKE_NVML_PROCESSES", "@" + pids.string()}});
  EXPECT_EQ(r.code, 0);
  auto found = ids(r);
  EXPECT_TRUE(has(found, "perf.gpu_idle")) << r.json["findings"].dump(1);
  EXPECT_FALSE(has(found, "perf.input_bound"));
}

TEST(WatchCli, CpuOnlyJobNeverUsedAGpu) {
  auto r = doctor({"watch", "--json", "--interval", "0.1", "--", "sh", "-c", kBusy});
  EXPECT_TRUE(has(ids(r), "perf.gpu_not_used")) << r.json["findings"].dump(1);
  EXPECT_FALSE(r.json["contexts_known"].get<bool>());
  // In a container NVML lists host PIDs this namespace cannot see: the job's context may be one
  // of them, so it is judged on that GPU (input-bound here), never called CPU-only.
  r = doctor({"watch", "--json", "--interval", "0.1", "--", "sh", "-c", kBusy}, {{"CD_FAKE_NVML_PROCESSES", "4000000:2048"}});
  EXPECT_FALSE(has(ids(r), "perf.gpu_not_used")) << r.json["findings"].dump(1);
  EXPECT_TRUE(has(ids(r), "perf.input_bound")) << r.json["findings"].dump(1);
  EXPECT_TRUE(r.json["hidden_contexts"].get<bool>());
  bool hidden = false;
  for (const auto& smp : r.json["samples"]) hidden |= smp["hidden_pids"] == nlohmann::json::array({4000000});
  EXPECT_TRUE(hidden);
}

TEST(WatchCli, OneOfTwoGpusMemoryNearFullAndThrottled) {
  fs::path pids = scratch() / "pids-single";
  std::map<std::string, std::string> env = {{"CD_FAKE_NVML_GPUS", "2"},
                                            {"CD_FAKE_NVML_PROCESSES", "@" + pids.string()},
                                            {"CD_FAKE_NVML_UTIL", "99;0"},
                                            {"CD_FAKE_NVML_USED_MIB", "140000;0"},
                                            {"CD_FAKE_NVML_THROTTLE", "0x20,0x24,0x4,0x0;0x1"},  // sw thermal (+power cap) while busy
                                            {"CD_FAKE_NVML_SM_CLOCK", "1410;210"}};
  auto a = job(pids, "130000:0", "sleep 2.2");
  a.insert(a.begin(), {"watch", "--json", "--interval", "0.1"});
  auto r = doctor(a, env);
  auto found = ids(r);
  EXPECT_TRUE(has(found, "perf.single_gpu_used")) << r.json["findings"].dump(1);
  EXPECT_TRUE(has(found, "memory.near_full"));
  EXPECT_TRUE(has(found, "perf.clocks_throttled"));
  for (const auto& f : r.json["findings"]) {
    if (f["id"] == "perf.clocks_throttled") {
      EXPECT_EQ(f["severity"], "warning");
      EXPECT_NE(f["title"].get<std::string>().find("software thermal slowdown"), std::string::npos) << f.dump();
    }
    if (f["id"] == "perf.single_gpu_used") {
      EXPECT_NE(f["fix"][0].get<std::string>().find("torchrun"), std::string::npos);
    }
  }
  EXPECT_EQ(r.json["gpus"].size(), 2u);
  EXPECT_FALSE(r.json["gpus"][1]["job_used"].get<bool>());
  // Power cap alone is info, not a warning: expected under full load.
  env["CD_FAKE_NVML_THROTTLE"] = "0x4";
  r = doctor(a, env);
  bool info = false;
  for (const auto& f : r.json["findings"]) info |= f["id"] == "perf.clocks_throttled" && f["severity"] == "info";
  EXPECT_TRUE(info) << r.json["findings"].dump(1);
}

// Whole machine: NVML lists processes in every state the issue names; the tree walk reads
// what /proc has and skips what it cannot see, and --duration ends the watch.
TEST(WatchCli, WholeMachineWithStoppedZombieGoneOtherUserAndHostPid) {
  pid_t stopped = fork();
  if (stopped == 0) {
    for (;;) pause();
  }
  kill(stopped, SIGSTOP);
  waitpid(stopped, nullptr, WUNTRACED);
  pid_t zombie = fork();
  if (zombie == 0) _exit(0);
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  pid_t other = -1;
  if (getuid() == 0) {
    other = fork();
    if (other == 0) {
      if (setuid(65534) != 0) _exit(1);
      for (;;) pause();
    }
  }
  usleep(100000);
  std::string procs = std::to_string(stopped) + ":2048," + std::to_string(zombie) + ":1024," + std::to_string(gone) + ":512,4000000:4096";
  if (other > 0) procs += "," + std::to_string(other) + ":256";
  auto r = doctor({"watch", "--json", "--interval", "0.2", "--duration", "1.2"}, {{"CD_FAKE_NVML_PROCESSES", procs}, {"CD_FAKE_NVML_UTIL", "40"}});
  kill(stopped, SIGKILL);
  kill(stopped, SIGCONT);
  if (other > 0) kill(other, SIGKILL);
  for (pid_t p : {stopped, zombie, other})
    if (p > 0) waitpid(p, nullptr, 0);
  ASSERT_TRUE(r.json.is_object()) << r.out << r.err;
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.json["mode"], "machine");
  std::map<int, std::string> states;
  for (const auto& p : r.json["processes"]) states[p["pid"].get<int>()] = p["state"];
  EXPECT_EQ(states[stopped], "T");
  EXPECT_EQ(states[zombie], "Z");
  EXPECT_EQ(states.count(gone), 0u);
  EXPECT_EQ(states.count(4000000), 0u);
  if (other > 0) {
    EXPECT_EQ(states[other], "S");
  }
  // Every GPU reading carries the process list (which GPUs each process has a context on).
  size_t fresh = 0;
  for (const auto& s : r.json["samples"])
    if (s["gpu"].get<bool>()) {
      ++fresh;
      EXPECT_EQ(s["gpus"][0]["pids"].size(), other > 0 ? 5u : 4u);
    }
  EXPECT_GE(fresh, r.json["samples"].size() - 1) << "a GPU reading with (nearly) every tick";
}

TEST(WatchCli, AttachesToAPidAndEndsWhenItExits) {
  pid_t child = fork();
  if (child == 0) {
    usleep(600000);
    _exit(0);
  }
  // The child exits and stays a zombie (we reap it only afterwards): that ends the watch too,
  // long before --duration.
  auto start = std::chrono::steady_clock::now();
  auto r = doctor({"watch", "--pid", std::to_string(child), "--interval", "0.1", "--duration", "20"});
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  waitpid(child, nullptr, 0);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_LT(took, 10);
  EXPECT_NE(r.out.find("cuda-doctor watch · pid " + std::to_string(child)), std::string::npos) << r.out;
}

TEST(WatchCli, TextSummaryHasNoTerminalControlWhenNotATerminal) {
  auto r = doctor({"watch", "--interval", "0.1", "--", "sh", "-c", "echo hello from the job; sleep 0.3"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("hello from the job"), std::string::npos);
  EXPECT_NE(r.out.find("GPU 0  NVIDIA H200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("watch cost"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find('\033'), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find('\033'), std::string::npos);
}

// --plot: a self-contained SVG, parsed as XML by Python's standard parser (well-formed, the
// SVG namespace, axes and one util/memory/cpu series per GPU with points), then drawn by
// headless Chromium to a PNG kept under build/test-artifacts/ (skipped without Chromium).
TEST(WatchCli, PlotIsWellFormedSvgWithAxesAndSeriesAndRendersInChromium) {
  fs::path pids = scratch() / "pids-plot", svg = scratch() / "plot.svg";
  auto a = job(pids, "70000:0", kBusy);
  a.insert(a.begin(), {"watch", "--interval", "0.1", "--plot", svg.string()});
  auto r = doctor(a, {{"CD_FAKE_NVML_GPUS", "2"},
                      {"CD_FAKE_NVML_PROCESSES", "@" + pids.string()},
                      {"CD_FAKE_NVML_UTIL", "0,0,80,95,10,0;0"},
                      {"CD_FAKE_NVML_USED_MIB", "20000,40000,70000;512"}});
  ASSERT_TRUE(fs::exists(svg)) << r.err;
  std::ifstream in(svg);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("<script"), std::string::npos);
  EXPECT_EQ(text.find("href"), std::string::npos) << "self-contained: no links";
  std::string python = cd::which("python3", std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin");
  if (!python.empty()) {
    auto p = cd::run_process({python, "-c",
                              "import sys, xml.etree.ElementTree as E\n"
                              "ns = '{http://www.w3.org/2000/svg}'\n"
                              "root = E.parse(sys.argv[1]).getroot()\n"
                              "assert root.tag == ns + 'svg', root.tag\n"
                              "axes = [g for g in root.iter(ns + 'g') if g.get('class') == 'axes']\n"
                              "lines = [(l.get('data-series'), len(l.get('points').split())) for l in root.iter(ns + 'polyline')]\n"
                              "print(len(axes), ' '.join(sorted(s for s, n in lines if n > 5)))\n",
                              svg.string()});
    EXPECT_EQ(p.exit_code, 0) << p.err;
    EXPECT_EQ(p.out, "2 cpu cpu memory memory util util\n") << p.err;
  }
  std::string chromium;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
    if (chromium.empty()) chromium = cd::which(name, "/usr/bin:/usr/local/bin:/snap/bin");
  if (chromium.empty()) GTEST_SKIP() << "headless Chromium not installed (./dev.sh test installs it: scripts/bootstrap.sh)";
  fs::path png = fs::path(CD_BUILD_DIR) / "test-artifacts" / "watch_plot.png";
  fs::create_directories(png.parent_path());
  fs::remove(png);
  cd::ProcessOptions o;
  o.timeout = std::chrono::seconds(90);
  o.env_set = {{"HOME", scratch().string()}};
  auto p = cd::run_process({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=960,470",
                            "--screenshot=" + png.string(), "file://" + svg.string()},
                           o);
  ASSERT_TRUE(fs::exists(png)) << p.describe() << "\n" << p.err;
  std::ifstream pin(png, std::ios::binary);
  char sig[8] = {};
  pin.read(sig, 8);
  EXPECT_EQ(std::string(sig + 1, 3), "PNG");
  EXPECT_GT(fs::file_size(png), 5000u);
}
