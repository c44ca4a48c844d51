#pragma once
// A read-only view of a whole file through mmap: the scan touches only the pages
// it reads (headers), so a 2 GB library costs a few page faults. Only regular files
// are mapped (util/regular_file: a FIFO or a device is an error, never a hang), and
// the mapping is PROT_READ: nothing can write through it, and a 100 GB sparse file
// or a big library costs no commit charge (vm.overcommit_memory=2 hosts).
#include <string>
#include <string_view>

#include "binary/bytes.hpp"
#include "util/regular_file.hpp"

namespace cd::bin {

class MappedFile {
 public:
  // Maps `path`; on failure ok() is false and error() says why ("Permission denied",
  // "not a regular file (a FIFO)").
  explicit MappedFile(const std::string& path);
  // Maps the in-root `path`, opened through the root's descriptor (RegularFile(root, path)).
  MappedFile(const Root& root, std::string_view path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  Bytes bytes() const { return {data_, size_}; }
  // The open descriptor (for libelf's own read-only ELF_C_READ_MMAP), -1 when not ok().
  int fd() const { return file_.fd(); }

 private:
  RegularFile file_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string error_;

  void map();
};

}  // namespace cd::bin
