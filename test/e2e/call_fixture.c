/* End-to-end fixture with an exactly known call tree per thread.
 * Usage: call_fixture MODE
 *   basic  main -> recurse(3); two threads run worker -> level1 -> level2 -> level3
 *   exit   main -> exit_outer -> exit_inner -> exit(3); an instrumented atexit
 *          handler runs nested under exit_inner
 *   fork   main -> fork_parent_side; the child runs fork_child_side and exits
 *   quiet_fork  a thread whose code is not instrumented (no event) forks;
 *          in the child it calls level1 (a trace of its own: 6 events)
 *   loop   main -> 200000 x (level1 -> level2 -> level3): a call-dense loop
 *   killed MS  the loop for MS milliseconds, prints its call count, then
 *          kill_self() sends itself SIGKILL
 *   segv | abort | term | _exit
 *          main -> die_outer -> die_inner, which dies: a null store,
 *          abort(), raise(SIGTERM), or _exit(4)
 *   slow   30 x (level1, then 10 ms asleep): time to tamper with the directory
 *   handler  as segv, but main first installs its own SIGSEGV handler,
 *          which prints "handled" and calls _exit(7)
 *   deep N  a thread (1 GiB stack) runs deep_worker -> recurse(N): N + 1
 *          nested calls of recurse, as deep as after a stack overflow
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE int level3(int x) {
  sink = x;
  return x + 1;
}
NOINLINE int level2(int x) {
  return level3(x) * 2;
}
NOINLINE int level1(int x) {
  return level2(x) + 1;
}
NOINLINE int recurse(int n) {
  return n == 0 ? 0 : 1 + recurse(n - 1);
}

NOINLINE void* deep_worker(void* arg) {
  sink = recurse((int)(long)arg);
  return NULL;
}

NOINLINE void* worker(void* arg) {
  level1((int)(long)arg);
  return NULL;
}

NOINLINE void at_exit_handler(void) {
  level3(7);
}

NOINLINE void exit_inner(void) {
  atexit(at_exit_handler);
  exit(3);
}
NOINLINE void exit_outer(void) {
  exit_inner();
}

NOINLINE void fork_child_side(void) {
  level3(1);
}
NOINLINE int fork_parent_side(void) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    fork_child_side();
    exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

/* Not instrumented: the thread makes no event before its fork. */
__attribute__((no_instrument_function)) static void* quiet_forker(void* arg) {
  (void)arg;
  fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    level1(1);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return (void*)(long)(WIFEXITED(status) ? WEXITSTATUS(status) : 99);
}

NOINLINE void kill_self(void) {
  kill(getpid(), SIGKILL);
}

static const char* die_how;
NOINLINE void die_inner(void) {
  if (strcmp(die_how, "abort") == 0) abort();
  if (strcmp(die_how, "term") == 0) raise(SIGTERM);
  if (strcmp(die_how, "_exit") == 0) _exit(4);
  *(volatile int*)(uintptr_t)sink = 1; /* sink is 0: a null store */
}
NOINLINE void die_outer(void) {
  die_inner();
}

static void own_segv_handler(int sig) {
  (void)sig;
  static const char msg[] = "handled\n";
  write(1, msg, sizeof msg - 1);
  _exit(7);
}

static long elapsed_ms(const struct timespec* t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "basic";
  if (strcmp(mode, "basic") == 0) {
    recurse(3);
    /* One thread at a time: thread indices are then deterministic. */
    for (long i = 0; i < 2; ++i) {
      pthread_t t;
      pthread_create(&t, NULL, worker, (void*)i);
      pthread_join(t, NULL);
    }
    printf("basic done\n");
  } else if (strcmp(mode, "exit") == 0) {
    exit_outer();
  } else if (strcmp(mode, "fork") == 0) {
    printf("child status %d\n", fork_parent_side());
  } else if (strcmp(mode, "quiet_fork") == 0) {
    pthread_t t;
    void* status = NULL;
    pthread_create(&t, NULL, quiet_forker, NULL);
    pthread_join(t, &status);
    printf("child status %ld\n", (long)status);
  } else if (strcmp(mode, "killed") == 0) {
    /* Also reports how many calls were made 100 ms before the end: those
     * must all be on disk when the process is killed. */
    const long ms = argc > 2 ? atol(argv[2]) : 200;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long calls = 0, calls_100ms_before = 0;
    static long at_ms[1 << 16];
    long now = 0;
    do {
      for (int i = 0; i < 1000; ++i) level1(i);
      calls += 1000;
      now = elapsed_ms(&t0);
      if (now < (1 << 16)) at_ms[now] = calls;
    } while (now < ms);
    for (long t = now - 100; t >= 0; --t) {
      if (at_ms[t] != 0) {
        calls_100ms_before = at_ms[t];
        break;
      }
    }
    printf("calls %ld before %ld\n", calls, calls_100ms_before);
    fflush(stdout);
    kill_self();
  } else if (strcmp(mode, "segv") == 0 || strcmp(mode, "abort") == 0 || strcmp(mode, "term") == 0 ||
             strcmp(mode, "_exit") == 0) {
    die_how = mode;
    sink = 0;
    die_outer();
  } else if (strcmp(mode, "handler") == 0) {
    signal(SIGSEGV, own_segv_handler);
    die_how = "segv";
    sink = 0;
    die_outer();
  } else if (strcmp(mode, "slow") == 0) {
    int s = 0;
    for (int i = 0; i < 30; ++i) {
      for (int k = 0; k < 20000; ++k) s += level1(k);
      usleep(10000);
    }
    printf("slow %d\n", s);
  } else if (strcmp(mode, "deep") == 0) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)1 << 30);
    pthread_t t;
    pthread_create(&t, &attr, deep_worker, (void*)(argc > 2 ? atol(argv[2]) : 100000));
    pthread_join(t, NULL);
    printf("deep %ld\n", (long)sink);
  } else if (strcmp(mode, "loop") == 0) {
    int s = 0;
    for (int i = 0; i < 200000; ++i) s += level1(i);
    printf("loop %d\n", s);
  }
  return 0;
}
