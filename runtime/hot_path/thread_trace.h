// One thread's trace: its shadow stack, its incremental encoder and its
// trace file (docs/FORMAT.md, "Thread trace file"). Lives in memory mapped
// for it at the thread's first event and unmapped when it ends; used only by
// its own thread, except at process end (see process_trace.h).
#pragma once

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "hot_path/flight_ring.h"
#include "hot_path/function_ids.h"
#include "hot_path/shadow_stack.h"
#include "io/trace_file.h"
#include "parlot/codec.h"
#include "parlot/format.h"
#include "time/clock_sample_filter.h"
#include "time/clock_tick.h"

namespace parlot::runtime {

class ThreadTrace {
 public:
  /// Maps and initialises a trace for the calling thread, creates its file
  /// `thread-<index>-<tid>.trace` in the process directory `dir` (absolute
  /// path) and writes the file header. The file is opened for each write
  /// only (trace_file.h): the thread holds no descriptor.
  /// `codec`: how its event stream is encoded (only that encoder is built).
  /// Returns nullptr (and sets `error` to an errno) when memory or the file
  /// cannot be had. `discard`: write no data blocks (PARLOT_DISCARD, for
  /// benchmarks). `clock_events`: a clock sample every this many events
  /// (0 = none; PARLOT_CLOCK_EVENTS). `flight_bytes`: nonzero for the
  /// flight recorder (PARLOT_MODE=flight, codec 2 only): the thread keeps
  /// its blocks in a ring instead of a file (no file is created;
  /// write_flight_window() writes one on a dump) of `flight_bytes` minus
  /// its block buffer, so ring and block are exactly `flight_bytes` (it
  /// must exceed the block), and
  /// starts a fresh codec state at a restart point each time about 3/4 of
  /// `buffer_bytes` is encoded. Cold path: mmap, open, write.
  static ThreadTrace* create(const char* dir, std::uint64_t thread_index, format::Codec codec,
                             std::size_t buffer_bytes, std::size_t max_depth,
                             std::uint64_t flush_interval_ns, bool discard,
                             std::uint32_t clock_events, std::size_t flight_bytes, int& error);

  /// Unmaps a trace created by create(). Does not write anything.
  static void destroy(ThreadTrace* t);

  /// Records an entry into `fn` called from `call_site`, the instrumented
  /// function's stack pointer being `sp`, with function ID `id`.
  [[gnu::always_inline]] inline void on_enter(std::uintptr_t fn, std::uintptr_t call_site,
                                              std::uintptr_t sp, std::uint32_t id) {
    Emitter e{this};
    stack_.enter(fn, call_site, sp, id, e);
  }

  /// Records an entry into library function `fn` (PARLOT_LIBCALLS) called
  /// from `call_site`, its return address being at stack slot `slot`.
  /// Returns true when the frame was pushed (its return must then reach
  /// on_libcall_exit), false when the shadow stack is full.
  [[gnu::always_inline]] inline bool on_libcall_enter(std::uintptr_t fn, std::uintptr_t call_site,
                                                      std::uintptr_t slot, std::uint32_t id) {
    Emitter e{this};
    return stack_.enter(fn, call_site, slot, id, e);
  }

  /// Records the return of the library call, or of the sled-traced
  /// function, whose return address was at `slot` (ShadowStack::exit_at).
  /// Frames below it at the same slot end with it: functions a sled-traced
  /// function tail-called (they returned through its return address).
  void on_libcall_exit(std::uintptr_t slot) {
    Emitter e{this};
    if (!stack_.exit_at(slot, e)) return;
    while (stack_.depth() != 0 && stack_.top().sp == slot) stack_.exit_at(slot, e);
  }

  /// True when the innermost open frame is `fn`'s at stack pointer `sp`
  /// (a sled's entry: the frame was pushed, so its return is to be seen).
  [[gnu::always_inline]] inline bool top_is(std::uintptr_t fn, std::uintptr_t sp) const {
    return stack_.depth() != 0 && stack_.top().function == fn && stack_.top().sp == sp;
  }

  /// The function of the innermost open frame whose stack pointer is `sp`,
  /// or 0 when none is.
  std::uintptr_t function_at(std::uintptr_t sp) const {
    for (std::size_t i = stack_.depth(); i != 0; --i) {
      if (stack_.frame(i - 1).sp == sp) return stack_.frame(i - 1).function;
    }
    return 0;
  }

  /// Maps the shadow of this thread's stack for return addresses
  /// (libcall_shadow.h) unless it is mapped or was tried already: sleds
  /// found after the thread's trace was created. Cold: mmap.
  void map_return_shadow();

  /// Drops the shadow frames that are not on the real stack any more (see
  /// ShadowStack::pop_frames_not_on). Cold: after a longjmp or a catch.
  void resync(const std::uintptr_t* return_addresses, std::size_t n) {
    Emitter e{this};
    stack_.pop_frames_not_on(return_addresses, n, e);
  }

  /// Records the exit of `fn` at stack pointer `sp`; `at_cfa`: the exit
  /// hook was jumped to after the function's epilogue (ShadowStack::exit).
  [[gnu::always_inline]] inline void on_exit(std::uintptr_t fn, std::uintptr_t sp, bool at_cfa) {
    Emitter e{this};
    stack_.exit(fn, sp, at_cfa, e);
  }

  /// What enter_fast() and exit_fast() did.
  enum class FastEvent {
    kDone,      ///< recorded (the frame pushed or popped, the event encoded)
    kPut,       ///< the frame pushed or popped; the event still to put()
    kNotFound,  ///< nothing changed: the caller takes the full path
  };

  /// on_enter() when it needs no out-of-line work: pushes the frame and,
  /// when the event extends the encoder's match, encodes it. For hooks that
  /// keep their out-of-line work in tail calls, so that their fast path
  /// saves no registers (issue 12). kPut: then put_entry(id).
  /// kNotFound also when the call site is not known to be recorded
  /// already (site_known()): the full path records it.
  [[gnu::always_inline]] inline FastEvent enter_fast(std::uintptr_t fn, std::uintptr_t call_site,
                                                     std::uintptr_t sp, std::uint32_t id) {
    if (id >= 0x8000 || !site_known(fn, call_site) || !stack_.push_fast(fn, call_site, sp))
        [[unlikely]]
      return FastEvent::kNotFound;
    if (!put_fast(id)) return FastEvent::kPut;  // put_entry() then notes the site
    stack_.below_top().last_child_site = call_site;
    return FastEvent::kDone;
  }

  /// The function ID codec 2's open match predicts for the next event
  /// (Encoder::next_in_match: 0 = an exit), or a value >= 0x8000 when
  /// there is no prediction (no match open, another codec). Read-only.
  /// Also none when the clock tick changed since the thread's last clock
  /// read (the event then takes put(), which reads the clock).
  [[gnu::always_inline]] inline std::uint32_t predicted_event() const {
    if (codec_ != format::Codec::kLzRank || !clock_tick_unchanged()) [[unlikely]]
      return RankEncoder::kNoMatch;
    return rank_encoder().next_in_match();
  }

  /// enter_fast() for an entry of `fn` whose ID `id` is predicted_event()
  /// (the caller checked that `id` is `fn`'s, below 0x8000): pushes the
  /// frame and extends the match, returning true; false when the shadow
  /// stack needs its full path (nothing changed: then take the entry as
  /// any other). Saves the entry the lookup of its ID (issue 12).
  [[gnu::always_inline]] inline bool enter_predicted(std::uintptr_t fn, std::uintptr_t call_site,
                                                     std::uintptr_t sp, std::uint32_t id) {
    if (!site_known(fn, call_site) || !stack_.push_fast(fn, call_site, sp)) [[unlikely]]
      return false;
    stack_.below_top().last_child_site = call_site;
    rank_encoder().extend_match(id);
    return true;
  }

  /// on_exit_top() likewise: kNotFound when the top frame is not `fn`'s
  /// (then on_exit_below_top() or an excluded function); kPut: put(0).
  [[gnu::always_inline]] inline FastEvent exit_fast(std::uintptr_t fn, std::uintptr_t sp,
                                                    bool at_cfa) {
    struct Deferred {
      bool emitted = false;
      void emit_exit() { emitted = true; }
    } d;
    if (!stack_.exit_top(fn, sp, at_cfa, d)) [[unlikely]]
      return FastEvent::kNotFound;
    if (!d.emitted) return FastEvent::kDone;  // deeper than the record depth
    return put_fast(0) ? FastEvent::kDone : FastEvent::kPut;
  }

  /// The event of an entry that enter_fast() left to put (kPut).
  void put_entry(std::uint32_t id) { Emitter{this}.emit_enter(id); }
  /// The event of an exit that exit_fast() left to put (kPut).
  void put_exit() { Emitter{this}.emit_exit(); }

  /// ShadowStack::exit_top: records the exit of `fn` when its frame is on
  /// top (the common case) and returns true; otherwise returns false and
  /// records nothing.
  [[gnu::always_inline]] inline bool on_exit_top(std::uintptr_t fn, std::uintptr_t sp,
                                                 bool at_cfa) {
    Emitter e{this};
    return stack_.exit_top(fn, sp, at_cfa, e);
  }

  /// The rest of on_exit() after on_exit_top() returned false (frames
  /// whose exits were missed, unmatched exits).
  void on_exit_below_top(std::uintptr_t fn, std::uintptr_t sp, bool at_cfa) {
    Emitter e{this};
    stack_.exit_below_top(fn, sp, at_cfa, e);
  }

  /// Makes the thread read the clock at its next recorded event (a known
  /// wait begins or ends there: an MPI call, a library call), so that
  /// event's time is exact to within the swing-door tolerance. Costs
  /// nothing until then; the read itself is one clock_gettime (vDSO).
  void force_clock_read() { clock_tick_seen_ = g_clock_tick.load(std::memory_order_relaxed) - 1; }

  /// A clock read between two events by the thread itself or on its behalf
  /// (a user-API call, the idle flusher while it holds the thread): every
  /// event recorded so far happened before now, every later one after.
  /// When more than a tick period passed since the thread's last read, the
  /// events since then are pinned to that read (they happened within one
  /// period of it), so a reader does not spread the stall over them. Not
  /// from inside a hook. Cold: one clock read.
  void clock_read_between_events();

  /// Swing-door tolerance of the clock samples (PARLOT_CLOCK_TOLERANCE_NS,
  /// ns; 0 = keep every sample read).
  void set_clock_tolerance_ns(std::uint64_t ns) { clock_filter_.set_tolerance_ns(ns); }

  /// Record filter PARLOT_MAX_DEPTH (ShadowStack::set_record_depth).
  void set_record_depth(std::size_t depth) { stack_.set_record_depth(depth); }

  /// PARLOT_CALL_SITES: `on` (the default) records the call site of entry
  /// events as side records (docs/FORMAT.md "Kind 6, call sites"); off,
  /// the entry hooks skip the site table (one load and a branch).
  void set_call_sites(bool on) { sites_off_ = !on; }

  /// True when a kind-6 record already tells a reader that an entry of
  /// `fn` called from `call_site` by the top frame has that site (the site
  /// table's slot of the context holds it), or when call sites are off.
  /// The context: the top frame's call site (which names the caller, and
  /// which copy of it when it was inlined elsewhere too), `fn`, and the
  /// site of the top frame's previous callee (so that f calling g from two
  /// lines in turn, a divide-and-conquer recursion, costs no record per
  /// call). The entry
  /// hooks' fast paths take an entry only then (a few loads and compares);
  /// otherwise the full path records the site.
  [[gnu::always_inline]] inline bool site_known(std::uintptr_t fn, std::uintptr_t call_site) const {
    if (sites_off_) return true;
    const ShadowFrame& top = stack_.top();
    const CallSiteSlot& s = sites_[site_slot(top.call_site, fn, top.last_child_site)];
    return ((s.caller_site ^ top.call_site) | (s.callee ^ fn) | (s.previous ^ top.last_child_site) |
            (s.site ^ call_site)) == 0;
  }

  /// Writes the bytes encoded so far as a block now (parlot_flush); a
  /// pending LZ match stays in the encoder. Returns 0 or the errno of a
  /// failed write. The caller keeps hooks out (busy flag).
  int flush_now() {
    write_encoded();
    return write_error_;
  }

  /// True when the idle flusher (idle_flusher.h) should write this trace
  /// now: it holds events or side records not yet in its file and its last
  /// write is at least one flush interval older than `now_ns`
  /// (CLOCK_MONOTONIC). Only while the thread is held out of its hooks.
  bool idle_flush_due(std::uint64_t now_ns) {
    if (flight() || flush_interval_ns_ == 0 || now_ns - last_flush_ns_ < flush_interval_ns_)
      return false;
    return holds_unwritten_data();
  }

  /// True when the thread holds events or side records not yet in its file
  /// and may still write (not finished, not discarding, no write error).
  bool holds_unwritten_data() {
    if (finished_ || discard_ || write_error_ != 0) return false;
    return side_used_ > sizeof(format::BlockHeader) || mpi_stage_used_ != 0 ||
           encoder_holds_events();
  }

  /// Writes what the thread holds (the encoded events, the pending match
  /// of codec 2 included, and the side records) on behalf of the idle
  /// flusher. Only while the thread is held out of its hooks. Cold: file
  /// writes.
  void flush_idle() {
    if (encoder_holds_events()) {
      write_encoded();  // the side records follow the data block
    } else {
      commit_clock_samples();  // the samples read so far go out too
      write_side_records();
    }
  }

  /// Largest data of one side record add_side_record() takes (bytes).
  static constexpr std::size_t kMaxSideData = 1024;

  /// Appends a side record (docs/FORMAT.md "Version 2") of `kind` about the
  /// event with absolute index `event_index` (events() for "the next
  /// event"), with `n` <= kMaxSideData bytes of `data` (longer data is cut
  /// to kMaxSideData). Buffered with the clock samples; written as a PAUX
  /// block when the buffer is full (a file write), after the next data
  /// block, or at the end. Not for the hot path. The caller keeps hooks out
  /// (busy flag, IgnoreHooksOnThisThread).
  /// Kind kMpiCall is gathered into one kind-4 record (kMpiCalls) of up to
  /// 2 KiB: two to four bytes of framing per call instead of a 16-byte
  /// header.
  void add_side_record(format::AuxKind kind, std::uint64_t event_index, const void* data,
                       std::size_t n);

  /// Closes open frames, flushes the encoder, writes the last block and the
  /// trailer. Returns 0 or the errno of a failed write (the file then ends
  /// at its last complete block). Flight recorder: the last blocks go to
  /// the ring, and the window is written as a file in flight_dump_dir()
  /// when a dump is in progress (trace_writes.h; else nothing is written).
  int finish();

  /// True in flight-recorder mode (create()'s `flight_bytes`).
  bool flight() const { return ring_.mapped(); }

  /// Flight recorder: writes the thread's window (the ring from its oldest
  /// restart point on, after flushing what the encoder holds when the
  /// thread is still running) as a thread file in directory `dir`
  /// (docs/FORMAT.md "Flight windows"). The thread must be held out of its
  /// hooks (its own thread outside them, the idle flusher's claim, or the
  /// process's end). Async-signal-safe (open, write, close). Returns 0 or
  /// an errno; 0 and nothing written outside flight mode.
  int write_flight_window(const char* dir);

  /// Ends the trace without writing anything more: its file stays at its
  /// last complete block, which a reader reports as cut short (a thread
  /// frozen inside a hook at process end).
  void leave_cut() { finished_ = true; }

  /// Starts a new file for this thread in a new process directory (fork
  /// child): fresh encoder and counters, then an entry event for every frame
  /// still on the shadow stack, so the child's stream is well nested.
  /// Returns 0 or an errno.
  int restart_in_child(const char* dir, std::uint64_t thread_index, FunctionIds& ids);

  /// Drops the file without writing anything more (fork child: the file
  /// belongs to the parent). The trace counts as finished afterwards.
  void abandon_file() { finished_ = true; }

  /// Sink interface of the encoders: writes the filled block. Cold path.
  void drain(codec::OutputWindow& w);

  /// busy: the thread is inside a hook (or the runtime's own code that
  /// keeps hooks out).
  static constexpr int kInHook = 1;
  /// busy: the thread is paused (parlot_pause); its hooks record nothing.
  static constexpr int kPaused = 2;
  /// kInHook | kPaused; zero lets a hook record. Written by the thread
  /// itself only; read by process end and the signal dispatcher (atomic).
  std::atomic<int> busy{0};
  /// Set by the idle flusher while it holds this thread out of its hooks to
  /// write its data (idle_flusher.h); a hook or the runtime's own code that
  /// finds it set waits until it is cleared.
  std::atomic<bool> flush_claim{false};
  /// Set by the thread while it waits for flush_claim to clear (its busy
  /// flag up, its trace untouched): a round that writes every thread
  /// (flush_all_threads_now) may write this one although it looks busy.
  std::atomic<bool> parked_for_flusher{false};
  /// The last function the record filter excluded that this thread called
  /// (0: none): its hooks return after one compare. Any other excluded
  /// function costs an ID-table lookup, then takes this place.
  std::uintptr_t last_excluded = 0;
  /// Signals that arrived while the thread was inside a hook (bit sig - 1),
  /// deferred to the hook's end (signal_handlers.h); their siginfo below.
  std::atomic<std::uint64_t> deferred_signals{0};
  /// Hook calls not recorded because a hook was re-entered (signal handler).
  std::uint64_t dropped_events = 0;
  /// Set when the thread's stack was cut without exit hooks (longjmp, a
  /// C++ catch): the next entry hook checks the shadow stack against the
  /// real one.
  /// Atomic: pthread_cancel sets it from another thread.
  std::atomic<bool> resync_pending{false};
  /// Set (never cleared) once pthread_cancel was called on the thread: a
  /// library call it makes may be where the cancellation acts, so each one
  /// sets resync_pending (hooks.cpp, record_libcall_entry).
  std::atomic<bool> cancel_requested{false};
  /// Stack slots [libcall_lo, libcall_hi) whose return-address shadow is
  /// mapped (libcall_shadow.h): library calls made with their return
  /// address elsewhere (an alternate signal stack, a coroutine) are not
  /// recorded. Empty unless PARLOT_LIBCALLS is on.
  std::uintptr_t libcall_lo = 0;
  std::uintptr_t libcall_hi = 0;
  /// map_return_shadow() ran (whatever it mapped).
  bool return_shadow_tried = false;
  /// Set once the failure of this thread's file was reported.
  bool failure_reported = false;
  /// The thread's pthread handle (for pthread_cancel).
  pthread_t thread{};
  /// Linked list of live traces, owned by ProcessTrace under its lock.
  ThreadTrace* prev = nullptr;
  ThreadTrace* next = nullptr;

  std::uint64_t tid() const { return tid_; }
  bool finished() const { return finished_; }
  /// Absolute path of the thread's file.
  const char* path() const { return path_; }
  /// Events recorded so far: counted by the countdown (no count beside
  /// it; with codec 2 the countdown is the encoder's position, countdown()).
  std::uint64_t events() const {
    return events_before_countdown_ + (countdown_start_ - countdown());
  }
  /// The thread's shadow stack (read-only: call_attributes.cpp checks which
  /// frame is on top).
  const ShadowStack& stack() const { return stack_; }
  /// The errno of the write that failed (the file ends at its last
  /// complete block), or 0.
  int write_error() const { return write_error_; }

 private:
  struct Emitter {
    ThreadTrace* t;
    /// emit_enter() records the top frame's call site when the site table
    /// does not show it recorded (false: the caller did, restart_in_child).
    bool note_sites = true;
    /// The entry event of the top frame, just pushed.
    [[gnu::always_inline]] inline void emit_enter(std::uint32_t id) {
      if (note_sites && !t->sites_off_) t->note_site_of_top();

      // Two words in the raw stream. A branch, not an add of the compare:
      // gcc paired that add with the event count into SSE (7 more instructions).
      if (id >= 0x8000) [[unlikely]]
        ++t->large_values_;
      t->put(id);
    }
    [[gnu::always_inline]] inline void emit_exit() { t->put(0); }
  };
  using LzEncoder = codec::Encoder;
  using RawEncoder = codec::RawEncoder;
  using RankEncoder = codec::v2::Encoder;

  ThreadTrace() = default;
  int open_file(const char* dir, std::uint64_t thread_index);
  // Appends `n` bytes to the file; on failure records the error and cuts
  // the file back to its last complete block.
  int append(const void* data, std::size_t n);
  // A new encoder and counters for a new stream. `zeroed_storage`: the
  // encoder's storage holds only zero bytes (the fresh mapping of create(),
  // or zero_encoder_storage()), so codec 2 need not write most of its model.
  void reset_stream(bool zeroed_storage);
  // Makes the encoder's storage all zero bytes cheaply (its whole pages
  // dropped with madvise): for a fork child's new stream. False if it could
  // not (the caller then builds the encoder in full).
  bool zero_encoder_storage();
  // Writes the complete part of the buffer when the flush interval passed.
  void flush_if_due(std::uint64_t now_ns);
  // Writes what the encoder has produced so far as a block (codec 2 ends
  // its coder segment first, so the block decodes on its own).
  void write_encoded();
  // Every countdown_period_ events: a clock sample and/or the flush check;
  // in flight mode a restart point when the block is nearly full. `v`: the
  // event being put.
  [[gnu::noinline]] void on_countdown(std::uint32_t v);
  // Flight recorder: ends the block (to the ring), starts a fresh encoder
  // and records a restart point for event `v` being put (its frames open
  // before it). Nothing when the frames do not fit one side record.
  void flight_restart(std::uint32_t v);
  // Appends the restart record (kind 7) for the event with index `index`,
  // `frames` open before it (their functions from the shadow stack, frame
  // i = stack frame i), to the side buffer as a block of its own.
  void push_restart(std::uint64_t index, std::size_t frames);
  // Writes the ring from its oldest restart point into a new file in `dir`.
  int write_flight_file(const char* dir);
  // The thread file's header: `version` (format::kVersion or
  // kFlightVersion), start time `start_ns` (ns since the epoch), `flags`
  // (format::kTraceFlag*), with this thread's codec, tid, pid and index.
  format::TraceFileHeader file_header(std::uint16_t version, std::uint64_t start_ns,
                                      std::uint32_t flags) const;
  // The first event after the clock tick changed (or force_clock_read()):
  // a clock read for the event being put.
  [[gnu::noinline]] void on_clock_tick();
  // True while the tick is the one the thread's last clock read saw. One
  // load of a global and one compare: the hot path's only cost of the tick.
  [[gnu::always_inline]] inline bool clock_tick_unchanged() const {
    return g_clock_tick.load(std::memory_order_relaxed) == clock_tick_seen_;
  }
  // Reads the clock for event `index` (being put now): a sample offered to
  // the filter, after the stall sample clock_between_events() may add.
  // Returns the time read (CLOCK_MONOTONIC ns).
  std::uint64_t read_clock_at_event(std::uint64_t index);
  // A clock read `now` between events `next` - 1 and `next` (see
  // clock_read_between_events): offers the stall sample (next - 1, time of
  // the last read) when more than a tick period passed since that read and
  // events were recorded after it, and makes `now` the last read.
  void clock_between_events(std::uint64_t next, std::uint64_t now);
  // A clock read between events now, then the filter's pending sample kept
  // (a write of side records without a data block).
  void commit_clock_samples();
  // Appends a clock sample (event index, CLOCK_MONOTONIC ns) to the side
  // records; writes them out when their buffer is full.
  void add_clock_sample(std::uint64_t event_index, std::uint64_t now_ns);
  // The filter's sink: keeps a sample in the side records.
  auto clock_sink() {
    return [this](std::uint64_t index, std::uint64_t ns) { add_clock_sample(index, ns); };
  }
  // One slot of the call-site table: the site last recorded for an entry
  // of `callee` from a caller entered from `caller_site` (0: the outermost
  // frames) after `previous` (the site of the caller frame's previous
  // callee, 0: none). All zero: empty (no function is at 0). 32 bytes.
  struct CallSiteSlot {
    std::uintptr_t caller_site;
    std::uintptr_t callee;
    std::uintptr_t previous;
    std::uintptr_t site;
  };
  // Slots of the table (a power of two): 32 KiB a thread, in its mapping.
  static constexpr std::size_t kSiteSlots = 1024;
  // The slot of a context. Multiplicative: a collision only costs records,
  // never a wrong site, but two contexts of one loop in one slot would
  // cost two records per iteration.
  [[gnu::always_inline]] static std::size_t site_slot(std::uintptr_t caller_site,
                                                      std::uintptr_t callee,
                                                      std::uintptr_t previous) {
    return static_cast<std::size_t>(
        ((caller_site ^ (callee << 1)) * 0x9e3779b97f4a7c15ull + previous) *
            0xc2b2ae3d27d4eb4full >>
        54);
  }
  // note_site() for the top frame (just pushed) called by the frame below
  // it, which then has it as its last callee.
  void note_site_of_top() {
    const ShadowFrame& top = stack_.top();
    ShadowFrame& caller = stack_.below_top();
    note_site(caller, top.function, top.call_site);
    caller.last_child_site = top.call_site;
  }
  // Records the call site of the entry event about to be put (index
  // events()) of `callee` from `site`, called by the frame `caller` (its
  // last_child_site not yet updated), unless the table shows it recorded:
  // then the slot holds it.
  [[gnu::always_inline]] inline void note_site(const ShadowFrame& caller, std::uintptr_t callee,
                                               std::uintptr_t site) {
    CallSiteSlot& s = sites_[site_slot(caller.call_site, callee, caller.last_child_site)];
    if (((s.caller_site ^ caller.call_site) | (s.callee ^ callee) |
         (s.previous ^ caller.last_child_site) | (s.site ^ site)) != 0) [[unlikely]] {
      s = CallSiteSlot{caller.call_site, callee, caller.last_child_site, site};
      add_call_site(events(), site);
    }
  }
  // Appends the site of entry event `entry` to the open kind-6 record (a
  // new one when another record came since). Cold: once per new site.
  [[gnu::noinline]] void add_call_site(std::uint64_t entry, std::uintptr_t site);
  // Writes the buffered side records as one PAUX block.
  void write_side_records();
  // Adds one MPI call's data to the staged kind-4 record (moved into the
  // side records when it is full and whenever they are written).
  void add_mpi_call(std::uint64_t entry, const void* data, std::size_t n);
  // Moves the staged MPI calls into the side records as one kind-4 record.
  void move_mpi_stage_to_side();
  // Writes the side-record buffer as one PAUX block (the stage excepted),
  // ended by a block-checksum record (CRC32C of the records before it);
  // in flight mode into the ring as a block of kind `what`.
  void write_side_block(RingBlock what = RingBlock::kSide);

  /// Events between two looks at the clock for the flush interval.
  static constexpr std::uint32_t kFlushCheckEvents = 16384;
  /// Side-record buffer: block header, then records.
  static constexpr std::size_t kSideBytes = 4096;

  // Appends one event to the stream. Entries go through Emitter::emit_enter,
  // which also counts IDs that take two raw words. The countdown is the
  // only per-event cost of clock samples and flush checks; codec 2 counts
  // it down with its own position (Encoder::set_event_limit), so its fast
  // path has no counter.
  [[gnu::always_inline]] inline void put(std::uint32_t v) {
    if (codec_ == format::Codec::kLzRank) [[likely]] {
      RankEncoder& e = rank_encoder();
      in_put_ = 1;  // events() counts this event from here (as the countdown did)
      if (e.events_to_limit() == 0) [[unlikely]] {
        on_countdown(v);
      } else if (!clock_tick_unchanged()) [[unlikely]] {
        on_clock_tick();
      }
      e.encode(v);
      in_put_ = 0;
      return;
    }
    if (--flush_countdown_ == 0) [[unlikely]] {
      on_countdown(v);
    } else if (!clock_tick_unchanged()) [[unlikely]] {
      on_clock_tick();
    }
    if (codec_ == format::Codec::kLzZe) {
      lz_encoder().encode(v);
    } else {
      raw_encoder().encode(v);
    }
  }

  // put(v) when it needs no out-of-line work (the countdown does not run
  // out; `v` extends the match, or the raw encoder has room): true.
  // Otherwise false, nothing changed (then put(v)). Every codec has its
  // fast case, so codec 1 and PARLOT_COMPRESS=0 (the NC baseline) keep
  // theirs inline too.
  [[gnu::always_inline]] inline bool put_fast(std::uint32_t v) {
    // Codec 2's encoder stops at the countdown's end itself; a changed
    // clock tick sends the event to put().
    if (codec_ == format::Codec::kLzRank) [[likely]]
      return clock_tick_unchanged() && rank_encoder().try_extend(v);
    if (flush_countdown_ == 1 || !clock_tick_unchanged()) [[unlikely]]
      return false;
    // A compiler barrier: codec_ is read again here, so the tests above
    // stay compares with memory (no load kept in a register).
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (!(codec_ == format::Codec::kLzZe ? lz_encoder().try_extend(v) : raw_encoder().try_put(v))) {
      return false;
    }
    --flush_countdown_;
    return true;
  }

  // Events until on_countdown() (the event that brings it to 0 calls it).
  // Codec 2: from the encoder's event limit, set to countdown - 1 whenever
  // the countdown is set; inside put() the event being put is counted.
  std::uint32_t countdown() const {
    if (codec_ == format::Codec::kLzRank) {
      return rank_encoder().events_to_limit() + 1 - in_put_;
    }
    return flush_countdown_;
  }
  // Sets the countdown to `n` events (n >= 1) after the event being put
  // (inside put()), or from now (`in_put` false).
  void set_countdown(std::uint32_t n, bool in_put) {
    if (codec_ == format::Codec::kLzRank) {
      rank_encoder().set_event_limit(in_put ? n : n - 1);
    } else {
      flush_countdown_ = n;
    }
  }

  // The one encoder of the stream lives in encoder_ (constructed by
  // reset_stream for codec_): the others' pages are never touched.
  LzEncoder& lz_encoder() { return *std::launder(reinterpret_cast<LzEncoder*>(encoder_)); }
  RawEncoder& raw_encoder() { return *std::launder(reinterpret_cast<RawEncoder*>(encoder_)); }
  RankEncoder& rank_encoder() { return *std::launder(reinterpret_cast<RankEncoder*>(encoder_)); }
  const RankEncoder& rank_encoder() const {
    return *std::launder(reinterpret_cast<const RankEncoder*>(encoder_));
  }
  codec::OutputWindow& encoder_window();
  // True when the encoder holds events not yet written (codec 1's pending
  // match excepted: a time-driven write leaves it in the encoder).
  bool encoder_holds_events();

  ShadowStack stack_{nullptr, 0};
  format::Codec codec_ = format::Codec::kLzRank;
  bool discard_ = false;
  // events() = events_before_countdown_ + countdown_start_ - countdown().
  std::uint64_t events_before_countdown_ = 0;
  std::uint64_t large_values_ = 0;  // events >= 0x8000 (4 raw bytes, not 2)
  std::uint64_t payload_bytes_ = 0;
  std::uint64_t sequence_ = 0;
  std::uint64_t closed_at_end_ = 0;
  std::uint32_t flush_countdown_ = kFlushCheckEvents;   // codecs 1 and raw (codec 2: countdown())
  std::uint32_t in_put_ = 0;                            // 1 inside put() of codec 2
  std::uint32_t clock_tick_seen_ = 0;                   // g_clock_tick at the last clock read
  std::uint32_t countdown_start_ = kFlushCheckEvents;   // flush_countdown_'s value when set
  std::uint32_t countdown_period_ = kFlushCheckEvents;  // events between on_countdown calls
  std::uint32_t clock_events_ = 0;                      // 0 = no clock samples
  std::uint32_t flush_check_left_ = kFlushCheckEvents;  // events until the next flush check
  std::uint64_t flush_interval_ns_ = 0;
  std::uint64_t last_flush_ns_ = 0;
  bool finished_ = true;
  int write_error_ = 0;
  std::uint64_t file_bytes_ = 0;    // bytes of complete blocks in the file
  std::uint64_t events_noted_ = 0;  // events() when the last block was written
  FileIdentity file_id_;
  std::uint64_t tid_ = 0;
  std::uint64_t pid_ = 0;
  std::uint8_t* block_ = nullptr;  // BlockHeader, then payload
  std::size_t block_bytes_ = 0;
  std::size_t map_bytes_ = 0;
  ShadowFrame* frames_ = nullptr;
  std::size_t frames_bytes_ = 0;
  static constexpr std::size_t kEncoderBytes =
      std::max({sizeof(LzEncoder), sizeof(RawEncoder), sizeof(RankEncoder)});
  alignas(LzEncoder) alignas(RawEncoder) alignas(RankEncoder) unsigned char encoder_[kEncoderBytes];
  // Side records (docs/FORMAT.md "Version 2"): one open clock-sample record.
  std::size_t side_used_ = 0;    // bytes of side_ used, block header included
  std::size_t side_record_ = 0;  // offset of the open record's header, 0 = none
  // MPI calls gathered for the next kind-4 record (data: framed calls).
  static constexpr std::size_t kMpiStageBytes = 2048;
  std::size_t mpi_stage_used_ = 0;
  std::uint64_t mpi_first_entry_ = 0;  // entry event of its first call
  std::uint64_t mpi_last_entry_ = 0;   // entry event of its last call
  alignas(8) std::uint8_t mpi_stage_[kMpiStageBytes];
  // The open kind-6 record (offset of its header in side_, 0 = none), its
  // last entry event and site (the next entry's deltas start there).
  std::size_t site_record_ = 0;
  std::uint64_t last_site_entry_ = 0;
  std::uintptr_t last_site_ = 0;
  bool sites_off_ = false;  // PARLOT_CALL_SITES=0
  // The call-site table (note_site): zero in the fresh mapping.
  alignas(64) CallSiteSlot sites_[kSiteSlots];
  std::uint64_t last_sample_index_ = 0;
  std::uint64_t last_sample_ns_ = 0;
  // The thread's last clock read: every event from last_read_next_ on
  // happened after last_read_ns_ (CLOCK_MONOTONIC ns); those that saw the
  // tick unchanged since, within one tick period of it.
  std::uint64_t last_read_next_ = 0;
  std::uint64_t last_read_ns_ = 0;
  ClockSampleFilter clock_filter_;  // which samples read are kept
  // The records, then room for the block-checksum record write_side_block()
  // ends each block with (the records' capacity stays kSideBytes).
  alignas(8) std::uint8_t side_[kSideBytes + format::kBlockChecksumRecordBytes];
  char path_[1280] = "";
  // Flight recorder (PARLOT_MODE=flight): the ring of the latest blocks,
  // the encoded bytes of a block at which it restarts, the thread's index
  // and start time (for the file a dump writes).
  FlightRing ring_;
  std::size_t flight_target_ = 0;
  // Events between clock reads at countdowns (countdown_period_ but in
  // flight mode, whose countdown is shorter), and until the next one.
  std::uint32_t clock_period_ = kFlushCheckEvents;
  std::uint32_t clock_left_ = kFlushCheckEvents;
  std::uint64_t thread_index_ = 0;
  std::uint64_t start_ns_ = 0;

 public:
  /// The siginfo of each deferred signal (index sig - 1). Cold: last.
  siginfo_t deferred_info[64];
};

}  // namespace parlot::runtime
