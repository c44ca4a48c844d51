#pragma once
// Layer 4: Python environments and the CUDA-carrying packages in them, read from
// dist-info/egg-info files without importing anything.
#include <string>
#include <vector>

#include "facts/json.hpp"

namespace cd {

struct PythonPackage {
  std::string name;       // normalised: "torch", "nvidia-cudnn-cu13"
  std::string version;    // "2.11.0+cu130"
  std::string location;   // site-packages dir
  std::vector<std::string> requires_dist;  // Requires-Dist lines naming nvidia-* wheels (with specifiers)
};
CD_JSON(PythonPackage, name, version, location, requires_dist)

struct TorchBuild {
  std::string version;      // torch/version.py __version__
  std::string cuda;         // torch/version.py cuda ("13.0"), "" = CPU build
  std::string hip;
  std::string git_version;
  std::vector<std::string> arch_list;  // recorded/deep: ['sm_75', ...]
  std::string arch_list_source;        // "deep: torch.cuda.get_arch_list()", "kb: pytorch 2.11 cu130 wheel"
};
CD_JSON(TorchBuild, version, cuda, hip, git_version, arch_list, arch_list_source)

// Results of --deep: the interpreter really imports the framework.
struct DeepCheck {
  bool ran = false;
  std::string error;        // the import/run error, with the last traceback line
  bool cuda_available = false;
  int device_count = 0;
  std::vector<std::string> capabilities;  // "9.0" per device as torch sees them
  std::string cudnn_version;
  std::string nccl_version;
  std::vector<std::string> loaded_libraries;  // CUDA libraries mapped in the process (/proc/self/maps)
};
CD_JSON(DeepCheck, ran, error, cuda_available, device_count, capabilities, cudnn_version, nccl_version, loaded_libraries)

struct PythonEnv {
  std::string interpreter;   // /opt/torch/.venv/bin/python3
  std::string version;       // "3.12.3"
  std::string prefix;        // env root
  std::string found_by;      // "PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "conda env list", ".venv", "pyenv"
  std::vector<std::string> site_packages;
  std::vector<PythonPackage> packages;  // only the CUDA-relevant ones
  TorchBuild torch;                     // empty version when torch is absent
  DeepCheck deep;
};
CD_JSON(PythonEnv, interpreter, version, prefix, found_by, site_packages, packages, torch, deep)

}  // namespace cd
