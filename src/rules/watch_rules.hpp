#pragma once
// watch's rules: their input is a watched run (WatchModel), not the machine's Model, so they
// are declared apart from rules.hpp.
#include "derive/watch.hpp"
#include "facts/finding.hpp"
#include "kb/kb.hpp"

namespace cd {

// rules/watch.cpp: perf.* and memory.near_full of a watched run.
std::vector<Finding> watch_rules(const WatchModel&, const Kb&);

}  // namespace cd
