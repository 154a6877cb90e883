// CLOCK_MONOTONIC in nanoseconds, for the runtime's bounded waits (finish,
// idle-flusher rounds, descriptor moves). Async-signal-safe; not for the
// hot path.
#pragma once

#include <time.h>

#include <cstdint>

namespace parlot::runtime {

/// CLOCK_MONOTONIC now, in ns.
inline std::uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace parlot::runtime
