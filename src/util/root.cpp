#include "util/root.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "util/strings.hpp"

namespace cd {

Root::Root(std::string prefix) : prefix_(std::move(prefix)) {
  while (prefix_.size() > 1 && prefix_.back() == '/') prefix_.pop_back();
  if (prefix_ == "/") prefix_.clear();
}

std::string Root::host_path(std::string_view path) const {
  if (prefix_.empty()) return std::string(path);
  return path_join(prefix_, path);
}

std::string Root::inner_path(std::string_view host) const {
  if (prefix_.empty()) return std::string(host);
  if (host.substr(0, prefix_.size()) == prefix_ && (host.size() == prefix_.size() || host[prefix_.size()] == '/')) {
    std::string rest(host.substr(prefix_.size()));
    return rest.empty() ? "/" : rest;
  }
  return std::string(host);
}

bool Root::exists(std::string_view path) const {
  struct stat st;
  return stat(host_path(path).c_str(), &st) == 0;
}

bool Root::is_dir(std::string_view path) const {
  struct stat st;
  return stat(host_path(path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Root::is_file(std::string_view path) const {
  struct stat st;
  return stat(host_path(path).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool Root::is_symlink(std::string_view path) const {
  struct stat st;
  return lstat(host_path(path).c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

std::optional<std::string> Root::read(std::string_view path, size_t max_bytes) const {
  // Sized from fstat so small files cost no big buffer; procfs/sysfs files report
  // size 0 and are read in chunks until EOF.
  int fd = ::open(host_path(path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  std::string data;
  size_t want = st.st_size > 0 ? std::min<size_t>(static_cast<size_t>(st.st_size), max_bytes) : std::min<size_t>(max_bytes, 4096);
  while (data.size() < max_bytes) {
    size_t old = data.size();
    data.resize(std::min(max_bytes, old + std::max<size_t>(want, 4096)));
    ssize_t n = ::read(fd, data.data() + old, data.size() - old);
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    data.resize(old + static_cast<size_t>(n));
    if (n == 0 || (st.st_size > 0 && data.size() >= static_cast<size_t>(st.st_size))) break;
  }
  ::close(fd);
  return data;
}

std::vector<std::string> Root::list(std::string_view path) const {
  std::vector<std::string> names;
  DIR* d = opendir(host_path(path).c_str());
  if (!d) return names;
  while (dirent* e = readdir(d)) {
    std::string_view n(e->d_name);
    if (n != "." && n != "..") names.emplace_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> Root::readlink(std::string_view path) const {
  char buf[4096];
  ssize_t n = ::readlink(host_path(path).c_str(), buf, sizeof buf - 1);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<std::string> Root::resolve(std::string_view path) const {
  std::vector<std::string> todo = split(path, '/');
  std::reverse(todo.begin(), todo.end());
  std::string done;
  int links = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.back());
    todo.pop_back();
    if (part == ".") continue;
    if (part == "..") {
      done = path_dirname(done.empty() ? "/" : done);
      if (done == "/") done.clear();
      continue;
    }
    std::string next = done + "/" + part;
    if (auto target = readlink(next)) {
      if (++links > 40) return std::nullopt;
      std::vector<std::string> parts = split(*target, '/');
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
      if (!target->empty() && (*target)[0] == '/') done.clear();
      continue;
    }
    done = next;
  }
  return done.empty() ? "/" : done;
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
