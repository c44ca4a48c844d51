#include "rules/rules.hpp"

#include <algorithm>

namespace cd {

Finding new_finding(std::string id, Severity severity, std::string subject, std::string title, std::string layer) {
  Finding f;
  f.layer = layer.empty() ? id.substr(0, id.find('.')) : std::move(layer);
  f.id = std::move(id);
  f.severity = severity;
  f.subject = std::move(subject);
  f.title = std::move(title);
  return f;
}

Findings check_rules(const Model& m, const Kb& kb) {
  Findings all;
  for (auto rule : {driver_rules, driver_install_rules, device_rules, platform_rules, container_rules, topology_rules,
                    toolkit_rules, arch_rules, framework_rules, libs_rules, memory_rules}) {
    Findings part = rule(m, kb);
    all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  sort_by_severity(all);
  return all;
}

bool id_matches(const std::string& id, const std::string& pattern) {
  if (!pattern.empty() && pattern.back() == '*') return id.starts_with(pattern.substr(0, pattern.size() - 1));
  return id == pattern;
}

Findings without_ignored(Findings findings, const std::vector<std::string>& ignore) {
  std::erase_if(findings, [&](const Finding& f) {
    return std::any_of(ignore.begin(), ignore.end(), [&](const std::string& pat) { return id_matches(f.id, pat); });
  });
  return findings;
}

}  // namespace cd
