// Starting a child with posix_spawn, not fork + exec. glibc's posix_spawn clones with
// CLONE_VM | CLONE_VFORK: the parent's page tables are not copied and its memory is not
// made copy-on-write. After a fork, every page the parent's other threads write before
// the child has exec'd costs a fault and a copy, and the page-table copy itself grows
// with the parent's mappings (every scanned library is mapped): on the build VM, writing
// 30 MB after fork + exec took 316 ms, after posix_spawn 0.3 ms (subprocess_test.cpp
// keeps that property). What the child needs before exec — its own process group,
// default signals, /dev/null or a pipe on 0/1/2, a working directory — are spawn
// attributes and file actions, applied in the order given.
#pragma once

#include <spawn.h>
#include <sys/types.h>

#include <initializer_list>
#include <string>

namespace cd {

class Spawn {
 public:
  Spawn();
  ~Spawn();
  Spawn(const Spawn&) = delete;
  Spawn& operator=(const Spawn&) = delete;

  void own_process_group();                           // setpgid(0, 0): killed with all it starts
  void default_signals(std::initializer_list<int> signals);  // SIG_DFL in the child
  void open(int fd, const std::string& path, int flags);     // fd = open(path, flags)
  void dup2(int from, int to);
  void chdir(const std::string& dir);

  // Starts argv (null-terminated) with the environment envp; search_path looks argv[0]
  // up on our PATH like execvp. 0 with `pid` set, or the errno of what failed (the exec,
  // an open, the chdir): the child never ran the program.
  int run(pid_t& pid, char* const argv[], char* const envp[], bool search_path);

 private:
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
  sigset_t defaults_;
  short flags_ = 0;
};

}  // namespace cd
