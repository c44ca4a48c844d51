// Which binaries a log's kernel-image errors point at. Only arch.* events (and the
// SageAttention variant of "no kernel image") name a binary whose images explain the error.
#include <algorithm>

#include "explain/explain.hpp"

namespace cd {

std::vector<std::string> binaries_named(const LogFacts& log, const std::vector<BinaryScan>& known) {
  std::vector<std::string> paths;
  for (const auto& e : log.events) {
    if (!e.id.starts_with("arch.") && e.id != "inference.sageattention_arch") continue;
    auto lib = e.captures.find("lib");
    for (const std::string& p : {e.frame, lib == e.captures.end() ? std::string() : lib->second}) {
      bool binary = p.starts_with("/") && (p.ends_with(".so") || p.find(".so.") != std::string::npos);
      bool seen = std::any_of(known.begin(), known.end(), [&](const BinaryScan& b) { return b.path == p; });
      if (binary && !seen && std::find(paths.begin(), paths.end(), p) == paths.end() && paths.size() < 8) paths.push_back(p);
    }
  }
  return paths;
}

}  // namespace cd
