/* Case 6: new processes. Usage: fork_exec MODE [EXEC_TARGET | LOCK_FILE]
 *   fork       a helper thread waits two calls deep while main forks in
 *              do_fork; the child runs child_work { leaf } and exits.
 *              Parent: main { do_fork { parent_work { leaf } } },
 *              helper { h_outer { h_inner { leaf } } }.
 *              Child: main { do_fork { child_work { leaf } } }
 *   fork_exec  the child of do_fork_exec calls execv(EXEC_TARGET) at once
 *   fork_work_exec  the child runs child_work { leaf } and then execv
 *   vfork      the child of do_vfork calls execv(EXEC_TARGET) at once
 *   spawn      do_spawn runs EXEC_TARGET with posix_spawn
 *   daemon     main { before_daemon { leaf } do_daemon { daemon_work { leaf } } }:
 *              daemon(3) forks, the original process _exits inside daemon(),
 *              the daemon runs daemon_work and exits; it holds a flock on
 *              LOCK_FILE until it ends. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hardening_common.h"

extern char** environ;
volatile int sink;
static int helper_pipe[2];
static atomic_int helper_waiting;

NOINLINE void leaf(int x) {
  sink = x;
}

NOINLINE void h_inner(void) {
  char c;
  atomic_store(&helper_waiting, 1);
  HCHECK(read(helper_pipe[0], &c, 1) == 1);
  leaf(c);
}
NOINLINE void h_outer(void) {
  h_inner();
}
NOINLINE void* helper(void* arg) {
  (void)arg;
  h_outer();
  return NULL;
}

NOINLINE void child_work(int x) {
  leaf(x);
}
NOINLINE void parent_work(int x) {
  leaf(x);
}

NOTRACE static int wait_status(pid_t pid) {
  int status = 0;
  HCHECK(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

NOINLINE int do_fork(void) {
  fflush(stdout);
  const pid_t pid = fork();
  HCHECK(pid >= 0);
  if (pid == 0) {
    child_work(1);
    exit(0);
  }
  const int status = wait_status(pid);
  parent_work(2);
  return status;
}

NOINLINE int do_fork_exec(const char* target, int work) {
  fflush(stdout);
  const pid_t pid = fork();
  HCHECK(pid >= 0);
  if (pid == 0) {
    if (work) child_work(3);
    execl(target, target, "forked", (char*)NULL);
    _exit(127);
  }
  return wait_status(pid);
}

NOINLINE int do_vfork(const char* target) {
  fflush(stdout);
  const pid_t pid = vfork();
  HCHECK(pid >= 0);
  if (pid == 0) {
    execl(target, target, "vforked", (char*)NULL);
    _exit(127);
  }
  return wait_status(pid);
}

NOINLINE int do_spawn(const char* target) {
  fflush(stdout);
  pid_t pid;
  char* args[] = {(char*)target, (char*)"spawned", NULL};
  HCHECK(posix_spawn(&pid, target, NULL, NULL, args, environ) == 0);
  return wait_status(pid);
}

NOINLINE void before_daemon(void) {
  leaf(4);
}
NOINLINE void daemon_work(void) {
  leaf(5);
}
NOINLINE void do_daemon(const char* lock_file) {
  /* The lock's open file description is shared with the daemon (fork); it
   * is released when the daemon's last descriptor closes at its exit. */
  const int fd = open(lock_file, O_RDWR | O_CREAT, 0600);
  HCHECK(fd >= 0 && flock(fd, LOCK_EX) == 0);
  printf("original %d\n", (int)getpid());
  fflush(stdout);
  HCHECK(daemon(0, 1) == 0);
  daemon_work();
  printf("daemon %d\n", (int)getpid());
  fflush(stdout);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "fork";
  const char* arg = argc > 2 ? argv[2] : "";
  if (strcmp(mode, "fork") == 0) {
    HCHECK(pipe(helper_pipe) == 0);
    pthread_t t;
    HCHECK(pthread_create(&t, NULL, helper, NULL) == 0);
    while (!atomic_load(&helper_waiting)) sched_yield();
    const int status = do_fork();
    HCHECK(write(helper_pipe[1], "x", 1) == 1);
    HCHECK(pthread_join(t, NULL) == 0);
    printf("child status %d\n", status);
  } else if (strcmp(mode, "fork_exec") == 0) {
    printf("child status %d\n", do_fork_exec(arg, 0));
  } else if (strcmp(mode, "fork_work_exec") == 0) {
    printf("child status %d\n", do_fork_exec(arg, 1));
  } else if (strcmp(mode, "vfork") == 0) {
    printf("child status %d\n", do_vfork(arg));
  } else if (strcmp(mode, "spawn") == 0) {
    printf("child status %d\n", do_spawn(arg));
  } else if (strcmp(mode, "daemon") == 0) {
    before_daemon();
    do_daemon(arg);
  }
  return 0;
}
