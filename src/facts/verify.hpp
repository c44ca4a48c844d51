#pragma once
// Results of verify/bench on the real GPUs.
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

struct Measurement {
  std::string name;      // "dtod_copy_kernel", "htod_pinned", "gemm_bf16_8192"
  std::string gpu;       // "GPU 0" or "0->1"
  double value = 0;
  std::string unit;      // "GB/s", "TFLOP/s"
  double expected = 0;   // from the knowledge base, 0 when unknown
  std::string expected_source;
  std::string note;      // "bytes read + written counted"
  double threshold = 0;  // below this the rules report perf.below_expected (0 = no judgement)
};
CD_JSON(Measurement, name, gpu, value, unit, expected, expected_source, note, threshold)

// JSON spells them "pass" / "fail" / "skip"; an unknown word reads as skip.
enum class StepStatus { pass, fail, skip };
NLOHMANN_JSON_SERIALIZE_ENUM(StepStatus, {{StepStatus::skip, "skip"}, {StepStatus::pass, "pass"}, {StepStatus::fail, "fail"}})
inline const char* status_name(StepStatus s) { return s == StepStatus::pass ? "pass" : s == StepStatus::fail ? "fail" : "skip"; }

struct VerifyStep {
  std::string layer;   // "driver", "device", "libs", "nccl", "framework"
  std::string name;    // "cuInit", "PTX JIT", "kernel correctness", "cuBLAS GEMM"
  StepStatus status = StepStatus::skip;
  std::string detail;
  double seconds = 0;
  std::string gpu;     // "GPU 0", "all" or ""
  int code = 0;        // CUresult / ncclResult_t / cublasStatus_t of a failure, 0 otherwise
  std::string code_name;   // "CUDA_ERROR_NO_DEVICE"
  std::string finding;     // finding id the failure maps to (kb cuda_errors), "" when unknown
};
CD_JSON(VerifyStep, layer, name, status, detail, seconds, gpu, code, code_name, finding)

// One GPU as the driver API reports it.
struct VerifyGpu {
  int index = 0;
  std::string name;          // "NVIDIA H200"
  std::string cc;            // "9.0"
  int sm_count = 0;
  double total_mem_gib = 0;
  std::string pci_bus_id;    // "0000:19:00.0"
  std::string uuid;
  int pcie_gen = 0;          // current, from NVML when available (0 = unknown)
  int pcie_width = 0;
  int pcie_max_gen = 0;
  int pcie_max_width = 0;
};
CD_JSON(VerifyGpu, index, name, cc, sm_count, total_mem_gib, pci_bus_id, uuid, pcie_gen, pcie_width, pcie_max_gen,
        pcie_max_width)

// How an NCCL attempt ended; JSON "pass" / "fail" / "timeout" / "crash" (unknown reads as fail).
enum class NcclOutcome { pass, fail, timeout, crash };
NLOHMANN_JSON_SERIALIZE_ENUM(NcclOutcome, {{NcclOutcome::fail, "fail"},
                                           {NcclOutcome::pass, "pass"},
                                           {NcclOutcome::timeout, "timeout"},
                                           {NcclOutcome::crash, "crash"}})
inline const char* outcome_name(NcclOutcome o) {
  switch (o) {
    case NcclOutcome::pass: return "pass";
    case NcclOutcome::timeout: return "timeout";
    case NcclOutcome::crash: return "crash";
    case NcclOutcome::fail: break;
  }
  return "fail";
}

// NCCL all-reduce runs: the first attempt and the triage reruns.
struct NcclAttempt {
  std::string label;        // "default", "NCCL_P2P_DISABLE=1", …
  std::vector<std::string> env;  // what was set for this attempt
  NcclOutcome outcome = NcclOutcome::fail;
  std::string detail;
  double busbw_gbs = 0;     // at the largest size
  std::vector<std::string> transports;  // "P2P/CUMEM", "SHM", "NET/Socket" seen in NCCL_DEBUG=INFO
};
CD_JSON(NcclAttempt, label, env, outcome, detail, busbw_gbs, transports)

struct NcclFacts {
  std::string library;      // path dlopened
  std::string version;      // "2.28.3"
  int ranks = 0;
  std::vector<NcclAttempt> attempts;
  std::string working;      // label of the first attempt that passed, "" when none
};
CD_JSON(NcclFacts, library, version, ranks, attempts, working)

struct VerifyFacts {
  bool ran = false;
  bool quick = false;
  std::string libcuda;          // the library dlopened
  int driver_cuda_version = 0;  // cuDriverGetVersion (13000)
  std::vector<VerifyGpu> gpus;
  std::vector<std::vector<int>> p2p_access;  // [i][j] = 1 when GPU i can access GPU j
  std::string cublas;           // cuBLAS/cuBLASLt library used, "" when none
  NcclFacts nccl;
  std::vector<VerifyStep> steps;
  std::vector<Measurement> measurements;
  double seconds = 0;           // wall time of the whole run
};
CD_JSON(VerifyFacts, ran, quick, libcuda, driver_cuda_version, gpus, p2p_access, cublas, nccl, steps, measurements,
        seconds)

}  // namespace cd
