#pragma once
// A read-only view of a whole file through mmap: the scan touches only the pages
// it reads (headers), so a 2 GB library costs a few page faults.
#include <string>

#include "binary/bytes.hpp"

namespace cd::bin {

class MappedFile {
 public:
  // Maps `path`; on failure ok() is false and error() says why ("Permission denied").
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  Bytes bytes() const { return {data_, size_}; }
  // Writable copy-on-write pointer for libelf's elf_memory (it never writes for reads).
  char* writable() const { return reinterpret_cast<char*>(data_); }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string error_;
};

}  // namespace cd::bin
