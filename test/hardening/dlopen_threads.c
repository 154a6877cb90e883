/* Threads loading and unloading an instrumented plugin while calling into
 * it (run with PARLOT_LIBCALLS=1: the runtime patches each loaded copy of
 * the plugin on its idle flusher's thread while the others load, call and
 * unload theirs). Usage: dlopen_threads CYCLES CALLS PLUGIN...
 *   thread i of 4 (its plugin: PLUGIN number i modulo their number):
 *   CYCLES x cycle { dlopen, CALLS x (plugin_entry { plugin_helper {
 *   plugin_leaf } }, plugin_pid { getpid }), dlclose }
 * Prints "cycles C calls N" when every thread got the right answers. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include "hardening_common.h"

enum { kThreads = 4 };
static char** plugins;
static int plugin_count;
static int cycles, calls;

NOINLINE static long cycle(const char* plugin, int x) {
  void* handle = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    exit(70);
  }
  int (*entry)(int) = (int (*)(int))dlsym(handle, "plugin_entry");
  int (*pid)(void) = (int (*)(void))dlsym(handle, "plugin_pid");
  HCHECK(entry != NULL && pid != NULL);
  long done = 0;
  for (int i = 0; i < calls; ++i) {
    HCHECK(entry(x + i) == 2 * (x + i) + 1);
    HCHECK(pid() == (int)getpid());
    ++done;
  }
  HCHECK(dlclose(handle) == 0);
  return done;
}

NOINLINE static void* loader(void* arg) {
  const int index = (int)(long)arg;
  long done = 0;
  for (int c = 0; c < cycles; ++c) done += cycle(plugins[index % plugin_count], index * 1000 + c);
  return (void*)done;
}

int main(int argc, char** argv) {
  HCHECK(argc >= 4);
  cycles = int_arg(argv[1], 0);
  calls = int_arg(argv[2], 0);
  plugins = argv + 3;
  plugin_count = argc - 3;
  pthread_t threads[kThreads];
  for (long i = 0; i < kThreads; ++i)
    HCHECK(pthread_create(&threads[i], NULL, loader, (void*)i) == 0);
  long total = 0;
  for (int i = 0; i < kThreads; ++i) {
    void* done = NULL;
    HCHECK(pthread_join(threads[i], &done) == 0);
    total += (long)done;
  }
  printf("cycles %d calls %ld\n", cycles * kThreads, total);
  return 0;
}
