// Whole-file reads for the loader: opened through util/regular_file (O_NONBLOCK, type
// checked on the descriptor), so a FIFO or a device at the path is "not there", never a
// hang, and read with read(2) on that same descriptor up to the size it had.
#include "loader/read_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "util/regular_file.hpp"

namespace cd {

std::optional<std::string> read_file_sized(const Root& root, const std::string& path, size_t max_bytes) {
  RegularFile file(root, path);  // through the root's descriptor: no link followed out of it
  if (!file.ok()) return std::nullopt;
  std::string data(std::min<uint64_t>(file.size(), max_bytes), '\0');
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = read(file.fd(), data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;  // the file shrank
    got += static_cast<size_t>(n);
  }
  data.resize(got);
  return data;
}

}  // namespace cd
