// A pid that surely runs no process, for the tests of leftovers that a killed run leaves under its pid: a child
// that has exited and been reaped.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fourfold::testing {

inline pid_t dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

}  // namespace fourfold::testing
