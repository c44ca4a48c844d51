#include "kb/verify_fixes.hpp"

#include <map>

#include "kb/toml_access.hpp"

namespace cd {
namespace {

struct StepFixes {
  std::map<std::string, std::vector<std::string>> by_id;
  std::vector<std::string> otherwise;
};

const StepFixes& step_fixes(const Kb& kb) {
  return kb.view<StepFixes>("verify_fixes", [](const Kb& k) {
    StepFixes t;
    for (const toml::table* row : kb_rows(k, "verify_fixes", "step_fix"))
      for (const auto& id : row_strs(*row, "findings")) (id == "*" ? t.otherwise : t.by_id[id]) = row_strs(*row, "fix");
    return t;
  });
}

}  // namespace

const std::vector<std::string>& verify_step_fix(const Kb& kb, const std::string& id) {
  const StepFixes& t = step_fixes(kb);
  auto it = t.by_id.find(id);
  return it == t.by_id.end() ? t.otherwise : it->second;
}

}  // namespace cd
