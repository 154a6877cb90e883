/* End-to-end fixture of the flight recorder (PARLOT_MODE=flight), linked
 * with libparlot-api.so so it runs traced or not.
 * Usage: flight_fixture MODE ROUNDS
 *   crash   ROUNDS rounds of irregular calls (a pseudo-random call tree of
 *           eight functions), then crash_outer -> crash_inner, which
 *           writes through a null pointer (SIGSEGV)
 *   exit    the same rounds, then returns 0 from main
 *   signal  half the rounds, raises the flight signal (SIGRTMIN+6), the
 *           other half, marked_end -> returns 0
 *   api     half the rounds, api_dump -> parlot_flight_dump() (prints
 *           "dump=<its result>"), the other half, returns 0
 *   threads three threads of ROUNDS rounds each (worker), joined; exit 0
 *   memory  THREADS threads (argument 3) of ROUNDS rounds each, in two
 *           halves; prints the process's resident memory (VmRSS, KiB) once
 *           all have started (before their first round), after the first
 *           halves and after the second: "rss start=S mid=M end=E"
 * Each round is one call of round_root. Prints "done" before the end.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parlot/parlot.h"

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

static unsigned next_random(unsigned* state) {
  *state = *state * 1103515245u + 12345u;
  return *state >> 16;
}

NOINLINE static void leaf_a(unsigned* s) {
  sink += next_random(s) & 3;
}
NOINLINE static void leaf_b(unsigned* s) {
  sink += next_random(s) & 7;
}
NOINLINE static void leaf_c(unsigned* s) {
  sink ^= next_random(s);
}
NOINLINE static void mid_d(unsigned* s);
NOINLINE static void mid_e(unsigned* s);
NOINLINE static void mid_f(unsigned* s);

NOINLINE static void call_some(unsigned* s, int depth) {
  const unsigned n = 1 + next_random(s) % 4;
  for (unsigned i = 0; i < n; ++i) {
    switch (next_random(s) % (depth < 4 ? 6 : 3)) {
      case 0:
        leaf_a(s);
        break;
      case 1:
        leaf_b(s);
        break;
      case 2:
        leaf_c(s);
        break;
      case 3:
        mid_d(s);
        break;
      case 4:
        mid_e(s);
        break;
      default:
        mid_f(s);
        break;
    }
  }
}
/* Per thread: the workers of "threads" each bound their own recursion. */
static __thread int g_depth;
NOINLINE static void mid_d(unsigned* s) {
  ++g_depth;
  call_some(s, g_depth);
  --g_depth;
}
NOINLINE static void mid_e(unsigned* s) {
  ++g_depth;
  call_some(s, g_depth);
  --g_depth;
}
NOINLINE static void mid_f(unsigned* s) {
  ++g_depth;
  leaf_a(s);
  call_some(s, g_depth);
  --g_depth;
}

NOINLINE static void round_root(unsigned* s) {
  call_some(s, 0);
}

NOINLINE static void rounds(long n, unsigned seed) {
  unsigned s = seed;
  for (long i = 0; i < n; ++i) round_root(&s);
}

NOINLINE static void crash_inner(volatile int* p) {
  *p = 42;
}
NOINLINE static void crash_outer(void) {
  crash_inner((volatile int*)(sink & 0));
}
NOINLINE static void marked_end(void) {
  sink += 1;
}
NOINLINE static int api_dump(void) {
  return parlot_flight_dump();
}

static long g_rounds;
static void* worker(void* arg) {
  rounds(g_rounds, (unsigned)(unsigned long)arg);
  return NULL;
}

/* The process's VmRSS in KiB (/proc/self/status), or -1. */
static long resident_kib(void) {
  FILE* f = fopen("/proc/self/status", "r");
  if (f == NULL) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f) != NULL) {
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  }
  fclose(f);
  return kib;
}

/* "memory": the workers and main meet at `step` once the workers run
   (traced), before, between and after their two halves. */
static pthread_barrier_t step;
static void* memory_worker(void* arg) {
  unsigned s = (unsigned)(unsigned long)arg;
  pthread_barrier_wait(&step);
  pthread_barrier_wait(&step);
  for (long i = 0; i < g_rounds / 2; ++i) round_root(&s);
  pthread_barrier_wait(&step);
  pthread_barrier_wait(&step);
  for (long i = 0; i < g_rounds - g_rounds / 2; ++i) round_root(&s);
  pthread_barrier_wait(&step);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "memory") == 0) {
    g_rounds = atol(argv[2]);
    const int threads = atoi(argv[3]);
    if (threads < 1 || threads > 64) return 2;
    pthread_t t[64];
    pthread_barrier_init(&step, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; ++i) {
      pthread_create(&t[i], NULL, memory_worker, (void*)(unsigned long)(i + 7));
    }
    pthread_barrier_wait(&step);
    const long start = resident_kib();
    pthread_barrier_wait(&step);
    pthread_barrier_wait(&step);
    const long mid = resident_kib();
    pthread_barrier_wait(&step);
    pthread_barrier_wait(&step);
    const long end = resident_kib();
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    printf("rss start=%ld mid=%ld end=%ld\n", start, mid, end);
    return 0;
  }
  if (argc != 3) return 2;
  const char* mode = argv[1];
  const long n = atol(argv[2]);
  g_rounds = n;
  if (strcmp(mode, "crash") == 0 || strcmp(mode, "exit") == 0) {
    rounds(n, 1);
    printf("done\n");
    fflush(stdout);
    if (strcmp(mode, "crash") == 0) crash_outer();
    return 0;
  }
  if (strcmp(mode, "signal") == 0 || strcmp(mode, "api") == 0) {
    rounds(n / 2, 1);
    if (strcmp(mode, "signal") == 0) {
      raise(SIGRTMIN + 6);
    } else {
      printf("dump=%d\n", api_dump());
    }
    rounds(n - n / 2, 2);
    marked_end();
    printf("done\n");
    return 0;
  }
  if (strcmp(mode, "threads") == 0) {
    pthread_t t[3];
    for (unsigned long i = 0; i < 3; ++i) pthread_create(&t[i], NULL, worker, (void*)(i + 7));
    for (int i = 0; i < 3; ++i) pthread_join(t[i], NULL);
    printf("done\n");
    return 0;
  }
  return 2;
}
