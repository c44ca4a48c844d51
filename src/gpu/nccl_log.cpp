#include "gpu/nccl_log.hpp"

#include <algorithm>

namespace cd::gpu {

namespace {

// "P2P/CUMEM/read" -> "P2P/CUMEM"; "NET/Socket/0" -> "NET/Socket".
std::string transport_kind(std::string via) {
  size_t first = via.find('/');
  if (first == std::string::npos) return via;
  size_t second = via.find('/', first + 1);
  return second == std::string::npos ? via : via.substr(0, second);
}

}  // namespace

NcclLogSummary summarize_nccl_log(const std::vector<std::string>& lines) {
  NcclLogSummary s;
  for (const std::string& line : lines) {
    if (size_t v = line.find("NCCL version "); v != std::string::npos && s.version.empty()) {
      std::string rest = line.substr(v + 13);
      s.version = rest.substr(0, rest.find_first_of(" \t\r"));
    }
    if (size_t v = line.find(" via "); v != std::string::npos && line.find("NCCL INFO") != std::string::npos) {
      std::string rest = line.substr(v + 5);
      std::string kind = transport_kind(rest.substr(0, rest.find_first_of(" \t\r")));
      if (!kind.empty() && std::find(s.transports.begin(), s.transports.end(), kind) == s.transports.end())
        s.transports.push_back(kind);
    }
    if (line.find("NCCL WARN") != std::string::npos && s.warnings.size() < 5) s.warnings.push_back(line);
  }
  return s;
}

}  // namespace cd::gpu
