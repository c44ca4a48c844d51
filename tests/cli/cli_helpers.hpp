#pragma once
// Runs the built cuda-doctor binary for end-to-end tests.
#include <map>
#include <string>
#include <vector>

#include "util/subprocess.hpp"

namespace cdtest {

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs build/cuda-doctor with `args`; `env` entries are added (value "\x01" unsets).
Run doctor(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {});

// A fresh empty directory under the build tree, removed at exit.
std::string temp_dir(const std::string& name);
void write_file(const std::string& path, const std::string& text);

}  // namespace cdtest
