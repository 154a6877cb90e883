// Switching tracing on and off for the whole process while it runs
// (docs/DESIGN.md "Sleds", "On and off"): PARLOT_START=off, parlot_start()
// and parlot_stop(), PARLOT_TOGGLE_SIGNAL. Off: the sleds are NOPs (the
// program runs its plain code) and the hooks of -finstrument-functions
// code record nothing (as parlot_pause_all). Each switch is a side record
// (format::AuxKind::kTracingSwitched) in the switching thread's trace.
#pragma once

namespace parlot::runtime {

/// Switches tracing on (`on`) or off, patching the sleds now. Returns true
/// when the state changed, false when it was so already. Cold, not
/// async-signal-safe (a lock, the loader's list, mprotect).
bool switch_tracing(bool on);

/// The toggle signal's action (PARLOT_TOGGLE_SIGNAL): switches the hooks
/// at once and asks the idle flusher's thread to patch the sleds (within a
/// moment: it is woken). Async-signal-safe.
void toggle_tracing_from_signal();

/// True while tracing is switched off (PARLOT_START=off, parlot_stop, the
/// toggle signal): the idle flusher then makes no clock tick.
/// Async-signal-safe.
bool tracing_switched_off();

/// The idle flusher's part of toggle_tracing_from_signal(): patches the
/// sleds to the state asked last, if one was asked. Called each time the
/// flusher wakes. Cold.
void apply_requested_tracing_switch();

}  // namespace parlot::runtime
