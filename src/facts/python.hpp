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
  // Requires-Dist lines naming CUDA-relevant packages (nvidia-*, cuda-toolkit, torch*,
  // triton, xformers, flash-attn …), with specifiers and markers as written.
  std::vector<std::string> requires_dist;
  std::string installer;  // dist-info INSTALLER ("pip", "uv", "conda"), read for pinned packages only
};
CD_JSON(PythonPackage, name, version, location, requires_dist, installer)

struct TorchBuild {
  std::string version;      // torch/version.py __version__
  std::string cuda;         // torch/version.py cuda ("13.0"), "" = CPU build
  std::string hip;
  std::string git_version;
  std::string source;       // the version.py it was read from
};
CD_JSON(TorchBuild, version, cuda, hip, git_version, source)

// Results of --deep: the interpreter really imports the framework.
struct DeepCheck {
  bool ran = false;
  std::string error;        // the import/run error, with the last traceback line
  std::string torch_version;
  std::string torch_cuda;   // torch.version.cuda as imported
  bool cuda_available = false;
  int device_count = 0;
  std::vector<std::string> capabilities;  // "9.0" per device as torch sees them
  std::vector<std::string> arch_list;     // torch.cuda.get_arch_list()
  std::string cudnn_version;
  std::string nccl_version;
  std::vector<std::string> loaded_libraries;  // CUDA libraries mapped in the process (/proc/self/maps)
  double seconds = 0;
};
CD_JSON(DeepCheck, ran, error, torch_version, torch_cuda, cuda_available, device_count, capabilities, arch_list,
        cudnn_version, nccl_version, loaded_libraries, seconds)

// --deep for JAX, in an interpreter run of its own (torch and jax imported into one
// process can clash over their CUDA libraries: that clash would be ours, not the user's).
struct DeepJax {
  bool ran = false;
  std::string error;    // the import error, or why the CUDA backend did not come up
  std::string version;  // jax.__version__
  std::string backend;  // jax.default_backend(): "gpu" or "cpu"
  std::vector<std::string> devices;  // device_kind of each device ("NVIDIA H200")
  double seconds = 0;
};
CD_JSON(DeepJax, ran, error, version, backend, devices, seconds)

struct PythonEnv {
  std::string interpreter;   // /opt/torch/.venv/bin/python3
  std::string version;       // "3.12.3"
  std::string version_source;  // "pyvenv.cfg", "conda-meta", "pyenv version dir", "lib/python3.12"
  std::string prefix;        // env root
  std::string kind;          // "venv", "conda", "pyenv", "system"
  std::string found_by;      // "PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "conda env list", "conda envs_dirs", ".venv", "pyenv",
                             // "virtualenvwrapper", "poetry", "pipx", "uv tool", "/opt" (comma-joined)
  bool is_default = false;   // the env `python3` on PATH runs (what a user's `python` gets)
  std::vector<std::string> site_packages;
  std::vector<PythonPackage> packages;  // only the CUDA-relevant ones
  TorchBuild torch;                     // empty version when torch is absent
  DeepCheck deep;
  DeepJax deep_jax;                     // --deep, when jax and a jax CUDA plugin are installed
};
CD_JSON(PythonEnv, interpreter, version, version_source, prefix, kind, found_by, is_default, site_packages, packages,
        torch, deep, deep_jax)

}  // namespace cd
