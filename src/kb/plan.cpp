#include "kb/plan.hpp"

#include "kb/toml_access.hpp"

namespace cd {
namespace {

PlanNote note(const toml::table& t, const char* key) {
  PlanNote n;
  if (const toml::table* s = t[key].as_table()) n = {row_str(*s, "note"), row_str(*s, "url"), row_str(*s, "source")};
  return n;
}

PlanKb build(const Kb& kb) {
  const toml::table& t = kb_table(kb, "plan");
  PlanKb p;
  if (const toml::table* s = t["open_kernel_module"].as_table()) {
    p.open_module_min_sm = static_cast<int>(row_int(*s, "min_sm").value_or(75));
    p.open_module_source = row_str(*s, "source");
  }
  if (const toml::table* s = t["conda"].as_table()) {
    p.conda_last_release = row_str(*s, "last_pytorch_channel_release", p.conda_last_release);
    p.conda_source = row_str(*s, "source");
  }
  if (const toml::table* s = t["pixi"].as_table()) p.pixi_snippet = row_str(*s, "snippet"), p.pixi_source = row_str(*s, "source");
  p.wsl = note(t, "wsl");
  p.jetson = note(t, "jetson");
  p.windows = note(t, "windows");
  return p;
}

}  // namespace

const PlanKb& plan_kb(const Kb& kb) { return kb.view<PlanKb>("plan", build); }

}  // namespace cd
