// The flight recorder's dumps (PARLOT_MODE=flight; docs/DESIGN.md,
// "Flight recorder"): each writes the window of every thread as a normal
// trace directory, $PARLOT_DIR/flight-<n>/<process directory>/.
// Defined in flight_dump.cpp (the hub); the small header for the signal
// handlers, the finish and the user API.
#pragma once

namespace parlot::runtime {

/// True when the process records in flight mode (its settings read).
bool flight_mode();

/// Starts a dump: makes `$PARLOT_DIR/flight-<n>/<name>` (n: this
/// process's next dump number, from 1; name: what its process directory
/// is called in a normal trace, `[rank-R.]pid-P`) and makes it
/// flight_dump_dir() (hot_path/trace_writes.h) until end_flight_dump().
/// Returns 0 or an errno (EBUSY when a dump is in progress).
/// Async-signal-safe.
int begin_flight_dump();

/// Ends the dump begun: copies the process's metadata files (`process`,
/// `loadmap`, `functions`, and `crash` and `libcalls` when there are) from
/// its live directory into the dump's, then no dump is in progress.
/// Async-signal-safe.
void end_flight_dump();

/// At the process's end, after its last dump: removes its live directory
/// (the hidden one its metadata was kept in, `.pid-P.K.tmp`) and what it
/// holds. Async-signal-safe.
void remove_live_flight_dir();

/// A dump while the program runs (parlot_flight_dump(), the flight
/// signal): every thread's window, its metadata appended first. The other
/// threads are held out of their hooks by the idle flusher (at most about
/// `timeout_ns` in all); without a flusher (PARLOT_FLUSH_MS=0) only the
/// calling thread's window is written. The calling thread must be outside
/// its hooks. Returns 0 or an errno (ENOENT: not in flight mode; EBUSY: a
/// dump in progress; ETIMEDOUT: the flusher did not finish in time, the
/// dump may lack threads). Async-signal-safe.
int flight_dump_now(unsigned long long timeout_ns);

}  // namespace parlot::runtime
