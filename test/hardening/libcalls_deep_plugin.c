/* Instrumented plugin linked with libcalls_deep_dep (its own deep_value).
 * Opened with RTLD_DEEPBIND | RTLD_LAZY its PLT entry for deep_value binds
 * to its own copy; plain RTLD_LAZY binds to the application's. */
#include <unistd.h>

#include "hardening_common.h"

const char* deep_value(void);

NOINLINE const char* plugin_deep_value(void) {
  return deep_value();
}

NOINLINE int plugin_getpid(void) {
  return (int)getpid();
}
