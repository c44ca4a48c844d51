#pragma once
// Reading ahead of a walk that has no list of where it goes: a library's own kernel table
// (cuFFT's .ldata: 24,000 containers in 265 MiB), a search for containers through a section
// that may hold none (cuBLASLt's .ldata), a .nv_fatbin nothing registers (JAX's plugin).
//
// The scanner maps files MADV_RANDOM, so each header it touches costs one 4 KiB read, waited
// for before the next: right for a sparse chain (a few headers between megabytes of
// payload), ruinous for a dense one (one read per page, in sequence). The kernel's own
// read-around is no middle way: on the device's virtio disk it reads 8 MiB around every
// fault, ~5 ms each, whatever the chain's density (a 238-fault chain took 1.3 s there).
// So the walk says where it reads next (parse_fatbin's Reading), and where it moves in small
// steps — headers under 256 KiB apart, or a search page by page — 8 threads keep the next
// 16 MiB in flight with 1 MiB preads into the page cache; where it jumps, they stop and the
// walk's own 4 KiB faults do. Pages already in memory (mincore) are not read again, so a warm
// run starts no thread and no read. What is read never changes, only when it arrives.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "binary/bytes.hpp"

namespace cd::bin {

class StreamAhead {
 public:
  // `region`: part of a read-only mapping of `fd`, starting at file offset `file_offset`.
  // `every_step`: stream whatever the step (an archive: its members' headers, sections and
  // fatbins follow one another, and a chain of member reads is the slow way through it).
  StreamAhead(int fd, Bytes region, uint64_t file_offset, bool every_step = false);
  ~StreamAhead();  // stop()
  StreamAhead(const StreamAhead&) = delete;
  StreamAhead& operator=(const StreamAhead&) = delete;

  // The walk reads at `offset` (within the region) next.
  void at(uint64_t offset);

  // Asks for no more, and waits for the reads in flight.
  void stop();

  // Bytes this stream read with pread (not counting pages found in memory).
  uint64_t bytes_read() const;

  static constexpr uint64_t kDenseStep = 256 << 10;  // a step this small keeps the stream going
  static constexpr uint64_t kLead = 16 << 20;         // how far ahead of the walk it reads
  static constexpr uint64_t kChunk = 1 << 20;        // one pread
  static constexpr size_t kThreads = 8;

 private:
  void work();
  bool resident(uint64_t begin, uint64_t end) const;

  int fd_;
  Bytes region_;
  uint64_t file_offset_;
  bool every_step_;
  uint64_t last_ = UINT64_MAX;  // the walk's previous offset (walk thread only)
  uint64_t checked_ = 0;        // before any thread: the lead up to here was in memory

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  uint64_t next_ = 0;  // the first byte no reader has claimed
  uint64_t want_ = 0;  // read up to here
  uint64_t read_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;  // started at the first dense step into pages not in memory
};

}  // namespace cd::bin
