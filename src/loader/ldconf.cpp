// ldconfig's reading of ld.so.conf: lines are directories ("DIR" or "DIR=type"),
// "include PATTERN…" reads the files a glob names (relative to the including file's
// directory), "hwcap" is obsolete. A visited set reads each file once whatever includes
// it; depth, file and include counts are bounded, so 8 files that include "*.conf" cost 8
// reads, not 8^8, and a hostile tree costs at most kLdConfMaxFiles reads.
#include "loader/ldconf.hpp"

#include <set>

#include "loader/read_file.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

struct ConfReader {
  const Root& root;
  std::vector<std::string>* errors;
  std::vector<LdConfDir> dirs;
  std::set<std::string> seen_files;
  std::set<std::string> seen_dirs;
  int depth = 0;
  int includes = 0;
  bool stopped = false;

  void note(std::string msg) {
    if (errors) errors->push_back(std::move(msg));
  }

  // False (and one note) once a bound is passed: the rest is not read.
  bool within(bool ok, const std::string& what) {
    if (ok) return true;
    if (!stopped) note(what);
    stopped = true;
    return false;
  }

  void include(std::string_view pattern, const std::string& from) {
    std::string pat(pattern);
    if (pat.empty()) return;
    if (!within(++includes <= kLdConfMaxIncludes,
                from + ": more than " + std::to_string(kLdConfMaxIncludes) + " includes; the rest is not read"))
      return;
    if (pat[0] != '/') pat = path_join(path_dirname(from), pat);  // relative to the including file
    pat = path_normalize(pat);
    std::string dir = path_dirname(pat), base = path_basename(pat);
    if (base.find_first_of("*?[") == std::string::npos) {
      read(pat);
      return;
    }
    for (const auto& f : root.glob(dir, base)) read(f);  // sorted, like glob(3)
  }

  void read(const std::string& file) {
    if (stopped || seen_files.count(file)) return;  // include loop or repeat
    if (!within(depth <= kLdConfMaxDepth, file + ": includes nested deeper than " + std::to_string(kLdConfMaxDepth) +
                                             "; not read") ||
        !within(seen_files.size() < static_cast<size_t>(kLdConfMaxFiles),
                file + ": more than " + std::to_string(kLdConfMaxFiles) + " ld.so.conf files; the rest is not read"))
      return;
    seen_files.insert(file);
    auto text = read_file_sized(root, file, 1u << 20);
    if (!text) {
      if (file == "/etc/ld.so.conf") return;  // absent on some systems: only the defaults apply
      note(file + ": cannot read");
      return;
    }
    for (auto& raw : split(*text, '\n')) {
      if (stopped) return;  // past a bound: nothing more is trusted
      std::string_view line = trim(std::string_view(raw).substr(0, raw.find('#')));
      if (line.empty()) continue;
      if (line.substr(0, 8) == "include " || line.substr(0, 8) == "include\t") {
        ++depth;
        for (auto& p : split(trim(line.substr(8)), ' ')) include(trim(p), file);
        --depth;
        continue;
      }
      if (line.substr(0, 6) == "hwcap ") continue;  // obsolete directive
      std::string dir(line.substr(0, line.find('=')));  // "/usr/lib=libc6" carries a type
      dir = std::string(trim(dir));
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      if (dir.empty() || dir[0] != '/') {
        note(file + ": ignored relative directory '" + dir + "'");
        continue;
      }
      if (seen_dirs.insert(dir).second) dirs.push_back({dir, file});
    }
  }
};

}  // namespace

std::vector<LdConfDir> read_ld_so_conf(const Root& root, std::vector<std::string>* errors, const std::string& file) {
  ConfReader r{root, errors, {}, {}, {}, 0, 0, false};
  r.read(file);
  return std::move(r.dirs);
}

}  // namespace cd
