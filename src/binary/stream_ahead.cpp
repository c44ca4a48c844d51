#include "binary/stream_ahead.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

namespace cd::bin {
namespace {

uint64_t page_size() {
  static const uint64_t p = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return p;
}

}  // namespace

StreamAhead::StreamAhead(int fd, Bytes region, uint64_t file_offset, bool every_step)
    : fd_(fd), region_(region), file_offset_(file_offset), every_step_(every_step) {}

StreamAhead::~StreamAhead() { stop(); }

void StreamAhead::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

uint64_t StreamAhead::bytes_read() const {
  std::lock_guard lock(mutex_);
  return read_;
}

void StreamAhead::at(uint64_t offset) {
  if (fd_ < 0 || offset >= region_.size()) return;
  bool dense = every_step_ || (last_ != UINT64_MAX && offset >= last_ && offset - last_ <= kDenseStep);
  last_ = offset;
  if (!dense) return;
  uint64_t want = std::min<uint64_t>(region_.size(), offset + kLead);
  if (threads_.empty()) {
    // Warm: a lead found in memory is looked at again only once the walk is past it (a file
    // that an earlier run read in part gets its threads where the cold part begins).
    if (offset < checked_) return;
    checked_ = want;
    if (resident(offset, want)) return;
  }
  {
    std::lock_guard lock(mutex_);
    if (stop_ || (want <= want_ && next_ >= offset)) return;  // stopped, or asked for already
    next_ = std::max(next_, offset & ~(page_size() - 1));  // what the walk jumped over is not read
    want_ = std::max(want_, want);
    if (threads_.empty())
      for (size_t i = 0; i < kThreads; ++i) threads_.emplace_back([this] { work(); });
  }
  wake_.notify_all();
}

// Whether every page of region_[begin, end) is in memory; false when it cannot tell.
bool StreamAhead::resident(uint64_t begin, uint64_t end) const {
  uintptr_t first = (reinterpret_cast<uintptr_t>(region_.data()) + begin) & ~(page_size() - 1);
  uintptr_t last = reinterpret_cast<uintptr_t>(region_.data()) + end;
  std::vector<unsigned char> in((last - first + page_size() - 1) / page_size());
  if (mincore(reinterpret_cast<void*>(first), last - first, in.data()) != 0) return false;
  return std::all_of(in.begin(), in.end(), [](unsigned char c) { return c & 1; });
}

void StreamAhead::work() {
  auto buffer = std::make_unique<uint8_t[]>(kChunk);
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || next_ < want_; });
    if (stop_) return;
    uint64_t begin = next_, end = std::min(want_, begin + kChunk);
    next_ = end;
    lock.unlock();
    uint64_t n = 0;
    if (!resident(begin, end)) {
      ssize_t got = pread(fd_, buffer.get(), end - begin, static_cast<off_t>(file_offset_ + begin));
      n = got > 0 ? static_cast<uint64_t>(got) : 0;
    }
    lock.lock();
    read_ += n;
  }
}

}  // namespace cd::bin
