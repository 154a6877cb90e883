/* A server that starts as root and drops to user and group 65534 (nobody),
 * then starts a thread and forks a child:
 *
 *   process 0, thread 0: main { before { leaf } after { leaf } }
 *   process 0, thread 1: worker { leaf }
 *   process 1 (forked after the drop): main { child_work { leaf } }
 *
 * Prints "setuid: ok" (or the error) and "child status 0". Run as root. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hardening_common.h"

volatile int sink;

NOINLINE void leaf(int x) {
  sink = x;
}
NOINLINE void before(int x) {
  leaf(x);
}
NOINLINE void after(int x) {
  leaf(x);
}
NOINLINE void* worker(void* arg) {
  leaf((int)(long)arg);
  return NULL;
}
NOINLINE void child_work(int x) {
  leaf(x);
}

int main(void) {
  before(1);
  HCHECK(setgid(65534) == 0);
  const int r = setuid(65534);
  printf("setuid: %s\n", r == 0 ? "ok" : strerrorname_np(errno));
  fflush(stdout);
  after(2);
  pthread_t t;
  HCHECK(pthread_create(&t, NULL, worker, (void*)3L) == 0);
  HCHECK(pthread_join(t, NULL) == 0);
  const pid_t pid = fork();
  HCHECK(pid >= 0);
  if (pid == 0) {
    child_work(4);
    return 0;
  }
  int status = 0;
  HCHECK(waitpid(pid, &status, 0) == pid);
  printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
