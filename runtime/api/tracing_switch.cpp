// Switching tracing on and off while the program runs (include/parlot/
// parlot.h: parlot_start, parlot_stop; PARLOT_START; docs/DESIGN.md
// "Sleds"). Off, the sleds are NOPs again (the program runs its plain
// code) and the hooks of -finstrument-functions code record nothing (as
// parlot_pause_all); on, the sleds are patched and the hooks record.
#include <pthread.h>

#include <cstdlib>
#include <cstring>

#include "parlot/parlot.h"
#include "sleds/sled_patcher.h"

#define PARLOT_API extern "C" [[gnu::visibility("default"), gnu::no_instrument_function]]

namespace {

pthread_mutex_t g_switch_lock = PTHREAD_MUTEX_INITIALIZER;
bool g_off = false;  // stopped (PARLOT_START=off or parlot_stop); guarded by g_switch_lock

// Before main and the program's own constructors: PARLOT_START=off starts
// with the sleds unpatched and the hooks paused; otherwise the sleds of the
// objects loaded now are patched (those loaded later as they load).
[[gnu::constructor(102)]] void start_tracing() {
  const char* start = std::getenv("PARLOT_START");
  if (start != nullptr && std::strcmp(start, "off") == 0) {
    g_off = true;
    parlot_pause_all();
    return;
  }
  parlot::runtime::set_sleds(true);
}

}  // namespace

PARLOT_API int parlot_start(void) {
  pthread_mutex_lock(&g_switch_lock);
  if (g_off) {
    g_off = false;
    parlot::runtime::set_sleds(true);
    parlot_resume_all();
  }
  pthread_mutex_unlock(&g_switch_lock);
  return 0;
}

PARLOT_API int parlot_stop(void) {
  pthread_mutex_lock(&g_switch_lock);
  if (!g_off) {
    g_off = true;
    parlot_pause_all();
    parlot::runtime::set_sleds(false);
  }
  pthread_mutex_unlock(&g_switch_lock);
  return 0;
}
