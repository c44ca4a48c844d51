#pragma once
// verify's NCCL triage ladder (data/nccl.toml): the attempts, in order, and what each sets.
#include <map>
#include <string>
#include <vector>

#include "kb/kb.hpp"

namespace cd {

struct NcclTriageAttempt {
  std::string label;                       // "default", "NCCL_P2P_DISABLE=1", "sockets only"
  std::map<std::string, std::string> env;  // set for this attempt
  std::string source;
};

const std::vector<NcclTriageAttempt>& nccl_triage(const Kb& kb);

}  // namespace cd
