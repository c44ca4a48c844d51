#include "util/walk.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "util/root.hpp"

namespace cd {
namespace {

using Inode = std::pair<uint64_t, uint64_t>;

class Walker {
 public:
  explicit Walker(const WalkOptions& opts) : opts_(opts) {}

  void root(const std::string& path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
      result_.errors.push_back(path + ": " + std::strerror(errno));
      return;
    }
    if (S_ISDIR(st.st_mode)) dir(path, st, 0);
    else if (S_ISREG(st.st_mode)) add(path, st, is_link(path));
  }

  WalkResult finish() {
    // One path per inode: a real name wins over a symlink, then the first seen.
    std::map<Inode, size_t> pick;
    for (size_t i = 0; i < found_.size(); ++i) {
      auto [it, fresh] = pick.emplace(Inode{found_[i].dev, found_[i].ino}, i);
      if (!fresh && found_[it->second].via_symlink && !found_[i].via_symlink) it->second = i;
    }
    std::vector<size_t> keep;
    for (const auto& [_, i] : pick) keep.push_back(i);
    std::sort(keep.begin(), keep.end());
    for (size_t i : keep) result_.files.push_back(std::move(found_[i]));
    return std::move(result_);
  }

 private:
  static bool is_link(const std::string& path) {
    struct stat lst;
    return lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode);
  }

  void add(const std::string& path, const struct stat& st, bool via_symlink) {
    found_.push_back({path, static_cast<uint64_t>(st.st_size), static_cast<uint64_t>(st.st_dev),
                      static_cast<uint64_t>(st.st_ino), via_symlink});
  }

  void dir(const std::string& path, const struct stat& st, int depth) {
    if (depth > opts_.max_depth) return;
    if (!visited_dirs_.insert({static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)}).second) return;
    DIR* d = opendir(path.c_str());
    if (!d) {
      result_.errors.push_back(path + ": " + std::strerror(errno));
      return;
    }
    // d_type answers most entries without a stat (site-packages hold tens of
    // thousands of .py files): regular files whose names cannot be wanted are
    // skipped, real directories are entered with the inode readdir gives.
    struct Entry {
      std::string name;
      unsigned char type;
      uint64_t ino;
    };
    std::vector<Entry> entries;
    while (dirent* e = readdir(d)) {
      std::string_view n(e->d_name);
      if (n != "." && n != "..") entries.push_back({std::string(n), e->d_type, static_cast<uint64_t>(e->d_ino)});
    }
    closedir(d);
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    for (const auto& e : entries) {
      if (e.type == DT_REG && opts_.want && !opts_.want(e.name, true) && !opts_.want(e.name, false)) continue;
      if (e.type == DT_DIR) {
        struct stat sub{};
        sub.st_dev = st.st_dev;
        sub.st_ino = static_cast<ino_t>(e.ino);
        dir(path_join(path, e.name), sub, depth + 1);
        continue;
      }
      entry(path_join(path, e.name), e.name, depth);
    }
  }

  void entry(const std::string& path, const std::string& name, int depth) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return;  // dangling symlink
    if (S_ISDIR(st.st_mode)) return dir(path, st, depth + 1);
    if (!S_ISREG(st.st_mode)) return;
    bool executable = (st.st_mode & S_IXUSR) != 0;
    if (opts_.want && !opts_.want(name, executable)) return;
    add(path, st, is_link(path));
  }

  const WalkOptions& opts_;
  std::set<Inode> visited_dirs_;
  std::vector<WalkedFile> found_;
  WalkResult result_;
};

}  // namespace

WalkResult walk_files(const std::vector<std::string>& roots, const WalkOptions& opts) {
  Walker w(opts);
  for (const auto& r : roots) w.root(r);
  return w.finish();
}

}  // namespace cd
