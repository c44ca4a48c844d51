#include "toolkit_helpers.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "util/subprocess.hpp"

namespace fs = std::filesystem;

namespace cdtest {

std::string cuda130() {
  return fs::exists("/usr/local/cuda-13.0/bin/nvcc") ? "/usr/local/cuda-13.0" : "";
}

std::string cuda118() {
  if (const char* dir = std::getenv("CUDA_DOCTOR_CUDA118"); dir && fs::exists(fs::path(dir) / "bin/nvcc")) return dir;
  fs::path tarball = fs::path(CD_SOURCE_DIR) / ".cuda118/cuda-11.8.tar.xz";
  fs::path parent = fs::path(CD_BUILD_DIR) / "test-tmp" / "cuda 11.8 toolkit";
  fs::path dir = parent / "cuda-11.8";
  if (fs::exists(dir / "bin/nvcc")) return dir.string();
  if (!fs::exists(tarball)) return "";
  // Unpack beside it and rename: tests run in parallel processes.
  fs::path tmp = parent.string() + ".tmp" + std::to_string(getpid());
  fs::create_directories(tmp);
  cd::ProcessOptions po;
  po.timeout = std::chrono::seconds(120);
  cd::ProcessResult r = cd::run_process({"tar", "-xJf", tarball.string(), "-C", tmp.string()}, po);
  std::error_code ec;
  if (r.ok()) fs::rename(tmp, parent, ec);
  fs::remove_all(tmp, ec);
  return fs::exists(dir / "bin/nvcc") ? dir.string() : "";
}

bool have_shell(const std::string& shell) { return fs::exists("/usr/bin/" + shell); }

ShellResult in_shell(const std::string& shell, const std::string& script, const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv = {"/usr/bin/env", "-i"};
  for (const auto& [k, v] : env) argv.push_back(k + "=" + v);
  argv.push_back(std::string("D=") + CD_BINARY);
  argv.push_back("/usr/bin/" + shell);
  if (shell == "bash") argv.insert(argv.end(), {"--norc", "--noprofile"});
  if (shell == "zsh") argv.push_back("-f");
  if (shell == "fish") argv.push_back("--no-config");
  argv.insert(argv.end(), {"-c", script});
  cd::ProcessOptions po;
  po.timeout = std::chrono::seconds(60);
  po.tool_child = false;
  cd::ProcessResult r = cd::run_process(argv, po);
  return {r.timed_out ? -2 : r.exit_code, r.out, r.err};
}

std::string use_line(const std::string& shell, const std::string& args) {
  if (shell == "fish") return "$D use " + args + " | source\n";
  return "eval \"$($D use " + args + ")\"\n";
}

std::string print_vars(const std::string& shell, const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (shell == "fish")
      out += "if set -q " + n + "; echo " + n + "=(string join : -- $" + n + "); else; echo '" + n + " unset'; end\n";
    else
      out += "if [ -n \"${" + n + "+x}\" ]; then printf '%s\\n' \"" + n + "=$" + n + "\"; else echo '" + n + " unset'; fi\n";
  }
  return out;
}

}  // namespace cdtest
