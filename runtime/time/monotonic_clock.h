// CLOCK_MONOTONIC and CLOCK_REALTIME in nanoseconds, for the runtime's
// bounded waits (finish, idle-flusher rounds, descriptor moves) and the
// time stamps of trace files. Async-signal-safe (vDSO: no system call);
// the hot path reads clocks only through its clock samples.
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

/// CLOCK_REALTIME now, in ns since the epoch.
inline std::uint64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace parlot::runtime
