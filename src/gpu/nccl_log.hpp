#pragma once
// Reads NCCL_DEBUG=INFO output: the NCCL version and the transports channels use
// ("via P2P/CUMEM/read", "via SHM/direct/direct", "via NET/Socket/0").
#include <string>
#include <vector>

namespace cd::gpu {

struct NcclLogSummary {
  std::string version;                  // "2.28.3+cuda13.0"
  std::vector<std::string> transports;  // distinct, first two parts: "P2P/CUMEM", "SHM/direct", "NET/Socket"
  std::vector<std::string> warnings;    // "NCCL WARN …" lines (at most 5)
};

NcclLogSummary summarize_nccl_log(const std::vector<std::string>& lines);

}  // namespace cd::gpu
