/* libparlot-api.so: the user API's no-op stub (include/parlot/parlot.h).
 * A program links it to call the API whether it is traced or not; when
 * libparlotrt.so is loaded first (LD_PRELOAD, or linked before it), the
 * dynamic linker binds the calls to the runtime's definitions instead. */
#include "parlot/parlot.h"

#define PARLOT_STUB __attribute__((visibility("default"), no_instrument_function))

PARLOT_STUB void parlot_pause(void) {}
PARLOT_STUB void parlot_resume(void) {}
PARLOT_STUB void parlot_pause_all(void) {}
PARLOT_STUB void parlot_resume_all(void) {}
PARLOT_STUB int parlot_start(void) {
  return -1;
}
PARLOT_STUB int parlot_stop(void) {
  return -1;
}
PARLOT_STUB int parlot_flush(void) {
  return -1;
}
PARLOT_STUB int parlot_flight_dump(void) {
  return -1;
}
PARLOT_STUB void parlot_mark(const char* label) {
  (void)label;
}
PARLOT_STUB int parlot_is_tracing(void) {
  return 0;
}
