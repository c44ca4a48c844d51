#include "util/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "util/spawn.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace cd {
namespace {

using Clock = std::chrono::steady_clock;

// The foreground child SIGTERM/SIGHUP are passed on to (0: none).
volatile sig_atomic_t g_foreground_child = 0;

void forward_signal(int sig) {
  if (g_foreground_child > 0) kill(static_cast<pid_t>(g_foreground_child), sig);
}

// Signal dispositions while a foreground child runs; restored by the destructor.
class ForegroundSignals {
 public:
  ForegroundSignals() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &old_int_);
    sigaction(SIGQUIT, &ignore, &old_quit_);
    struct sigaction pass {};
    pass.sa_handler = forward_signal;
    sigemptyset(&pass.sa_mask);
    pass.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &pass, &old_term_);
    sigaction(SIGHUP, &pass, &old_hup_);
  }
  ~ForegroundSignals() {
    g_foreground_child = 0;
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGQUIT, &old_quit_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGHUP, &old_hup_, nullptr);
  }
  ForegroundSignals(const ForegroundSignals&) = delete;
  ForegroundSignals& operator=(const ForegroundSignals&) = delete;

  // The child's dispositions: what we had before ignoring (an ignored SIGINT would
  // otherwise survive exec and make the command deaf to Ctrl-C; a handler resets at exec).
  void restore_in_child(Spawn& spawn) const {
    spawn.default_signals({SIGTERM, SIGHUP});
    if (old_int_.sa_handler != SIG_IGN) spawn.default_signals({SIGINT});
    if (old_quit_.sa_handler != SIG_IGN) spawn.default_signals({SIGQUIT});
  }

 private:
  struct sigaction old_int_ {}, old_quit_ {}, old_term_ {}, old_hup_ {};
};

// One file descriptor, closed when it goes out of scope: every early return (a failed
// second pipe, a failed fork, exec failing) closes what was opened before it.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

// A close-on-exec pipe; nullopt (errno set) when the system refuses one.
std::optional<Pipe> open_pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

void append_tail(std::string& buf, std::string_view data, size_t max) {
  buf.append(data);
  if (buf.size() > max) buf.erase(0, buf.size() - max);
}

// What the tool's own children must not write (ProcessOptions::tool_child).
const std::map<std::string, std::string> kToolChildEnv = {{"CUDA_CACHE_DISABLE", "1"}, {"PYTHONDONTWRITEBYTECODE", "1"}};

std::vector<std::string> child_environment(const ProcessOptions& opts) {
  std::map<std::string, std::string> set = opts.env_set;
  if (opts.tool_child)
    for (const auto& [k, v] : kToolChildEnv) set[k] = v;
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    std::string key(kv.substr(0, kv.find('=')));
    if (set.count(key)) continue;
    bool unset = false;
    for (const auto& u : opts.env_unset) unset |= (u == key);
    if (!unset) env.emplace_back(kv);
  }
  for (const auto& [k, v] : set) env.push_back(k + "=" + v);
  return env;
}

enum class PumpEnd { closed, exited, answered, timed_out };

// Whether `out` holds a whole line starting with `prefix`; `from` remembers where the
// next search starts, so a long output is not scanned again and again.
bool has_done_line(const std::string& out, const std::string& prefix, size_t& from) {
  while (true) {
    size_t nl = out.find('\n', from);
    if (nl == std::string::npos) return false;
    if (std::string_view(out).substr(from, nl - from).starts_with(prefix)) return true;
    from = nl + 1;
  }
}

// Reads both pipes until they close, the child exits, it prints opts.done_line, or the
// deadline passes. A child that exits while something it started still holds the pipes
// (a driver helper, a daemon) ends the wait after a short drain: waiting for EOF would
// wait for them.
PumpEnd pump(int out_fd, int err_fd, pid_t pid, const ProcessOptions& opts, ProcessResult& r, Clock::time_point deadline,
             int& status) {
  struct pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_fds = (out_fd >= 0) + (err_fd >= 0);
  if (err_fd < 0) fds[1].fd = -1;
  char buf[65536];
  std::optional<Clock::time_point> exited_at;
  size_t done_from = 0;
  while (open_fds > 0) {
    auto now = Clock::now();
    if (now >= deadline) return PumpEnd::timed_out;
    if (!exited_at && waitpid(pid, &status, WNOHANG) == pid) exited_at = now;
    if (exited_at && now - *exited_at > std::chrono::milliseconds(20)) return PumpEnd::exited;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    int n = poll(fds, 2, static_cast<int>(std::min<long long>(left, exited_at ? 5 : opts.poll_every.count())));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got <= 0) {
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      std::string_view chunk(buf, static_cast<size_t>(got));
      if (i == 0) {
        const size_t before = r.out.size();
        append_tail(r.out, chunk, opts.max_output);
        if (opts.on_stdout) opts.on_stdout(chunk);
        if (!opts.done_line.empty()) {
          if (r.out.size() < before + chunk.size()) done_from = 0;  // append_tail dropped the head
          // Already reaped above: its status is known, and waiting on the pid again could reap a stranger.
          if (has_done_line(r.out, opts.done_line, done_from)) return exited_at ? PumpEnd::exited : PumpEnd::answered;
        }
      } else {
        append_tail(r.err, chunk, opts.max_output);
        if (opts.on_stderr) opts.on_stderr(chunk);
      }
    }
  }
  return exited_at ? PumpEnd::exited : PumpEnd::closed;
}

// Waits for the child until the deadline; kills its process group on timeout.
void reap(pid_t pid, ProcessResult& r, Clock::time_point deadline, PumpEnd end, int status) {
  if (end == PumpEnd::answered) {
    r.exit_code = 0;
    std::thread([pid] {
      int ignored = 0;
      while (waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
      }
    }).detach();
    return;
  }
  bool timed_out = end == PumpEnd::timed_out;
  while (end == PumpEnd::closed) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return;
    if (Clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    usleep(1000);
  }
  if (timed_out) {
    r.timed_out = true;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return;
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
}

}  // namespace

std::string ProcessResult::describe() const {
  if (!started) return "could not start: " + start_error;
  if (timed_out) return fmt::format("timed out after {:.0f} s", seconds);
  if (signal) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
  return fmt::format("exit {}", exit_code);
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& opts) {
  ProcessResult r;
  if (argv.empty()) {
    r.start_error = "empty command";
    return r;
  }
  std::optional<Pipe> out_pipe = open_pipe(), err_pipe = out_pipe ? open_pipe() : std::nullopt;
  if (!err_pipe) {
    r.start_error = errno_text("pipe");
    return r;
  }
  std::vector<std::string> env = child_environment(opts);
  std::vector<char*> argv_c, env_c;
  for (const auto& a : argv) argv_c.push_back(const_cast<char*>(a.c_str()));
  argv_c.push_back(nullptr);
  for (const auto& e : env) env_c.push_back(const_cast<char*>(e.c_str()));
  env_c.push_back(nullptr);

  // A directory we cannot enter is said as such (the spawn would report only its errno).
  if (opts.cwd && access(opts.cwd->c_str(), X_OK) != 0) {
    r.start_error = errno_text(opts.cwd->c_str());
    return r;
  }
  std::optional<ForegroundSignals> foreground;
  if (opts.foreground) foreground.emplace();
  Spawn spawn;
  if (foreground) {
    foreground->restore_in_child(spawn);
  } else {
    spawn.own_process_group();
    spawn.open(0, "/dev/null", O_RDONLY);
  }
  spawn.dup2(out_pipe->write.get(), 1);
  spawn.dup2(opts.merge_stderr ? out_pipe->write.get() : err_pipe->write.get(), 2);
  if (opts.cwd) spawn.chdir(*opts.cwd);
  auto start = Clock::now();
  pid_t pid = -1;
  if (int e = spawn.run(pid, argv_c.data(), env_c.data(), /*search_path=*/true); e != 0) {
    r.start_error = fmt::format("{}: {}", argv[0], std::strerror(e));
    return r;
  }
  // Our copies of the write ends closed: EOF comes when the child (and what it started) closes theirs.
  out_pipe->write.reset();
  err_pipe->write.reset();
  r.started = true;
  if (foreground) g_foreground_child = pid;
  if (opts.on_start) opts.on_start(static_cast<int>(pid));
  auto deadline = start + opts.timeout;
  int status = 0;
  PumpEnd end = pump(out_pipe->read.get(), opts.merge_stderr ? -1 : err_pipe->read.get(), pid, opts, r, deadline, status);
  out_pipe.reset();
  err_pipe.reset();
  reap(pid, r, deadline, end, status);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

ProcessResult run_isolated(const std::function<std::string()>& fn, std::chrono::milliseconds timeout) {
  ProcessResult r;
  std::optional<Pipe> out_pipe = open_pipe();
  if (!out_pipe) {
    r.start_error = errno_text("pipe");
    return r;
  }
  auto start = Clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    r.start_error = errno_text("fork");
    return r;
  }
  if (pid == 0) {
    setpgid(0, 0);
    out_pipe->read.reset();
    std::string result = fn();
    const char* p = result.data();
    size_t left = result.size();
    while (left > 0) {
      ssize_t w = write(out_pipe->write.get(), p, left);
      if (w <= 0) break;
      p += w;
      left -= static_cast<size_t>(w);
    }
    _exit(0);
  }
  out_pipe->write.reset();
  r.started = true;
  ProcessOptions opts;
  opts.timeout = timeout;
  auto deadline = start + timeout;
  int status = 0;
  PumpEnd end = pump(out_pipe->read.get(), -1, pid, opts, r, deadline, status);
  out_pipe.reset();
  reap(pid, r, deadline, end, status);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  return std::string(buf, static_cast<size_t>(n));
}

std::string which(std::string_view name, std::string_view path_env) {
  if (name.find('/') != std::string_view::npos) return access(std::string(name).c_str(), X_OK) == 0 ? std::string(name) : "";
  for (const auto& dir : split(path_env, ':')) {
    std::string candidate = dir + "/" + std::string(name);
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

}  // namespace cd
