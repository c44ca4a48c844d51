// `ldd FILE`: one line per needed object, "\tlibcublas.so.10 => not found" or
// "\tlibcudart.so.11.0 => /usr/local/cuda/lib64/libcudart.so.11.0 (0x00007f…)". Only the CUDA
// libraries of data/libraries.toml (by file-name stem) become facts: which file the loader
// resolved or that it found none, for the object named on the "ldd PATH" command line before
// the list (else "the file ldd was run on"). A consumer inside site-packages belongs to the
// reported Python environment, so libs.not_found says how to restore that package's libraries.
#include <re2/re2.h>

#include "explain/report.hpp"
#include "kb/libraries.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

bool cuda_library(const Kb& kb, std::string_view soname) {
  if (!soname.starts_with("lib")) return false;
  std::string_view rest = soname.substr(3);
  for (const auto& f : library_families(kb)) {
    if (!rest.starts_with(f.stem) || rest.size() == f.stem.size()) continue;
    char next = rest[f.stem.size()];
    if (next == '.' || next == '-' || (f.sublibs && next == '_')) return true;
  }
  return false;
}

}  // namespace

void parse_ldd(const std::vector<ReportLine>& lines, ReportBuilder& out) {
  static const RE2 entry(R"(^\s*(lib[A-Za-z0-9_+\-]*\.so[.\d]*)\s+=>\s+(not found|/\S+))");
  static const RE2 command(R"((?:^|[\s$#>])ldd\s+(?:-\S+\s+)*(\S+))");
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].text.find("=>") == std::string_view::npos || !RE2::PartialMatch(lines[i].text, entry)) continue;
    // The command line: above the list's first lines ("linux-vdso.so.1 (0x…)", libraries
    // without "=>" as ldd prints those already loaded), at most a few lines before it.
    std::string consumer = "the file ldd was run on";
    uint64_t first = lines[i].number;
    for (size_t k = i, other = 0; k-- > 0 && i - k < 400 && other < 3;) {
      std::string file;
      if (RE2::PartialMatch(lines[k].text, command, &file)) {
        consumer = file;
        first = lines[k].number;
        break;
      }
      if (lines[k].fence) break;
      if (lines[k].text.find("(0x") == std::string_view::npos) ++other;
    }
    size_t r = out.add_report("ldd", first, lines[i].number);
    bool python = contains(consumer, "-packages/");
    std::string soname, where;
    size_t j = i;
    for (; j < lines.size() && j < i + 400; ++j) {
      const ReportLine& l = lines[j];
      out.at(l.number);
      if (l.fence) break;
      if (!RE2::PartialMatch(l.text, entry, &soname, &where)) {
        if (trim(l.text).empty() || l.text.find("linux-vdso") != std::string_view::npos ||
            l.text.find("ld-linux") != std::string_view::npos || l.text.find("(0x") != std::string_view::npos)
          continue;
        break;
      }
      out.end_report(r, l.number);
      if (!cuda_library(out.kb(), soname)) continue;
      bool missing = where == "not found";
      out.library(consumer, soname, missing ? "" : where, python);
      if (missing) out.fact(r, soname + " => not found");
    }
    i = j;
  }
}

}  // namespace cd
