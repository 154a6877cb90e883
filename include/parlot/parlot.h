/* Parlot's user API: control what the tracer records from inside the
 * program. C and C++; Fortran programs `use parlot` (api/parlot.f90).
 *
 * Every function is safe to call whether or not the program is traced:
 * link with Parlot::api (-lparlot-api, a stub library of no-ops); when the
 * runtime libparlotrt.so is loaded (LD_PRELOAD by `parlot record`, or linked
 * with Parlot::runtime) its definitions take their place. The calls are
 * async-signal-safe, lock-free and never allocate.
 */
#ifndef PARLOT_PARLOT_H
#define PARLOT_PARLOT_H

#ifdef __cplusplus
extern "C" {
#endif

/** Stops recording the calling thread's function entries and exits until
 *  parlot_resume() (nests: each pause needs its own resume). Frames opened
 *  before the pause and left while paused are closed by the stack-pointer
 *  correction at the thread's next recorded call. */
void parlot_pause(void);

/** Undoes one parlot_pause() of the calling thread. */
void parlot_resume(void);

/** Stops recording for every thread of the process, present and future,
 *  until parlot_resume_all(). */
void parlot_pause_all(void);

/** Undoes one parlot_pause_all(). */
void parlot_resume_all(void);

/** Switches tracing on for the whole process (after PARLOT_START=off or
 *  parlot_stop()): the sleds of code built with
 *  -fpatchable-function-entry are patched to record, and the hooks of
 *  -finstrument-functions code record again. Calls that began before are
 *  not recorded; frames the stack-pointer rules find open stay open.
 *  Returns 0 (also when tracing was on already); -1 in the stub. Not
 *  async-signal-safe (it takes a lock and changes the program's code):
 *  from a signal handler, use PARLOT_TOGGLE_SIGNAL. */
int parlot_start(void);
/** Switches tracing off for the whole process: sleds back to NOPs (the
 *  program runs its untraced code), hooks paused (as parlot_pause_all).
 *  Functions entered while tracing was on still record their exits.
 *  Returns 0 (also when off already); -1 in the stub. Not
 *  async-signal-safe. */
int parlot_stop(void);
/** Writes the calling thread's buffered events (the complete blocks) and the
 *  process's new function IDs and loaded objects to the trace files now.
 *  Returns 0, or an errno when writing failed or the thread has no trace
 *  (-1 in the stub: not traced). */
int parlot_flush(void);

/** Flight recorder (PARLOT_MODE=flight): writes the window of every
 *  thread (its most recent events, kept in memory) as a new trace
 *  directory, $PARLOT_DIR/flight-<n>/, and returns; the program and the
 *  recording go on. Returns 0, or an errno: ENOENT when not recording in
 *  flight mode, EBUSY when a dump is in progress, ETIMEDOUT when the other
 *  threads could not all be held in time (with PARLOT_FLUSH_MS=0 only the
 *  calling thread's window is written); -1 in the stub. */
int parlot_flight_dump(void);

/** Marks a point of the calling thread's trace with `label` (a C string,
 *  copied; at most 1024 bytes are kept). The mark sits before the thread's
 *  next event and every reader view shows it there. Not recorded while the
 *  thread or the process is paused. */
void parlot_mark(const char* label);

/** 1 when the Parlot runtime is loaded in this process, 0 otherwise (the
 *  stub). */
int parlot_is_tracing(void);

#ifdef __cplusplus
}  // extern "C"

namespace parlot {

/// Pauses the calling thread's recording for the scope's lifetime (RAII).
class ScopedPause {
 public:
  ScopedPause() { parlot_pause(); }
  ~ScopedPause() { parlot_resume(); }
  ScopedPause(const ScopedPause&) = delete;
  ScopedPause& operator=(const ScopedPause&) = delete;
};

}  // namespace parlot
#endif

#endif /* PARLOT_PARLOT_H */
