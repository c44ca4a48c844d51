#include "kb/toolkits.hpp"

#include "kb/toml_access.hpp"

namespace cd {

const std::vector<ToolkitSupport>& toolkit_table(const Kb& kb) {
  return kb.view<std::vector<ToolkitSupport>>("toolkits", [](const Kb& k) {
    std::vector<ToolkitSupport> rows;
    for (const toml::table* r : kb_rows(k, "toolkits", "toolkit")) {
      ToolkitSupport t;
      t.cuda = row_str(*r, "cuda");
      t.max_gcc = static_cast<int>(row_int(*r, "max_gcc").value_or(0));
      t.min_gcc = static_cast<int>(row_int(*r, "min_gcc").value_or(0));
      t.max_clang = static_cast<int>(row_int(*r, "max_clang").value_or(0));
      t.sm_min = static_cast<int>(row_int(*r, "sm_min").value_or(0));
      t.sm_max = static_cast<int>(row_int(*r, "sm_max").value_or(0));
      t.archs = row_strs(*r, "archs");
      t.source = row_str(*r, "source");
      rows.push_back(std::move(t));
    }
    return rows;
  });
}

std::optional<ToolkitSupport> toolkit_support(const Kb& kb, const Version& cuda) {
  std::optional<ToolkitSupport> best;
  std::optional<Version> best_version;
  for (const auto& row : toolkit_table(kb)) {
    auto v = Version::parse(row.cuda);
    if (!v || v->major() != cuda.major() || v->minor() > cuda.minor()) continue;
    if (!best_version || *v > *best_version) {
      best = row;
      best_version = v;
    }
  }
  return best;
}

}  // namespace cd
