#pragma once
// The page cache as the read-ahead tests see it: dropping a file's pages (a cold start for that
// file) and asking which pages of a mapping are in memory (mincore).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "binary/bytes.hpp"

namespace pc {

// Drops the file's clean pages (the kernel keeps pages someone maps: check resident() after).
inline void evict(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

inline size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Bytes of `b` (page-aligned start: a mapping or a page-aligned part of one) in memory.
inline size_t resident(cd::bin::Bytes b) {
  std::vector<unsigned char> in((b.size() + page() - 1) / page());
  if (mincore(const_cast<uint8_t*>(b.data()), b.size(), in.data()) != 0) return 0;
  return static_cast<size_t>(std::count_if(in.begin(), in.end(), [](unsigned char c) { return c & 1; })) * page();
}

// Whether the page holding byte `at` of `b` is in memory.
inline bool page_resident(cd::bin::Bytes b, uint64_t at) {
  uintptr_t p = reinterpret_cast<uintptr_t>(b.data()) + at;
  unsigned char in = 0;
  return mincore(reinterpret_cast<void*>(p & ~(page() - 1)), 1, &in) == 0 && (in & 1);
}

}  // namespace pc
