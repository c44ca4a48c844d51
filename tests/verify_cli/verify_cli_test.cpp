// End-to-end: the built cuda-doctor runs verify/bench against the fake NVIDIA
// libraries of build/fakes (tests/fakes/*.cpp) with faults injected through CD_FAKE_*:
// error codes become findings with the right id, hangs are killed by the watchdog,
// crashes name the step, the NCCL triage finds the transport that works.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "util/subprocess.hpp"

namespace {

struct DoctorRun {
  int code = -1;
  std::string out, err;
  double seconds = 0;
  nlohmann::json json;
};

// verify/bench on the fakes; no torch step (CUDA_DOCTOR_PYTHON empty).
DoctorRun doctor(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  cd::ProcessOptions o;
  o.timeout = std::chrono::seconds(120);
  o.env_set = {{"CUDA_DOCTOR_LIBCUDA", std::string(CD_FAKES_DIR) + "/libcuda.so.1"},
               {"CUDA_DOCTOR_LIB_DIR", CD_FAKES_DIR},
               {"CUDA_DOCTOR_LIBNVML", std::string(CD_FAKES_DIR) + "/libnvidia-ml.so.1"},
               {"CUDA_DOCTOR_PYTHON", ""},
               {"NO_COLOR", "1"}};
  for (auto& [k, v] : env) o.env_set[k] = v;
  args.insert(args.begin(), CD_BINARY);
  cd::ProcessResult p = cd::run_process(args, o);
  DoctorRun r{p.exit_code, p.out, p.err, p.seconds, {}};
  if (!p.out.empty() && p.out.front() == '{') r.json = nlohmann::json::parse(p.out, nullptr, false);
  return r;
}

const nlohmann::json* step(const DoctorRun& r, const std::string& name) {
  for (const auto& s : r.json["verify"]["steps"])
    if (s["name"] == name) return &s;
  return nullptr;
}

bool has_finding(const DoctorRun& r, const std::string& id) {
  for (const auto& f : r.json["findings"])
    if (f["id"] == id) return true;
  return false;
}

}  // namespace

TEST(VerifyCli, HealthyFakeGpuPassesQuick) {
  DoctorRun r = doctor({"verify", "--quick", "--json"});
  ASSERT_TRUE(r.json.is_object()) << r.out << r.err;
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* s : {"cuInit", "devices", "context", "PTX JIT", "kernel correctness", "GEMM correctness"}) {
    const nlohmann::json* st = step(r, s);
    ASSERT_NE(st, nullptr) << s;
    EXPECT_EQ((*st)["status"], "pass") << s << ": " << (*st)["detail"];
  }
  EXPECT_EQ(r.json["verify"]["gpus"][0]["name"], "NVIDIA Fake GPU");
  EXPECT_FALSE(r.json["verify"]["measurements"].empty());
}

TEST(VerifyCli, NoDeviceMapsToDeviceNotVisible) {
  DoctorRun r = doctor({"verify", "--quick", "--json"}, {{"CD_FAKE_FAIL", "cuInit:100"}});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has_finding(r, "device.not_visible")) << r.out;
  EXPECT_EQ((*step(r, "cuInit"))["code_name"], "CUDA_ERROR_NO_DEVICE");
}

TEST(VerifyCli, ForwardCompatErrorIsNamed) {
  DoctorRun r = doctor({"verify", "--quick", "--json"}, {{"CD_FAKE_FAIL", "cuInit:804"}});
  EXPECT_TRUE(has_finding(r, "driver.forward_compat_unsupported")) << r.out;
}

TEST(VerifyCli, RealStubLibraryIsReportedAsStub) {
  DoctorRun r = doctor({"verify", "--quick"}, {{"CUDA_DOCTOR_LIBCUDA", "/usr/local/cuda/lib64/stubs/libcuda.so"}});
  if (r.out.find("cannot open") != std::string::npos) GTEST_SKIP() << "no toolkit stub here";
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("driver.stub_library"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CUDA_ERROR_STUB_LIBRARY"), std::string::npos);
}

TEST(VerifyCli, HangInJitIsKilledByTheWatchdog) {
  DoctorRun r = doctor({"verify", "--quick", "--json", "--step-timeout", "2"}, {{"CD_FAKE_HANG", "cuModuleLoadDataEx"}});
  EXPECT_LT(r.seconds, 30);
  const nlohmann::json* s = step(r, "PTX JIT");
  ASSERT_NE(s, nullptr) << r.out;
  EXPECT_EQ((*s)["status"], "fail");
  EXPECT_EQ((*s)["code_name"], "TIMEOUT");
  EXPECT_NE((*s)["detail"].get<std::string>().find("hung"), std::string::npos);
  EXPECT_TRUE(has_finding(r, "device.hardware_fault"));
}

TEST(VerifyCli, CrashInKernelLaunchNamesTheStep) {
  DoctorRun r = doctor({"verify", "--quick", "--json"}, {{"CD_FAKE_CRASH", "cuLaunchKernel"}});
  const nlohmann::json* s = step(r, "kernel correctness");
  ASSERT_NE(s, nullptr) << r.out;
  EXPECT_EQ((*s)["code_name"], "CRASH");
  EXPECT_NE((*s)["detail"].get<std::string>().find("SIGSEGV"), std::string::npos) << (*s)["detail"];
  EXPECT_EQ(r.code, 2);
}

TEST(VerifyCli, WrongKernelResultIsCaughtElementByElement) {
  DoctorRun r = doctor({"verify", "--quick", "--json"}, {{"CD_FAKE_WRONG", "1"}});
  const nlohmann::json* s = step(r, "kernel correctness");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ((*s)["status"], "fail");
  EXPECT_NE((*s)["detail"].get<std::string>().find("never written"), std::string::npos) << (*s)["detail"];
}

TEST(VerifyCli, CublasFailureAndWrongGemmAreReported) {
  DoctorRun a = doctor({"verify", "--quick", "--json"}, {{"CD_FAKE_CUBLAS_STATUS", "1"}});
  const nlohmann::json* s = step(a, "GEMM correctness");
  ASSERT_NE(s, nullptr) << a.out;
  EXPECT_EQ((*s)["code_name"], "CUBLAS_STATUS_NOT_INITIALIZED");
  DoctorRun b = doctor({"verify", "--quick", "--json"}, {{"CD_FAKE_CUBLAS_WRONG", "1"}});
  EXPECT_NE((*step(b, "GEMM correctness"))["detail"].get<std::string>().find("expected"), std::string::npos);
}

TEST(VerifyCli, NcclHangFallsBackToP2PDisabled) {
  DoctorRun r = doctor({"verify", "--json", "--step-timeout", "3"},
                 {{"CD_FAKE_NCCL", "hang"}, {"CD_FAKE_DEVICES", "2"}});
  ASSERT_TRUE(r.json.is_object()) << r.out << r.err;
  const auto& nccl = r.json["verify"]["nccl"];
  EXPECT_EQ(nccl["attempts"][0]["outcome"], "timeout");
  EXPECT_EQ(nccl["working"], "NCCL_P2P_DISABLE=1");
  EXPECT_EQ(nccl["attempts"][1]["transports"][0], "SHM/direct");
  EXPECT_TRUE(has_finding(r, "nccl.timeout_or_hang"));
  EXPECT_NE(r.out.find("export NCCL_P2P_DISABLE=1"), std::string::npos);
}

TEST(VerifyCli, NcclShmFailureFallsBackToShmDisabled) {
  DoctorRun r = doctor({"verify", "--json"}, {{"CD_FAKE_NCCL", "fail"}, {"CD_FAKE_DEVICES", "2"}});
  const auto& nccl = r.json["verify"]["nccl"];
  EXPECT_EQ(nccl["working"], "NCCL_SHM_DISABLE=1") << r.out;
  EXPECT_NE(nccl["attempts"][0]["detail"].get<std::string>().find("ncclSystemError"), std::string::npos);
  EXPECT_NE(r.out.find("/dev/shm"), std::string::npos);
}

TEST(VerifyCli, NcclSlowTransportIsFlagged) {
  DoctorRun r = doctor({"verify", "--json"}, {{"NCCL_P2P_DISABLE", "1"}, {"CD_FAKE_DEVICES", "2"}});
  EXPECT_EQ(r.json["verify"]["nccl"]["attempts"][0]["outcome"], "pass") << r.out;
  EXPECT_TRUE(has_finding(r, "nccl.slow_transport")) << r.out;
}

TEST(VerifyCli, BenchPrintsAnAlignedTableAndJson) {
  DoctorRun t = doctor({"bench", "--quick"});
  EXPECT_EQ(t.code, 0) << t.out << t.err;
  EXPECT_NE(t.out.find("dtod_memcpy"), std::string::npos);
  EXPECT_NE(t.out.find("bytes read + written counted"), std::string::npos);
  EXPECT_EQ(t.out.find("Steps"), std::string::npos);  // measurements only
  DoctorRun j = doctor({"bench", "--quick", "--json"});
  ASSERT_TRUE(j.json.is_object()) << j.out;
  EXPECT_EQ(j.json["schema"], "cuda-doctor/bench/v1");
  EXPECT_FALSE(j.json["measurements"].empty());
}

// bench follows the one exit policy (report/exit_status): judged like verify, so --strict
// turns a warning into 1 and --ignore drops it; a failed step is 2.
TEST(VerifyCli, BenchFollowsTheExitPolicy) {
  std::map<std::string, std::string> slow{{"NCCL_P2P_DISABLE", "1"}, {"CD_FAKE_DEVICES", "2"}};  // nccl.slow_transport
  EXPECT_EQ(doctor({"bench"}, slow).code, 0);
  EXPECT_EQ(doctor({"bench", "--strict"}, slow).code, 1);
  EXPECT_EQ(doctor({"--strict", "bench", "--ignore", "nccl.slow_transport"}, slow).code, 0);
  DoctorRun failed = doctor({"bench", "--quick"}, {{"CD_FAKE_FAIL", "cuInit:100"}});
  EXPECT_EQ(failed.code, 2) << failed.out << failed.err;
  EXPECT_NE(failed.out.find("no measurements"), std::string::npos) << failed.out;
}
