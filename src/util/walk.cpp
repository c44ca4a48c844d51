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
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
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

  std::function<void()> on_cold;  // called once, at the third directory read from the disk

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
    auto t0 = std::chrono::steady_clock::now();
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
    // A directory that took the disk's time, not the cache's: a few of them and the rest
    // of the tree is read ahead on many threads (walk_files). From the cache a directory
    // reads in microseconds per entry; from a disk each read is a round trip.
    auto took = std::chrono::steady_clock::now() - t0;
    if (on_cold && took > std::chrono::microseconds(300 + 2 * static_cast<long>(entries.size())) && ++slow_reads_ == 3)
      on_cold();
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
  int slow_reads_ = 0;
  const WalkOptions& opts_;
  const Root& root_;
  std::set<Inode> visited_dirs_;
  std::vector<WalkedFile> found_;
  WalkResult result_;
};

// Reads the directories below the roots on many threads while the walk above runs, so a
// cold page cache is read at a high queue depth instead of one directory (and one inode)
// at a time in the walk's order. It changes nothing but the kernel's caches: it follows no
// link (each directory is opened with openat2 beneath a root opened through the Root, no
// link resolved on the way) and only stats entries, and the walk's answer is the walk's alone. Deepest-first, like the walk, so the
// walk finds what it needs next already read; it stops when the walk is done.
class WalkAhead {
 public:
  WalkAhead(const std::vector<std::string>& roots, const WalkOptions& opts) : want_(opts.want) {
    for (const auto& r : roots) {
      int fd = opts.root.open(opts.root.inner_path(r), O_RDONLY | O_DIRECTORY | O_NONBLOCK);
      if (fd < 0) continue;
      stack_.push_back({roots_.size(), "."});
      roots_.push_back(fd);
    }
    size_t n = stack_.empty() ? 0 : kThreads;
    for (size_t i = 0; i < n; ++i) threads_.emplace_back([this] { work(); });
  }
  ~WalkAhead() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    more_.notify_all();
    for (auto& t : threads_) t.join();
    for (int fd : roots_) ::close(fd);
  }
  WalkAhead(const WalkAhead&) = delete;
  WalkAhead& operator=(const WalkAhead&) = delete;

 private:
  static constexpr size_t kThreads = 32;      // reads in flight on a cold disk
  static constexpr size_t kMaxDirs = 200000;  // a bound on the work, whatever the tree

  struct Pending {
    size_t root;       // index into roots_
    std::string path;  // relative to it, every component a directory when it was read
  };

  void work() {
    for (;;) {
      Pending p;
      {
        std::unique_lock lock(mutex_);
        more_.wait(lock, [&] { return done_ || !stack_.empty() || busy_ == 0; });
        if (done_ || stack_.empty()) {
          more_.notify_all();  // nothing left anywhere: the others end too
          return;
        }
        p = std::move(stack_.back());
        stack_.pop_back();
        ++busy_;
      }
      std::vector<std::string> below = read(p);
      {
        std::lock_guard lock(mutex_);
        --busy_;
        for (auto it = below.rbegin(); it != below.rend() && visited_ < kMaxDirs; ++it, ++visited_)
          stack_.push_back({p.root, std::move(*it)});  // the first name on top, as the walk goes
      }
      more_.notify_all();
    }
  }

  // Opens a directory below a root without following any link, in the path or at its end
  // (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): one swapped for a link since it was
  // read is not entered. -1 where the kernel has no openat2 (the walk then reads alone).
  int open_below(const Pending& p) const {
    open_how how{};
    how.flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
    return static_cast<int>(::syscall(SYS_openat2, roots_[p.root], p.path.c_str(), &how, sizeof how));
  }

  // One directory: its entries, the inodes the walk will stat, its subdirectories.
  std::vector<std::string> read(const Pending& p) {
    std::vector<std::string> below;
    int fd = open_below(p);
    if (fd < 0) return below;
    DIR* dp = ::fdopendir(fd);
    if (!dp) {
      ::close(fd);
      return below;
    }
    while (dirent* e = ::readdir(dp)) {
      std::string_view n(e->d_name);
      if (n == "." || n == "..") continue;
      if (e->d_type == DT_DIR) {
        below.push_back(p.path + "/" + e->d_name);
      } else if (e->d_type != DT_REG || !want_ || want_(n, true) || want_(n, false)) {
        struct stat st;
        (void)::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW);
      }
    }
    ::closedir(dp);
    std::sort(below.begin(), below.end());
    return below;
  }

  std::function<bool(std::string_view, bool)> want_;
  std::vector<int> roots_;
  std::mutex mutex_;
  std::condition_variable more_;
  std::vector<Pending> stack_;
  std::vector<std::thread> threads_;
  size_t busy_ = 0, visited_ = 0;
  bool done_ = false;
};

}  // namespace

WalkResult walk_files(const std::vector<std::string>& roots, const WalkOptions& opts) {
  std::optional<WalkAhead> ahead;
  Walker w(opts);
  if (opts.read_ahead == ReadAhead::always) ahead.emplace(roots, opts);
  // Only when the cache is cold: from a warm one the walk is CPU-bound, and the threads
  // reading the same directories again would only compete with it.
  if (opts.read_ahead == ReadAhead::when_cold) w.on_cold = [&] { ahead.emplace(roots, opts); };
  for (const auto& r : roots) w.start(r);
  ahead.reset();
  return w.finish();
}

}  // namespace cd
