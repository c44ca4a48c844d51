#pragma once
// A view of a filesystem root. Probes read the machine only through a Root, so
// `--root DIR` points every probe at another tree (tests, chroots, mounted images).
// Paths passed in are absolute paths *inside* the root.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cd {

class Root {
 public:
  explicit Root(std::string prefix = "");

  bool is_host() const { return prefix_.empty(); }
  const std::string& prefix() const { return prefix_; }

  // Where an in-root absolute path lives on the host.
  std::string host_path(std::string_view path) const;
  // The in-root path for a host path under the prefix (identity for the host root).
  std::string inner_path(std::string_view host) const;

  bool exists(std::string_view path) const;
  bool is_dir(std::string_view path) const;
  bool is_file(std::string_view path) const;
  bool is_symlink(std::string_view path) const;
  // Reads up to max_bytes; nullopt when unreadable.
  std::optional<std::string> read(std::string_view path, size_t max_bytes = 1u << 20) const;
  // Entry names (not paths), sorted; empty when not a directory.
  std::vector<std::string> list(std::string_view path) const;
  std::optional<std::string> readlink(std::string_view path) const;
  // Resolves symlinks inside the root (absolute targets stay inside it); loops give nullopt.
  std::optional<std::string> resolve(std::string_view path) const;
  // Files in `dir` whose names match a shell glob (fnmatch).
  std::vector<std::string> glob(std::string_view dir, std::string_view pattern) const;

 private:
  std::string prefix_;
};

// Joins two path pieces with exactly one '/'.
std::string path_join(std::string_view a, std::string_view b);
std::string path_dirname(std::string_view p);
std::string path_basename(std::string_view p);
// Lexically normalises: removes ".", "..", duplicate slashes.
std::string path_normalize(std::string_view p);

}  // namespace cd
