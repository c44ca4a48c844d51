#pragma once
// Collects the regular files under a set of paths: follows directory symlinks but
// never enters the same directory twice (no loops), and lists each inode once,
// preferring a real name over a symlink to it (libfoo.so.13 over libfoo.so).
// Under a Root with a prefix every link is resolved inside the root (util/root.hpp):
// a link to "/" in an image walks the image, never the host.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "util/root.hpp"

namespace cd {

struct WalkedFile {
  std::string path;       // as reached: root path joined with the names below it
  std::string open_path;  // the host path to open: no link in it below the root's prefix
  uint64_t size = 0;
  uint64_t dev = 0;
  uint64_t ino = 0;
  bool via_symlink = false;  // the last name was a symlink
};

enum class ReadAhead { never, when_cold, always };

struct WalkOptions {
  // Which files found inside directories to keep (files named directly are always kept).
  std::function<bool(std::string_view name, bool executable)> want;
  int max_depth = 64;
  // The paths given are host paths under root.prefix(); links resolve inside the root.
  Root root;
  // Read the directories ahead on many threads: once directories are seen coming from the
  // disk (a cold page cache), always (tests), or never (see walk.cpp).
  ReadAhead read_ahead = ReadAhead::when_cold;
};

struct WalkResult {
  std::vector<WalkedFile> files;
  std::vector<std::string> errors;  // "PATH: No such file or directory"
};

WalkResult walk_files(const std::vector<std::string>& roots, const WalkOptions& opts);

}  // namespace cd
