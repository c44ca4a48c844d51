#pragma once
// What one scan may spend on hostile input, per file and per run. Notes: a malformed file
// can make one per 8 bytes, so each file keeps at most `notes_per_file` (then one line
// saying how many more) and a run at most `notes_per_run`. Decompression (--kernels): a
// zstd frame of a few bytes may legally expand to 512 MiB, so the bytes decompressed are
// counted per file and per run, and the bytes held at once by all threads are bounded
// (a thread that would pass the bound waits until others release theirs).
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace cd::bin {

struct ScanLimits {
  size_t notes_per_file = 16;
  size_t notes_per_run = 1000;
  uint64_t decompressed_per_file = 4ull << 30;   // 4 GiB (the CUDA 13.0 toolkit's largest: ~0.8 GiB)
  uint64_t decompressed_per_run = 32ull << 30;   // 32 GiB (its whole lib64: ~2.3 GiB)
  uint64_t decompressed_at_once = 1ull << 30;    // 1 GiB held by all threads together
};

// Shared by the threads of one run.
class RunBudget {
 public:
  explicit RunBudget(ScanLimits limits = {}) : limits_(limits) {}
  const ScanLimits& limits() const { return limits_; }

  // Takes one note from the run's budget; false when it is spent.
  bool take_note();
  // Takes `n` decompressed bytes from the run's budget (false when it cannot cover them)
  // and holds them until release(n); waits while other threads hold too much at once.
  bool acquire(uint64_t n);
  void release(uint64_t n);

  uint64_t decompressed() const;  // taken so far
  uint64_t peak_held() const;     // most held at once

 private:
  ScanLimits limits_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  size_t notes_ = 0;
  uint64_t decompressed_ = 0, held_ = 0, peak_ = 0;
};

}  // namespace cd::bin
