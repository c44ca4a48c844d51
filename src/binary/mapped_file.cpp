#include "binary/mapped_file.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

namespace cd::bin {

MappedFile::MappedFile(const std::string& path) : file_(path) { map(); }

MappedFile::MappedFile(const Root& root, std::string_view path) : file_(root, path) { map(); }

void MappedFile::map() {
  if (!file_.ok()) {
    error_ = file_.error();
    return;
  }
  if (file_.size() == 0) return;
  size_ = static_cast<size_t>(file_.size());
  void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file_.fd(), 0);
  if (p == MAP_FAILED) {
    error_ = std::strerror(errno);
    size_ = 0;
    return;
  }
  data_ = static_cast<const uint8_t*>(p);
}

MappedFile::~MappedFile() {
  if (data_) munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace cd::bin
