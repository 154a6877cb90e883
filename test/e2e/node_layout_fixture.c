// A deterministic program of two threads and a fork child (node_layout_test):
// the same calls in every run, so the node layout's views can be compared
// with the process layout's. With an argument "kill", the fork child
// SIGKILLs itself in the middle of its calls.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int leaf(int x) {
  return x * 2 + 1;
}

__attribute__((noinline)) int middle(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += leaf(i);
  return s;
}

__attribute__((noinline)) void die(void) {
  kill(getpid(), SIGKILL);
}

static void* worker(void* arg) {
  return (void*)(long)middle((int)(long)arg);
}

int main(int argc, char** argv) {
  const int kill_child = argc > 1 && strcmp(argv[1], "kill") == 0;
  pthread_t t[2];
  for (long i = 0; i < 2; ++i) pthread_create(&t[i], NULL, worker, (void*)(100 + i));
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  const pid_t child = fork();
  if (child == 0) {
    middle(50);
    if (kill_child) die();
    _exit(0);
  }
  waitpid(child, NULL, 0);
  printf("%d\n", middle(10));
  return 0;
}
