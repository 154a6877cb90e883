/* Fixture of the sled tests (sleds_test.cpp), built both with
 * -fpatchable-function-entry=5 and with -finstrument-functions.
 * Usage: sled_fixture MODE [ARG]
 *   basic    main -> recurse(3); two threads run worker -> level1 -> level2 -> level3
 *   longjmp  main -> jump_outer, which setjmps, -> jump_mid -> jump_inner,
 *            which longjmps back; then jump_outer -> after_jump
 *   dlopen LIB  main -> with_plugin, which dlopens LIB and calls its
 *            plugin_entry (-> plugin_inner)
 *   toggle   (PARLOT_START=off) phase_a; parlot_start; phase_b; parlot_stop;
 *            phase_c; parlot_start; phase_d: each phase_x -> level1 -> ...
 *   threads N  four threads call level1 in a loop while main switches
 *            tracing on and off N times, then on until they made 40000
 *            more calls; prints the calls made
 *   text     prints the first 5 bytes of level1, level2 and main in hex
 *   signal   (PARLOT_START=off) phase_a; raises SIGRTMIN+7 (the default
 *            toggle signal) and waits until level1's sled is a call;
 *            phase_b; raises it again and waits until it is NOPs; phase_c
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parlot/parlot.h"

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
  return n == 0 ? 0 : recurse(n - 1) + 1;
}
NOINLINE void* worker(void* arg) {
  sink = level1((int)(long)arg);
  return NULL;
}

static jmp_buf jump_target;
NOINLINE void jump_inner(void) {
  longjmp(jump_target, 1);
}
NOINLINE void jump_mid(void) {
  jump_inner();
  sink = 1;
}
NOINLINE void after_jump(void) {
  sink = 2;
}
NOINLINE void jump_outer(void) {
  if (setjmp(jump_target) == 0) {
    jump_mid();
  }
  after_jump();
}

NOINLINE int with_plugin(const char* path) {
  void* lib = dlopen(path, RTLD_NOW);
  if (lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  int (*entry)(int) = (int (*)(int))dlsym(lib, "plugin_entry");
  if (entry == NULL) return 1;
  sink = entry(3);
  return 0;
}

NOINLINE void phase_a(void) {
  sink = level1(1);
}
NOINLINE void phase_b(void) {
  sink = level1(2);
}
NOINLINE void phase_c(void) {
  sink = level1(3);
}
NOINLINE void phase_d(void) {
  sink = level1(4);
}

static atomic_int stop_threads;
static atomic_long calls;
NOINLINE void* looping_worker(void* arg) {
  (void)arg;
  while (!atomic_load(&stop_threads)) {
    sink = level1((int)atomic_fetch_add(&calls, 1));
  }
  return NULL;
}

/* Waits (at most 10 s) until level1's first byte is `want`. Neither
 * instrumented nor with a sled: whether the patching thread is done before
 * it is called is a race. */
__attribute__((no_instrument_function, patchable_function_entry(0, 0))) static int
wait_for_first_byte(unsigned char want) {
  for (int i = 0; i < 10000; ++i) {
    if (*(volatile const unsigned char*)(const void*)level1 == want) return 1;
    const struct timespec ms = {0, 1000 * 1000};
    nanosleep(&ms, NULL);
  }
  return 0;
}

static void print_bytes(const char* name, const void* f) {
  const unsigned char* b = (const unsigned char*)f;
  printf("%s %02x %02x %02x %02x %02x\n", name, b[0], b[1], b[2], b[3], b[4]);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "basic";
  if (strcmp(mode, "basic") == 0) {
    sink = recurse(3);
    for (long i = 0; i < 2; ++i) {
      pthread_t t;
      pthread_create(&t, NULL, worker, (void*)i);
      pthread_join(t, NULL);
    }
  } else if (strcmp(mode, "longjmp") == 0) {
    jump_outer();
  } else if (strcmp(mode, "dlopen") == 0) {
    return argc > 2 ? with_plugin(argv[2]) : 2;
  } else if (strcmp(mode, "toggle") == 0) {
    phase_a();
    parlot_start();
    phase_b();
    parlot_stop();
    phase_c();
    parlot_start();
    phase_d();
  } else if (strcmp(mode, "threads") == 0) {
    const int switches = argc > 2 ? atoi(argv[2]) : 100;
    pthread_t t[4];
    for (int i = 0; i < 4; ++i) pthread_create(&t[i], NULL, looping_worker, NULL);
    for (int i = 0; i < switches; ++i) {
      if (i % 2 == 0) {
        parlot_stop();
      } else {
        parlot_start();
      }
    }
    parlot_start();
    /* Calls made with tracing on, by every thread running. */
    const long on_at = atomic_load(&calls);
    while (atomic_load(&calls) < on_at + 40000) sched_yield();
    atomic_store(&stop_threads, 1);
    for (int i = 0; i < 4; ++i) pthread_join(t[i], NULL);
    printf("%ld\n", (long)atomic_load(&calls));
  } else if (strcmp(mode, "signal") == 0) {
    phase_a();
    raise(SIGRTMIN + 7);
    if (!wait_for_first_byte(0xe8)) return 3;
    phase_b();
    raise(SIGRTMIN + 7);
    if (!wait_for_first_byte(0x90)) return 4;
    phase_c();
  } else if (strcmp(mode, "text") == 0) {
    print_bytes("level1", (const void*)level1);
    print_bytes("level2", (const void*)level2);
    print_bytes("main", (const void*)main);
  } else {
    return 2;
  }
  return 0;
}
