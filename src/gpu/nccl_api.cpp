#include "gpu/nccl_api.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace cd::gpu {

bool NcclApi::load(const std::vector<std::string>& dirs) {
  std::vector<std::string> tries;
  if (const char* env = std::getenv("CUDA_DOCTOR_LIBNCCL"); env && *env) tries.push_back(env);
  for (const std::string& d : dirs) tries.push_back(d + "/libnccl.so.2");
  tries.push_back("libnccl.so.2");
  void* h = nullptr;
  for (const std::string& t : tries) {
    if ((h = dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (const char* e = dlerror(); e && error.empty()) error = e;
  }
  if (!h) return false;
  auto sym = [&](auto& fn, const char* name) { fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name)); };
  sym(ncclGetVersion, "ncclGetVersion");
  sym(ncclCommInitAll, "ncclCommInitAll");
  sym(ncclCommDestroy, "ncclCommDestroy");
  sym(ncclAllReduce, "ncclAllReduce");
  sym(ncclGroupStart, "ncclGroupStart");
  sym(ncclGroupEnd, "ncclGroupEnd");
  sym(ncclGetErrorString, "ncclGetErrorString");
  Dl_info info{};
  path = ncclGetVersion && dladdr(reinterpret_cast<void*>(ncclGetVersion), &info) && info.dli_fname ? info.dli_fname
                                                                                                   : tries.back();
  if (!ncclGetVersion || !ncclCommInitAll || !ncclAllReduce || !ncclGroupStart || !ncclGroupEnd) {
    error = path + " lacks the NCCL 2 entry points (ncclCommInitAll, ncclAllReduce, ncclGroupStart/End)";
    return false;
  }
  return true;
}

// Values of ncclResult_t in nccl.h.
std::string nccl_result_name(ncclResult r) {
  switch (r) {
    case 0: return "ncclSuccess";
    case 1: return "ncclUnhandledCudaError";
    case 2: return "ncclSystemError";
    case 3: return "ncclInternalError";
    case 4: return "ncclInvalidArgument";
    case 5: return "ncclInvalidUsage";
    case 6: return "ncclRemoteError";
    case 7: return "ncclInProgress";
    case 8: return "ncclTimeout";
    default: return "ncclResult " + std::to_string(r);
  }
}

std::string nccl_result_finding(ncclResult r) {
  switch (r) {
    case 1: return "nccl.unhandled_cuda_error";
    case 2: case 6: return "nccl.system_error";
    case 8: return "nccl.timeout_or_hang";
    default: return "nccl.system_error";
  }
}

std::string nccl_version_text(int code) {
  if (code >= 10000) return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
                            std::to_string(code % 100);
  return std::to_string(code / 1000) + "." + std::to_string(code / 100 % 10) + "." + std::to_string(code % 100);
}

}  // namespace cd::gpu
