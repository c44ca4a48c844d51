#include "binary/budget.hpp"

#include <algorithm>

namespace cd::bin {

bool RunBudget::take_note() {
  std::lock_guard lock(mutex_);
  if (notes_ >= limits_.notes_per_run) return false;
  ++notes_;
  return true;
}

bool RunBudget::acquire(uint64_t n) {
  std::unique_lock lock(mutex_);
  if (n > limits_.decompressed_per_run - std::min(decompressed_, limits_.decompressed_per_run)) return false;
  decompressed_ += n;
  // Never waits when nothing is held, so one request larger than the bound still runs alone.
  freed_.wait(lock, [&] { return held_ == 0 || held_ + n <= limits_.decompressed_at_once; });
  held_ += n;
  peak_ = std::max(peak_, held_);
  return true;
}

void RunBudget::release(uint64_t n) {
  {
    std::lock_guard lock(mutex_);
    held_ -= std::min(held_, n);
  }
  freed_.notify_all();
}

uint64_t RunBudget::decompressed() const {
  std::lock_guard lock(mutex_);
  return decompressed_;
}

uint64_t RunBudget::peak_held() const {
  std::lock_guard lock(mutex_);
  return peak_;
}

}  // namespace cd::bin
