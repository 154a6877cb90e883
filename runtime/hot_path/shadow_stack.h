// Shadow call stack with stack-pointer correction (ParLoT paper §3.4),
// adapted to compiler instrumentation.
//
// Each frame remembers the function address, the call site handed to the
// hook, and the stack pointer of the instrumented function at the hook call
// (the hook's CFA). The stack grows down, so a live callee always has a lower
// stack pointer than its caller:
//  - on entry with stack pointer `sp`, every frame whose sp is below `sp` is
//    dead (its exit was never seen: longjmp, an exception under clang, a
//    thread cancelled): it is popped and an exit is emitted for it;
//  - a frame whose sp equals `sp` is either dead (a sibling called from the
//    same caller frame) or the frame an inlined callee runs in: gcc and clang
//    keep the hooks of inlined functions, which then run at the caller's
//    stack pointer and pass the caller's call site. So an equal-sp frame is
//    kept (the new function is nested in it) only when the call site is the
//    same and the function differs; otherwise it is dead;
//  - on exit of `fn` with stack pointer `sp`, the exiting frame is the
//    topmost frame of `fn` that can hold `sp` (see exit(): the exit hook is
//    either called from the function's body or, at gcc -O2, jumped to after
//    its epilogue); frames above it are dead. An exit that matches no open frame (its entry
//    was never recorded) is counted and ignored.
// Every emitted stream is therefore well nested: each exit closes the
// innermost open entry.
//
// Known limits (best effort, as in the paper): a function whose exit was
// missed, followed by a call through a function pointer from the same call
// site with the same frame size, is taken as nested; alternate signal stacks
// and coroutine stacks at higher addresses look like returns (documented in
// docs/DESIGN.md).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace parlot::runtime {

/// One open call on the shadow stack (32 bytes).
struct ShadowFrame {
  std::uintptr_t sp;         ///< stack pointer of the function at its entry hook (bytes)
  std::uintptr_t function;   ///< function address handed to the entry hook
  std::uintptr_t call_site;  ///< call site handed to the entry hook
  /// Call site of the last recorded entry made from this frame (0: none
  /// yet; kept by ThreadTrace): the context of its call sites' table
  /// (ThreadTrace::site_known).
  std::uintptr_t last_child_site;
};

/// Counters of the corrections made (events).
struct ShadowStackCounters {
  std::uint64_t corrected_exits = 0;  ///< exits synthesised for dead frames
  std::uint64_t unmatched_exits = 0;  ///< exit hooks that matched no open frame
  /// Entries not recorded: not pushed because the stack was full, or pushed
  /// deeper than the record depth (PARLOT_MAX_DEPTH).
  std::uint64_t overflowed = 0;
};

/// The stack over caller-provided storage (no allocation) of
/// storage_frames(capacity) frames: `capacity` frames and, below them, a
/// sentinel frame that is never popped, so that the hooks' fast paths read
/// the top frame through one pointer and need no test for an empty stack
/// (issue 12). `Emit` is called as emit_exit() for every exit event and
/// emit_enter(id) for every entry event, in stream order.
class ShadowStack {
 public:
  /// Frames of storage a stack of `capacity` frames takes (one more).
  static constexpr std::size_t storage_frames(std::size_t capacity) { return capacity + 1; }

  /// `storage`: storage_frames(capacity) frames, or nullptr (a stack that
  /// is assigned a real one before use).
  ShadowStack(ShadowFrame* storage, std::size_t capacity)
      : base_(storage), top_(storage), fast_top_(storage), capacity_(capacity) {
    update_sentinel();
    update_limits();
  }

  /// The thread's own stack, [lo, hi). Stack pointers outside it belong to
  /// a signal handler on an alternate stack or to a coroutine: comparing
  /// them with the thread stack's says nothing about nesting.
  void set_thread_stack(std::uintptr_t lo, std::uintptr_t hi) {
    stack_lo_ = lo;
    stack_hi_ = hi;
    update_sentinel();
  }

  /// Record filter: frames deeper than `depth` (1 = the outermost) are kept
  /// on the stack, so nesting stays exact, but emit no events; each such
  /// entry counts in `overflowed`. Default: no limit.
  void set_record_depth(std::size_t depth) {
    record_depth_ = depth;
    update_limits();
  }
  std::size_t record_depth() const { return record_depth_; }

  std::size_t depth() const { return static_cast<std::size_t>(top_ - base_); }
  std::size_t max_depth() const { return max_depth_; }
  /// Open frame `i` (0 = the outermost, depth() - 1 = the top).
  const ShadowFrame& frame(std::size_t i) const { return base_[i + 1]; }
  const ShadowStackCounters& counters() const { return counters_; }
  /// The top frame (the sentinel when nothing is open: its function is
  /// private storage's address, never a function's).
  const ShadowFrame& top() const { return *top_; }
  /// The frame below frame(i): frame(i - 1), or the sentinel for i = 0.
  const ShadowFrame& below(std::size_t i) const { return base_[i]; }

  /// The frame below frame(i), writable (its last_child_site).
  ShadowFrame& below(std::size_t i) { return base_[i]; }
  /// The frame below the top frame (the top's caller), writable.
  [[gnu::always_inline]] ShadowFrame& below_top() { return top_[-1]; }

  /// Entry hook for function `fn` with function ID `id`: corrects, pushes,
  /// emits the entry. Returns false (and emits
  /// nothing for this function) if the stack is full.
  template <class Emit>
  [[gnu::always_inline]] inline bool enter(std::uintptr_t fn, std::uintptr_t call_site,
                                           std::uintptr_t sp, std::uint32_t id, Emit& emit) {
    if (push_fast(fn, call_site, sp)) [[likely]] {
      emit.emit_enter(id);
      return true;
    }
    if (top_ == base_ || top_holds_callee(fn, call_site, sp)) {
      return push_checked(fn, call_site, sp, id, emit);
    }
    return enter_slow(fn, call_site, sp, id, emit);
  }

  /// enter()'s common case without its event: when nothing is open or the
  /// top frame holds the callee, and the depth is below the depth already
  /// reached (and below capacity and the record depth), pushes the frame
  /// and returns true (the caller then emits the entry). Otherwise changes
  /// nothing and returns false (then call enter()).
  [[gnu::always_inline]] inline bool push_fast(std::uintptr_t fn, std::uintptr_t call_site,
                                               std::uintptr_t sp) {
    // A callee below its caller on the thread stack, or an inlined callee
    // (its host's stack pointer and call site, another function): the same
    // decisions enter_slow takes for these cases. With nothing open the top
    // is the sentinel, which holds any callee on the thread stack. One
    // compare of the top covers the depth already reached, the capacity and
    // the record depth.
    if (top_holds_callee(fn, call_site, sp) && top_ < fast_top_) [[likely]] {
      *++top_ = ShadowFrame{sp, fn, call_site, 0};
      return true;
    }
    return false;
  }

  /// True when the top frame is the caller of an entry of `fn` from
  /// `call_site` at `sp`: `sp` below it on the thread stack, or an inlined
  /// callee (the top's stack pointer and call site, another function). The
  /// sentinel (nothing open) holds every `sp` on the thread stack.
  [[gnu::always_inline]] inline bool top_holds_callee(std::uintptr_t fn, std::uintptr_t call_site,
                                                      std::uintptr_t sp) const {
    const ShadowFrame& top = *top_;
    // Both on the thread stack [lo, hi): with sp < top.sp, that is
    // lo <= sp and top.sp < hi (three compares, no subtraction: the entry
    // hook then needs no callee-saved register).
    return (top.sp > sp && sp >= stack_lo_ && top.sp < stack_hi_) ||
           (top.sp == sp && top.call_site == call_site && top.function != fn);
  }

  /// Exit hook of `fn` at stack pointer `sp`: finds the exiting frame, pops
  /// the dead frames above it (emitting their exits), then pops it.
  ///
  /// `at_cfa` says the exit hook was *jumped to* after the function's
  /// epilogue (gcc -O2 does this; the hook's return address is then the
  /// function's own return address), so `sp` is the function's CFA, above its
  /// entry stack pointer and at or below its caller's. Otherwise the hook was
  /// called from the function's body and `sp` is at or below the function's
  /// entry stack pointer (below it after alloca). Frames of inner recursive
  /// instances of `fn` whose exits were missed lie strictly below either, so:
  ///  - called:  the topmost frame of `fn` with frame.sp >= sp;
  ///  - jumped:  the topmost frame of `fn` with frame.sp <= sp whose caller's
  ///             frame.sp >= sp. Equality: gcc's function splitting inlines
  ///             the head of `fn` (entry hook at the caller's stack pointer)
  ///             and the outlined rest jumps to the exit hook with its CFA,
  ///             the same caller's stack pointer. A real frame's entry stack
  ///             pointer is always below its CFA (the return address).
  template <class Emit>
  [[gnu::always_inline]] inline void exit(std::uintptr_t fn, std::uintptr_t sp, bool at_cfa,
                                          Emit& emit) {
    // Fast path: the top frame is the one leaving.
    if (exit_top(fn, sp, at_cfa, emit)) [[likely]]
      return;
    exit_slow(fn, sp, at_cfa, emit);
  }

  /// exit() when the top frame is `fn`'s and can hold `sp`: pops it and
  /// returns true. Otherwise changes nothing and returns false; the caller
  /// then either ignores the exit (a function the filter does not record)
  /// or hands it to exit_below_top().
  template <class Emit>
  [[gnu::always_inline]] inline bool exit_top(std::uintptr_t fn, std::uintptr_t sp, bool at_cfa,
                                              Emit& emit) {
    // The sentinel's function is never `fn` (update_sentinel). Below the
    // outermost frame, the sentinel's sp (the thread stack's top) is at or
    // above any `sp` on the thread stack; one elsewhere is left to
    // exit_slow.
    const ShadowFrame& f = *top_;
    if (f.function == fn && (at_cfa ? f.sp <= sp && top_[-1].sp >= sp : f.sp >= sp)) [[likely]] {
      pop_top(emit);
      return true;
    }
    return false;
  }

  /// The rest of exit() after exit_top() returned false.
  template <class Emit>
  void exit_below_top(std::uintptr_t fn, std::uintptr_t sp, bool at_cfa, Emit& emit) {
    exit_slow(fn, sp, at_cfa, emit);
  }

  /// Exit of the library call whose frame has stack pointer `sp` (the slot
  /// of its return address; its return reached the return thunk): pops the
  /// frames above it (dead: their exits were missed), then it. Returns false
  /// (and pops nothing) when no open frame has that stack pointer.
  template <class Emit>
  bool exit_at(std::uintptr_t sp, Emit& emit) {
    std::size_t i = depth();
    while (i != 0 && frame(i - 1).sp != sp) --i;
    if (i == 0) {
      ++counters_.unmatched_exits;
      return false;
    }
    while (depth() > i) pop_dead(emit);
    pop_top(emit);
    return true;
  }

  /// Pops the frames that are no longer on the real stack, after the stack
  /// was cut without exit hooks (longjmp, a C++ exception under clang).
  /// `return_addresses`: the real stack's return addresses, innermost
  /// first, starting with the return address into the caller of the
  /// function now being entered. A shadow frame is live when its call site
  /// is among them; the frames above the topmost live one are dead. If no
  /// frame among the top `kResyncScan` is found live (the real stack could
  /// not be unwound), nothing is popped.
  static constexpr std::size_t kResyncScan = 4096;
  template <class Emit>
  std::size_t pop_frames_not_on(const std::uintptr_t* return_addresses, std::size_t n, Emit& emit) {
    const std::size_t depth = this->depth();
    std::size_t live = depth;  // index + 1 of the topmost live frame
    const std::size_t lowest = depth > kResyncScan ? depth - kResyncScan : 0;
    for (; live > lowest; --live) {
      const std::uintptr_t site = frame(live - 1).call_site;
      bool found = false;
      for (std::size_t k = 0; k < n && !found; ++k) found = return_addresses[k] == site;
      if (found) break;
    }
    if (live == lowest) return 0;
    const std::size_t popped = depth - live;
    while (this->depth() > live) pop_dead(emit);
    return popped;
  }

  /// Closes every open frame (thread or process end), innermost first.
  /// Returns how many exits were emitted.
  template <class Emit>
  std::size_t close_all(Emit& emit) {
    std::size_t n = 0;
    while (top_ != base_) {
      n += depth() <= record_depth_ ? 1 : 0;
      pop_top(emit);
    }
    return n;
  }

 private:
  template <class Emit>
  [[gnu::noinline]] bool enter_slow(std::uintptr_t fn, std::uintptr_t call_site, std::uintptr_t sp,
                                    std::uint32_t id, Emit& emit) {
    while (top_ != base_) {
      const ShadowFrame& top = *top_;
      if (top.sp > sp) {
        // Below the top: nested, unless the top is on another stack and
        // this call is back on the thread's own (the other stack was left
        // without exits, e.g. a coroutine switch).
        if (!on_thread_stack(sp) || on_thread_stack(top.sp)) break;
      } else {
        // Above the top: the top is dead, unless this call runs on another
        // stack (a handler on an alternate signal stack) and the top on the
        // thread's own.
        if (!on_thread_stack(sp) && on_thread_stack(top.sp)) break;
        if (top.sp == sp && top.call_site == call_site && top.function != fn) break;
      }
      pop_dead(emit);
    }
    return push_checked(fn, call_site, sp, id, emit);
  }

  // Pushes a frame beyond the fast depth: at capacity (not pushed, false),
  // a new maximum depth, or deeper than the record depth (pushed, no event).
  template <class Emit>
  [[gnu::noinline]] bool push_checked(std::uintptr_t fn, std::uintptr_t call_site,
                                      std::uintptr_t sp, std::uint32_t id, Emit& emit) {
    if (depth() == capacity_) [[unlikely]] {
      ++counters_.overflowed;
      return false;
    }
    *++top_ = ShadowFrame{sp, fn, call_site, 0};
    const std::size_t depth = this->depth();
    if (depth > max_depth_) {
      max_depth_ = depth;
      update_limits();
    }
    if (depth <= record_depth_) {
      emit.emit_enter(id);
    } else {
      ++counters_.overflowed;
    }
    return true;
  }

  // fast_top_: the top below which a push needs no check: min(capacity,
  // depth already reached, record depth) frames above the sentinel.
  // record_top_: the deepest top whose frame emits events.
  void update_limits() {
    fast_top_ = base_ + std::min({capacity_, max_depth_, record_depth_});
    record_top_ = base_ + std::min(capacity_, record_depth_);
  }

  // The sentinel below the outermost frame. Its function is its own
  // address, private storage no exit hook is handed (not 0: a null `fn`
  // must stay an unmatched exit, never pop the sentinel). Its sp is the
  // thread stack's top: every callee on the thread stack is below it (hi -
  // 1, so that an unknown stack, hi = ~0, has one too).
  void update_sentinel() {
    if (base_ != nullptr) {
      *base_ = ShadowFrame{stack_hi_ - 1, reinterpret_cast<std::uintptr_t>(base_), 0, 0};
    }
  }

  template <class Emit>
  [[gnu::noinline]] void exit_slow(std::uintptr_t fn, std::uintptr_t sp, bool at_cfa, Emit& emit) {
    // frames[k] is frame(k) (the sentinel, frames[-1], is not used here).
    const ShadowFrame* frames = base_ + 1;
    std::size_t i = depth();
    while (i != 0) {
      const ShadowFrame& f = frames[i - 1];
      if (f.function == fn) {
        bool match = at_cfa ? f.sp <= sp && (i == 1 || frames[i - 2].sp >= sp) : f.sp >= sp;
        // An inlined frame (its call site is its host's) whose host's stack
        // pointer moved up between the two hooks (stack arguments pushed
        // around the entry hook's call, popped before the exit's): the exit
        // runs at the host's stack pointer, above the entry's.
        if (!match && !at_cfa && i >= 2 && f.call_site == frames[i - 2].call_site && f.sp < sp &&
            frames[i - 2].sp >= sp) {
          match = true;
        }
        if (match) [[likely]] {
          while (depth() > i) pop_dead(emit);
          pop_top(emit);
          return;
        }
      }
      // Frames further down belong to callers: they lie above `sp` as well
      // (if on the same stack).
      if (f.sp > sp && same_stack(f.sp, sp)) break;
      --i;
    }
    // The exiting function's entry was never recorded: whatever lies below
    // `sp` on its stack belongs to its callees (or to itself), which are gone.
    while (top_ != base_ && top_->sp < sp && same_stack(top_->sp, sp)) {
      pop_dead(emit);
    }
    ++counters_.unmatched_exits;
  }

  // Pops the top frame; its exit is emitted when its entry was.
  template <class Emit>
  [[gnu::always_inline]] inline void pop_top(Emit& emit) {
    if (top_-- <= record_top_) [[likely]]
      emit.emit_exit();
  }

  bool on_thread_stack(std::uintptr_t sp) const { return sp >= stack_lo_ && sp < stack_hi_; }
  bool same_stack(std::uintptr_t a, std::uintptr_t b) const {
    return on_thread_stack(a) == on_thread_stack(b);
  }

  template <class Emit>
  inline void pop_dead(Emit& emit) {
    ++counters_.corrected_exits;
    pop_top(emit);
  }

  ShadowFrame* base_;  // the sentinel; frame(i) is base_[i + 1]
  ShadowFrame* top_;   // the top frame (base_: nothing open)
  // A push from a top below this needs no check (update_limits).
  ShadowFrame* fast_top_;
  ShadowFrame* record_top_ = nullptr;  // frames up to here emit events
  std::size_t capacity_;
  std::size_t max_depth_ = 0;
  std::size_t record_depth_ = ~std::size_t{0};
  std::uintptr_t stack_lo_ = 0;
  std::uintptr_t stack_hi_ = ~std::uintptr_t{0};  // unknown: every address
  ShadowStackCounters counters_;
};

}  // namespace parlot::runtime
