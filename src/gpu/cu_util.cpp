#include "gpu/cu_util.hpp"

#include "kb/cuda_errors.hpp"

namespace cd::gpu {

void cu_check(const CudaApi& api, CUresult r, const char* call) {
  if (r != kCudaSuccess) throw CuError(call, r, api.error_name(r), api.error_string(r));
}

VerifyStep failed_step(std::string layer, std::string name, std::string gpu, const CuError& e, double seconds) {
  VerifyStep s{std::move(layer), std::move(name), StepStatus::fail, e.what(), seconds, std::move(gpu), e.code, e.name, ""};
  if (e.code == 0) {  // not a CUresult: the library did not load, or a result was wrong
    s.finding = e.name == "WRONG_RESULT" ? "device.hardware_fault" : "driver.missing";
    return s;
  }
  if (const CudaErrorInfo* info = find_cuda_error(Kb::get(), e.code)) {
    s.finding = info->finding;
    if (s.code_name.empty() || s.code_name.rfind("CUresult", 0) == 0) s.code_name = info->name;
    if (s.detail.find(info->meaning) == std::string::npos) s.detail += " — " + info->meaning;
  }
  return s;
}

VerifyStep passed_step(std::string layer, std::string name, std::string gpu, std::string detail, double seconds) {
  return VerifyStep{std::move(layer), std::move(name), StepStatus::pass, std::move(detail), seconds, std::move(gpu), 0, "", ""};
}

VerifyStep skipped_step(std::string layer, std::string name, std::string gpu, std::string why) {
  return VerifyStep{std::move(layer), std::move(name), StepStatus::skip, std::move(why), 0, std::move(gpu), 0, "", ""};
}

DeviceBuffer::DeviceBuffer(const CudaApi& api, size_t bytes) : api_(api), bytes_(bytes) {
  cu_need(api.cuMemAlloc, "cuMemAlloc_v2");
  cu_check(api, api.cuMemAlloc(&ptr_, bytes), "cuMemAlloc_v2");
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_ && api_.cuMemFree) api_.cuMemFree(ptr_);
}

PinnedBuffer::PinnedBuffer(const CudaApi& api, size_t bytes) : api_(api) {
  cu_need(api.cuMemHostAlloc, "cuMemHostAlloc");
  cu_check(api, api.cuMemHostAlloc(&ptr_, bytes, kMemHostAllocPortable), "cuMemHostAlloc");
}
PinnedBuffer::~PinnedBuffer() {
  if (ptr_ && api_.cuMemFreeHost) api_.cuMemFreeHost(ptr_);
}

EventTimer::EventTimer(const CudaApi& api) : api_(api) {
  cu_need(api.cuEventCreate, "cuEventCreate");
  cu_need(api.cuEventElapsedTime, "cuEventElapsedTime");
  cu_check(api, api.cuEventCreate(&a_, kEventDefault), "cuEventCreate");
  cu_check(api, api.cuEventCreate(&b_, kEventDefault), "cuEventCreate");
}
EventTimer::~EventTimer() {
  if (api_.cuEventDestroy) {
    if (a_) api_.cuEventDestroy(a_);
    if (b_) api_.cuEventDestroy(b_);
  }
}
void EventTimer::start(CUstream s) { cu_check(api_, api_.cuEventRecord(a_, s), "cuEventRecord"); }
double EventTimer::stop_ms(CUstream s) {
  cu_check(api_, api_.cuEventRecord(b_, s), "cuEventRecord");
  cu_check(api_, api_.cuEventSynchronize(b_), "cuEventSynchronize");
  float ms = 0;
  cu_check(api_, api_.cuEventElapsedTime(&ms, a_, b_), "cuEventElapsedTime");
  return ms;
}

PrimaryContext::PrimaryContext(const CudaApi& api, int index) : api_(api) {
  cu_need(api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  cu_need(api.cuCtxSetCurrent, "cuCtxSetCurrent");
  cu_check(api, api.cuDeviceGet(&dev_, index), "cuDeviceGet");
  cu_check(api, api.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
  cu_check(api, api.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
}
PrimaryContext::~PrimaryContext() {
  if (ctx_ && api_.cuDevicePrimaryCtxRelease) api_.cuDevicePrimaryCtxRelease(dev_);
}

void cu_init(CudaApi& api) {
  if (!api.load()) throw CuError("dlopen " + api.path, 0, "LIBRARY_NOT_LOADED", api.error);
  cu_check(api, api.cuInit(0), "cuInit");
}

std::string gpu_label(int index) { return "GPU " + std::to_string(index); }

}  // namespace cd::gpu
