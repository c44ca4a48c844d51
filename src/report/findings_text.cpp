#include <fmt/format.h>

#include "report/escape.hpp"
#include "report/report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

Color color_of(Severity s) {
  switch (s) {
    case Severity::error: return Color::red;
    case Severity::warning: return Color::yellow;
    case Severity::info: return Color::cyan;
    case Severity::ok: return Color::green;
  }
  return Color::none;
}

const char* mark_of(Severity s) {
  switch (s) {
    case Severity::error: return "✖";
    case Severity::warning: return "▲";
    case Severity::info: return "ℹ";
    case Severity::ok: return "✔";
  }
  return " ";
}

// Prints `label` in a fixed column, then each line of `lines` aligned after it.
void labelled(std::string& out, const Style& st, std::string_view label, const std::vector<std::string>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string lab = i == 0 ? std::string(label) : std::string();
    out += fmt::format("      {}{} {}\n", st.paint(lab, Color::gray), std::string(10 - display_width(lab), ' '), lines[i]);
  }
}

}  // namespace

std::string summary_line(const std::vector<Finding>& findings) {
  int counts[4] = {0, 0, 0, 0};
  for (const auto& f : findings) ++counts[static_cast<int>(f.severity)];
  auto plural = [](int n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); };
  return fmt::format("{}, {}, {} info", plural(counts[3], "error"), plural(counts[2], "warning"), counts[1]);
}

std::string render_findings_text(const std::vector<Finding>& findings, const ReportOptions& opts) {
  const Style& st = opts.style;
  std::string out;
  for (const auto& f : findings) {
    if (f.severity == Severity::ok && opts.verbose == 0) continue;
    Color c = color_of(f.severity);
    // Every field can carry input (file names, versions, log lines): shown() before painting.
    out += fmt::format("  {} {:<7} {}  {}\n", st.paint(mark_of(f.severity), c), st.paint(severity_name(f.severity), c),
                       st.paint(shown(f.title), Color::bold), st.paint(shown(f.id), Color::gray));
    if (!f.subject.empty()) labelled(out, st, "about", {shown(f.subject)});
    std::vector<std::string> ev;
    for (const auto& e : f.evidence)
      ev.push_back(e.source.empty() ? shown(e.fact) : fmt::format("{}  [{}]", shown(e.fact), shown(e.source)));
    if (!ev.empty()) labelled(out, st, "evidence", ev);
    if (!f.explanation.empty()) labelled(out, st, "why", {shown(f.explanation)});
    if (!f.consequences.empty()) labelled(out, st, "then", shown(f.consequences));
    std::vector<std::string> fix;
    for (const auto& cmd : f.fix) fix.push_back(cmd.rfind("#", 0) == 0 ? st.paint(shown(cmd), Color::gray) : "$ " + shown(cmd));
    if (!fix.empty()) labelled(out, st, "fix", fix);
    out += "\n";
  }
  return out;
}

std::string render_findings_markdown(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    if (f.severity == Severity::ok) continue;
    out += fmt::format("### {} `{}`: {}\n\n", severity_name(f.severity), shown(f.id), shown(f.title));
    if (!f.subject.empty()) out += fmt::format("*About:* {}\n\n", shown(f.subject));
    for (const auto& e : f.evidence)
      out += e.source.empty() ? fmt::format("- {}\n", shown(e.fact)) : fmt::format("- {} (`{}`)\n", shown(e.fact), shown(e.source));
    if (!f.evidence.empty()) out += "\n";
    if (!f.explanation.empty()) out += shown(f.explanation) + "\n\n";
    for (const auto& c : f.consequences) out += fmt::format("- then: {}\n", shown(c));
    if (!f.fix.empty()) out += "```sh\n" + join(shown(f.fix), "\n") + "\n```\n\n";
  }
  return out;
}

}  // namespace cd
