/* The lookup of the next definition of each wrapped MPI function. */
#define _GNU_SOURCE
#include "mpi_wrapper_support.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((no_instrument_function)) void* parlot_mpi_next(void** slot, const char* name) {
  void* next = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (next != NULL) return next;
  next = dlsym(RTLD_NEXT, name);
  if (next == NULL) {
    static const char prefix[] = "parlot: the MPI library has no ";
    (void)!write(STDERR_FILENO, prefix, sizeof prefix - 1);
    (void)!write(STDERR_FILENO, name, strlen(name));
    (void)!write(STDERR_FILENO, "\n", 1);
    abort();
  }
  __atomic_store_n(slot, next, __ATOMIC_RELEASE);
  return next;
}

/* runtime/call_attributes.cpp; NULL without the runtime. */
typedef void (*parlot_time_next_event_t)(void);
static parlot_time_next_event_t parlot_time_next_event;

__attribute__((constructor, no_instrument_function)) static void parlot_mpi_time_init(void) {
  parlot_time_next_event =
      (parlot_time_next_event_t)dlsym(RTLD_DEFAULT, "parlot_rt_time_next_event");
}

__attribute__((no_instrument_function)) void parlot_mpi_time_next_event(void) {
  if (parlot_time_next_event != NULL) parlot_time_next_event();
}

/* runtime/api/user_api.cpp; NULL without the runtime. Looked up at the
   call: MPI_Abort is called once. */
typedef void (*parlot_before_abort_t)(void);

__attribute__((no_instrument_function)) void parlot_mpi_before_abort(void) {
  const parlot_before_abort_t f =
      (parlot_before_abort_t)dlsym(RTLD_DEFAULT, "parlot_rt_before_abort");
  if (f != NULL) f();
}
