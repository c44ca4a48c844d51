// Stage tests of gpu/: the driver-API loader against real libraries of this machine
// (the toolkit's stub libcuda), the embedded PTX through the real ptxas, the child line
// protocol, the NCCL log summary, and the expected figures from the knowledge base.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "gpu/cuda_api.hpp"
#include "gpu/nccl_api.hpp"
#include "gpu/nccl_log.hpp"
#include "gpu/ptx_kernels.hpp"
#include "gpu/verify_expect.hpp"
#include "gpu/verify_protocol.hpp"
#include "kb/cuda_errors.hpp"
#include "kb/perf.hpp"
#include "util/subprocess.hpp"

using namespace cd;
using namespace cd::gpu;

namespace {
const char* kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";
const char* kPtxas = "/usr/local/cuda/bin/ptxas";
bool exists(const char* p) { return std::ifstream(p).good(); }
}  // namespace

TEST(CudaApi, StubLibraryLoadsAndCuInitSaysStub) {
  if (!exists(kStub)) GTEST_SKIP() << "no toolkit stub libcuda here";
  setenv("CUDA_DOCTOR_LIBCUDA", kStub, 1);
  CudaApi api;
  ASSERT_TRUE(api.load()) << api.error;
  unsetenv("CUDA_DOCTOR_LIBCUDA");
  EXPECT_EQ(api.path, kStub);
  EXPECT_NE(api.cuDeviceTotalMem, nullptr);  // resolved through cuDeviceTotalMem_v2
  CUresult r = api.cuInit(0);
  EXPECT_EQ(r, 34);
  EXPECT_EQ(api.error_name(r), "CUDA_ERROR_STUB_LIBRARY");
}

TEST(CudaApi, MissingLibraryIsAnErrorNotACrash) {
  setenv("CUDA_DOCTOR_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  CudaApi api;
  EXPECT_FALSE(api.load());
  unsetenv("CUDA_DOCTOR_LIBCUDA");
  EXPECT_NE(api.error.find("libcuda.so.1"), std::string::npos);
}

TEST(CudaErrors, TableNamesTheCodesVerifyMaps) {
  const Kb& kb = Kb::get();
  for (int code : {2, 34, 35, 46, 100, 209, 218, 222, 803, 804, 999}) {
    const CudaErrorInfo* e = find_cuda_error(kb, code);
    ASSERT_NE(e, nullptr) << code;
    EXPECT_FALSE(e->meaning.empty());
    EXPECT_FALSE(e->source.empty());
  }
  EXPECT_EQ(find_cuda_error(kb, 100)->finding, "device.not_visible");
  EXPECT_EQ(find_cuda_error(kb, 34)->finding, "driver.stub_library");
  EXPECT_EQ(find_cuda_error(kb, 12345), nullptr);
}

// The PTX must assemble for Turing (oldest CUDA 13 target) and Hopper.
TEST(Ptx, AssemblesWithPtxas) {
  if (!exists(kPtxas)) GTEST_SKIP() << "no ptxas";
  std::string path = testing::TempDir() + "/cd_verify.ptx";
  std::ofstream(path) << verify_ptx();
  for (const char* arch : {"sm_75", "sm_90"}) {  // CUDA 13 ptxas no longer targets sm_70 {
    ProcessResult r = run_process({kPtxas, std::string("-arch=") + arch, path, "-o", path + ".cubin"});
    EXPECT_TRUE(r.ok()) << arch << ": " << r.err;
  }
}

TEST(Ptx, HostFillMatchesMurmurFinalizer) {
  // fmix32(0 * 0x9E3779B1 + 0) = 0; masks apply after the hash.
  EXPECT_EQ(host_fill_value(0, 0, 0xFFFFFFFFu, 0), 0u);
  EXPECT_NE(host_fill_value(1, 0, 0xFFFFFFFFu, 0), host_fill_value(2, 0, 0xFFFFFFFFu, 0));
  EXPECT_EQ(host_fill_value(7, 3, 0x807F807Fu, 0x3F003F00u) & 0x7F807F80u, 0x3F003F00u);  // bf16 pair in ±[0.5,1)
}

TEST(Protocol, RoundTripsAndSurvivesATruncatedLine) {
  testing::internal::CaptureStdout();
  JsonLineSink sink;
  sink.begin("cuInit");
  sink.step(VerifyStep{"driver", "cuInit", StepStatus::pass, "ok", 0.1, "", 0, "", ""});
  sink.begin("kernel correctness");
  sink.measurement(Measurement{"dtod_memcpy", "GPU 0", 4000, "GB/s", 0, "", "", 0});
  sink.value("libcuda", "/x/libcuda.so.1");
  std::string out = testing::internal::GetCapturedStdout();
  out += "host:1:1 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\n{\"step\": {\"layer\": \"dev";  // crash mid-line
  ChildReport r = parse_child_output(out);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].name, "cuInit");
  ASSERT_EQ(r.measurements.size(), 1u);
  EXPECT_DOUBLE_EQ(r.measurements[0].value, 4000);
  EXPECT_EQ(r.values["libcuda"], "/x/libcuda.so.1");
  EXPECT_EQ(r.unfinished(), "kernel correctness");
  EXPECT_EQ(r.other_lines.size(), 2u);
}

TEST(NcclLog, SummarisesVersionTransportsAndWarnings) {
  NcclLogSummary s = summarize_nccl_log({
      "h:1:1 [0] NCCL INFO NCCL version 2.28.3+cuda13.0",
      "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
      "h:1:1 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read",
      "h:1:1 [1] NCCL INFO Channel 01/0 : 1[1] -> 2[2] via SHM/direct/direct",
      "h:1:1 [1] NCCL WARN Error: failed to open shared memory",
  });
  EXPECT_EQ(s.version, "2.28.3+cuda13.0");
  EXPECT_EQ(s.transports, (std::vector<std::string>{"P2P/CUMEM", "SHM/direct"}));
  EXPECT_EQ(s.warnings.size(), 1u);
}

TEST(Nccl, VersionCodes) {
  EXPECT_EQ(nccl_version_text(22803), "2.28.3");
  EXPECT_EQ(nccl_version_text(2708), "2.7.8");
  EXPECT_EQ(nccl_result_finding(8), "nccl.timeout_or_hang");
}

TEST(Expectations, H200FiguresComeFromTheKnowledgeBase) {
  VerifyFacts v;
  v.gpus.push_back(VerifyGpu{0, "NVIDIA H200", "9.0", 132, 139.8, "0000:19:00.0", "", 5, 16, 5, 16});
  v.measurements.push_back(Measurement{"dtod_memcpy", "GPU 0", 3000, "GB/s", 0, "", "", 0});
  v.measurements.push_back(Measurement{"htod_pinned", "GPU 0", 50, "GB/s", 0, "", "", 0});
  v.measurements.push_back(Measurement{"gemm_bf16_8192", "GPU 0", 800, "TFLOP/s", 0, "", "", 0});
  v.measurements.push_back(Measurement{"gemm_bf16_4096", "GPU 0", 800, "TFLOP/s", 0, "", "", 0});
  add_expectations(v, Kb::get());
  EXPECT_DOUBLE_EQ(v.measurements[0].expected, 4278);
  EXPECT_NEAR(v.measurements[0].threshold, 4278 * 0.7, 1e-6);
  EXPECT_NEAR(v.measurements[1].expected, 55.5, 1e-9);
  EXPECT_NE(v.measurements[1].expected_source.find("Gen5 x16"), std::string::npos);
  EXPECT_DOUBLE_EQ(v.measurements[2].expected, 790);
  EXPECT_GT(v.measurements[3].expected, 0);
  EXPECT_EQ(v.measurements[3].threshold, 0);  // quick-size GEMM: shown, not judged
}

TEST(Perf, RowsHaveSourcesAndSpecificNamesWin) {
  const Kb& kb = Kb::get();
  for (const GpuPerf& g : perf_table(kb).gpus) EXPECT_FALSE(g.source.empty()) << g.model;
  EXPECT_EQ(find_gpu_perf(kb, "NVIDIA H100 PCIe")->model, "H100 PCIe");
  EXPECT_EQ(find_gpu_perf(kb, "NVIDIA H100 80GB HBM3")->model, "H100 SXM");
  EXPECT_EQ(find_gpu_perf(kb, "NVIDIA H200 NVL")->model, "H200 NVL");
  EXPECT_EQ(find_gpu_perf(kb, "NVIDIA GeForce GTX 1080"), nullptr);
}
