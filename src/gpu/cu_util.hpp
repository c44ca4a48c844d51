#pragma once
// Small helpers around the driver API for the verify steps: errors that carry the
// CUresult, a step stopwatch, device buffers and events that free themselves.
#include <chrono>
#include <stdexcept>
#include <string>

#include "facts/verify.hpp"
#include "gpu/cuda_api.hpp"

namespace cd::gpu {

// A failed driver call: which call, the code, and the driver's name for it.
struct CuError : std::runtime_error {
  CuError(std::string call_, CUresult code_, std::string name_, std::string text_)
      : std::runtime_error(code_ == 0 ? call_ + " failed: " + text_
                                      : call_ + " failed: " + name_ + " (" + std::to_string(code_) + "): " + text_),
        call(std::move(call_)), code(code_), name(std::move(name_)) {}
  std::string call;
  CUresult code;
  std::string name;
};

// Throws CuError when r != CUDA_SUCCESS.
void cu_check(const CudaApi& api, CUresult r, const char* call);
// Throws CuError(CUDA_ERROR_NOT_FOUND) when the driver lacks a symbol we need.
template <class Fn>
void cu_need(Fn fn, const char* name) {
  if (!fn) throw CuError(name, 500, "CUDA_ERROR_NOT_FOUND", std::string("the driver does not export ") + name);
}

// A step result with the failure's code, name and mapped finding filled in.
VerifyStep failed_step(std::string layer, std::string name, std::string gpu, const CuError& e, double seconds);
VerifyStep passed_step(std::string layer, std::string name, std::string gpu, std::string detail, double seconds);
VerifyStep skipped_step(std::string layer, std::string name, std::string gpu, std::string why);

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
 private:
  std::chrono::steady_clock::time_point start_;
};

// Device memory owned for the scope.
class DeviceBuffer {
 public:
  DeviceBuffer(const CudaApi& api, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUdeviceptr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }
 private:
  const CudaApi& api_;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

// Pinned host memory owned for the scope.
class PinnedBuffer {
 public:
  PinnedBuffer(const CudaApi& api, size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* ptr() const { return ptr_; }
 private:
  const CudaApi& api_;
  void* ptr_ = nullptr;
};

// A pair of events around GPU work on a stream: elapsed milliseconds.
class EventTimer {
 public:
  explicit EventTimer(const CudaApi& api);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(CUstream s = nullptr);
  double stop_ms(CUstream s = nullptr);  // records, waits, returns elapsed ms
 private:
  const CudaApi& api_;
  CUevent a_ = nullptr, b_ = nullptr;
};

// Retains device `index`'s primary context and makes it current; releases it after.
class PrimaryContext {
 public:
  PrimaryContext(const CudaApi& api, int index);
  ~PrimaryContext();
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  CUcontext get() const { return ctx_; }
  CUdevice device() const { return dev_; }
 private:
  const CudaApi& api_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
};

// Loads the driver (libcuda + cuInit); throws CuError on failure. `api` must outlive use.
void cu_init(CudaApi& api);

std::string gpu_label(int index);  // "GPU 0"

}  // namespace cd::gpu
