/* End-to-end fixture of the user API (include/parlot/parlot.h), linked
 * with libparlot-api.so so it runs traced or not.
 * Usage: api_fixture MODE
 *   pause      main -> phase: visible, then paused: hidden -> visible,
 *              resumed: visible; then a nested pause around two calls
 *   pause_all  main pauses the process, a thread runs worker -> visible,
 *              main resumes and calls visible
 *   flush N    N calls of visible, parlot_flush(), then SIGKILL to itself
 *   noflush N  the same without parlot_flush()
 * Prints "tracing=<parlot_is_tracing()>" first.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parlot/parlot.h"

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE int visible(int x) {
  sink = x;
  return x + 1;
}
NOINLINE int hidden(int x) {
  return visible(x) * 2;
}
NOINLINE void phase(void) {
  visible(1);
  parlot_pause();
  hidden(2);
  parlot_resume();
  visible(3);
  parlot_pause();
  parlot_pause();
  hidden(4);
  parlot_resume();
  hidden(5); /* still paused: pauses nest */
  parlot_resume();
  visible(6);
}
NOINLINE void* worker(void* arg) {
  visible((int)(long)arg);
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "pause";
  printf("tracing=%d\n", parlot_is_tracing());
  fflush(stdout);
  if (strcmp(mode, "pause") == 0) {
    phase();
  } else if (strcmp(mode, "pause_all") == 0) {
    parlot_pause_all();
    pthread_t t;
    pthread_create(&t, NULL, worker, (void*)1L);
    pthread_join(t, NULL);
    hidden(2);
    parlot_resume_all();
    visible(3);
  } else if (strcmp(mode, "flush") == 0 || strcmp(mode, "noflush") == 0) {
    const int n = argc > 2 ? atoi(argv[2]) : 1000;
    for (int i = 0; i < n; ++i) visible(i);
    if (strcmp(mode, "flush") == 0) printf("flush=%d\n", parlot_flush());
    fflush(stdout);
    kill(getpid(), SIGKILL);
  }
  return 0;
}
