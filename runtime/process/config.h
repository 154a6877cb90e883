// Runtime settings, read once from the environment (README, "Environment").
#pragma once

#include <cstddef>

namespace parlot::runtime {

struct Config {
  /// PARLOT_DIR: trace directory (default "./parlot.data").
  char dir[1024] = "parlot.data";
  /// PARLOT_COMPRESS: 0 writes the uncompressed word stream (ParLoT-NC).
  bool compress = true;
  /// PARLOT_CODEC: the compressed codec, 1 (LZ + zero elimination) or 2
  /// (LZ with range-coded, ranked literals; default). See docs/FORMAT.md.
  unsigned codec = 2;
  /// PARLOT_BUFFER_KB: per-thread output buffer in KiB (default 256, 4..16384).
  /// A thread's data reaches the file each time this much compressed output
  /// has accumulated, and at thread and process end.
  std::size_t buffer_bytes = 256 * 1024;
  /// PARLOT_FLUSH_MS: a thread's buffered data reaches its file at least
  /// this often while the thread makes events (checked every 16,384 events),
  /// bounding what a SIGKILL can lose; 0 = only when the buffer fills.
  std::size_t flush_ms = 1000;
  /// PARLOT_CLOCK_EVENTS: the clock is read every this many events of a
  /// thread (and at every flush) for a clock sample (event index,
  /// CLOCK_MONOTONIC ns; docs/FORMAT.md, side records); 1 = every event
  /// timed; 0 = no samples.
  std::size_t clock_events = 1024;
  /// PARLOT_CLOCK_TOLERANCE_NS: a sample read every clock_events events is
  /// kept only when the straight line between the kept samples around it
  /// would miss some read sample by more than this (swing-door filter); 0
  /// keeps every sample. Ignored when clock_events is 1 (all kept).
  std::size_t clock_tolerance_ns = 50000;
  /// PARLOT_CLOCK_TICK_US: period of the process-wide clock tick (us; 0 =
  /// none, else at least 50): a thread reads the clock at its first event
  /// after each tick, which bounds every event's time error by about this
  /// period plus clock_tolerance_ns (docs/DESIGN.md). Advanced by the idle
  /// flusher's thread: none without it (PARLOT_FLUSH_MS=0).
  std::size_t clock_tick_us = 1000;
  /// PARLOT_MAX_FUNCTIONS: distinct functions per process (default 1 Mi).
  std::size_t max_functions = 1u << 20;
  /// PARLOT_STACK_FRAMES: shadow-stack capacity per thread in frames
  /// (default 1 Mi); entries beyond it are not recorded and counted as
  /// dropped.
  std::size_t stack_frames = 1u << 20;
  /// PARLOT_MAX_DEPTH: record filter; calls deeper than this (depth 1 = a
  /// thread's outermost frame) are tracked on the shadow stack but not
  /// recorded, and counted as dropped (default: no limit). Before
  /// PARLOT_STACK_FRAMES existed this variable sized the shadow stack, with
  /// the same visible result (deeper calls dropped and counted).
  std::size_t record_depth = ~std::size_t{0};
  /// PARLOT_INCLUDE / PARLOT_EXCLUDE: ';'-separated function patterns
  /// (runtime/function_filter.h). Empty: no filter.
  char include[2048] = "";
  char exclude[2048] = "";
  /// PARLOT_DISCARD=1 (benchmarking only): events are recorded and
  /// compressed as usual, but no data block is written; thread files hold
  /// only their header and trailer (event and byte counts). The trace
  /// cannot be decoded. Measures Parlot's cost without file I/O.
  bool discard = false;
  /// PARLOT_MODE=flight: the flight recorder. Each thread keeps its latest
  /// compressed blocks in a ring of this many bytes (PARLOT_FLIGHT_KB,
  /// default 1024 KiB) instead of writing them; dumps write the windows
  /// (docs/DESIGN.md, "Flight recorder"). 0 = the normal mode.
  std::size_t flight_bytes = 0;
  /// PARLOT_FLIGHT_SIGNAL: the signal that asks for a flight dump (default
  /// SIGRTMIN+6; 0 = none). Only in flight mode.
  int flight_signal = 0;
  /// PARLOT_TOGGLE_SIGNAL: the signal that switches tracing on and off
  /// (default SIGRTMIN+7; 0 = none).
  int toggle_signal = 0;
  /// PARLOT_CALL_SITES=0 records no call sites (side records of kind 6,
  /// docs/FORMAT.md); on by default.
  bool call_sites = true;
  /// PARLOT_LAYOUT: the node layout (io/node_file.h) or a directory per
  /// process (process/node_identity.h says which by default). The flight
  /// recorder always takes the process layout.
  bool node_layout = false;
  /// The node's name for the node layout (process/node_identity.h).
  char node[128] = "";
  /// PARLOT_QUIET=1 silences the runtime's notices (errors still print).
  bool quiet = false;
};

/// Reads the PARLOT_* variables; malformed values keep the default and print
/// one notice. Call from initialisation only (uses getenv).
Config read_config();

}  // namespace parlot::runtime
