#pragma once
// Runs one rule on facts the way the tool does: derive the model first (header-only, so
// test folders other than tests/rules can use it).
#include "derive/model.hpp"
#include "rules/rules.hpp"

namespace cdtest {

inline cd::Findings run_rule(cd::Findings (*rule)(const cd::Model&, const cd::Kb&), const cd::Facts& facts) {
  const cd::Kb& kb = cd::Kb::get();
  return rule(cd::derive(facts, kb), kb);
}

}  // namespace cdtest
