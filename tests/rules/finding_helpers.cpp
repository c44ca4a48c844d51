#include "rules/finding_helpers.hpp"

namespace cdtest {

std::optional<cd::Finding> find(const cd::Findings& all, const std::string& id) {
  for (const auto& f : all)
    if (f.id == id) return f;
  return std::nullopt;
}

std::string fixes(const cd::Finding& f) {
  std::string s;
  for (const auto& l : f.fix) s += l + "\n";
  return s;
}

}  // namespace cdtest
