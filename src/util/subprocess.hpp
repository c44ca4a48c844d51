#pragma once
// Child processes with a timeout and captured output. Everything that can hang or
// crash (driver calls, Python imports, NCCL) runs through here, so a bad driver
// becomes data ("timed out after 10 s", "killed by SIGSEGV"), never a hung tool.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cd {

struct ProcessOptions {
  std::chrono::milliseconds timeout{10'000};
  std::map<std::string, std::string> env_set;  // added/overridden in the child
  std::vector<std::string> env_unset;
  bool merge_stderr = false;                  // stderr goes into `out`
  size_t max_output = 64u << 20;              // keep at most this much of each stream (the tail)
  std::function<void(std::string_view)> on_stdout;  // live pass-through (explain -- CMD)
  std::function<void(std::string_view)> on_stderr;
  std::function<void(int pid)> on_start;  // called once the child runs (watch follows its process tree)
  // How often the wait wakes to see whether the child exited while something else still holds
  // its pipes open (output and a closed pipe wake it at once). watch, which waits for hours
  // and counts its own CPU, wakes less often.
  std::chrono::milliseconds poll_every{20};
  std::optional<std::string> cwd;
  // A stdout line starting with this says the child's answer is complete: stop
  // waiting and count it as exit 0. Its exit-time teardown (closing a GPU's device
  // files takes 50-90 ms on an H200) then runs on, reaped in the background.
  std::string done_line;
  // Run it like a shell runs a foreground job: in our process group with our stdin, so
  // Ctrl-C reaches it and it can read input. Meanwhile we ignore SIGINT/SIGQUIT (as
  // system(3) does: the command stops, we go on to report on it) and pass SIGTERM and
  // SIGHUP on to it. Off: its own process group and /dev/null stdin (a hung child and
  // all it started can be killed together).
  bool foreground = false;
  // One of the tool's own children (the __driver and __verify children, Python probes):
  // it gets CUDA_CACHE_DISABLE=1 and PYTHONDONTWRITEBYTECODE=1, whatever our environment
  // says, so the driver's JIT cache (~/.nv/ComputeCache) and .pyc files are never
  // written on our behalf (docs/security.md). Off only for the user's own command
  // (explain -- CMD), whose environment is theirs.
  bool tool_child = true;
};

struct ProcessResult {
  bool started = false;
  int exit_code = -1;   // valid when exited
  int signal = 0;       // non-zero when killed by a signal
  bool timed_out = false;
  std::string out;
  std::string err;
  std::string start_error;  // why it could not start
  double seconds = 0;

  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  // One line saying how it ended: "exit 0", "timed out after 10 s", "killed by SIGSEGV".
  std::string describe() const;
};

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& opts = {});

// Runs `fn` in a forked child; what it returns becomes `out`. Use before starting
// threads (fork copies only the calling thread).
ProcessResult run_isolated(const std::function<std::string()>& fn, std::chrono::milliseconds timeout);

// Path of the running executable (to re-run ourselves as an isolated helper).
std::string self_exe();

// Finds `name` on PATH (or the given PATH string); empty when absent.
std::string which(std::string_view name, std::string_view path_env);

}  // namespace cd
