// parlot_start() and parlot_stop() (include/parlot/parlot.h): the process's
// tracing switched on and off (process/tracing_switch.h).
#include "process/tracing_switch.h"
#include "parlot/parlot.h"

#define PARLOT_API extern "C" [[gnu::visibility("default"), gnu::no_instrument_function]]

PARLOT_API int parlot_start(void) {
  parlot::runtime::switch_tracing(true);
  return 0;
}

PARLOT_API int parlot_stop(void) {
  parlot::runtime::switch_tracing(false);
  return 0;
}
