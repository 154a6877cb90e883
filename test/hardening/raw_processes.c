/* Processes started behind the C library's back, with raw system calls.
 * Usage: raw_processes MODE [ARGS]
 *   execve TARGET N   work(N) (many calls: blocks are written), then
 *                     syscall(SYS_execve, TARGET, ...) with the process's
 *                     environment: the exec interposers never see it
 *   clone N           work(3); a raw clone without CLONE_VM (a fork the
 *                     atfork handlers never see) whose child runs
 *                     child_work(N) and _exits with 0; the parent waits,
 *                     runs work(3) and prints "child exit 0":
 *                     main{ work{leaf x 3} work{leaf x 3} } */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hardening_common.h"

extern char** environ;

volatile int sink;

NOINLINE void leaf(int x) {
  sink = x;
}
NOINLINE void work(int n) {
  for (int i = 0; i < n; ++i) leaf(i);
}
NOINLINE void child_work(int n) {
  for (int i = 0; i < n; ++i) leaf(i);
}

NOTRACE static int run_raw_execve(const char* target, int n) {
  work(n);
  fflush(stdout);
  char* const argv[] = {(char*)target, (char*)"raw_execve", NULL};
  syscall(SYS_execve, target, argv, environ);
  perror("execve");
  return 1;
}

NOTRACE static int run_raw_clone(int n) {
  work(3);
  fflush(stdout);
  /* clone(flags, stack 0: the child runs on a copy of this stack, like fork) */
  const long child = syscall(SYS_clone, (unsigned long)SIGCHLD, 0L, NULL, NULL, 0L);
  HCHECK(child >= 0);
  if (child == 0) {
    child_work(n);
    _exit(0);
  }
  int status = -1;
  HCHECK(waitpid((pid_t)child, &status, 0) == (pid_t)child);
  work(3);
  printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "execve") == 0 && argc == 4) return run_raw_execve(argv[2], int_arg(argv[3], 3));
  if (strcmp(mode, "clone") == 0 && argc == 3) return run_raw_clone(int_arg(argv[2], 3));
  fprintf(stderr, "usage: raw_processes execve TARGET N | clone N\n");
  return 2;
}
