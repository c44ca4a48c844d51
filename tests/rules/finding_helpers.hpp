#pragma once
// Lookups shared by the rule tests.
#include <optional>
#include <string>

#include "rules/rules.hpp"

namespace cdtest {

// The finding with `id`, copied (the findings passed in are often a temporary).
std::optional<cd::Finding> find(const cd::Findings& all, const std::string& id);
// A finding's fix commands, one per line.
std::string fixes(const cd::Finding& f);

}  // namespace cdtest
