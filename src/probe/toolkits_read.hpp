#pragma once
// Reading one CUDA toolkit directory: its version and its host-compiler limits.
#include <chrono>
#include <string>

#include "facts/toolkit.hpp"
#include "util/root.hpp"

namespace cd {

// Whether `path` exists as a file, directory or (possibly dangling on the host) symlink.
bool present(const Root& root, const std::string& path);
// Whether `dir` looks like a toolkit (bin/nvcc, version.json, version.txt or include/cuda.h).
bool looks_like_toolkit(const Root& root, const std::string& dir);
// Fills version/version_source from version.json, version.txt, dist-info, cuda.h; nvcc
// --version only when none of them exists and the root is the host.
void read_toolkit_version(const Root& root, Toolkit& tk, std::chrono::milliseconds timeout);
// host_gcc_max / host_clang_max from include/crt/host_config.h.
void read_host_config(const Root& root, Toolkit& tk);
// The directory holding the toolkit's libcudart: lib64, lib, targets/*/lib; "" when none.
std::string find_lib_dir(const Root& root, const std::string& dir);
// components (nvcc, headers, cudart, cublas, cudnn, nccl, nvrtc, stubs, compat) and size_bytes.
void read_toolkit_details(const Root& root, Toolkit& tk);
// "Cuda compilation tools, release 12.4, V12.4.131" -> "12.4.131".
std::string parse_nvcc_version(const std::string& output);

}  // namespace cd
