/* Library calls as the program names them (PARLOT_LIBCALLS=1). Modes:
 *   names          memcpy x30, memmove x15, memcmp x4, strchr x3, sin x2,
 *                  strtod, gettimeofday, clock_gettime, time x1 each: every
 *                  call named by the symbol the program called (not bcmp,
 *                  index, sinf32x, strtof32x; memmove is not memcpy; the
 *                  vDSO's functions are named)
 *   left           a setjmp (returns twice) and a call through a pointer to
 *                  puts (GLOB_DAT): `info` says they were left unpatched
 *   reload P MS    3 times: dlopen the plugin P, sleep MS ms, call its
 *                  plugin_pid 10 times, dlclose it: 30 getpid calls
 *   deepbind P D   dlopen P lazily (with RTLD_DEEPBIND when D is 1), sleep
 *                  100 ms (the idle flusher's rounds) and print what its
 *                  deep_value call returns (its own copy under DEEPBIND,
 *                  else the application's), then call deep_value itself
 *   audit          getpid x1000 (for an audit module counting PLT calls)
 * Calls get variable arguments so that no compiler expands them inline. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "hardening_common.h"

const char* deep_value(void); /* libcalls_deep_app: the application's copy */
static volatile int isink;
static volatile double dsink;
static jmp_buf jump;

static NOINLINE void names(int argc, char** argv) {
  char a[64] = "hello world, hello", b[64] = {0};
  for (int i = 0; i < 30; ++i) memcpy(b, a, (size_t)(10 + (i & 3) + argc));
  for (int i = 0; i < 15; ++i) memmove(b + 1, b, (size_t)(8 + (i & 3) + argc));
  for (int i = 0; i < 4; ++i) isink = memcmp(a, b, (size_t)(4 + i + argc));
  for (int i = 0; i < 3; ++i) isink = strchr(a, 'o' + i * argc) != NULL;
  for (int i = 0; i < 2; ++i) dsink = sin(argc + i);
  dsink = strtod(argv[0] + strlen(argv[0]) - 1, NULL);
  struct timeval tv;
  gettimeofday(&tv, NULL);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  isink = (int)time(NULL);
}

static NOINLINE void left(void) {
  int (*volatile say)(const char*) = puts;
  if (setjmp(jump) == 0) say("set");
}

static NOINLINE void reload(const char* plugin, int ms) {
  for (int load = 0; load < 3; ++load) {
    void* h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    HCHECK(h != NULL);
    int (*pid)(void) = (int (*)(void))dlsym(h, "plugin_pid");
    HCHECK(pid != NULL);
    if (ms > 0) usleep((useconds_t)ms * 1000);
    for (int i = 0; i < 10; ++i) isink = pid();
    HCHECK(dlclose(h) == 0);
  }
  printf("reloaded\n");
}

static NOINLINE void deepbind(const char* plugin, int deep) {
  void* h = dlopen(plugin, RTLD_LAZY | RTLD_LOCAL | (deep ? RTLD_DEEPBIND : 0));
  HCHECK(h != NULL);
  const char* (*value)(void) = (const char* (*)(void))dlsym(h, "plugin_deep_value");
  HCHECK(value != NULL);
  usleep(100000);
  printf("%s\n", value());
  isink = deep_value()[0];
}

int main(int argc, char** argv) {
  HCHECK(argc >= 2);
  const char* mode = argv[1];
  if (strcmp(mode, "names") == 0) {
    names(argc, argv);
    printf("named\n");
  } else if (strcmp(mode, "left") == 0) {
    left();
  } else if (strcmp(mode, "reload") == 0 && argc == 4) {
    reload(argv[2], int_arg(argv[3], 0));
  } else if (strcmp(mode, "deepbind") == 0 && argc == 4) {
    deepbind(argv[2], int_arg(argv[3], 0));
  } else if (strcmp(mode, "audit") == 0) {
    for (int i = 0; i < 1000; ++i) isink = (int)getpid();
    printf("audited\n");
  } else {
    return 2;
  }
  return 0;
}
