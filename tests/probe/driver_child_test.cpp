// The driver query runs in a child process: a hung or crashing driver must become
// DriverFacts::query_error (with the stage it was in and what it had learned), never a
// hung or crashed tool. Uses real shells for the child's failure modes and the built
// cuda-doctor with the fake NVML (tests/fakes/fake_nvml.cpp) for the real child.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "probe/driver_probe.hpp"

using namespace std::chrono_literals;

namespace {

cd::ProcessResult shell(const std::string& script, std::chrono::milliseconds timeout = 5000ms) {
  return cd::run_driver_child({"/bin/sh", "-c", script}, timeout);
}

// Sets environment variables for one scope (the child inherits them).
struct ScopedEnv {
  std::vector<std::string> names;
  ScopedEnv(std::initializer_list<std::pair<const char*, std::string>> vars) {
    for (const auto& [k, v] : vars) {
      setenv(k, v.c_str(), 1);
      names.emplace_back(k);
    }
  }
  ~ScopedEnv() {
    for (const auto& n : names) unsetenv(n.c_str());
  }
};

bool have_binary_and_fake() {
  return std::filesystem::exists(CD_BINARY) && std::filesystem::exists(std::string(CD_FAKES_DIR) + "/libnvidia-ml.so.1");
}

}  // namespace

TEST(DriverChild, LastFactsLineWins) {
  auto r = shell(R"(echo '{"stage":"nvml"}'; echo '{"facts":{"nvml_driver_version":"1.0"}}';)"
                 R"( echo '{"stage":"cuInit"}'; echo '{"facts":{"nvml_driver_version":"580.159.04","cuda_driver_version":13000}}')");
  cd::DriverFacts d = cd::driver_facts_from_child(r);
  EXPECT_EQ(d.nvml_driver_version, "580.159.04");
  EXPECT_EQ(d.cuda_driver_version, 13000);
  EXPECT_TRUE(d.query_error.empty()) << d.query_error;
}

TEST(DriverChild, HangBecomesTimeoutWithStage) {
  auto start = std::chrono::steady_clock::now();
  auto r = shell(R"(echo '{"stage":"nvml"}'; echo '{"facts":{"nvml_error":"x"}}'; echo '{"stage":"cuInit"}'; exec sleep 30)", 400ms);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, 5s);
  EXPECT_TRUE(r.timed_out);
  cd::DriverFacts d = cd::driver_facts_from_child(r);
  EXPECT_NE(d.query_error.find("timed out"), std::string::npos) << d.query_error;
  EXPECT_NE(d.query_error.find("in cuInit"), std::string::npos) << d.query_error;
  EXPECT_EQ(d.nvml_error, "x");  // what was learned before the hang is kept
}

TEST(DriverChild, CrashBecomesSignal) {
  auto r = shell(R"(echo '{"stage":"nvml"}'; kill -SEGV $$)");
  cd::DriverFacts d = cd::driver_facts_from_child(r);
  EXPECT_NE(d.query_error.find("signal 11"), std::string::npos) << d.query_error;
  EXPECT_NE(d.query_error.find("in nvml"), std::string::npos) << d.query_error;
}

TEST(DriverChild, GarbageAndFailuresAreReported) {
  cd::DriverFacts d = cd::driver_facts_from_child(shell("echo not json; echo '{\"facts\": 5}'"));
  EXPECT_EQ(d.query_error, "driver query gave no answer");
  d = cd::driver_facts_from_child(shell("echo boom >&2; exit 3"));
  EXPECT_NE(d.query_error.find("exit 3"), std::string::npos) << d.query_error;
  EXPECT_NE(d.query_error.find("boom"), std::string::npos) << d.query_error;
  d = cd::driver_facts_from_child(cd::run_driver_child({"/nonexistent/cuda-doctor", "__driver"}, 2000ms));
  EXPECT_NE(d.query_error.find("could not start"), std::string::npos) << d.query_error;
}

TEST(DriverChild, MergeKeepsFileFacts) {
  cd::DriverFacts d;
  d.module_version = "580.159.04";
  d.pci_gpus.push_back({"0000:3b:00.0", "0x2335", "0x030200", "nvidia"});
  cd::DriverFacts q;
  q.nvml_status = 0;
  q.gpus.emplace_back();
  cd::merge_driver_query(d, q);
  EXPECT_EQ(d.module_version, "580.159.04");
  EXPECT_EQ(d.pci_gpus.size(), 1u);
  EXPECT_EQ(d.nvml_status, 0);
  EXPECT_EQ(d.gpus.size(), 1u);
}

// The real child (cuda-doctor __driver) against the fake NVML.
class DriverChildFakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_binary_and_fake()) GTEST_SKIP() << "build cuda-doctor and fake_nvml first (ninja -C build)";
  }
  cd::DriverFacts run(std::chrono::milliseconds timeout = 10000ms) {
    return cd::driver_facts_from_child(cd::run_driver_child({CD_BINARY, "__driver"}, timeout));
  }
  ScopedEnv lib{{"CUDA_DOCTOR_LIBNVML", std::string(CD_FAKES_DIR) + "/libnvidia-ml.so.1"},
                {"CUDA_DOCTOR_LIBCUDA", "/nonexistent/libcuda.so.1"}};
};

TEST_F(DriverChildFakeNvml, NormalAnswer) {
  ScopedEnv e{{"CD_FAKE_NVML_PROCESSES", "4242:1024"}};
  cd::DriverFacts d = run();
  EXPECT_TRUE(d.query_error.empty()) << d.query_error;
  EXPECT_EQ(d.nvml_status, 0);
  EXPECT_EQ(d.nvml_driver_version, "580.159.04");
  EXPECT_EQ(d.nvml_cuda_driver_version, 13000);
  ASSERT_EQ(d.gpus.size(), 1u);
  EXPECT_EQ(d.gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(d.gpus[0].pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(d.gpus[0].cc_major, 9);
  EXPECT_EQ(d.gpus[0].memory_total_mib, 143771u);
  EXPECT_EQ(d.gpus[0].persistence_mode, "on");
  EXPECT_EQ(d.gpus[0].mig_mode, "disabled");
  EXPECT_EQ(d.gpus[0].pcie_gen_max, 5);
  EXPECT_EQ(d.gpus[0].retired_pages_pending, -1);  // NOT_SUPPORTED stays "not available"
  ASSERT_EQ(d.processes.size(), 1u);  // the 24-byte _v3 struct was read right
  EXPECT_EQ(d.processes[0].pid, 4242);
  EXPECT_EQ(d.processes[0].used_mib, 1024u);
  EXPECT_EQ(d.processes[0].gpu_uuid, d.gpus[0].uuid);
  EXPECT_NE(d.cu_init_error.find("/nonexistent/libcuda.so.1"), std::string::npos) << d.cu_init_error;
}

// The parent stops reading at the done line; if the child's last line stopped matching
// (key order, spacing), check would silently wait for the child's slow exit again.
TEST_F(DriverChildFakeNvml, LastLineIsTheDoneLineTheParentWaitsFor) {
  cd::ProcessResult r = cd::run_driver_child({CD_BINARY, "__driver"}, 10000ms);
  ASSERT_TRUE(r.ok()) << r.describe();
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  std::string last = out.substr(out.rfind('\n') + 1);
  EXPECT_EQ(last.rfind(cd::kDriverChildDoneLine, 0), 0u) << last;
}

TEST_F(DriverChildFakeNvml, VersionMismatchIsDecoded) {
  ScopedEnv e{{"CD_FAKE_NVML_INIT", "18"}};
  cd::DriverFacts d = run();
  EXPECT_EQ(d.nvml_status, 18);
  EXPECT_NE(d.nvml_error.find("NVML_ERROR_LIB_RM_VERSION_MISMATCH"), std::string::npos) << d.nvml_error;
  EXPECT_TRUE(d.gpus.empty());
}

TEST_F(DriverChildFakeNvml, HangIsKilledAtTheTimeout) {
  ScopedEnv e{{"CD_FAKE_NVML_HANG", "1"}};
  auto start = std::chrono::steady_clock::now();
  cd::DriverFacts d = run(500ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_NE(d.query_error.find("timed out"), std::string::npos) << d.query_error;
  EXPECT_NE(d.query_error.find("in nvml"), std::string::npos) << d.query_error;
}

TEST_F(DriverChildFakeNvml, CrashIsReported) {
  ScopedEnv e{{"CD_FAKE_NVML_CRASH", "1"}};
  cd::DriverFacts d = run();
  EXPECT_NE(d.query_error.find("signal 11"), std::string::npos) << d.query_error;
  EXPECT_NE(d.query_error.find("in nvml"), std::string::npos) << d.query_error;
}

// `check --facts` on the facts recorded on the H200 (tests/fixtures/h200/README.md).
TEST(DriverChild, H200FactsReplay) {
  if (!std::filesystem::exists(CD_BINARY)) GTEST_SKIP() << "build cuda-doctor first";
  cd::ProcessOptions p;
  p.timeout = 20000ms;
  auto r = cd::run_process({CD_BINARY, "check", "--facts", std::string(CD_FIXTURES) + "/h200/facts.json", "--json"}, p);
  ASSERT_TRUE(r.started);
  EXPECT_FALSE(r.timed_out);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out.substr(0, 300) << r.err;
  const auto& d = j["facts"]["driver"];
  EXPECT_EQ(d["nvml_driver_version"], "580.159.04");
  EXPECT_EQ(d["cuda_driver_version"], 13000);
  EXPECT_EQ(d["gpus"][0]["cc_major"], 9);
  EXPECT_EQ(d["gpus"][0]["cc_minor"], 0);
  for (const auto& f : j["findings"]) {
    std::string id = f["id"];
    EXPECT_NE(id.rfind("driver.", 0), 0u) << id;
    EXPECT_NE(id.rfind("device.", 0), 0u) << id;
    EXPECT_NE(id.rfind("container.", 0), 0u) << id;
  }
}

// The built binary on every driver/platform --root fixture: the layer-1 findings it reports.
TEST(DriverChild, RootFixturesEndToEnd) {
  if (!std::filesystem::exists(CD_BINARY)) GTEST_SKIP() << "build cuda-doctor first";
  const std::map<std::string, std::string> expected = {
      {"driver_ok", ""},
      {"driver_mismatch", "driver.library_mismatch/error"},
      {"driver_none", "driver.missing/error"},
      {"driver_unbound", "driver.gpu_without_driver/error"},
      {"driver_nouveau", "driver.gpu_without_driver/error"},
      {"driver_libs_no_module", "driver.gpu_without_driver/error"},
      {"driver_stub_ldconf", "driver.stub_library/error"},
      {"driver_no_uvm", "driver.missing/warning"},
      {"driver_compat_old", "driver.forward_compat_unsupported/warning"},
      {"platform_docker_nogpu", "container.no_gpu_runtime/error"},
      {"platform_k8s", ""},
      {"platform_wsl1", "wsl.driver_problem/error"},
      {"platform_wsl2_linux_driver", "wsl.driver_problem/error"},
      {"platform_wsl2_ok", ""},
      {"install_upgraded_435", "driver.library_mismatch/error"},
      {"install_unattended_550", "driver.library_mismatch/error"},
      {"install_dnf_rocky", "driver.library_mismatch/error"},
      {"install_not_built", "driver.module_not_built/error"},
      {"install_next_boot", "driver.module_not_built/warning"},
      {"install_secure_boot", "driver.secure_boot_unsigned/error"},
      {"install_nouveau", "driver.nouveau/error"},
  };
  for (const auto& [root, want] : expected) {
    cd::ProcessOptions p;
    p.timeout = 20000ms;
    p.env_unset = {"KUBERNETES_SERVICE_HOST", "container", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_REQUIRE_CUDA"};
    auto r = cd::run_process({CD_BINARY, "check", "--root", std::string(CD_FIXTURES) + "/roots/" + root, "--json"}, p);
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << root << ": " << r.err;
    std::string got;
    for (const auto& f : j["findings"]) {
      std::string id = f["id"];
      if (id.rfind("driver.", 0) && id.rfind("device.", 0) && id.rfind("container.", 0) && id.rfind("wsl.", 0)) continue;
      got += (got.empty() ? "" : " ") + id + "/" + f["severity"].get<std::string>();
    }
    EXPECT_EQ(got, want) << root;
  }
}

// scan's light query: NVML alone answers when it knows the GPUs; cuInit is skipped.
TEST_F(DriverChildFakeNvml, NvmlFirstSkipsCuInitWhenNvmlKnowsTheGpus) {
  cd::DriverFacts d = cd::driver_facts_from_child(cd::run_driver_child({CD_BINARY, "__driver", "--nvml-first"}, 10000ms));
  EXPECT_TRUE(d.query_error.empty()) << d.query_error;
  ASSERT_EQ(d.gpus.size(), 1u);
  EXPECT_EQ(d.gpus[0].cc_major, 9);
  EXPECT_EQ(d.cuda_driver_version, 13000);  // from nvmlSystemGetCudaDriverVersion
  EXPECT_EQ(d.cu_init_status, -1) << "cuInit must not have been tried";
  EXPECT_TRUE(d.cu_init_error.empty());
}

// Nor are check's health questions asked (ECC alone is 3.3 ms of an H100's driver time):
// the same fake answers them in the full query.
TEST_F(DriverChildFakeNvml, NvmlFirstAsksNoHealthQuestions) {
  ScopedEnv e{{"CD_FAKE_NVML_ECC_UNCORRECTED", "3"}, {"CD_FAKE_NVML_PCIE", "4,8,5,16"}};
  cd::DriverFacts light = cd::driver_facts_from_child(cd::run_driver_child({CD_BINARY, "__driver", "--nvml-first"}, 10000ms));
  ASSERT_EQ(light.gpus.size(), 1u);
  EXPECT_EQ(light.gpus[0].ecc_uncorrected_volatile, -1);
  EXPECT_EQ(light.gpus[0].pcie_gen_current, 0);
  EXPECT_GT(light.gpus[0].memory_total_mib, 0);
  cd::DriverFacts full = cd::driver_facts_from_child(cd::run_driver_child({CD_BINARY, "__driver"}, 10000ms));
  ASSERT_EQ(full.gpus.size(), 1u);
  EXPECT_EQ(full.gpus[0].ecc_uncorrected_volatile, 3);
  EXPECT_EQ(full.gpus[0].pcie_gen_current, 4);
}

TEST_F(DriverChildFakeNvml, NvmlFirstFallsBackToTheDriverApi) {
  ScopedEnv e{{"CD_FAKE_NVML_INIT", "18"}};
  cd::DriverFacts d = cd::driver_facts_from_child(cd::run_driver_child({CD_BINARY, "__driver", "--nvml-first"}, 10000ms));
  EXPECT_NE(d.cu_init_error.find("/nonexistent/libcuda.so.1"), std::string::npos) << "cuInit path was not tried";
}
