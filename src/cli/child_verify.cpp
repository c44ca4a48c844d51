// `cuda-doctor __verify STEP [--device N] [--quick] [--lib-dir DIR]… [--nccl-sizes B,B]`:
// one GPU step of verify, run by the parent in a child process with a timeout
// (gpu/verify_runner). Reports JSON lines on stdout (gpu/verify_protocol).
#include <cstdio>
#include <cstdlib>

#include "cli/options.hpp"
#include "gpu/verify_protocol.hpp"
#include "gpu/verify_steps.hpp"
#include "util/errors.hpp"

namespace cd {

int child_verify_main(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fprintf(stderr, "usage: cuda-doctor __verify devices|device|gemm|p2p|nccl [options]\n");
    return exit_code::cannot_run;
  }
  gpu::StepOptions o;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool has_value = i + 1 < args.size();
    if (a == "--quick") o.quick = true;
    else if (a == "--device" && has_value) o.device = std::atoi(args[++i].c_str());
    else if (a == "--lib-dir" && has_value) o.lib_dirs.push_back(args[++i]);
    else if (a == "--nccl-sizes" && has_value) {
      for (const char* p = args[++i].c_str(); *p;) {
        char* end = nullptr;
        o.nccl_sizes.push_back(std::strtoull(p, &end, 10));
        p = *end ? end + 1 : end;
      }
    } else {
      std::fprintf(stderr, "cuda-doctor __verify: unknown argument %s\n", a.c_str());
      return exit_code::cannot_run;
    }
  }
  gpu::JsonLineSink sink;
  const std::string& step = args[0];
  if (step == "devices") return gpu::step_devices(sink, o);
  if (step == "device") return gpu::step_device(sink, o);
  if (step == "gemm") return gpu::step_gemm(sink, o);
  if (step == "p2p") return gpu::step_p2p(sink, o);
  if (step == "nccl") return gpu::step_nccl(sink, o);
  std::fprintf(stderr, "cuda-doctor __verify: unknown step %s\n", step.c_str());
  return exit_code::cannot_run;
}

}  // namespace cd
