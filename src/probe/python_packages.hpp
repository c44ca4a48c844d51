#pragma once
// Reading installed distributions from site-packages without importing them:
// *.dist-info / *.egg-info names first, METADATA only for packages whose pins matter.
#include <string>
#include <vector>

#include "facts/python.hpp"
#include "kb/ecosystem.hpp"
#include "util/root.hpp"

namespace cd {

// "Flash_Attn" -> "flash-attn" (PEP 503).
// Whether cuda-doctor records this distribution (torch, nvidia-*, jax-cuda*, …).
bool is_relevant_dist(const std::string& normalized);
// The CUDA-relevant distributions in one site-packages dir; a METADATA that is not a
// regular file (a FIFO …) is not read and becomes a note.
std::vector<PythonPackage> scan_site_packages(const Root& root, const std::string& dir,
                                              std::vector<std::string>* notes = nullptr);
// torch/version.py: __version__, cuda, hip, git_version.
TorchBuild read_torch_version_py(const Root& root, const std::string& site_dir);

}  // namespace cd
