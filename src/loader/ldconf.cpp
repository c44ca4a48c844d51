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

  void note(std::string msg) {
    if (errors) errors->push_back(std::move(msg));
  }

  void include(std::string_view pattern, const std::string& from) {
    std::string pat(pattern);
    if (pat.empty()) return;
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
    if (!seen_files.insert(file).second) return;  // include loop or repeat
    auto text = read_file_sized(root, file, 1u << 20);
    if (!text) {
      if (file == "/etc/ld.so.conf") return;  // absent on some systems: only the defaults apply
      note(file + ": cannot read");
      return;
    }
    for (auto& raw : split(*text, '\n')) {
      std::string_view line = trim(std::string_view(raw).substr(0, raw.find('#')));
      if (line.empty()) continue;
      if (line.substr(0, 8) == "include " || line.substr(0, 8) == "include\t") {
        for (auto& p : split(trim(line.substr(8)), ' ')) include(trim(p), file);
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
  ConfReader r{root, errors, {}, {}, {}};
  r.read(file);
  return std::move(r.dirs);
}

}  // namespace cd
