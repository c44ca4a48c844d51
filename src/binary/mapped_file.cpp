#include "binary/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cd::bin {

MappedFile::MappedFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error_ = std::strerror(errno);
    return;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error_ = "not a regular file";
  } else if (st.st_size > 0) {
    size_ = static_cast<size_t>(st.st_size);
    // Private and writable so libelf may patch its view; pages stay shared until written.
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      error_ = std::strerror(errno);
      size_ = 0;
    } else {
      data_ = static_cast<uint8_t*>(p);
    }
  }
  close(fd);
}

MappedFile::~MappedFile() {
  if (data_) munmap(data_, size_);
}

}  // namespace cd::bin
