#pragma once
// verify: the next commands for a failed step, by finding id (data/verify_fixes.toml).
#include <string>
#include <vector>

#include "kb/kb.hpp"

namespace cd {

// The commands for finding `id`; the catch-all row's when no row names it.
const std::vector<std::string>& verify_step_fix(const Kb& kb, const std::string& id);

}  // namespace cd
