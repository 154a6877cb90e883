/* End-to-end fixture for call sites: every call whose site the test checks
 * is on a line marked SITE(name), which the test looks up in this file.
 * Usage: call_sites_fixture MODE
 *   lines  main calls step() from two lines, then twice from a loop's line
 *   abba   four tellers (threads 1-4): thread 3 calls transfer(1, 0), the
 *          others transfer(0, 1), from another line; each then blocks in
 *          hold() until main exits the process, leaving its stack open
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;
static pthread_barrier_t all_held;

NOINLINE void step(int x) {
  sink += x;
}

NOINLINE void hold(int from, int to) {
  sink = from * 10 + to;
  pthread_barrier_wait(&all_held);
  for (;;) pause();
}

NOINLINE void transfer(int from, int to) {
  hold(from, to); /* SITE(hold) */
  sink = 0;
}

NOINLINE void* teller(void* arg) {
  if ((long)arg == 2) {
    transfer(1, 0); /* SITE(swapped) */
  } else {
    transfer(0, 1); /* SITE(ordered) */
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "lines") == 0) {
    step(1);                             /* SITE(first) */
    step(2);                             /* SITE(second) */
    for (int i = 0; i < 2; ++i) step(i); /* SITE(loop) */
    puts("lines done");
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "abba") == 0) {
    pthread_barrier_init(&all_held, NULL, 5);
    pthread_t t[4];
    for (long i = 0; i < 4; ++i) pthread_create(&t[i], NULL, teller, (void*)i);
    pthread_barrier_wait(&all_held);
    puts("abba held");
    fflush(stdout);
    exit(0);
  }
  fprintf(stderr, "usage: call_sites_fixture lines|abba\n");
  return 2;
}
