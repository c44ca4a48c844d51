#pragma once
// verify's parent side: runs each GPU step as `EXE __verify STEP …` in a child
// process with a timeout, turns crashes and hangs into failed steps (naming the step
// that was running), runs the NCCL triage ladder, the torch step, and collects it all
// into VerifyFacts with the knowledge base's expected figures.
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "facts/verify.hpp"
#include "kb/kb.hpp"

namespace cd::gpu {

struct VerifyPlan {
  std::string exe;                      // the cuda-doctor binary (self_exe())
  bool quick = false;
  std::chrono::milliseconds step_timeout{60'000};  // per child process
  std::vector<std::string> lib_dirs;    // cuBLAS/NCCL search, first wins
  std::string python;                   // interpreter with torch; "" skips the framework step
  std::map<std::string, std::string> env;  // added to every child
  std::function<void(const std::string&)> on_step;  // progress: the step about to run
};

VerifyFacts run_verify(const VerifyPlan& plan, const Kb& kb);

// The NCCL triage ladder is data/nccl.toml (kb/nccl.hpp); NCCL_NVLS_ENABLE=0 and
// NCCL_DEBUG=INFO are added to every attempt.

}  // namespace cd::gpu
