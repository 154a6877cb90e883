// One thread's trace: its shadow stack, its incremental encoder and its
// trace file (docs/FORMAT.md, "Thread trace file"). Lives in memory mapped
// for it at the thread's first event and unmapped when it ends; used only by
// its own thread, except at process end (see process_trace.h).
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "function_ids.h"
#include "parlot/codec.h"
#include "parlot/format.h"
#include "shadow_stack.h"

namespace parlot::runtime {

class ThreadTrace {
 public:
  /// Maps and initialises a trace for the calling thread, creates its file
  /// `thread-<index>-<tid>.trace` in `dir_fd` and writes the file header.
  /// Returns nullptr (and sets `error` to an errno) when memory or the file
  /// cannot be had. `discard`: write no data blocks (PARLOT_DISCARD, for
  /// benchmarks). Cold path: mmap, open, write.
  static ThreadTrace* create(int dir_fd, std::uint64_t thread_index, bool compress,
                             std::size_t buffer_bytes, std::size_t max_depth,
                             std::uint64_t flush_interval_ns, bool discard, int& error);

  /// Unmaps a trace created by create(). Does not write anything.
  static void destroy(ThreadTrace* t);

  /// Records an entry into `fn` called from `call_site`, the instrumented
  /// function's stack pointer being `sp`, with function ID `id`.
  [[gnu::always_inline]] inline void on_enter(std::uintptr_t fn, std::uintptr_t call_site,
                                              std::uintptr_t sp, std::uint32_t id) {
    Emitter e{this};
    stack_.enter(fn, call_site, sp, id, e);
  }

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

  /// Record filter PARLOT_MAX_DEPTH (ShadowStack::set_record_depth).
  void set_record_depth(std::size_t depth) { stack_.set_record_depth(depth); }

  /// Writes the bytes encoded so far as a block now (parlot_flush); a
  /// pending LZ match stays in the encoder. Returns 0 or the errno of a
  /// failed write. The caller keeps hooks out (busy flag).
  int flush_now() {
    drain(compress_ ? lz_.window() : raw_.window());
    return write_error_;
  }

  /// Closes open frames, flushes the encoder, writes the last block and the
  /// trailer, closes the file. Returns 0 or the errno of a failed write.
  int finish();

  /// Starts a new file for this thread in a new process directory (fork
  /// child): fresh encoder and counters, then an entry event for every frame
  /// still on the shadow stack, so the child's stream is well nested.
  /// Returns 0 or an errno.
  int restart_in_child(int dir_fd, std::uint64_t thread_index, FunctionIds& ids);

  /// Closes the file without writing anything more (fork child: the file
  /// belongs to the parent). The trace counts as finished afterwards.
  void abandon_file();

  /// Sink interface of the encoders: writes the filled block. Cold path.
  void drain(codec::OutputWindow& w);

  /// Set while the thread is inside a hook; read by process end (atomic).
  std::atomic<int> busy{0};
  /// Hook calls not recorded because a hook was re-entered (signal handler).
  std::uint64_t dropped_events = 0;
  /// Set when the thread's stack was cut without exit hooks (longjmp, a
  /// C++ catch): the next entry hook checks the shadow stack against the
  /// real one.
  /// Atomic: pthread_cancel sets it from another thread.
  std::atomic<bool> resync_pending{false};
  /// The thread's pthread handle (for pthread_cancel).
  pthread_t thread{};
  /// Linked list of live traces, owned by ProcessTrace under its lock.
  ThreadTrace* prev = nullptr;
  ThreadTrace* next = nullptr;

  std::uint64_t tid() const { return tid_; }
  bool finished() const { return fd_ < 0; }

 private:
  struct Emitter {
    ThreadTrace* t;
    [[gnu::always_inline]] inline void emit_enter(std::uint32_t id) {
      t->large_values_ += id >= 0x8000 ? 1 : 0;  // two words in the raw stream
      t->put(id);
    }
    [[gnu::always_inline]] inline void emit_exit() { t->put(0); }
  };
  using LzEncoder = codec::Encoder<ThreadTrace>;
  using RawEncoder = codec::RawEncoder<ThreadTrace>;

  ThreadTrace() = default;
  int open_file(int dir_fd, std::uint64_t thread_index);
  void reset_stream();
  // Writes the complete part of the buffer when the flush interval passed.
  void flush_if_due();

  /// Events between two looks at the clock for the flush interval.
  static constexpr std::uint32_t kFlushCheckEvents = 16384;

  // Appends one event to the stream. Entries go through Emitter::emit_enter,
  // which also counts IDs that take two raw words.
  [[gnu::always_inline]] inline void put(std::uint32_t v) {
    ++events_;
    if (--flush_countdown_ == 0) [[unlikely]]
      flush_if_due();
    if (compress_) [[likely]] {
      lz_.encode(v);
    } else {
      raw_.encode(v);
    }
  }

  ShadowStack stack_{nullptr, 0};
  bool compress_ = true;
  bool discard_ = false;
  std::uint64_t events_ = 0;
  std::uint64_t large_values_ = 0;  // events >= 0x8000 (4 raw bytes, not 2)
  std::uint64_t payload_bytes_ = 0;
  std::uint64_t sequence_ = 0;
  std::uint64_t closed_at_end_ = 0;
  std::uint32_t flush_countdown_ = kFlushCheckEvents;
  std::uint64_t flush_interval_ns_ = 0;
  std::uint64_t last_flush_ns_ = 0;
  int fd_ = -1;
  int write_error_ = 0;
  std::uint64_t tid_ = 0;
  std::uint64_t pid_ = 0;
  std::uint8_t* block_ = nullptr;  // BlockHeader, then payload
  std::size_t block_bytes_ = 0;
  std::size_t map_bytes_ = 0;
  ShadowFrame* frames_ = nullptr;
  std::size_t frames_bytes_ = 0;
  LzEncoder lz_{*this, {}};
  RawEncoder raw_{*this, {}};
};

}  // namespace parlot::runtime
