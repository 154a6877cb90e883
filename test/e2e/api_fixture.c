/* End-to-end fixture of the user API (include/parlot/parlot.h), linked
 * with libparlot-api.so so it runs traced or not.
 * Usage: api_fixture MODE
 *   pause      main -> phase: visible, then paused: hidden -> visible,
 *              resumed: visible; then a nested pause around two calls
 *   pause_all  main pauses the process, a thread runs worker -> visible,
 *              main resumes and calls visible
 *   flush N    N calls of visible, parlot_flush(), then SIGKILL to itself
 *   noflush N  the same without parlot_flush()
 *   sleep      main -> visible, then 10 s asleep outside any hook, then
 *              visible (a target for signals)
 *   marks      main marks "in main", calls visible, marks "paused" while
 *              paused, calls marked (marks "inside", calls visible) and
 *              leaf_with_mark (marks "leaf"), marks an odd label (ESC,
 *              quotes, backslash); then thread #1 marks "thread 1" before
 *              any event and calls visible, and thread #2 only marks
 *              "thread 2" (no event at all); threads start in an
 *              uninstrumented function
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
NOINLINE void marked(void) {
  parlot_mark("inside");
  visible(2);
}
NOINLINE void leaf_with_mark(void) {
  parlot_mark("leaf");
}
__attribute__((no_instrument_function)) static void* marking_thread(void* arg) {
  const long n = (long)arg;
  parlot_mark(n == 1 ? "thread 1" : "thread 2");
  if (n == 1) visible(10);
  return NULL;
}
__attribute__((no_instrument_function)) static void run_marking_thread(long n) {
  pthread_t t;
  pthread_create(&t, NULL, marking_thread, (void*)n);
  pthread_join(t, NULL);
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
  } else if (strcmp(mode, "marks") == 0) {
    parlot_mark("in main");
    visible(1);
    parlot_pause();
    parlot_mark("paused");
    parlot_resume();
    marked();
    leaf_with_mark();
    parlot_mark("odd \033[31m \"q\" \\ end");
    run_marking_thread(1);
    run_marking_thread(2);
  } else if (strcmp(mode, "sleep") == 0) {
    visible(1);
    sleep(10);
    visible(2);
  } else if (strcmp(mode, "flush") == 0 || strcmp(mode, "noflush") == 0) {
    const int n = argc > 2 ? atoi(argv[2]) : 1000;
    for (int i = 0; i < n; ++i) visible(i);
    if (strcmp(mode, "flush") == 0) printf("flush=%d\n", parlot_flush());
    fflush(stdout);
    kill(getpid(), SIGKILL);
  }
  return 0;
}
