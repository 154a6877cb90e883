/* A multithreaded program whose time is known, for `parlot-read report`:
 * three workers spin in thread_work for (w + 1) x 30 ms (worker 2, thread
 * 3, is the slowest); main then writes 8 MiB to the file named by argv[1]
 * with write(2) and fsync(2) in save_results (I/O when library calls are
 * recorded). Each thread measures its calls with CLOCK_MONOTONIC and main
 * prints:
 *   measured <thread index> <name> <ns>
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* Not traced: the test counts the fixture's own calls only. */
__attribute__((no_instrument_function)) static unsigned long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static volatile unsigned long long sink;
static unsigned long long measured[3];

NOINLINE static void thread_work(int w) {
  const unsigned long long end = now_ns() + (unsigned long long)(w + 1) * 30000000ull;
  /* The clock read rarely: a few calls into the C library, not millions. */
  do {
    for (int i = 0; i < 100000; ++i) sink++;
  } while (now_ns() < end);
}

static void* worker(void* arg) {
  const int w = (int)(long)arg;
  const unsigned long long t = now_ns();
  thread_work(w);
  measured[w] = now_ns() - t;
  return 0;
}

/* Returns the ns spent in write and fsync. */
NOINLINE static unsigned long long save_results(const char* path) {
  static char block[1 << 20];
  memset(block, 'x', sizeof block);
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return 0;
  unsigned long long io = 0;
  for (int i = 0; i < 8; ++i) {
    const unsigned long long t = now_ns();
    if (write(fd, block, sizeof block) != (ssize_t)sizeof block) abort();
    io += now_ns() - t;
  }
  const unsigned long long t = now_ns();
  fsync(fd);
  io += now_ns() - t;
  close(fd);
  return io;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  /* Started one after the other, so their thread indices are 1, 2, 3. */
  pthread_t threads[3];
  for (long w = 0; w < 3; ++w) {
    pthread_create(&threads[w], 0, worker, (void*)w);
    usleep(2000);
  }
  for (int w = 0; w < 3; ++w) pthread_join(threads[w], 0);
  const unsigned long long io = save_results(argv[1]);
  for (int w = 0; w < 3; ++w) printf("measured %d thread_work %llu\n", w + 1, measured[w]);
  printf("measured 0 io %llu\n", io);
  return 0;
}
