#pragma once
// The data/*.toml files, compiled into the binary by cmake/embed_files.cmake.
#include <span>
#include <string_view>

namespace cd::kb {

struct EmbeddedFile {
  std::string_view name;  // "gpus.toml"
  std::string_view text;
};

std::span<const EmbeddedFile> embedded_files();

}  // namespace cd::kb
