#pragma once
// A view of a filesystem root. Probes read the machine only through a Root, so
// `--root DIR` points every probe at another tree (tests, chroots, mounted images).
// Paths passed in are absolute paths *inside* the root.
//
// Under a prefix every path is resolved inside the root, the way chroot(2) would: an
// absolute link target starts again at the root, ".." never climbs above it, at most
// kMaxLinks links are followed (then ELOOP). Resolution walks the tree one component at
// a time with openat(O_PATH|O_NOFOLLOW) from a descriptor of the root, so the host
// kernel never follows a link below the prefix. Only regular files are read (a FIFO,
// a device or a socket is refused before any read could block).
#include <sys/stat.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cd {

class Root {
 public:
  static constexpr int kMaxLinks = 40;  // MAXSYMLINKS of Linux

  Root() = default;  // the host
  explicit Root(std::string prefix);

  bool is_host() const { return prefix_.empty(); }
  const std::string& prefix() const { return prefix_; }

  // Where an in-root absolute path lives on the host, every link in it resolved inside the
  // root, so the kernel follows none below the prefix (a missing tail is kept as written;
  // a link loop gives "", which nothing can open). Identity for the host root.
  std::string host_path(std::string_view path) const;
  // The in-root path for a host path under the prefix (identity for the host root).
  std::string inner_path(std::string_view host) const;

  // open(2) of an in-root path resolved inside the root; O_NOFOLLOW leaves a last-component
  // link unfollowed (O_PATH|O_NOFOLLOW opens the link itself). O_CLOEXEC is always added.
  // Returns the descriptor (the caller closes it), or -1 with errno set.
  int open(std::string_view path, int flags) const;
  // stat (follow) or lstat of an in-root path; false with errno set.
  bool stat(std::string_view path, struct stat* st, bool follow = true) const;

  bool exists(std::string_view path) const;
  bool is_dir(std::string_view path) const;
  bool is_file(std::string_view path) const;
  bool is_symlink(std::string_view path) const;
  // Reads a regular file, up to max_bytes; nullopt when it is missing, unreadable or not a
  // regular file, with the reason in *why ("not a regular file (FIFO)").
  std::optional<std::string> read(std::string_view path, size_t max_bytes = 1u << 20,
                                  std::string* why = nullptr) const;
  // Entry names (not paths), sorted; empty when not a directory.
  std::vector<std::string> list(std::string_view path) const;
  std::optional<std::string> readlink(std::string_view path) const;
  // Resolves symlinks inside the root (absolute targets stay inside it); a missing tail is
  // kept as written (like realpath -m); loops give nullopt.
  std::optional<std::string> resolve(std::string_view path) const;
  // Files in `dir` whose names match a shell glob (fnmatch).
  std::vector<std::string> glob(std::string_view dir, std::string_view pattern) const;

 private:
  std::string prefix_;
  std::shared_ptr<const int> fd_;  // O_PATH descriptor of the prefix (closed with the last copy)
};

// What a resolution inside a root ended with: the in-root path reached (every component
// a real name, none a link) and 0, or the errno that stopped it (ENOENT, ENOTDIR, EACCES:
// the unresolved tail is appended as written; ELOOP: too many links).
struct InRootPath {
  std::string path;
  int error = 0;
};
// The resolver behind Root under a prefix, on a descriptor of the root directory.
// follow_last=false leaves a last-component link unresolved (lstat, readlink).
InRootPath resolve_in_root(int root_fd, std::string_view path, bool follow_last = true);
// Opens a path resolved inside the root at root_fd (see Root::open); -1 with errno.
int open_in_root(int root_fd, std::string_view path, int flags);

// Joins two path pieces with exactly one '/'.
std::string path_join(std::string_view a, std::string_view b);
std::string path_dirname(std::string_view p);
std::string path_basename(std::string_view p);
// Lexically normalises: removes ".", "..", duplicate slashes.
std::string path_normalize(std::string_view p);

}  // namespace cd
