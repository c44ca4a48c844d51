#pragma once
// Real toolkits and real shells for the `toolkits` / `use` / `shell-init` tests.
#include <map>
#include <string>
#include <vector>

namespace cdtest {

// This machine's CUDA 13.0 (/usr/local/cuda-13.0); "" when absent.
std::string cuda130();
// A real CUDA 11.8 (Debian's non-free nvidia-cuda-toolkit binaries): $CUDA_DOCTOR_CUDA118 when it
// names a toolkit, else .cuda118/cuda-11.8.tar.xz of the source tree unpacked once into a build
// directory whose name has spaces (build/test-tmp/cuda 11.8 toolkit/cuda-11.8); "" when neither
// exists (scripts/fetch_cuda118.sh makes the tarball).
std::string cuda118();
inline constexpr const char* kNo118 =
    "no CUDA 11.8 toolkit: set CUDA_DOCTOR_CUDA118 or run scripts/fetch_cuda118.sh (makes .cuda118/cuda-11.8.tar.xz)";

struct ShellResult {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `script` in a clean `shell` (bash --norc, zsh -f, fish --no-config) whose environment is
// exactly `env` plus D=<cuda-doctor binary>; unset variables are simply absent.
ShellResult in_shell(const std::string& shell, const std::string& script, const std::map<std::string, std::string>& env);
// The shell's command that switches: eval "$($D use ARGS)" / $D use ARGS | source.
std::string use_line(const std::string& shell, const std::string& args);
// Prints each variable as NAME=value (lists joined with ':'), "NAME unset" when unset.
std::string print_vars(const std::string& shell, const std::vector<std::string>& names);
// Whether `shell` is installed (/usr/bin/NAME).
bool have_shell(const std::string& shell);

}  // namespace cdtest
