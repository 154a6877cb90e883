// The runtime's definitions of the user API (include/parlot/parlot.h). They
// take the place of libparlot-api.so's no-op stubs when the runtime is
// loaded first (LD_PRELOAD, or linked before the stub library).
#include "user_api.h"

#include <cerrno>

#include "parlot/parlot.h"
#include "process_trace.h"

namespace parlot::runtime {

constinit thread_local int tls_pause_depth __attribute__((tls_model("initial-exec"))) = 0;
std::atomic<int> g_pause_all_depth{0};

}  // namespace parlot::runtime

using parlot::runtime::g_pause_all_depth;
using parlot::runtime::tls_pause_depth;

#define PARLOT_API extern "C" [[gnu::visibility("default"), gnu::no_instrument_function]]

PARLOT_API void parlot_pause(void) {
  ++tls_pause_depth;
}

PARLOT_API void parlot_resume(void) {
  if (tls_pause_depth > 0) --tls_pause_depth;
}

PARLOT_API void parlot_pause_all(void) {
  g_pause_all_depth.fetch_add(1, std::memory_order_relaxed);
}

PARLOT_API void parlot_resume_all(void) {
  int d = g_pause_all_depth.load(std::memory_order_relaxed);
  while (d > 0 && !g_pause_all_depth.compare_exchange_weak(d, d - 1, std::memory_order_relaxed)) {
  }
}

PARLOT_API int parlot_flush(void) {
  using namespace parlot::runtime;
  ThreadTrace* t = tls_thread_trace;
  if (t == nullptr || t->finished()) return ENOENT;
  if (g_tracing_stopped.load()) return ECANCELED;
  // Keep the thread's own hooks (a signal handler) out while writing.
  const IgnoreHooksOnThisThread ignore;
  int err = t->flush_now();
  if (err == 0) flush_process_metadata();
  return err;
}

// Marks need out-of-band side records in the thread stream, which the
// trace format does not have yet: nothing is recorded.
PARLOT_API void parlot_mark(const char* label) {
  (void)label;
}

PARLOT_API int parlot_is_tracing(void) {
  return 1;
}
