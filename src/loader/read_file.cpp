#include "loader/read_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>

namespace cd {

std::optional<std::string> read_file_sized(const Root& root, const std::string& path, size_t max_bytes) {
  std::string host = root.host_path(root.is_host() ? path : root.resolve(path).value_or(path));
  struct stat st;
  if (stat(host.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::ifstream in(host, std::ios::binary);
  if (!in) return std::nullopt;
  std::string data(std::min<size_t>(static_cast<size_t>(st.st_size), max_bytes), '\0');
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<size_t>(in.gcount()));
  return data;
}

}  // namespace cd
