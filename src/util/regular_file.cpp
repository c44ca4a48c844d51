#include "util/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cd {

const char* file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

RegularFile::RegularFile(const std::string& host_path) {
  adopt(open(host_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
}

RegularFile::RegularFile(const Root& root, std::string_view path) {
  adopt(root.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY));
}

void RegularFile::adopt(int fd) {
  if (fd < 0) {
    error_ = std::strerror(errno);
    return;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    error_ = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    error_ = std::string("not a regular file (") + file_type_name(st.st_mode) + ")";
  } else {
    fd_ = fd;
    size_ = static_cast<uint64_t>(st.st_size);
    return;
  }
  close(fd);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace cd
