// libFuzzer target for `--root` path resolution (issue 12 #3, #4). The input is a small
// program that builds a tree under a fresh root directory: directories, regular files,
// FIFOs and symlinks with absolute, relative and "../" targets (loops, links to "/", links
// to the host path of a sentinel file that lies next to the root, outside it). Then paths
// from the input and a fixed set are resolved, opened, read, listed and walked through
// cd::Root, walk_files and the loader's read_file_sized, and each answer is checked:
//  - nothing names or reads a host file outside the root: every descriptor Root opens and
//    every file the walk reports lies under the prefix (its /proc/self/fd name), and the
//    sentinel's bytes are never returned;
//  - the answer is the one the kernel gives for the same path with openat2(RESOLVE_IN_ROOT),
//    which resolves exactly like chroot(2) and stops after 40 links: the same file (device
//    and inode) or a failure on both sides. So a loop or a chain of links ends within the
//    kernel's limit, as ours must;
//  - a path that Root::resolve or the walk hands out has no link left below the prefix;
//  - only regular files are read: a FIFO is refused, never waited on.
// Where openat2 is missing (ENOSYS, or refused by a seccomp filter) only the comparison
// is skipped. The tree lives in a private directory (tmpfs /dev/shm when writable), is
// rebuilt for every input and removed at exit.
//
// Input: records, each an op byte then its operands.
//   op%6 == 0 mkdir P | 1 file P | 2 symlink P -> T | 3 mkfifo P | 4 query P | 5 symlink P -> H
//   P (a name to create): a byte n (n%3+1 components), then n bytes, each picks a/b/c/d.
//   Q (a query, op 4): a byte n (n%6+1 components) then n bytes, each picks from kTarget.
//   T (a link target): a byte f (bit 0: absolute; f>>1 % 8 components), then those bytes,
//     each picking from kTarget ("..", ".", "" and the names of the host tree around the root).
//   H: one byte picking a host path: "/", the host path of the sentinel, its directory, the
//     root itself, the directory above it.
// Creation never follows a link (openat with O_NOFOLLOW from the root's descriptor), so a
// link to "/" in the tree cannot make the harness write to the host.
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "loader/read_file.hpp"
#include "util/root.hpp"
#include "util/walk.hpp"

namespace {

const char* const kNames[] = {"a", "b", "c", "d"};
// Link targets and queries: names that exist in the tree, the names of the host tree
// around the root (an escape would find them) and the components that move around.
const char* const kTarget[] = {"a", "b", "c", "d", "..", ".", "", "outside", "sentinel", "root"};
constexpr size_t kMaxOps = 64;
const char kSentinelText[] = "HOST FILE OUTSIDE THE ROOT: must never be read";
const char kInRootText[] = "in-root";

[[noreturn]] void bug(const std::string& what, const std::string& path) {
  std::fprintf(stderr, "root_fuzz: %s: %s\n", what.c_str(), path.c_str());
  std::abort();
}

// The host tree: BASE/outside/sentinel (and BASE/outside/host-only-entry), BASE/root/ the root.
struct Host {
  std::string base, outside, sentinel, prefix;
  std::set<std::pair<dev_t, ino_t>> forbidden;  // host inodes an escape would reach
  bool have_openat2 = true;

  Host() {
    const char* dirs[] = {"/dev/shm", std::getenv("TMPDIR"), "/tmp"};
    for (const char* d : dirs) {
      if (!d || access(d, W_OK) != 0) continue;
      std::string tmpl = std::string(d) + "/cd-root-fuzz-XXXXXX";
      if (mkdtemp(tmpl.data())) {
        base = tmpl;
        break;
      }
    }
    if (base.empty()) bug("no writable temporary directory", "");
    char real[PATH_MAX];
    if (!realpath(base.c_str(), real)) bug("realpath", base);
    base = real;  // no link in the prefix: /proc/self/fd names compare as strings
    outside = base + "/outside";
    sentinel = outside + "/sentinel";
    prefix = base + "/root";
    if (mkdir(outside.c_str(), 0755) != 0 || mkdir((outside + "/host-only-entry").c_str(), 0755) != 0) bug("mkdir", outside);
    FILE* f = std::fopen(sentinel.c_str(), "w");
    if (!f) bug("create", sentinel);
    std::fputs(kSentinelText, f);
    std::fclose(f);
    for (const std::string& p : {std::string("/"), base, outside, sentinel, base.substr(0, base.rfind('/'))}) {
      struct stat st;
      if (stat(p.empty() ? "/" : p.c_str(), &st) == 0) forbidden.insert({st.st_dev, st.st_ino});
    }
  }
  ~Host() {
    std::error_code ec;
    std::filesystem::remove_all(base, ec);
  }
};

Host& host() {
  static Host* h = [] {
    auto* p = new Host;
    std::atexit([] { delete &host(); });
    return p;
  }();
  return *h;
}

struct Reader {
  const uint8_t* p;
  size_t n;
  bool more() const { return n > 0; }
  uint8_t byte() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
};

std::vector<std::string> create_path(Reader& in) {
  std::vector<std::string> parts;
  for (int i = 0, k = in.byte() % 3 + 1; i < k; ++i) parts.push_back(kNames[in.byte() % 4]);
  return parts;
}

std::string target_path(Reader& in, size_t max_parts) {
  uint8_t f = in.byte();
  std::string t = (f & 1) ? "/" : "";
  size_t k = (f >> 1) % max_parts;
  for (size_t i = 0; i < k; ++i) {
    if (i) t += "/";
    t += kTarget[in.byte() % (sizeof kTarget / sizeof *kTarget)];
  }
  return t.empty() ? "." : t;  // symlink("") is not allowed
}

// The directory holding the last component of `parts`, reached from the root without
// following any link; -1 when a component is missing or is not a real directory.
int parent_dir(int root_fd, const std::vector<std::string>& parts) {
  int fd = dup(root_fd);
  for (size_t i = 0; fd >= 0 && i + 1 < parts.size(); ++i) {
    int next = openat(fd, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(fd);
    fd = next;
  }
  return fd;
}

// The name the kernel gives an open descriptor: where it really is.
std::string fd_path(int fd) {
  char buf[PATH_MAX];
  ssize_t n = readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

bool under_prefix(const std::string& p, const std::string& prefix) {
  return p == prefix || (p.size() > prefix.size() && p.compare(0, prefix.size(), prefix) == 0 && p[prefix.size()] == '/');
}

// The descriptor must be inside the root and no host inode an escape would reach.
void check_inside(int fd, const std::string& what, const std::string& path) {
  Host& h = host();
  struct stat st;
  if (fstat(fd, &st) != 0) bug("fstat failed after open", path);
  if (h.forbidden.count({st.st_dev, st.st_ino})) bug(what + " reached a host file outside the root", path);
  std::string where = fd_path(fd);
  if (!under_prefix(where, h.prefix)) bug(what + " opened " + where + ", outside the root", path);
}

// openat2 with RESOLVE_IN_ROOT: the kernel's chroot-like resolution, the reference.
int kernel_open(int root_fd, const std::string& path, bool follow) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  how.resolve = RESOLVE_IN_ROOT;
  return static_cast<int>(syscall(SYS_openat2, root_fd, path.c_str(), &how, sizeof how));
}

bool same_file(int a, int b) {
  struct stat sa, sb;
  return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void query(const cd::Root& root, int root_fd, const std::string& q) {
  Host& h = host();
  for (bool follow : {true, false}) {
    int ours = root.open(q, O_PATH | (follow ? 0 : O_NOFOLLOW));
    int our_errno = errno;
    if (ours >= 0) check_inside(ours, "Root::open", q);
    if (h.have_openat2) {
      int ref = kernel_open(root_fd, q, follow);
      if (ref < 0 && (errno == ENOSYS || errno == EPERM)) {
        h.have_openat2 = false;  // an old kernel, or a seccomp filter refuses it
      } else {
        if ((ours >= 0) != (ref >= 0))
          bug(std::string(ours >= 0 ? "Root::open found a file the kernel (RESOLVE_IN_ROOT) does not"
                                    : "Root::open failed (" + std::string(std::strerror(our_errno)) + ") where the kernel found a file") +
                  (follow ? "" : " (O_NOFOLLOW)"),
              q);
        if (ours >= 0 && !same_file(ours, ref)) bug("Root::open and the kernel (RESOLVE_IN_ROOT) disagree", q);
        if (ref >= 0) close(ref);
      }
    }
    if (ours >= 0) close(ours);
  }

  // resolve: an in-root path; when the file is there, it is its real name (no link left).
  if (auto r = root.resolve(q)) {
    if (r->empty() || (*r)[0] != '/') bug("resolve gave a path that is not absolute: " + *r, q);
    for (const auto& part : {std::string("/../"), std::string("/./")})
      if ((*r + "/").find(part) != std::string::npos) bug("resolve left '.' or '..' in " + *r, q);
    int ours = root.open(q, O_PATH);
    if (ours >= 0) {
      std::string real = cd::path_join(h.prefix, *r);
      int at = open(real.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (at < 0 || !same_file(ours, at) || fd_path(at) != (*r == "/" ? h.prefix : real))
        bug("resolve's path " + *r + " is not the real name of the file", q);
      close(at);
      close(ours);
    }
  }

  // host_path: whatever the host kernel opens through it stays under the prefix.
  std::string hp = root.host_path(q);
  if (!hp.empty()) {
    if (!under_prefix(hp, h.prefix)) bug("host_path outside the prefix: " + hp, q);
    int fd = open(hp.c_str(), O_PATH | O_CLOEXEC);
    if (fd >= 0) {
      check_inside(fd, "host_path", q);
      close(fd);
    }
  }

  // read: regular files only, never the sentinel.
  std::string why;
  if (auto text = root.read(q, 4096, &why)) {
    if (text->find("HOST FILE") != std::string::npos) bug("Root::read returned the host sentinel", q);
    if (*text != kInRootText) bug("Root::read returned bytes no file in the root holds", q);
  } else {
    struct stat st;
    if (root.stat(q, &st) && S_ISREG(st.st_mode)) bug("Root::read refused a regular file: " + why, q);
    if (root.stat(q, &st) && S_ISFIFO(st.st_mode) && why != "not a regular file (a FIFO)") bug("FIFO read said: " + why, q);
  }

  // The loader's whole-file reader goes through the same resolution.
  if (auto text = cd::read_file_sized(root, q, 4096)) {
    if (text->find("HOST FILE") != std::string::npos) bug("read_file_sized returned the host sentinel", q);
    if (*text != kInRootText) bug("read_file_sized returned bytes no file in the root holds", q);
  }

  // list: only names the tree can hold (the host's, e.g. "outside" or "proc", are an escape).
  for (const auto& name : root.list(q))
    if (name.size() != 1 || name[0] < 'a' || name[0] > 'd') bug("Root::list shows a host entry '" + name + "'", q);
}

void walk(const cd::Root& root, int root_fd, const std::string& q) {
  Host& h = host();
  cd::WalkOptions opts;
  opts.root = root;
  cd::WalkResult w = cd::walk_files({cd::path_join(h.prefix, q)}, opts);
  for (const auto& f : w.files) {
    if (!under_prefix(f.open_path, h.prefix)) bug("walk: open_path outside the root: " + f.open_path, q);
    int fd = open(f.open_path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) bug("walk: open_path does not open without following a link: " + f.open_path, q);
    check_inside(fd, "walk", q);
    if (fd_path(fd) != f.open_path) bug("walk: open_path has a link in it: " + f.open_path + " is " + fd_path(fd), q);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != f.ino) bug("walk: open_path is not the file found", f.open_path);
    close(fd);
    // The path as reached, resolved by the kernel inside the root, is the same file.
    if (h.have_openat2) {
      int ref = kernel_open(root_fd, root.inner_path(f.path), true);
      if (ref >= 0) {
        if (fstat(ref, &st) != 0 || st.st_ino != f.ino) bug("walk: the path as reached is another file: " + f.path, q);
        close(ref);
      } else if (errno != ENOSYS && errno != EPERM) {
        bug("walk: the kernel does not find the path as reached: " + f.path, q);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Host& h = host();
  std::error_code ec;
  std::filesystem::remove_all(h.prefix, ec);  // never follows a link it removes
  if (mkdir(h.prefix.c_str(), 0755) != 0) bug("mkdir", h.prefix);
  int root_fd = open(h.prefix.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) bug("open", h.prefix);

  Reader in{data, size};
  std::vector<std::string> queries = {"/", "/a", "/a/b", "/b/c/d", "/c/", "/../outside/sentinel", "/outside/sentinel",
                                      "/a/../../outside/sentinel", h.sentinel, h.outside, "/../../..", "/d/a/b/c"};
  for (size_t ops = 0; in.more() && ops < kMaxOps; ++ops) {
    uint8_t op = in.byte() % 6;
    if (op == 4) {
      queries.push_back("/" + target_path(in, 7));
      continue;
    }
    std::vector<std::string> parts = create_path(in);
    std::string target;
    if (op == 2) target = target_path(in, 8);
    if (op == 5) {
      const std::string choices[] = {"/", h.sentinel, h.outside, h.prefix, h.base};
      target = choices[in.byte() % 5];
    }
    int dir = parent_dir(root_fd, parts);
    if (dir < 0) continue;
    const char* name = parts.back().c_str();
    if (op == 0) {
      mkdirat(dir, name, 0755);
    } else if (op == 1) {
      int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd >= 0) {
        if (write(fd, kInRootText, sizeof kInRootText - 1) < 0) bug("write", name);
        close(fd);
      }
    } else if (op == 3) {
      mkfifoat(dir, name, 0644);
    } else {
      symlinkat(target.c_str(), dir, name);
    }
    close(dir);
  }

  cd::Root root(h.prefix);
  for (const auto& q : queries) query(root, root_fd, q);
  walk(root, root_fd, "/");
  walk(root, root_fd, queries.back());

  // The sentinel is untouched (nothing writes) and still outside.
  char buf[sizeof kSentinelText] = {};
  int fd = open(h.sentinel.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read(fd, buf, sizeof buf - 1) != static_cast<ssize_t>(sizeof kSentinelText - 1) ||
      std::strcmp(buf, kSentinelText) != 0)
    bug("the sentinel changed", h.sentinel);
  close(fd);
  close(root_fd);
  return 0;
}
