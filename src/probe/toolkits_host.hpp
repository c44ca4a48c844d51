#pragma once
// Host compilers nvcc may use: CUDAHOSTCXX, NVCC_CCBIN, CXX, CC, and gcc/clang on PATH (nvcc's default is gcc).
#include <string>
#include <vector>

#include "facts/toolkit.hpp"
#include "probe/probe.hpp"

namespace cd {

std::vector<HostCompiler> probe_host_compilers(const ProbeOptions& opts);
// gcc's version from where its cc1 is installed, or "" when the layout does not say (then run it).
// `dir` (optional) gets the version directory that said it.
std::string gcc_version_from_layout(const Root& root, const std::string& resolved_path, std::string* dir = nullptr);
// "gcc" / "clang" from a compiler's resolved file name ("g++-12", "clang++-14", "c++" -> gcc).
std::string compiler_kind(const std::string& resolved_path);

}  // namespace cd
