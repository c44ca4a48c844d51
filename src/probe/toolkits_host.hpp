#pragma once
// Host compilers nvcc may use: CUDAHOSTCXX, NVCC_CCBIN, CXX, CC, and gcc/clang on PATH (nvcc's default is gcc).
#include <string>
#include <vector>

#include "facts/toolkit.hpp"
#include "probe/probe.hpp"

namespace cd {

std::vector<HostCompiler> probe_host_compilers(const ProbeOptions& opts);
// "gcc" / "clang" from a compiler's resolved file name ("g++-12", "clang++-14", "c++" -> gcc).
std::string compiler_kind(const std::string& resolved_path);

}  // namespace cd
