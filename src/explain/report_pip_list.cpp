// pip's package listings: `pip list` ("Package    Version" / "---------- -------" then
// "torch      2.1.0+cu121" rows, an optional location column), `pip freeze` ("torch==2.1.0+cu121",
// "name @ file:///…" lines; a run of at least three such lines, so a single requirement in a
// sentence is not a listing) and `pip show torch` ("Name: torch" then "Version: 2.2.1").
// torch's local version (+cu121, +cpu) names its build; without one the build stays unknown.
#include <re2/re2.h>

#include "explain/report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

const RE2& freeze_line() {
  static const RE2 re(R"(^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[[^\]]*\])?\s*(?:==\s*(\S+)|@\s+\S+)\s*$)");
  return re;
}

void add(ReportBuilder& out, size_t r, const std::string& name, const std::string& version) {
  out.package(name, version, "pip");
  std::string n = to_lower(name);
  if (n == "torch") {
    out.torch(version, "", false);
    out.fact(r, "torch " + version);
  } else if (n == "vllm" || n == "sglang" || n == "flash-attn" || n == "flash_attn" || n == "xformers" || n == "jax" ||
             n == "jaxlib" || n == "tensorflow" || n == "deepspeed" || n.starts_with("nvidia-cudnn") || n.starts_with("nvidia-cuda-runtime")) {
    out.fact(r, name + " " + version);
  }
}

void read_list(const std::vector<ReportLine>& lines, size_t start, ReportBuilder& out) {
  size_t r = out.add_report("pip list", lines[start].number, lines[start + 1].number);
  static const RE2 row(R"(^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)\s+(\d\S*)(?:\s+\S.*)?$)");
  std::string name, version;
  for (size_t i = start + 2; i < lines.size() && i < start + 2 + out.limits().max_packages; ++i) {
    if (lines[i].fence || !RE2::FullMatch(lines[i].text, row, &name, &version)) break;
    out.at(lines[i].number);
    add(out, r, name, version);
    out.end_report(r, lines[i].number);
  }
}

size_t read_freeze(const std::vector<ReportLine>& lines, size_t start, ReportBuilder& out) {
  size_t end = start;
  while (end < lines.size() && end - start < out.limits().max_packages && !lines[end].fence &&
         RE2::FullMatch(lines[end].text, freeze_line()))
    ++end;
  if (end - start < 3) return start;
  size_t r = out.add_report("pip freeze", lines[start].number, lines[end - 1].number);
  std::string name, version;
  for (size_t i = start; i < end; ++i)
    if (RE2::FullMatch(lines[i].text, freeze_line(), &name, &version) && !version.empty())
      out.at(lines[i].number), add(out, r, name, version);
  return end - 1;
}

}  // namespace

void parse_pip_list(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  static const RE2 list_head(R"(^\s*Package\s+Version(?:\s+\S.*)?$)");
  static const RE2 dashes(R"(^\s*-{3,}\s+-{3,})");
  static const RE2 show_name(R"(^\s*Name:\s*([A-Za-z0-9][A-Za-z0-9._\-]*)\s*$)");
  static const RE2 show_version(R"(^\s*Version:\s*(\S+)\s*$)");
  std::string name, version;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = lines[i].text;
    if (i + 1 < lines.size() && t.find("Package") != std::string_view::npos && RE2::FullMatch(t, list_head) &&
        RE2::PartialMatch(lines[i + 1].text, dashes)) {
      read_list(lines, i, out);
    } else if (t.find("Name:") != std::string_view::npos && i + 1 < lines.size() && RE2::FullMatch(t, show_name, &name) &&
               RE2::FullMatch(lines[i + 1].text, show_version, &version)) {
      size_t r = out.add_report("pip show", lines[i].number, lines[i + 1].number);
      out.at(lines[i + 1].number);
      add(out, r, name, version);
    } else if ((t.find("==") != std::string_view::npos || t.find(" @ ") != std::string_view::npos) &&
               RE2::FullMatch(t, freeze_line())) {
      i = read_freeze(lines, i, out);
    }
  }
}

}  // namespace cd
