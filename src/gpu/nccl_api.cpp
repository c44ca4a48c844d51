#include "gpu/nccl_api.hpp"

#include "gpu/dl.hpp"
#include "kb/library_status.hpp"

namespace cd::gpu {

bool NcclApi::load(const std::vector<std::string>& dirs) {
  std::vector<std::string> tries = library_tries(dirs, {"libnccl.so.2"});
  if (std::string env = library_path("CUDA_DOCTOR_LIBNCCL", ""); !env.empty()) tries.insert(tries.begin(), env);
  Opened lib = open_first(tries, "ncclGetVersion");
  error = lib.error;
  if (!lib.handle) return false;
  path = lib.path;
  resolve(lib.handle, ncclGetVersion, {"ncclGetVersion"});
  resolve(lib.handle, ncclCommInitAll, {"ncclCommInitAll"});
  resolve(lib.handle, ncclCommDestroy, {"ncclCommDestroy"});
  resolve(lib.handle, ncclAllReduce, {"ncclAllReduce"});
  resolve(lib.handle, ncclGroupStart, {"ncclGroupStart"});
  resolve(lib.handle, ncclGroupEnd, {"ncclGroupEnd"});
  resolve(lib.handle, ncclGetErrorString, {"ncclGetErrorString"});
  if (!ncclGetVersion || !ncclCommInitAll || !ncclAllReduce || !ncclGroupStart || !ncclGroupEnd) {
    error = path + " lacks the NCCL 2 entry points (ncclCommInitAll, ncclAllReduce, ncclGroupStart/End)";
    return false;
  }
  return true;
}

std::string nccl_result_name(ncclResult r) {
  const LibraryStatus* row = find_library_status(Kb::get(), "nccl", r);
  return row ? row->name : "ncclResult " + std::to_string(r);
}

std::string nccl_result_finding(ncclResult r) {
  const LibraryStatus* row = find_library_status(Kb::get(), "nccl", r);
  return row && !row->finding.empty() ? row->finding : "nccl.system_error";
}

std::string nccl_version_text(int code) {
  if (code >= 10000) return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
                            std::to_string(code % 100);
  return std::to_string(code / 1000) + "." + std::to_string(code / 100 % 10) + "." + std::to_string(code % 100);
}

}  // namespace cd::gpu
