// The walk reads each directory through a descriptor (openat/fdopendir), so the names
// below a directory are looked up in that directory and nowhere else. Entries whose
// d_type says "regular file" or "directory" need no link handling; a link (or an entry
// of unknown type) is followed through Root: on the host by the kernel, under a prefix
// by resolve_in_root, which keeps it inside the root. Each directory carries its real
// in-root path (no link in it), which gives every file a path the scanner can open
// without the kernel following a link out of the root.
#include "util/walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <utility>

namespace cd {
namespace {

using Inode = std::pair<uint64_t, uint64_t>;

struct Dir {
  int fd;            // owned: closed when the directory is done
  std::string path;  // as reached (host form)
  std::string real;  // in-root path with no link in it (under a prefix)
};

class Walker {
 public:
  explicit Walker(const WalkOptions& opts) : opts_(opts), root_(opts.root) {}

  void start(const std::string& path) {
    std::string inner = root_.inner_path(path);
    std::string real = root_.is_host() ? path : root_.resolve(inner).value_or("");
    struct stat st;
    if (real.empty() || !root_.stat(inner, &st)) {
      result_.errors.push_back(path + ": " + std::strerror(real.empty() ? ELOOP : errno));
      return;
    }
    if (S_ISDIR(st.st_mode)) {
      int fd = root_.open(inner, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
      if (fd < 0) return error(path);
      dir({fd, path, real}, st, 0);
    } else if (S_ISREG(st.st_mode)) {
      add(path, open_path(real), st, root_.is_symlink(inner));
    }
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
  struct Entry {
    std::string name;
    unsigned char type;
  };

  void error(const std::string& path) { result_.errors.push_back(path + ": " + std::strerror(errno)); }

  std::string open_path(const std::string& real) const { return root_.is_host() ? real : path_join(root_.prefix(), real); }

  void add(const std::string& path, std::string open, const struct stat& st, bool via_symlink) {
    found_.push_back({path, std::move(open), static_cast<uint64_t>(st.st_size), static_cast<uint64_t>(st.st_dev),
                      static_cast<uint64_t>(st.st_ino), via_symlink});
  }

  std::vector<Entry> read_entries(Dir& d) {
    std::vector<Entry> entries;
    DIR* dp = ::fdopendir(::dup(d.fd));
    if (!dp) {
      error(d.path);
      return entries;
    }
    while (dirent* e = ::readdir(dp)) {
      std::string_view n(e->d_name);
      if (n != "." && n != "..") entries.push_back({std::string(n), e->d_type});
    }
    ::closedir(dp);
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    return entries;
  }

  void dir(Dir d, const struct stat& st, int depth) {
    if (depth > opts_.max_depth ||
        !visited_dirs_.insert({static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)}).second) {
      ::close(d.fd);
      return;
    }
    // d_type answers most entries without a stat (site-packages hold tens of thousands
    // of .py files): regular files whose names cannot be wanted are skipped.
    for (const auto& e : read_entries(d)) {
      if (e.type == DT_REG && opts_.want && !opts_.want(e.name, true) && !opts_.want(e.name, false)) continue;
      entry(d, e, depth);
    }
    ::close(d.fd);
  }

  void entry(const Dir& d, const Entry& e, int depth) {
    std::string path = path_join(d.path, e.name);
    std::string real = root_.is_host() ? path : path_join(d.real, e.name);
    struct stat lst;
    if (e.type == DT_DIR) lst.st_mode = S_IFDIR;  // opened below with O_NOFOLLOW: no stat needed
    else if (::fstatat(d.fd, e.name.c_str(), &lst, AT_SYMLINK_NOFOLLOW) != 0) return;
    bool link = S_ISLNK(lst.st_mode);
    struct stat st = lst;
    if (link) {
      // Followed through the Root: inside it under a prefix; dangling links are skipped.
      if (!root_.is_host()) {
        auto r = root_.resolve(real);
        if (!r) return;
        real = *r;
      }
      if (!root_.stat(real, &st)) return;
    }
    if (S_ISDIR(st.st_mode)) {
      int fd = link ? root_.open(real, O_RDONLY | O_DIRECTORY | O_NONBLOCK)
                    : ::openat(d.fd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0) return error(path);
      struct stat dst;
      if (::fstat(fd, &dst) != 0) {
        ::close(fd);
        return;
      }
      return dir({fd, path, real}, dst, depth + 1);
    }
    if (!S_ISREG(st.st_mode)) return;
    bool executable = (st.st_mode & S_IXUSR) != 0;
    if (opts_.want && !opts_.want(e.name, executable)) return;
    add(path, open_path(real), st, link);
  }

  const WalkOptions& opts_;
  const Root& root_;
  std::set<Inode> visited_dirs_;
  std::vector<WalkedFile> found_;
  WalkResult result_;
};

}  // namespace

WalkResult walk_files(const std::vector<std::string>& roots, const WalkOptions& opts) {
  Walker w(opts);
  for (const auto& r : roots) w.start(r);
  return w.finish();
}

}  // namespace cd
