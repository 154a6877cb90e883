// The process-wide clock tick (docs/DESIGN.md, "Time as side records"): a
// counter that the idle flusher's thread advances every tick period
// (PARLOT_CLOCK_TICK_US, default 1 ms). Each thread reads the clock at its
// first event after the tick changed (ThreadTrace: one load and compare per
// event), so events that saw the tick unchanged since the thread's last
// clock read happened within one period of that read. A read that finds more
// than a period since the previous one is a stall (no events for a whole
// tick): the thread then keeps a sample that pins the events before it to
// the previous read, and the reader's straight line between samples places
// every event to within the period plus the swing-door tolerance.
#pragma once

#include <atomic>
#include <cstdint>

namespace parlot::runtime {

/// The tick: advanced (release) every g_clock_tick_ns by the idle flusher's
/// thread; compared by every thread's hooks with the value it saw at its
/// last clock read (ThreadTrace::clock_tick_seen).
extern std::atomic<std::uint32_t> g_clock_tick;

/// The tick period in ns while a thread of this process advances the tick,
/// 0 while none does (no flusher, PARLOT_CLOCK_TICK_US=0, PARLOT_CLOCK_EVENTS=0,
/// a fork child before its flusher starts, the flusher paused): a thread
/// detects stalls only while it is nonzero.
extern std::atomic<std::uint64_t> g_clock_tick_ns;

/// The period the flusher's thread is to advance the tick at (ns; 0: it does
/// not). Set once from the configuration (set_clock_tick_period).
extern std::atomic<std::uint64_t> g_clock_tick_period_ns;

/// The largest delay (ns) of a tick behind its time since the process
/// started ticking (the ticking thread descheduled or busy with a flush
/// round): the time bound is the period plus this (plus the tolerance).
/// Written by the ticking thread only; recorded in the process file.
extern std::atomic<std::uint64_t> g_clock_tick_late_max_ns;

/// Sets the tick period from PARLOT_CLOCK_TICK_US (`tick_us`, 0 = no tick);
/// no tick either when clock samples are off or every event is timed
/// (`clock_events` 0 or 1). Takes effect
/// at the flusher's next wake-up (the caller wakes it).
void set_clock_tick_period(std::uint64_t tick_us, std::uint64_t clock_events);

}  // namespace parlot::runtime
