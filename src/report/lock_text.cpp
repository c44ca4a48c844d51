// `lock`'s formats and `plan --from`'s table. The requirements file pins the locked packages
// with the PyTorch index as --extra-index-url (the wheels with a local +cuXYZ tag live only
// there); environment.yml puts the same pins under pip:; pixi.toml names the index on torch and
// the driver's CUDA under [system-requirements]. Prints the lock and the diff; decides nothing.
#include <fmt/format.h>

#include "report/escape.hpp"
#include "report/lock_report.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

std::string header(const LockDoc& l) {
  return fmt::format("# cuda-doctor lock of {} (Python {}) on {}, {}: torch {} {}, driver >= {}{}\n", l.env_prefix, l.python_version,
                     l.hostname, l.created_at, l.torch_version, l.torch_variant, l.driver_min.empty() ? "?" : l.driver_min,
                     l.gpu_archs.empty() ? "" : ", GPUs " + join(l.gpu_archs, " "));
}

std::string base_version(const std::string& v) { return v.substr(0, v.find('+')); }

std::string mm(const std::string& v) { return Version::parse(v).value_or(Version{}).major_minor(); }

}  // namespace

std::string render_lock(const LockDoc& lock) { return lock_json(lock).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; }

std::string render_lock_requirements(const LockDoc& l) {
  std::string out = header(l);
  if (!l.index_url.empty()) out += "--extra-index-url " + l.index_url + "\n";
  if (!l.torch_version.empty()) out += "torch==" + l.torch_version + "\n";
  for (const auto& p : l.packages)
    if (p.name != "torch") out += p.name + "==" + p.version + "\n";
  return out;
}

std::string render_lock_environment_yml(const LockDoc& l) {
  std::string name = path_basename(l.env_prefix);
  if (name.empty() || name == ".venv" || name == "usr") name = "cuda-doctor-lock";
  std::string out = header(l);
  out += fmt::format("name: {}\nchannels:\n  - conda-forge\ndependencies:\n  - python={}\n  - pip\n  - pip:\n", name, mm(l.python_version));
  if (!l.index_url.empty()) out += "    - --extra-index-url " + l.index_url + "\n";
  if (!l.torch_version.empty()) out += "    - torch==" + l.torch_version + "\n";
  for (const auto& p : l.packages)
    if (p.name != "torch") out += "    - " + p.name + "==" + p.version + "\n";
  return out;
}

std::string render_lock_pixi(const LockDoc& l) {
  std::string out = header(l);
  out += "[workspace]\nname = \"cuda-doctor-lock\"\nchannels = [\"conda-forge\"]\n";
  out += fmt::format("platforms = [\"{}\"]\n\n", l.arch == "aarch64" ? "linux-aarch64" : "linux-64");
  if (!l.torch_cuda.empty()) out += fmt::format("[system-requirements]\ncuda = \"{}\"\n\n", mm(l.torch_cuda));
  out += fmt::format("[dependencies]\npython = \"{}.*\"\n\n[pypi-dependencies]\n", mm(l.python_version));
  if (!l.torch_version.empty())
    out += fmt::format("torch = {{ version = \"=={}\", index = \"{}\" }}\n", base_version(l.torch_version), l.index_url);
  for (const auto& p : l.packages)
    if (p.name != "torch") out += fmt::format("{} = \"=={}\"\n", p.name, p.version);
  return out;
}

std::string render_lock_diff_text(const LockDiff& d, const ReportOptions& opts) {
  const Style& st = opts.style;
  std::string out = fmt::format("cuda-doctor plan --from · locked on {} · here\n\n", shown(d.locked_on));
  size_t w = 8;
  for (const auto& r : d.rows) w = std::max(w, r.what.size());
  for (const auto& r : d.rows) {
    if (r.same && !opts.verbose && r.what.starts_with("package ")) continue;
    std::string mark = r.same ? st.paint("✓", Color::green) : st.paint("✖", Color::red);
    out += fmt::format("  {} {:<{}}  locked {}  ·  here {}\n", mark, shown(r.what), w, shown(r.locked), shown(r.here));
    if (!r.note.empty()) out += fmt::format("      {}\n", shown(r.note));
    for (const auto& c : r.commands) out += fmt::format("      {} {}\n", st.paint("$", Color::bold), shown(c));
  }
  out += d.differences ? fmt::format("\n{} difference{} · paste the commands to reproduce the locked environment{}\n", d.differences,
                                     d.differences == 1 ? "" : "s", opts.verbose ? "" : " · matching packages: -v")
                       : "\nnothing differs: this machine matches the lock\n";
  return out;
}

std::string render_lock_diff_json(const LockDiff& d) { return lock_diff_json(d).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; }

}  // namespace cd
