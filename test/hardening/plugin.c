/* The instrumented shared library dlopen_main loads (twice: from two paths).
 * plugin_entry(n) { plugin_helper { plugin_leaf } }; its constructor and
 * destructor run inside dlopen and dlclose. libcalls (mode dlopen) calls
 * plugin_pid, which calls getpid in the C library. */
#include <unistd.h>

#include "hardening_common.h"

volatile int plugin_sink;

NOINLINE void plugin_leaf(int x) {
  plugin_sink = x;
}
NOINLINE static int plugin_helper(int x) {
  plugin_leaf(x);
  return x * 2;
}
NOINLINE int plugin_entry(int x) {
  return plugin_helper(x) + 1;
}

__attribute__((constructor)) NOINLINE static void plugin_init(void) {
  plugin_leaf(100);
}
__attribute__((destructor)) NOINLINE static void plugin_fini(void) {
  plugin_leaf(200);
}

NOINLINE int plugin_pid(void) {
  return (int)getpid();
}
