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
    p.open_module_first_branch = static_cast<int>(row_int(*s, "first_branch").value_or(515));
    p.open_module_first_branch_source = row_str(*s, "first_branch_source");
  }
  if (const toml::table* s = t["conda"].as_table()) {
    p.conda_last_release = row_str(*s, "last_pytorch_channel_release", p.conda_last_release);
    p.conda_source = row_str(*s, "source");
  }
  if (const toml::table* s = t["pixi"].as_table()) p.pixi_snippet = row_str(*s, "snippet"), p.pixi_source = row_str(*s, "source");
  if (const toml::table* s = t["runfile"].as_table())
    p.runfile_url = row_str(*s, "url"), p.runfile_flags = row_str(*s, "flags"),
    p.runfile_source = row_str(*s, "source");
  if (const toml::table* s = t["max_jobs"].as_table()) {
    p.gib_per_job = static_cast<int>(row_int(*s, "gib_per_job").value_or(20));
    p.cores_per_job = static_cast<int>(row_int(*s, "cores_per_job").value_or(2));
    p.max_jobs_source = row_str(*s, "source");
  }
  for (const toml::table* r : kb_rows(kb, "plan", "uv_backend"))
    p.uv.push_back({row_str(*r, "variant"), Version::parse(row_str(*r, "linux_min")).value_or(Version{}),
                    Version::parse(row_str(*r, "windows_min")).value_or(Version{}), row_str(*r, "source")});
  if (const toml::table* s = t["overrides"].as_table())
    p.override_uv = row_str(*s, "uv"), p.override_conda = row_str(*s, "conda"), p.override_source = row_str(*s, "source");
  for (const toml::table* r : kb_rows(kb, "plan", "driver_install")) {
    DriverInstallKb d;
    d.family = row_str(*r, "family"), d.ids = row_strs(*r, "ids"), d.names = row_strs(*r, "names"), d.pm = row_str(*r, "pm");
    d.is_default = (*r)["default"].value_or(false), d.recommend = row_str(*r, "recommend"), d.setup = row_strs(*r, "setup");
    d.open = row_str(*r, "open"), d.proprietary = row_str(*r, "proprietary"), d.user_libs = row_str(*r, "user_libs");
    d.dkms_reinstall = row_str(*r, "dkms_reinstall"), d.dkms_package = row_str(*r, "dkms_package"), d.prebuilt_modules = row_str(*r, "prebuilt_modules"), d.toolkit = row_str(*r, "toolkit"),
    d.source = row_str(*r, "source"), d.gcc = row_strs(*r, "gcc"), d.clang = row_strs(*r, "clang");
    d.archive_install = row_str(*r, "archive_install"), d.archive_note = row_str(*r, "archive_note");
    d.archive_source = row_str(*r, "archive_source");
    if (const toml::array* m = (*r)["majors"].as_array())
      for (const auto& v : *m)
        if (auto n = v.value<int64_t>()) d.majors.push_back(static_cast<int>(*n));
    if (const toml::table* a = (*r)["archive"].as_table())
      for (const auto& [k, v] : *a)
        if (auto b = v.value<int64_t>()) d.archive[std::string(k.str())] = static_cast<int>(*b);
    p.driver_install.push_back(std::move(d));
  }
  if (const toml::table* s = t["container_toolkit"].as_table()) {
    p.container_toolkit_guide = row_str(*s, "guide"), p.container_toolkit_other = row_str(*s, "other");
    p.container_toolkit_source = row_str(*s, "source");
  }
  if (const toml::table* s = t["toolkit_install"].as_table()) {
    p.toolkit_install_comment = row_str(*s, "comment"), p.toolkit_install_other = row_str(*s, "other");
  }
  if (const toml::table* pms = t["package_manager"].as_table())
    for (const auto& [name, v] : *pms)
      if (const toml::table* s = v.as_table())
        p.package_manager[std::string(name.str())] = {row_str(*s, "kernel_headers"), row_str(*s, "hold"), row_str(*s, "unhold"),
                                                      row_str(*s, "any_driver"), row_strs(*s, "blacklist_nouveau"),
                                                      row_strs(*s, "container_toolkit")};
  if (const toml::table* s = t["host_compiler_install"].as_table()) p.host_compiler_other = row_str(*s, "other");
  if (const toml::table* s = t["driver_install_other"].as_table())
    p.driver_install_other = row_str(*s, "text"), p.driver_install_other_source = row_str(*s, "source");
  p.wsl = note(t, "wsl");
  p.jetson = note(t, "jetson");
  p.windows = note(t, "windows");
  return p;
}

}  // namespace

const PlanKb& plan_kb(const Kb& kb) { return kb.view<PlanKb>("plan", build); }

}  // namespace cd
