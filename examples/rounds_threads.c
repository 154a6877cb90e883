// Parlot example: worker threads stepping through rounds in lock step (C,
// pthreads), with two switches that plant a bug in one worker, for finding
// the odd thread (parlot-read classes, stacks, diff; README "Finding the
// odd rank").
//
// Usage: rounds_threads [workers] [rounds] [--hang W:K] [--wrong W]
//        (defaults: 4 workers, 10 rounds, no bug)
//
// main starts the workers one after another (each start is acknowledged, so
// worker w is always the trace's thread w + 1) and joins them. Each round a
// worker computes its partial sum (compute_share), adds it to the total
// under a lock (publish), and waits for the others at a barrier
// (end_round); worker 0 then prints "round R done" (flushed). main prints
// the total.
//
// --hang W:K   worker W (0-based) takes the wrong path at round K: it waits
//              for a "round done" condition nobody signals
//              (wait_for_round_done) instead of the barrier, and the other
//              workers block at the barrier. The process hangs: stop it
//              with SIGTERM.
// --wrong W    worker W computes its share with compute_share_unrolled at
//              every round (a different branch, a different result) and
//              the run finishes.
//
// Determinism: every worker makes the same calls unless a switch names it.

#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxWorkers = 64, kShare = 1000 };

typedef struct {
  int workers, rounds;
  int hang_worker, hang_round;  // --hang (-1: off)
  int wrong_worker;             // --wrong (-1: off)
} Options;

static Options g_options;
static pthread_barrier_t g_barrier;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_round_done = PTHREAD_COND_INITIALIZER;
static sem_t g_started;
static uint64_t g_total;

static void usage(void) {
  fprintf(stderr, "usage: rounds_threads [workers] [rounds] [--hang W:K] [--wrong W]\n");
  exit(2);
}

static Options parse_args(int argc, char** argv) {
  Options o = {4, 10, -1, -1, -1};
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--hang") == 0 && i + 1 < argc) {
      if (sscanf(argv[++i], "%d:%d", &o.hang_worker, &o.hang_round) != 2) usage();
    } else if (strcmp(argv[i], "--wrong") == 0 && i + 1 < argc) {
      o.wrong_worker = atoi(argv[++i]);
    } else if (argv[i][0] != '-' && positional < 2) {
      *(positional++ == 0 ? &o.workers : &o.rounds) = atoi(argv[i]);
    } else {
      usage();
    }
  }
  if (o.workers < 1 || o.workers > kMaxWorkers || o.rounds < 1) usage();
  return o;
}

static uint64_t compute_share(int worker, int round) {
  uint64_t sum = 0;
  for (int i = 0; i < kShare; ++i) sum += (uint64_t)(worker * kShare + i) * (uint64_t)(round + 1);
  return sum;
}

// The odd worker's branch: the same loop unrolled by two, off by one at the end.
static uint64_t compute_share_unrolled(int worker, int round) {
  uint64_t sum = 0;
  for (int i = 0; i + 1 < kShare - 1; i += 2) {
    sum += (uint64_t)(2 * (worker * kShare + i) + 1) * (uint64_t)(round + 1);
  }
  return sum;
}

static void publish(uint64_t share) {
  pthread_mutex_lock(&g_lock);
  g_total += share;
  pthread_mutex_unlock(&g_lock);
}

static void end_round(void) {
  pthread_barrier_wait(&g_barrier);
}

// The wrong path: waits for a signal that only a design without the barrier
// would send.
static void wait_for_round_done(void) {
  pthread_mutex_lock(&g_lock);
  for (;;) pthread_cond_wait(&g_round_done, &g_lock);
}

static void* worker(void* arg) {
  const int w = (int)(intptr_t)arg;
  sem_post(&g_started);
  for (int round = 0; round < g_options.rounds; ++round) {
    publish(w == g_options.wrong_worker ? compute_share_unrolled(w, round)
                                        : compute_share(w, round));
    if (w == g_options.hang_worker && round == g_options.hang_round) {
      wait_for_round_done();
    } else {
      end_round();
    }
    if (w == 0) {
      printf("round %d done\n", round);
      fflush(stdout);
    }
  }
  return NULL;
}

static void start_worker(pthread_t* thread, int w) {
  if (pthread_create(thread, NULL, worker, (void*)(intptr_t)w) != 0) {
    perror("pthread_create");
    exit(1);
  }
  sem_wait(&g_started);  // worker w entered worker(): it is thread w + 1 of the trace
}

int main(int argc, char** argv) {
  g_options = parse_args(argc, argv);
  pthread_barrier_init(&g_barrier, NULL, (unsigned)g_options.workers);
  sem_init(&g_started, 0, 0);
  pthread_t threads[kMaxWorkers];
  for (int w = 0; w < g_options.workers; ++w) start_worker(&threads[w], w);
  for (int w = 0; w < g_options.workers; ++w) pthread_join(threads[w], NULL);
  printf("rounds_threads workers=%d rounds=%d total=%llu\n", g_options.workers, g_options.rounds,
         (unsigned long long)g_total);
  return 0;
}
