#include "util/spawn.hpp"

#include <signal.h>

namespace cd {

Spawn::Spawn() {
  posix_spawn_file_actions_init(&actions_);
  posix_spawnattr_init(&attr_);
  sigemptyset(&defaults_);
}

Spawn::~Spawn() {
  posix_spawn_file_actions_destroy(&actions_);
  posix_spawnattr_destroy(&attr_);
}

void Spawn::own_process_group() {
  flags_ |= POSIX_SPAWN_SETPGROUP;
  posix_spawnattr_setpgroup(&attr_, 0);
}

void Spawn::default_signals(std::initializer_list<int> signals) {
  for (int s : signals) sigaddset(&defaults_, s);
  flags_ |= POSIX_SPAWN_SETSIGDEF;
}

void Spawn::open(int fd, const std::string& path, int flags) {
  posix_spawn_file_actions_addopen(&actions_, fd, path.c_str(), flags, 0);
}

void Spawn::dup2(int from, int to) { posix_spawn_file_actions_adddup2(&actions_, from, to); }

void Spawn::chdir(const std::string& dir) { posix_spawn_file_actions_addchdir_np(&actions_, dir.c_str()); }

int Spawn::run(pid_t& pid, char* const argv[], char* const envp[], bool search_path) {
  posix_spawnattr_setsigdefault(&attr_, &defaults_);
  posix_spawnattr_setflags(&attr_, flags_);
  return search_path ? posix_spawnp(&pid, argv[0], &actions_, &attr_, argv, envp)
                     : posix_spawn(&pid, argv[0], &actions_, &attr_, argv, envp);
}

}  // namespace cd
