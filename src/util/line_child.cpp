#include "util/line_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/spawn.hpp"

extern char** environ;

namespace cd {

bool LineChild::start(const std::vector<std::string>& argv) {
  int fds[2];
  if (argv.empty() || pipe2(fds, O_CLOEXEC) != 0) {
    error_ = argv.empty() ? "empty command" : std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  Spawn spawn;
  spawn.own_process_group();
  spawn.open(0, "/dev/null", O_RDONLY);
  spawn.open(2, "/dev/null", O_WRONLY);
  spawn.dup2(fds[1], 1);
  spawn.default_signals({SIGPIPE});
  pid_t pid = -1;
  if (int e = spawn.run(pid, args.data(), environ, /*search_path=*/false); e != 0) {
    error_ = argv[0] + ": " + std::strerror(e);
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  close(fds[1]);
  fd_ = fds[0];
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  pid_ = pid;
  return true;
}

std::vector<std::string> LineChild::lines(std::chrono::milliseconds wait) {
  std::vector<std::string> out;
  if (fd_ < 0) return out;
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(wait.count())) > 0) {
    char chunk[65536];
    for (;;) {
      ssize_t n = read(fd_, chunk, sizeof chunk);
      if (n > 0) {
        buf_.append(chunk, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) {
        close(fd_);
        fd_ = -1;
      } else if (errno == EINTR) {
        continue;
      }
      break;  // EAGAIN: all read
    }
  }
  size_t at = 0;
  for (size_t nl; (nl = buf_.find('\n', at)) != std::string::npos; at = nl + 1) out.push_back(buf_.substr(at, nl - at));
  buf_.erase(0, at);
  if (buf_.size() > (16u << 20)) buf_.clear();  // a line that never ends: drop it, never grow without bound
  return out;
}

double LineChild::cpu_seconds() const {
  if (pid_ <= 0) return -1;
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return -1;
  std::istringstream fields(text.substr(close_paren + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; fields >> f && i <= 15; ++i) {
    if (i == 14) utime = std::strtoull(f.c_str(), nullptr, 10);
    if (i == 15) stime = std::strtoull(f.c_str(), nullptr, 10);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

void LineChild::stop() {
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
}

}  // namespace cd
