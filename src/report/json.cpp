#include "report/report.hpp"

#include <fmt/format.h>

namespace cd {

std::string render_json(std::string_view kind, const std::vector<Finding>& findings, const nlohmann::json& extra) {
  nlohmann::json j;
  j["schema"] = fmt::format("cuda-doctor/{}/v1", kind);
  int counts[4] = {0, 0, 0, 0};
  for (const auto& f : findings) ++counts[static_cast<int>(f.severity)];
  j["summary"] = {{"worst", severity_name(worst(findings))},
                  {"errors", counts[3]},
                  {"warnings", counts[2]},
                  {"info", counts[1]},
                  {"ok", counts[0]}};
  j["findings"] = findings;
  if (extra.is_object())
    for (const auto& [k, v] : extra.items()) j[k] = v;
  return json_text(j, 2) + "\n";
}

}  // namespace cd
