/* A relative PARLOT_DIR and a program that changes directory, then starts
 * another instrumented program, TARGET (exec_target), in one of these ways:
 *   execve       execve with the process's environment
 *   execv        execv (the process's environment, implicitly)
 *   own_env      execve with an environment the program builds itself:
 *                LD_PRELOAD as it was given and PARLOT_DIR=REL
 *   system       system("TARGET system"), waits
 *   posix_spawn  posix_spawn with the process's environment, waits
 * Usage: chdir_exec HOW TARGET [REL]
 * This program: main{ work{leaf leaf leaf} }; the target main{ target_work{leaf} }
 * and prints "target HOW". */
#define _GNU_SOURCE
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
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

int main(int argc, char** argv) {
  HCHECK(argc >= 3);
  const char* how = argv[1];
  const char* target = argv[2];
  work(3);
  HCHECK(mkdir("moved", 0700) == 0 && chdir("moved") == 0);
  fflush(stdout);
  char* const target_argv[] = {(char*)target, (char*)how, NULL};
  if (strcmp(how, "execve") == 0) {
    execve(target, target_argv, environ);
  } else if (strcmp(how, "execv") == 0) {
    execv(target, target_argv);
  } else if (strcmp(how, "own_env") == 0) {
    HCHECK(argc == 4 && getenv("LD_PRELOAD") != NULL);
    char preload[4096], dir[4096];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", getenv("LD_PRELOAD"));
    snprintf(dir, sizeof dir, "PARLOT_DIR=%s", argv[3]);
    char* const env[] = {preload, dir, NULL};
    execve(target, target_argv, env);
  } else if (strcmp(how, "system") == 0) {
    char command[4096];
    snprintf(command, sizeof command, "%s system", target);
    HCHECK(system(command) == 0);
    return 0;
  } else if (strcmp(how, "posix_spawn") == 0) {
    pid_t child;
    HCHECK(posix_spawn(&child, target, NULL, NULL, target_argv, environ) == 0);
    int status = 0;
    HCHECK(waitpid(child, &status, 0) == child && status == 0);
    return 0;
  }
  perror(how);
  return 1;
}
