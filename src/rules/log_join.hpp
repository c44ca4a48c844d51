#pragma once
// For rules/log.cpp: joins a log finding with the machine's facts, and the checks
// that only context lines feed (NCCL transports, toolkit versions, LD_DEBUG copies).
#include <string>
#include <utility>
#include <vector>

#include "derive/model.hpp"
#include "facts/finding.hpp"
#include "kb/kb.hpp"

namespace cd {

using Values = std::vector<std::pair<std::string, std::string>>;

struct LogJoin {
  const Model& model;
  const Facts& facts;  // model.facts
  const Kb& kb;
  std::vector<const LogEvent*> context;  // events of context-role signatures, in log order
};

// Adds evidence and fix lines from the facts to `f`, the finding made of event `e`.
void join_facts(Finding& f, const LogEvent& e, const LogJoin& j);

// Evidence from what the log itself says about where it ran (WSL2, a container, a conda
// environment) and which driver its nvidia-smi output shows: the facts of the machine that
// wrote the log, which may not be this one.
void add_log_context(Finding& f, const LogJoin& j);

// Findings that come from context lines and facts rather than one error line.
std::vector<Finding> derived_log_findings(const LogJoin& j, const std::vector<Finding>& so_far);

}  // namespace cd
