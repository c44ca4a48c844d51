// Which Linux distribution this is, and how it installs the driver, a toolkit and the
// container toolkit.
//
// /etc/os-release's ID picks a data/plan.toml [[driver_install]] row; failing that, the first
// word of ID_LIKE some row answers to (Rocky is "rhel centos fedora", Pop!_OS "ubuntu
// debian"); snapshots recorded before the ID fields are matched by PRETTY_NAME. Driver advice
// concerns the host: inside a container (whose os-release is the image's) and where nothing is
// known (plan for a described machine) it uses the default row. A toolkit goes where programs
// run, so toolkit advice uses the os-release's own row, container or not. The commands come
// from the row: the distribution's own archive where it carries the branch (Debian), else
// NVIDIA's repository; a distribution or release no row covers gets a pointer to NVIDIA's guide.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>

#include "derive/derive_parts.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

const DriverInstallKb* row_for_id(const PlanKb& pk, const std::string& id) {
  for (const auto& r : pk.driver_install)
    for (const auto& i : r.ids)
      if (i == id) return &r;
  return nullptr;
}

const DriverInstallKb* match(const PlanKb& pk, const HostFacts& h) {
  if (!h.os_id.empty()) {
    if (auto* r = row_for_id(pk, to_lower(h.os_id))) return r;
    for (const auto& word : split(to_lower(h.os_like), ' '))
      if (auto* r = row_for_id(pk, word)) return r;
    return nullptr;
  }
  std::string pretty = to_lower(h.os);
  for (const auto& r : pk.driver_install)
    for (const auto& n : r.names)
      if (contains(pretty, n)) return &r;
  return nullptr;
}

// "12" of VERSION_ID "12" / "24.04"; older snapshots: the first number in PRETTY_NAME.
std::string version_of(const HostFacts& h) {
  if (!h.os_id.empty()) return h.os_version;
  for (const auto& word : split(h.os, ' '))
    if (!word.empty() && std::isdigit(static_cast<unsigned char>(word[0]))) return word;
  return {};
}

// "bookworm" of VERSION_CODENAME; older snapshots: the "(bookworm)" of PRETTY_NAME.
std::string codename_of(const HostFacts& h) {
  if (!h.os_codename.empty() || !h.os_id.empty()) return h.os_codename;
  auto open = h.os.rfind('('), close = h.os.rfind(')');
  return open != std::string::npos && close != std::string::npos && close > open ? to_lower(h.os.substr(open + 1, close - open - 1))
                                                                                   : std::string();
}

const DriverInstallKb* default_row(const PlanKb& pk) {
  for (const auto& r : pk.driver_install)
    if (r.is_default) return &r;
  return nullptr;
}

std::string fill(std::string s, int branch, const DistroModel& d, const std::string& arch) {
  s = replace_all(std::move(s), "{branch}", std::to_string(branch));
  s = replace_all(std::move(s), "{major}", std::to_string(d.major));
  return replace_all(std::move(s), "{repo_arch}", arch == "aarch64" ? "sbsa" : "x86_64");
}

std::string with_comment(std::string cmd, const std::vector<std::string>& parts) {
  std::string c;
  for (const auto& p : parts)
    if (!p.empty()) c += (c.empty() ? "" : "; ") + p;
  return c.empty() ? cmd : cmd + "   # " + c;
}

// The distribution's own package where its archive carries the branch (Debian's non-free).
std::optional<std::string> archive_command(const DriverInstallKb& r, const DistroModel& d, int branch, const std::string& comment) {
  auto a = r.archive.find(d.codename);
  if (a == r.archive.end() || a->second < branch || r.archive_install.empty()) return std::nullopt;
  return with_comment(r.archive_install + " && sudo reboot", {comment, replace_all(r.archive_note, "{archive}", std::to_string(a->second))});
}

// Whether the row's commands hold for this release: one its `majors` name, and a known
// major where the repository's name needs one.
bool holds_for(const DriverInstallKb& r, const DistroModel& d) {
  if (!r.majors.empty() && std::find(r.majors.begin(), r.majors.end(), d.major) == r.majors.end()) return false;
  bool needs_major = std::any_of(r.setup.begin(), r.setup.end(), [](const std::string& s) { return contains(s, "{major}"); });
  return !needs_major || d.major > 0;
}

// The os-release's own row, container or not (toolkits); the default row when nothing is known.
const DriverInstallKb* os_row(const Kb& kb, const DistroModel& d) {
  return d.row ? d.row : d.unlisted ? nullptr : default_row(plan_kb(kb));
}

// What row `r`'s package manager does (`pm` instead, when given); [package_manager.other]
// for none.
const PackageManagerKb& package_manager(const PlanKb& pk, const DriverInstallKb* r, const std::string& pm = "") {
  static const PackageManagerKb none;
  auto it = pk.package_manager.find(!pm.empty() ? pm : r ? r->pm : "other");
  if (it == pk.package_manager.end()) it = pk.package_manager.find("other");
  return it == pk.package_manager.end() ? none : it->second;
}

}  // namespace

DistroModel derive_distro(const Facts& f, const Kb& kb) {
  const PlanKb& pk = plan_kb(kb);
  DistroModel d;
  d.row = match(pk, f.host);
  d.host_known = d.row && f.platform.container.empty();
  d.unlisted = !d.row && f.platform.container.empty() && (!f.host.os_id.empty() || !f.host.os.empty());
  d.codename = codename_of(f.host);
  std::string v = version_of(f.host);
  if (!std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; }))
    v.clear();  // a file of someone else's: only a version number goes into a fix line
  d.major = std::atoi(v.c_str());
  if (d.row) d.label = v.empty() ? d.row->family : d.row->family + " " + v;
  return d;
}

const DriverInstallKb* install_row(const Kb& kb, const DistroModel& d) {
  if (d.unlisted) return nullptr;
  return d.host_known ? d.row : default_row(plan_kb(kb));
}

std::vector<std::string> driver_install_commands(const Kb& kb, const DistroModel& d, const std::string& arch, int branch,
                                                 const DriverPackage& p, const std::string& comment) {
  const DriverInstallKb* r = install_row(kb, d);
  if (r && d.host_known)
    if (auto own = archive_command(*r, d, branch, comment)) return {*own};
  std::string install = !r ? std::string() : p.open ? r->open : r->proprietary;
  if (install.empty() || (d.host_known && !holds_for(*r, d))) {
    std::string text = replace_all(plan_kb(kb).driver_install_other, "{branch}", std::to_string(branch));
    return {replace_all(std::move(text), "{module}", p.open ? "open" : "proprietary")};
  }
  std::vector<std::string> out;
  if (d.host_known)
    for (const auto& s : r->setup) out.push_back(fill(s, branch, d, arch));
  std::string label = d.host_known ? "" : r->family;  // an unknown host: say whose command it is
  out.push_back(with_comment(fill(install, branch, d, arch) + " && sudo reboot", {label, comment, p.note}));
  return out;
}

std::string toolkit_install_command(const Kb& kb, const DistroModel& d, const Version& cuda) {
  const PlanKb& pk = plan_kb(kb);
  const DriverInstallKb* r = os_row(kb, d);
  if (!r || r->toolkit.empty() || cuda.parts.size() < 2 || (d.row && !holds_for(*r, d)))
    return replace_all(pk.toolkit_install_other, "{mm}", cuda.major_minor());
  std::string s = replace_all(r->toolkit, "{cuda_major}", std::to_string(cuda.major()));
  return with_comment(replace_all(std::move(s), "{cuda_minor}", std::to_string(cuda.minor())), {pk.toolkit_install_comment});
}

HostCompilerInstall host_compiler_install(const Kb& kb, const DistroModel& d, const std::string& kind, int n) {
  const DriverInstallKb* r = os_row(kb, d);
  const std::vector<std::string>* row = !r ? nullptr : kind == "clang" ? &r->clang : &r->gcc;
  auto fill_n = [&](const std::string& s) {
    return replace_all(replace_all(s, "{n}", std::to_string(n)), "{kind}", kind == "clang" ? "clang" : "gcc");
  };
  if (!row || row->size() < 2 || (d.row && !holds_for(*r, d))) return {fill_n(plan_kb(kb).host_compiler_other), {}};
  return {fill_n((*row)[0]), fill_n((*row)[1])};
}

std::vector<std::string> container_toolkit_commands(const Kb& kb, const DistroModel& d) {
  const PlanKb& pk = plan_kb(kb);
  const std::vector<std::string>& cmds = package_manager(pk, os_row(kb, d)).container_toolkit;
  if (cmds.empty()) return {replace_all(pk.container_toolkit_other, "{guide}", pk.container_toolkit_guide)};
  std::vector<std::string> out{"# NVIDIA's repository (" + pk.container_toolkit_guide + "):"};
  out.insert(out.end(), cmds.begin(), cmds.end());
  return out;
}

std::string kernel_headers_command(const Kb& kb, const DistroModel& d, const std::string& kernel) {
  return replace_all(package_manager(plan_kb(kb), install_row(kb, d)).kernel_headers, "{kernel}", kernel);
}

std::vector<std::string> hold_commands(const Kb& kb, const DistroModel& d, const std::string& pm,
                                       const std::vector<std::string>& packages) {
  const PackageManagerKb& m = package_manager(plan_kb(kb), install_row(kb, d), pm);
  std::string hold = replace_all(m.hold, "{packages}", packages.empty() ? m.any_driver : join(packages, " "));
  // Packages not known: a pattern, offered as a comment rather than a command to paste.
  if (packages.empty() || hold.starts_with("#"))
    return {"# keep automatic upgrades from doing it again: " + (hold.starts_with("# ") ? hold.substr(2) : hold)};
  return {"# keep automatic upgrades from doing it again (" + m.unhold + "):", hold};
}

std::vector<std::string> nouveau_blacklist_commands(const Kb& kb, const DistroModel& d) {
  return package_manager(plan_kb(kb), install_row(kb, d)).blacklist_nouveau;
}

std::string prebuilt_modules_package(const Kb& kb, const DistroModel& d, const std::string& branch, const std::string& kernel) {
  const DriverInstallKb* r = install_row(kb, d);
  if (!r || r->prebuilt_modules.empty()) return {};
  return replace_all(replace_all(r->prebuilt_modules, "{branch}", branch), "{kernel}", kernel);
}

std::string dkms_rebuild_command(const Kb& kb, const DistroModel& d, int branch, const std::vector<int>& sms,
                                 const std::string& comment) {
  const DriverInstallKb* r = install_row(kb, d);
  if (r && !r->dkms_reinstall.empty()) return r->dkms_reinstall;
  if (r && !r->dkms_package.empty()) {
    DriverPackage p = driver_package(kb, branch, sms, r->dkms_package);
    return with_comment("sudo " + r->pm + " install --reinstall " + p.name, {comment, p.note});
  }
  return with_comment("sudo dkms autoinstall", {comment});
}

}  // namespace cd
