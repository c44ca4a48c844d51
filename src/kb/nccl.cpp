#include "kb/nccl.hpp"

#include "kb/toml_access.hpp"

namespace cd {

const std::vector<NcclTriageAttempt>& nccl_triage(const Kb& kb) {
  return kb.view<std::vector<NcclTriageAttempt>>("nccl_triage", [](const Kb& k) {
    std::vector<NcclTriageAttempt> out;
    for (const toml::table* row : kb_rows(k, "nccl", "attempt")) {
      NcclTriageAttempt a{row_str(*row, "label"), {}, row_str(*row, "source")};
      for (const auto& kv : row_strs(*row, "env"))
        if (size_t eq = kv.find('='); eq != std::string::npos) a.env[kv.substr(0, eq)] = kv.substr(eq + 1);
      out.push_back(std::move(a));
    }
    return out;
  });
}

}  // namespace cd
