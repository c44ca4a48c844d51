// `cuda-doctor libs`: per process, each CUDA library's winning file, rule and version with
// the copies that lost; --tree: every request in load order. No decisions: the view
// (derive/libs_view) and the findings (rules/libs*.cpp) say everything.
#include <fmt/format.h>

#include "report/escape.hpp"
#include "report/libs_report.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

std::string how(const LoadedLibrary& l) {
  if (l.via.empty()) return "";
  return l.detail.empty() || l.detail == l.via ? l.via : l.detail;
}

// Only where it is not the start: "  (at first call)", "  (on demand)".
std::string when(const LoadedLibrary& l) {
  return l.loads == "first_call" ? "  (at first call)" : l.loads == "on_demand" ? "  (on demand)" : "";
}

}  // namespace

std::string render_libs_text(const std::vector<ProcessView>& views, const std::vector<Finding>& findings, bool tree, const ReportOptions& opts) {
  std::string out;
  const Style& st = opts.style;
  for (const auto& v : views) {
    const ProcessLibs& p = *v.process;
    out += st.paint(shown(p.subject), Color::bold);
    if (!p.ld_library_path.empty()) out += "   LD_LIBRARY_PATH=" + shown(join(p.ld_library_path, ":"));
    if (!p.preload.empty()) out += "   LD_PRELOAD=" + shown(join(p.preload, " "));
    out += "\n";
    if (!p.error.empty()) {
      out += "  " + shown(p.error) + "\n\n";
      continue;
    }
    if (v.libraries.empty() && v.failed.empty()) out += "  no CUDA library\n";
    for (const auto& w : v.libraries) {
      const LoadedLibrary& l = *w.load;
      out += fmt::format("  {:<10} {:<28} {:<11} {}{}\n", shown(l.family.empty() ? "-" : l.family), shown(l.soname.empty() ? path_basename(l.realpath) : l.soname),
                         shown(l.version.empty() ? "?" : l.version), shown(l.path), when(l));
      std::string why = how(l);
      // --pid knows no rule (the maps say what is mapped, not why): the origin alone.
      std::string line = why.empty() ? "" : "via " + shown(why);
      if (!w.origin.empty()) line += (line.empty() ? "[" : "  [") + shown(w.origin) + "]";
      if (!line.empty()) out += fmt::format("  {:<10} {}\n", "", line);
      if (!l.realpath.empty() && l.realpath != l.path) out += fmt::format("  {:<10} = {}\n", "", shown(l.realpath));
      if (!l.shadowed.empty())
        out += fmt::format("  {:<10} shadows: {} {} via {}\n", "", shown(l.shadowed), shown(l.shadowed_version.empty() ? "?" : l.shadowed_version),
                           shown(l.shadowed_via));
      for (const auto& lost : w.losers)
        out += st.paint(fmt::format("  {:<10} lost: {} {} [{}]: {}\n", "", shown(lost.path), shown(lost.version.empty() ? "?" : lost.version),
                                    shown(lost.origin), shown(lost.why)),
                        Color::gray);
    }
    for (const auto* f : v.failed)
      out += st.paint(fmt::format("  {:<10} {:<28} not found (asked by {}){}\n", shown(f->family.empty() ? "-" : f->family), shown(f->name),
                                  shown(f->requested_by), when(*f)),
                      Color::red);
    if (tree) {
      out += "  load order:\n";
      const auto& all = p.kind == "pid" ? p.mapped : p.loads;
      for (const auto& l : all) {
        std::string indent(2 + 2 * static_cast<size_t>(std::min(l.depth, 20)), ' ');
        if (p.kind == "pid") {
          out += "    " + shown(l.path) + "\n";
          continue;
        }
        std::string result = l.path.empty() ? "not found" : l.via == "already loaded" ? "(already loaded)" : shown(l.path);
        out += fmt::format("  {}{} => {}{}{}{}\n", indent, shown(l.name), result,
                           l.path.empty() || l.via == "already loaded" ? "" : "  [" + shown(how(l)) + "]", l.unloaded ? "  (unloaded: its dlopen failed)" : "",
                           l.via == "already loaded" ? "" : when(l));
      }
    }
    out += "\n";
  }
  if (!findings.empty()) out += render_findings_text(findings, opts);
  else out += "no libs.* findings\n";
  return out;
}

nlohmann::json libs_json(const std::vector<ProcessView>& views) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& v : views) {
    nlohmann::json libs = nlohmann::json::array();
    for (const auto& w : v.libraries) {
      nlohmann::json losers = nlohmann::json::array();
      for (const auto& l : w.losers) losers.push_back({{"path", l.path}, {"version", l.version}, {"origin", l.origin}, {"why", l.why}});
      libs.push_back({{"family", w.load->family}, {"soname", w.load->soname}, {"path", w.load->path}, {"realpath", w.load->realpath},
                      {"version", w.load->version}, {"via", w.load->via}, {"detail", w.load->detail},
                      {"requested_by", w.load->requested_by}, {"origin", w.origin}, {"stub", w.load->stub}, {"loads", w.load->loads},
                      {"shadowed", w.load->shadowed}, {"shadowed_via", w.load->shadowed_via},
                      {"shadowed_version", w.load->shadowed_version}, {"losers", losers}});
    }
    nlohmann::json proc = *v.process;
    arr.push_back({{"subject", v.process->subject}, {"kind", v.process->kind}, {"libraries", libs}, {"process", proc}});
  }
  return arr;
}

}  // namespace cd
