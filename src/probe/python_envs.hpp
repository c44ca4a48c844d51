#pragma once
// Finding Python environments from the filesystem layout alone (no interpreter is run):
// PATH's python3 (pyenv shims followed), $VIRTUAL_ENV, $CONDA_PREFIX, conda's env list and
// envs_dirs, ./.venv, pyenv versions, virtualenvwrapper/poetry/pipx/uv tool envs, /opt/*/.venv. Shared by the python and toolkit probes
// (pip/conda toolkits live inside environments).
#include <string>
#include <vector>

#include "probe/probe.hpp"

namespace cd {

struct EnvLocation {
  std::string prefix;       // resolved in-root env root
  std::string interpreter;  // prefix/bin/python3 (unresolved, as a user would run it)
  std::string kind;         // "venv", "conda", "pyenv", "system"
  std::string version;      // "3.12.3", or "3.12" from the lib dir
  std::string version_source;
  std::vector<std::string> found_by;
  bool is_default = false;  // what `python3` on PATH runs
  std::vector<std::string> site_packages;  // in search order
};

std::vector<EnvLocation> find_python_envs(const ProbeOptions& opts);

// probe_toolkits / probe_pythons with the environments found once by the caller: each finds
// them itself otherwise, and the walk costs `libs FILE` a few milliseconds a time.
void probe_toolkits(Facts& facts, const ProbeOptions& opts, const std::vector<EnvLocation>& envs);
void probe_pythons(Facts& facts, const ProbeOptions& opts, const std::vector<EnvLocation>& envs);

// The `envs_dirs` list of a condarc (YAML block list or [flow, list]); the rest of
// the file is not conda's business here, so this is not a YAML parser.
std::vector<std::string> condarc_envs_dirs(std::string_view text);

// `name` on the in-root PATH string; "" when absent.
std::string root_which(const Root& root, const std::string& name, const std::string& path_env);
// A small wrapper script (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`) names the real
// program; returns that path, or `path` itself when it is not such a script.
std::string follow_wrapper(const Root& root, const std::string& path, const std::string& program);

}  // namespace cd
