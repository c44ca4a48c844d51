#pragma once
// /etc/ld.so.conf with its `include` globs, as ldconfig reads it: the directories
// whose libraries end up in ld.so.cache. The one reader of ld.so.conf in cuda-doctor
// (the libs and driver probes both use it).
#include <string>
#include <vector>

#include "util/root.hpp"

namespace cd {

struct LdConfDir {
  std::string dir;   // "/usr/local/cuda-13.0/targets/x86_64-linux/lib"
  std::string file;  // the conf file that lists it ("/etc/ld.so.conf.d/988_cuda-13.conf")
};

// Bounds against include bombs (files that include each other or a glob of many files):
// each file is read once, and reading stops (with one note) past these.
inline constexpr int kLdConfMaxDepth = 16;      // nested includes
inline constexpr int kLdConfMaxFiles = 256;     // distinct conf files read
inline constexpr int kLdConfMaxIncludes = 1024; // include patterns expanded

// Directories in ldconfig's order; unreadable files and include loops are skipped
// (a note goes to `errors`).
std::vector<LdConfDir> read_ld_so_conf(const Root& root, std::vector<std::string>* errors = nullptr,
                                       const std::string& file = "/etc/ld.so.conf");

}  // namespace cd
