#pragma once
// Whole-file reads for the loader and the libs probe (regular files only, never blocking
// on a FIFO: util/regular_file). Root::read reserves its
// max_bytes up front (a memset of that size per call); these allocate the file's size.
#include <optional>
#include <string>

#include "util/root.hpp"

namespace cd {

// The file at an in-root path (symlinks resolved inside the root), up to max_bytes;
// nullopt when it is missing, not a regular file or unreadable.
std::optional<std::string> read_file_sized(const Root& root, const std::string& path, size_t max_bytes);

}  // namespace cd
