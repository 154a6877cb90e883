// What a thread trace (thread_trace.cpp) tells its process when it writes
// a block: the events written, a write that failed, the function IDs and
// objects to append to the process's files. Defined by the process
// (process/failure_reports.cpp, process/process_files.cpp); declared here
// so that the hot path includes nothing above it.
#pragma once

#include <cstdint>

namespace parlot::runtime {

class ThreadTrace;

/// Called by a thread trace whose write failed (its file was cut back
/// to its last complete block): prints one line naming the file, the error
/// and the events recorded, once per thread (at most 16 threads). Tracing
/// goes on for the other threads, unless is_process_wide_write_error():
/// then it is report_write_failure(), one line for the process.
void report_thread_failure(ThreadTrace& t);

/// Adds `events` to the process's count of events in blocks written (for
/// report_write_failure's line). Lock-free; called after each block.
void note_events_written(std::uint64_t events);

/// Appends the function IDs and loaded objects recorded since the last call
/// to the `functions` and `loadmap` files, so a trace stays symbolizable if
/// the process dies. Called after each block a thread writes; if another
/// thread is already doing it, returns at once. Async-signal-safe.
void flush_process_metadata();

/// Flight recorder: the directory a dump in progress writes the thread
/// windows into (absolute), or nullptr when no dump is in progress.
/// Defined in process/flight_dump.cpp. Async-signal-safe.
const char* flight_dump_dir();

}  // namespace parlot::runtime
