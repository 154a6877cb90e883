/* A job that is still running when it is read: main and two threads make
 * a few calls each, then every thread waits for ever in block_forever
 * (pause), as a hung rank does. The runtime's idle flusher writes what they
 * recorded (PARLOT_FLUSH_MS), so parlot-read sees thread files without
 * their final block and trailer while the process is alive; the test then
 * reads them again after killing it with SIGKILL.
 * Calls per thread: work { 10 x [ leaf ] } block_forever (open).
 */
#include <pthread.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned sink;

NOINLINE static void leaf(void) {
  sink++;
}

NOINLINE static void work(void) {
  for (int i = 0; i < 10; ++i) leaf();
}

NOINLINE static void block_forever(void) {
  for (;;) pause();
}

static void* thread_main(void* arg) {
  (void)arg;
  work();
  block_forever();
  return 0;
}

int main(void) {
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) pthread_create(&threads[i], 0, thread_main, 0);
  work();
  block_forever();
  return 0;
}
