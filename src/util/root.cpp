// Root: every filesystem read of a probe. On the host the kernel resolves paths as usual.
// Under a prefix, resolve_in_root walks the path one component at a time from an O_PATH
// descriptor of the root: each component is opened with O_PATH|O_NOFOLLOW relative to the
// directory reached so far; a link's target is read from its own descriptor and its
// components are put in front of the rest of the path (an absolute target first goes back
// to the root); ".." pops the last directory and stops at the root. The kernel therefore
// never follows a link below the prefix, and a directory swapped for a link while we walk
// gives ELOOP, not an escape. Files are opened with O_NONBLOCK and checked with fstat
// before a byte is read, so a FIFO or a device cannot block a probe.
#include "util/root.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <utility>

#include "util/regular_file.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd, -1));
    return *this;
  }
  Fd(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset(int f = -1) {
    if (fd >= 0) ::close(fd);
    fd = f;
  }
  int release() { return std::exchange(fd, -1); }
};

// One resolution inside a root. After run(): dirs_/names_ are the directories reached
// below the root, last_ the final component (opened O_PATH in last_fd_) or "" when the
// path ends at a directory; on failure rest_ holds the components not resolved.
class Resolver {
 public:
  explicit Resolver(int root_fd) : root_(root_fd) {}

  int cur() const { return dirs_.empty() ? root_ : dirs_.back().fd; }

  int run(std::string_view path, bool follow_last) {
    if (path.empty()) return ENOENT;  // as open("")
    std::deque<std::string> todo;
    for (auto& c : split(path, '/')) todo.push_back(std::move(c));
    if (!path.empty() && path.back() == '/' && !todo.empty()) todo.push_back(".");  // "dir/" must be a dir
    int links = 0;
    while (!todo.empty()) {
      std::string c = std::move(todo.front());
      todo.pop_front();
      if (c == ".") continue;
      if (c == "..") {
        if (!dirs_.empty()) dirs_.pop_back(), names_.pop_back();
        continue;
      }
      bool last = todo.empty();
      Fd fd(::openat(cur(), c.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
      struct stat st;
      if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0) return fail(errno, c, todo);
      if (S_ISLNK(st.st_mode) && (!last || follow_last)) {
        if (++links > Root::kMaxLinks) return fail(ELOOP, c, todo);
        char buf[PATH_MAX];
        ssize_t n = ::readlinkat(fd.fd, "", buf, sizeof buf);
        if (n <= 0 || n == static_cast<ssize_t>(sizeof buf)) return fail(n == 0 ? ENOENT : n > 0 ? ENAMETOOLONG : errno, c, todo);
        std::string_view target(buf, static_cast<size_t>(n));
        if (target[0] == '/') dirs_.clear(), names_.clear();  // absolute: from the root again
        auto parts = split(target, '/');
        if (target.back() == '/') parts.push_back(".");
        todo.insert(todo.begin(), parts.begin(), parts.end());
        continue;
      }
      if (last) {
        last_ = std::move(c);
        last_fd_ = std::move(fd);
        return 0;
      }
      if (!S_ISDIR(st.st_mode)) return fail(ENOTDIR, c, todo);
      dirs_.push_back(std::move(fd));
      names_.push_back(std::move(c));
    }
    return 0;
  }

  // The in-root path reached, then the unresolved rest as written (never collapsed: the
  // kernel must meet the failing component first, not skip it through a "..").
  std::string path() const {
    std::string p;
    for (const auto& n : names_) p += "/" + n;
    if (!last_.empty()) p += "/" + last_;
    for (const auto& n : rest_) p += "/" + n;
    return p.empty() ? "/" : p;
  }

  const std::string& last() const { return last_; }
  Fd& last_fd() { return last_fd_; }

 private:
  int fail(int err, std::string c, const std::deque<std::string>& todo) {
    rest_.push_back(std::move(c));
    rest_.insert(rest_.end(), todo.begin(), todo.end());
    return err;
  }

  int root_;
  std::vector<Fd> dirs_;
  std::vector<std::string> names_;
  std::string last_;
  Fd last_fd_;
  std::vector<std::string> rest_;
};

std::optional<std::string> read_fd(int fd, size_t max_bytes, const struct stat& st, std::string* why) {
  // Sized from fstat so small files cost no big buffer; procfs/sysfs files report
  // size 0 (or 4096) and are read in chunks until EOF.
  std::string data;
  size_t want = st.st_size > 0 ? std::min<size_t>(static_cast<size_t>(st.st_size), max_bytes) : std::min<size_t>(max_bytes, 4096);
  while (data.size() < max_bytes) {
    size_t old = data.size();
    data.resize(std::min(max_bytes, old + std::max<size_t>(want, 4096)));
    ssize_t n = ::read(fd, data.data() + old, data.size() - old);
    if (n < 0) {
      if (errno == EINTR) {
        data.resize(old);
        continue;
      }
      if (why) *why = std::strerror(errno);
      return std::nullopt;
    }
    data.resize(old + static_cast<size_t>(n));
    if (n == 0 || (st.st_size > 0 && data.size() >= static_cast<size_t>(st.st_size))) break;
  }
  return data;
}

}  // namespace

InRootPath resolve_in_root(int root_fd, std::string_view path, bool follow_last) {
  Resolver r(root_fd);
  int err = r.run(path, follow_last);
  return {r.path(), err};
}

int open_in_root(int root_fd, std::string_view path, int flags) {
  Resolver r(root_fd);
  if (int err = r.run(path, (flags & O_NOFOLLOW) == 0)) {
    errno = err;
    return -1;
  }
  if (r.last().empty()) return ::openat(r.cur(), ".", (flags & ~O_NOFOLLOW) | O_CLOEXEC);  // a directory
  if (flags & O_PATH) return r.last_fd().release();
  // The last component is no link (or O_NOFOLLOW was asked for): reopen it by name with
  // O_NOFOLLOW, so a link put there since gives ELOOP instead of being followed.
  return ::openat(r.cur(), r.last().c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
}

Root::Root(std::string prefix) : prefix_(std::move(prefix)) {
  while (prefix_.size() > 1 && prefix_.back() == '/') prefix_.pop_back();
  if (prefix_ == "/") prefix_.clear();
  if (prefix_.empty()) return;
  int fd = ::open(prefix_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  fd_ = std::shared_ptr<const int>(new int(fd), [](const int* p) {
    if (*p >= 0) ::close(*p);
    delete p;
  });
}

std::string Root::host_path(std::string_view path) const {
  if (prefix_.empty()) return std::string(path);
  InRootPath r = resolve_in_root(*fd_, path);
  if (r.error == ELOOP) return {};  // nothing opens ""
  return path_join(prefix_, r.path);
}

std::string Root::inner_path(std::string_view host) const {
  if (prefix_.empty()) return std::string(host);
  if (host.substr(0, prefix_.size()) == prefix_ && (host.size() == prefix_.size() || host[prefix_.size()] == '/')) {
    std::string rest(host.substr(prefix_.size()));
    return rest.empty() ? "/" : rest;
  }
  return std::string(host);
}

int Root::open(std::string_view path, int flags) const {
  if (prefix_.empty()) return ::open(std::string(path).c_str(), flags | O_CLOEXEC);
  return open_in_root(*fd_, path, flags);
}

bool Root::stat(std::string_view path, struct stat* st, bool follow) const {
  if (prefix_.empty()) {
    std::string p(path);
    return (follow ? ::stat(p.c_str(), st) : ::lstat(p.c_str(), st)) == 0;
  }
  Fd fd(open(path, O_PATH | (follow ? 0 : O_NOFOLLOW)));
  return fd.fd >= 0 && ::fstat(fd.fd, st) == 0;
}

bool Root::exists(std::string_view path) const {
  struct stat st;
  return stat(path, &st);
}

bool Root::is_dir(std::string_view path) const {
  struct stat st;
  return stat(path, &st) && S_ISDIR(st.st_mode);
}

bool Root::is_file(std::string_view path) const {
  struct stat st;
  return stat(path, &st) && S_ISREG(st.st_mode);
}

bool Root::is_symlink(std::string_view path) const {
  struct stat st;
  return stat(path, &st, false) && S_ISLNK(st.st_mode);
}

std::optional<std::string> Root::read(std::string_view path, size_t max_bytes, std::string* why) const {
  // O_NONBLOCK: opening a FIFO does not wait for a writer; fstat then refuses it.
  Fd fd(open(path, O_RDONLY | O_NONBLOCK));
  if (fd.fd < 0) {
    if (why) *why = std::strerror(errno);
    return std::nullopt;
  }
  struct stat st;
  if (::fstat(fd.fd, &st) != 0) {
    if (why) *why = std::strerror(errno);
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    if (why) *why = std::string("not a regular file (") + file_type_name(st.st_mode) + ")";
    return std::nullopt;
  }
  return read_fd(fd.fd, max_bytes, st, why);
}

std::vector<std::string> Root::list(std::string_view path) const {
  std::vector<std::string> names;
  Fd fd(open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK));
  if (fd.fd < 0) return names;
  DIR* d = ::fdopendir(fd.fd);
  if (!d) return names;
  fd.release();  // closedir closes it
  while (dirent* e = ::readdir(d)) {
    std::string_view n(e->d_name);
    if (n != "." && n != "..") names.emplace_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> Root::readlink(std::string_view path) const {
  char buf[PATH_MAX];
  ssize_t n;
  if (prefix_.empty()) {
    n = ::readlink(std::string(path).c_str(), buf, sizeof buf);
  } else {
    Fd fd(open(path, O_PATH | O_NOFOLLOW));
    if (fd.fd < 0) return std::nullopt;
    n = ::readlinkat(fd.fd, "", buf, sizeof buf);
  }
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<std::string> Root::resolve(std::string_view path) const {
  // The host is the root "/": the same walk, so both agree on what a path means.
  static const int host_root = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  InRootPath r = resolve_in_root(prefix_.empty() ? host_root : *fd_, path);
  if (r.error == ELOOP) return std::nullopt;
  return r.error ? path_normalize(r.path) : r.path;
}

std::vector<std::string> Root::glob(std::string_view dir, std::string_view pattern) const {
  std::vector<std::string> out;
  std::string pat(pattern);
  for (const auto& name : list(dir))
    if (fnmatch(pat.c_str(), name.c_str(), 0) == 0) out.push_back(path_join(dir, name));
  return out;
}

std::string path_join(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  std::string out(a);
  while (!out.empty() && out.back() == '/') out.pop_back();
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  return out + "/" + std::string(b);
}

std::string path_dirname(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  auto slash = p.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(p.substr(0, slash));
}

std::string path_basename(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  auto slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

std::string path_normalize(std::string_view p) {
  bool absolute = !p.empty() && p[0] == '/';
  std::vector<std::string> out;
  for (auto& part : split(p, '/')) {
    if (part == ".") continue;
    if (part == "..") {
      if (!out.empty() && out.back() != "..") out.pop_back();
      else if (!absolute) out.push_back(part);
      continue;
    }
    out.push_back(part);
  }
  std::string s = join(out, "/");
  return absolute ? "/" + s : (s.empty() ? "." : s);
}

}  // namespace cd
