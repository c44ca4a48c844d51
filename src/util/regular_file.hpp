#pragma once
// Opening a file that someone else controls, for reading. open(2) of a FIFO blocks
// until a writer appears (forever, for a FIFO planted in a scanned tree) and a
// device can be endless (/dev/zero), so every reader of untrusted paths opens
// with O_NONBLOCK|O_CLOEXEC, checks the type with fstat on the descriptor it got
// (no window in which the path can be swapped) and reads only regular files.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "util/root.hpp"

namespace cd {

class RegularFile {
 public:
  // Opens `host_path`; on failure ok() is false and error() says why:
  // "Permission denied", "not a regular file (a FIFO)".
  explicit RegularFile(const std::string& host_path);
  // Opens the in-root `path` through the root's descriptor (Root::open): under --root no
  // link is followed out of the root, also one swapped in after the path was resolved or
  // walked (the time-of-check/time-of-use window of opening a resolved host path by name).
  RegularFile(const Root& root, std::string_view path);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  const std::string& error() const { return error_; }

 private:
  void adopt(int fd);  // checks the type on the descriptor; keeps it only for a regular file

  int fd_ = -1;
  uint64_t size_ = 0;
  std::string error_;
};

// "a FIFO", "a directory", "a character device", "a block device", "a socket", "a regular file".
const char* file_type_name(mode_t mode);

}  // namespace cd
