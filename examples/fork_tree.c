// Parlot example: a job of many short processes (C, fork), for reading big
// traces (classes over 1024 processes: bench/run.sh reader)
// and finding the odd process among them.
//
// Usage: fork_tree [children] [iterations] [--outlier K]... [--hang K]
//                  [--parallel P]
//        (defaults: 16 children, 100 iterations, no outlier, 4 at a time)
//
// main forks the children one after another (child k, 0-based, is forked
// k-th; with --parallel 1 it also starts k-th, so it is process k + 1 of the
// trace directory, the parent being 0), keeping at most P of them running
// (a hung child not counted), and waits for all. Each child runs
// `iterations` steps of a small workload (step { compute { mix } exchange })
// and exits; the parent prints "children: N, failed: F".
//
// --outlier K   child K takes another branch (step_other instead of step)
//               at step K % iterations: its call stream, and only its,
//               differs from the others' (and from other outliers' unless
//               their K % iterations are equal). Repeatable.
// --hang K      child K stops at its middle step in wait_forever (pause);
//               once every other child is done, the parent sends it SIGTERM
//               (the runtime then ends its trace with the stack it was in)
//               and counts it as failed. The run is deterministic.
//
// Determinism: every child makes the same calls unless --outlier names it.

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kMaxOutliers = 64 };

static volatile uint64_t g_sink;

static void usage(void) {
  fprintf(stderr,
          "usage: fork_tree [children] [iterations] [--outlier K]... [--hang K] [--parallel P]\n");
  exit(2);
}

__attribute__((noinline)) static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  return x ^ (x >> 29);
}

__attribute__((noinline)) static uint64_t compute(uint64_t x) {
  return mix(x) + mix(x + 1);
}

__attribute__((noinline)) static void exchange(uint64_t x) {
  g_sink += x;
}

__attribute__((noinline)) static void step(uint64_t i) {
  exchange(compute(i));
}

__attribute__((noinline)) static void step_other(uint64_t i) {
  exchange(mix(i));
  exchange(mix(i + 7));
}

// Tells the parent (through `ready`) that the child is here, then waits for
// a signal.
__attribute__((noinline)) static void wait_forever(int ready) {
  const char c = 'h';
  if (write(ready, &c, 1) != 1) _exit(3);
  for (;;) pause();
}

__attribute__((noinline)) static void child_work(int iterations, int outlier, int hang_fd) {
  for (int i = 0; i < iterations; ++i) {
    if (hang_fd >= 0 && i == iterations / 2) wait_forever(hang_fd);
    if (outlier >= 0 && i == outlier % iterations) {
      step_other((uint64_t)i);
    } else {
      step((uint64_t)i);
    }
  }
}

// Waits for one child; returns 1 if it failed.
__attribute__((noinline)) static int reap(void) {
  int status = 0;
  if (wait(&status) < 0) return 1;
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

__attribute__((noinline)) static int spawn_children(int children, int iterations,
                                                    const int* outliers, int n_outliers, int hang,
                                                    int parallel) {
  int running = 0, failed = 0;
  int ready[2] = {-1, -1};
  pid_t hung = -1;
  if (hang >= 0 && hang < children && pipe(ready) != 0) return children;
  for (int k = 0; k < children; ++k) {
    if (running >= parallel + (hung > 0)) {  // the hung child holds no slot
      failed += reap();
      --running;
    }
    int outlier = -1;  // or k: takes step_other at step k % iterations
    for (int j = 0; j < n_outliers; ++j) {
      if (outliers[j] == k) outlier = k;
    }
    fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      ++failed;
      continue;
    }
    if (pid == 0) {
      child_work(iterations, outlier, k == hang ? ready[1] : -1);
      exit(0);  // not _exit: the runtime finishes the child's trace at exit
    }
    if (k == hang) hung = pid;
    ++running;
  }
  if (hung > 0) {
    // Every other child done, the hung one in wait_forever: stop it.
    for (; running > 1; --running) failed += reap();
    char c;
    if (read(ready[0], &c, 1) != 1) ++failed;
    kill(hung, SIGTERM);
  }
  for (; running > 0; --running) failed += reap();
  return failed;
}

int main(int argc, char** argv) {
  int children = 16, iterations = 100, parallel = 4, n_outliers = 0, positional = 0, hang = -1;
  int outliers[kMaxOutliers];
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--outlier") == 0 && i + 1 < argc) {
      if (n_outliers == kMaxOutliers) usage();
      outliers[n_outliers++] = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--hang") == 0 && i + 1 < argc) {
      hang = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--parallel") == 0 && i + 1 < argc) {
      parallel = atoi(argv[++i]);
    } else if (argv[i][0] != '-' && positional == 0) {
      children = atoi(argv[i]);
      ++positional;
    } else if (argv[i][0] != '-' && positional == 1) {
      iterations = atoi(argv[i]);
      ++positional;
    } else {
      usage();
    }
  }
  if (children < 0 || iterations < 0 || parallel < 1) usage();
  const int failed = spawn_children(children, iterations, outliers, n_outliers, hang, parallel);
  printf("children: %d, failed: %d\n", children, failed);
  return failed == 0 ? 0 : 1;
}
