#include "hot_path/thread_trace.h"

#include "hot_path/thread_stack.h"
#include "libcalls/libcall_patcher.h"
#include "libcalls/libcall_shadow.h"
#include "parlot/crc32c.h"
#include "sleds/sled_patcher.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <new>
#include <type_traits>

#include "errno_keeper.h"
#include "hot_path/current_trace.h"
#include "hot_path/leb128.h"
#include "hot_path/trace_owner.h"
#include "hot_path/trace_writes.h"
#include "io/raw_io.h"
#include "time/monotonic_clock.h"

namespace parlot::runtime {
namespace {

// The tick first, then the clock: the tick seen changed no later than the
// time read.
std::uint32_t tick_now() {
  return g_clock_tick.load(std::memory_order_acquire);
}

void* map_anonymous(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

constexpr std::size_t kHeader = sizeof(format::BlockHeader);
// Flight recorder: events between two looks at how full the block is.
constexpr std::uint32_t kFlightCheckEvents = 256;

}  // namespace

ThreadTrace* ThreadTrace::create(const char* dir, std::uint64_t thread_index, format::Codec codec,
                                 std::size_t buffer_bytes, std::size_t max_depth,
                                 std::uint64_t flush_interval_ns, bool discard,
                                 std::uint32_t clock_events, std::size_t flight_bytes, int& error) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t object = (sizeof(ThreadTrace) + 63) & ~std::size_t{63};
  const std::size_t block = kHeader + buffer_bytes;
  const std::size_t map_bytes = (object + block + page - 1) & ~(page - 1);
  void* mem = map_anonymous(map_bytes);
  const std::size_t frames_bytes =
      (ShadowStack::storage_frames(max_depth) * sizeof(ShadowFrame) + page - 1) & ~(page - 1);
  void* frames = map_anonymous(frames_bytes);
  if (mem == nullptr || frames == nullptr) {
    error = ENOMEM;
    if (mem != nullptr) munmap(mem, map_bytes);
    if (frames != nullptr) munmap(frames, frames_bytes);
    return nullptr;
  }
  // Default-initialised, not value-initialised: "ThreadTrace()" would zero
  // the whole object first (the encoder's ~1 MiB), touching every page of
  // the fresh mapping, which holds zero bytes already.
  auto* t = new (mem) ThreadTrace;
  t->map_bytes_ = map_bytes;
  t->block_ = static_cast<std::uint8_t*>(mem) + object;
  t->block_bytes_ = block;
  t->frames_ = static_cast<ShadowFrame*>(frames);
  t->frames_bytes_ = frames_bytes;
  t->stack_ = ShadowStack(t->frames_, max_depth);
  // The thread's own stack (for handlers on alternate stacks, coroutines).
  // Not pthread_getattr_np: it allocates (thread_stack.h).
  if (std::uintptr_t lo = 0, hi = 0; thread_stack(&lo, &hi)) {
    t->stack_.set_thread_stack(lo, hi);
    if (g_libcalls_on || g_sleds_found) {
      map_libcall_shadow(lo, hi, &t->libcall_lo, &t->libcall_hi);
      t->return_shadow_tried = true;
    }
  }
  t->codec_ = codec;
  t->discard_ = discard;
  t->flush_interval_ns_ = flush_interval_ns;
  t->clock_events_ = clock_events;
  t->countdown_period_ =
      clock_events != 0 && clock_events < kFlushCheckEvents ? clock_events : kFlushCheckEvents;
  t->thread_index_ = thread_index;
  t->clock_period_ = t->clock_left_ = t->countdown_period_;
  if (flight_bytes != 0 && codec == format::Codec::kLzRank) {
    // A restart point is taken at a countdown once 3/4 of the block is
    // used: at most kFlightCheckEvents events later, well before it fills.
    // The clock is still read every clock_period_ events: the looks in
    // between cost a compare.
    t->countdown_period_ = std::min(t->countdown_period_, kFlightCheckEvents);
    t->flight_target_ = buffer_bytes / 4 * 3;
    t->flush_interval_ns_ = 0;  // nothing to write while it runs
    // The configured memory holds the ring and the block being encoded.
    if (flight_bytes <= block || !t->ring_.map(flight_bytes - block)) {
      error = ENOMEM;
      destroy(t);
      return nullptr;
    }
    t->finished_ = false;  // no file to open: the ring takes the blocks
  }
  t->reset_stream(true);  // in the fresh mapping: zero bytes
  if (t->flight()) {
    // No file: a dump writes the window (write_flight_window).
    t->tid_ = static_cast<std::uint64_t>(syscall(SYS_gettid));
    t->thread = pthread_self();
    t->pid_ = static_cast<std::uint64_t>(getpid());
    t->start_ns_ = realtime_ns();
    t->finished_ = false;
    error = 0;
    return t;
  }
  error = t->open_file(dir, thread_index);
  if (error != 0) {
    destroy(t);
    return nullptr;
  }
  return t;
}

void ThreadTrace::map_return_shadow() {
  if (return_shadow_tried) return;
  return_shadow_tried = true;
  const ErrnoKeeper keep_errno;
  if (std::uintptr_t lo = 0, hi = 0; thread_stack(&lo, &hi))
    map_libcall_shadow(lo, hi, &libcall_lo, &libcall_hi);
}

void ThreadTrace::destroy(ThreadTrace* t) {
  if (t == nullptr) return;
  const std::size_t frames_bytes = t->frames_bytes_;
  void* frames = t->frames_;
  const std::size_t map_bytes = t->map_bytes_;
  t->ring_.unmap();
  t->~ThreadTrace();
  munmap(frames, frames_bytes);
  munmap(t, map_bytes);
}

bool ThreadTrace::zero_encoder_storage() {
  // The whole pages inside encoder_ are dropped (a private anonymous
  // mapping reads zero afterwards, and a fork child's copy-on-write pages are
  // not copied first); the bytes before and after them are cleared.
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto lo = reinterpret_cast<std::uintptr_t>(encoder_);
  const std::uintptr_t hi = lo + kEncoderBytes;
  const std::uintptr_t first = (lo + page - 1) & ~(page - 1);
  const std::uintptr_t last = hi & ~(page - 1);
  if (last <= first || madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) {
    return false;
  }
  std::memset(encoder_, 0, first - lo);
  std::memset(reinterpret_cast<void*>(last), 0, hi - last);
  return true;
}

void ThreadTrace::reset_stream(bool zeroed_storage) {
  // The encoders are trivially destructible: a new one replaces the old.
  static_assert(std::is_trivially_destructible_v<LzEncoder> &&
                std::is_trivially_destructible_v<RawEncoder> &&
                std::is_trivially_destructible_v<RankEncoder>);
  const codec::OutputWindow w{block_ + kHeader, block_ + block_bytes_};
  switch (codec_) {
    case format::Codec::kRawWords:
      new (encoder_) RawEncoder(*this, w);
      break;
    case format::Codec::kLzZe:
      new (encoder_) LzEncoder(*this, w);
      break;
    case format::Codec::kLzRank:
      if (zeroed_storage) {
        new (encoder_) RankEncoder(*this, w, codec::ZeroedStorage{});
      } else {
        new (encoder_) RankEncoder(*this, w);
      }
      break;
  }
  events_before_countdown_ = large_values_ = payload_bytes_ = sequence_ = closed_at_end_ = 0;
  dropped_events = 0;
  write_error_ = 0;
  events_noted_ = 0;
  countdown_start_ = countdown_period_;
  in_put_ = 0;
  set_countdown(countdown_period_, false);
  flush_check_left_ = kFlushCheckEvents;
  clock_tick_seen_ = tick_now();
  last_flush_ns_ = monotonic_ns();
  side_used_ = sizeof(format::BlockHeader);
  side_record_ = 0;
  site_record_ = 0;
  mpi_stage_used_ = 0;
  // The stream's first event is being put (a thread's first hook, a fork
  // child's first event): the first sample is a read at that event.
  last_read_next_ = 1;
  last_read_ns_ = last_flush_ns_;
  if (clock_events_ != 0) clock_filter_.start(0, last_flush_ns_, clock_sink());
  if (flight()) push_restart(0, 0);  // the stream's start: nothing open
}

void ThreadTrace::on_countdown(std::uint32_t v) {
  if (flight() && static_cast<std::size_t>(rank_encoder().output_position() - (block_ + kHeader)) >=
                      flight_target_) [[unlikely]] {
    flight_restart(v);
  }
  events_before_countdown_ += countdown_start_;  // the countdown ran out: countdown() is 0
  countdown_start_ = countdown_period_;
  set_countdown(countdown_period_, true);  // called by put(), for the event being put
  if (clock_left_ > countdown_period_) {
    clock_left_ -= countdown_period_;  // flight: a look at the block only
    return;
  }
  clock_left_ = clock_period_;
  const std::uint64_t events = events_before_countdown_;
  const std::uint64_t now = read_clock_at_event(events - 1);  // the event being put
  if (flush_check_left_ > countdown_period_) {
    flush_check_left_ -= countdown_period_;
    return;
  }
  flush_check_left_ = kFlushCheckEvents;
  flush_if_due(now);
}

void ThreadTrace::on_clock_tick() {
  read_clock_at_event(events() - 1);  // inside put(): events() counts the event being put
}

std::uint64_t ThreadTrace::read_clock_at_event(std::uint64_t index) {
  clock_tick_seen_ = tick_now();
  const std::uint64_t now = monotonic_ns();  // vDSO: no system call
  if (clock_events_ == 0) return now;
  clock_between_events(index, now);
  clock_filter_.offer(index, now, clock_sink());
  last_read_next_ = index + 1;
  last_read_ns_ = now;
  return now;
}

void ThreadTrace::clock_between_events(std::uint64_t next, std::uint64_t now) {
  if (clock_events_ == 0 || now < last_read_ns_) return;
  // Within a tick period of the last read (or no tick running): the events
  // since that read are placed to within the period already.
  const std::uint64_t period = g_clock_tick_ns.load(std::memory_order_relaxed);
  if (period == 0 || now - last_read_ns_ <= period) return;
  // A stall: the events since the last read saw the tick it saw, so they
  // happened before the next tick, within one period of that read.
  if (next > last_read_next_) clock_filter_.offer(next - 1, last_read_ns_, clock_sink());
  last_read_next_ = next;
  last_read_ns_ = now;
}

void ThreadTrace::clock_read_between_events() {
  if (clock_events_ == 0 || finished_) return;
  clock_between_events(events(), monotonic_ns());
}

void ThreadTrace::commit_clock_samples() {
  if (clock_events_ == 0) return;
  clock_between_events(events(), monotonic_ns());
  clock_filter_.commit(clock_sink());
}

void ThreadTrace::flush_if_due(std::uint64_t now) {
  if (flush_interval_ns_ == 0) return;
  if (now - last_flush_ns_ < flush_interval_ns_) return;
  write_encoded();
}

void ThreadTrace::write_encoded() {
  if (codec_ == format::Codec::kLzRank) {
    rank_encoder().flush();  // ends the coder's segment: a whole block
  } else {
    drain(encoder_window());
  }
}

codec::OutputWindow& ThreadTrace::encoder_window() {
  switch (codec_) {
    case format::Codec::kRawWords:
      return raw_encoder().window();
    case format::Codec::kLzZe:
      return lz_encoder().window();
    case format::Codec::kLzRank:
      break;
  }
  return rank_encoder().window();
}

bool ThreadTrace::encoder_holds_events() {
  if (codec_ == format::Codec::kLzRank) {
    return rank_encoder().segment_events() != 0 || rank_encoder().pending_match() != 0;
  }
  return encoder_window().cur != block_ + kHeader;
}

void ThreadTrace::add_clock_sample(std::uint64_t index, std::uint64_t now) {
  constexpr std::size_t kMaxPair = 20;  // two varints
  constexpr std::size_t kRecordStart = sizeof(format::AuxRecordHeader) + sizeof(std::uint64_t);
  if (side_record_ != 0) {
    const std::size_t data = side_used_ - side_record_ - sizeof(format::AuxRecordHeader);
    if (side_used_ + kMaxPair > kSideBytes || data + kMaxPair > 0xffff) {
      write_side_records();
    }
  }
  if (side_record_ == 0) {
    if (side_used_ + kRecordStart > kSideBytes) write_side_records();
    side_record_ = side_used_;
    format::AuxRecordHeader h{};
    h.kind = static_cast<std::uint8_t>(format::AuxKind::kClockSamples);
    h.data_bytes = sizeof(std::uint64_t);
    h.event_index = index;
    std::memcpy(side_ + side_used_, &h, sizeof h);
    std::memcpy(side_ + side_used_ + sizeof h, &now, sizeof now);
    side_used_ += kRecordStart;
  } else {
    // Indices and times never go back; clamp in case a caller raced one.
    const std::uint64_t di = index > last_sample_index_ ? index - last_sample_index_ : 0;
    const std::uint64_t dt = now > last_sample_ns_ ? now - last_sample_ns_ : 0;
    std::uint8_t* p = put_varint(side_ + side_used_, di);
    p = put_varint(p, dt);
    const auto n = static_cast<std::size_t>(p - (side_ + side_used_));
    side_used_ += n;
    std::uint16_t data_bytes;
    std::memcpy(&data_bytes, side_ + side_record_ + 2, sizeof data_bytes);
    data_bytes = static_cast<std::uint16_t>(data_bytes + n);
    std::memcpy(side_ + side_record_ + 2, &data_bytes, sizeof data_bytes);
  }
  site_record_ = 0;  // the next call site starts a record of its own
  if (index > last_sample_index_) last_sample_index_ = index;
  if (now > last_sample_ns_) last_sample_ns_ = now;
}

format::TraceFileHeader ThreadTrace::file_header(std::uint16_t version, std::uint64_t start_ns,
                                                 std::uint32_t flags) const {
  format::TraceFileHeader h{};
  std::memcpy(h.magic, format::kTraceMagic, sizeof h.magic);
  h.version = version;
  h.codec = static_cast<std::uint16_t>(codec_);
  h.header_bytes = sizeof h;
  h.tid = tid_;
  h.pid = pid_;
  h.start_ns = start_ns;
  h.thread_index = thread_index_;
  h.flags = flags;
  return h;
}

int ThreadTrace::open_file(const char* dir, std::uint64_t thread_index) {
  tid_ = static_cast<std::uint64_t>(syscall(SYS_gettid));
  thread = pthread_self();
  pid_ = static_cast<std::uint64_t>(getpid());
  char name[96];
  TextBuilder n(name, sizeof name);
  n.str("thread-").u64(thread_index).ch('-').u64(tid_).str(".trace");
  if (!join_path(path_, sizeof path_, dir, n.c_str())) return ENAMETOOLONG;
  thread_index_ = thread_index;
  // write_side_block() checksums every PAUX block.
  const format::TraceFileHeader h =
      file_header(format::kVersion, realtime_ns(), format::kTraceFlagAuxChecksums);
  const int err = create_trace_file(path_, &h, sizeof h, file_id_);
  if (err == 0) {
    finished_ = false;
    file_bytes_ = sizeof h;
  }
  return err;
}

int ThreadTrace::append(const void* data, std::size_t n) {
  if (is_untraced_copy(pid_)) {
    // This process is a raw clone's child: the file is its parent's.
    // Nothing is written, nothing said (the child is not traced).
    failure_reported = true;
    write_error_ = ESRCH;
    return write_error_;
  }
  write_error_ = append_trace_file(path_, file_id_, data, n, file_bytes_);
  if (write_error_ == 0) file_bytes_ += n;
  return write_error_;
}

void ThreadTrace::drain(codec::OutputWindow& w) {
  const ErrnoKeeper keep_errno;  // the block, the failure report, the metadata
  std::uint8_t* payload = block_ + kHeader;
  const std::size_t n = static_cast<std::size_t>(w.cur - payload);
  w.cur = payload;
  last_flush_ns_ = monotonic_ns();
  if (clock_events_ != 0) {
    // Between events (inside put(), events() counts the event being put):
    // the samples read so far go out with this block, none of its own, so
    // no sample claims a time for an event still to come (a thread that
    // then waits).
    clock_between_events(events(), last_flush_ns_);
    clock_filter_.commit(clock_sink());
  }
  if (n == 0 || finished_ || write_error_ != 0) return;
  if (discard_) return;  // PARLOT_DISCARD: benchmarks without file I/O
  if (flight()) {
    // The flight recorder's steady state: the block goes to the ring, no
    // system call (the oldest blocks make room).
    ring_.push(format::BlockHeader{format::kBlockMagic, static_cast<std::uint32_t>(n), 0},
               RingBlock::kData, payload, n);
    write_side_records();
    return;
  }
  format::BlockHeader h{format::kBlockMagic, static_cast<std::uint32_t>(n), sequence_++};
  std::memcpy(block_, &h, sizeof h);
  payload_bytes_ += n;
  if (append(block_, kHeader + n) != 0) {
    report_thread_failure(*this);
    return;
  }
  const std::uint64_t written = events();
  note_events_written(written - events_noted_);
  events_noted_ = written;
  write_side_records();
  // The names of what was just written must survive a crash too.
  flush_process_metadata();
}

int ThreadTrace::finish() {
  if (flight()) {
    if (!finished_) {
      // The window closes: exits for the open frames, everything the
      // encoder holds, the last clock sample and the side records, all to
      // the ring; the thread writes no more.
      Emitter e{this};
      closed_at_end_ = stack_.close_all(e);
      rank_encoder().flush();
      const std::uint64_t events = this->events();
      if (clock_events_ != 0) {
        const std::uint64_t now = monotonic_ns();
        clock_between_events(events, now);
        clock_filter_.keep(events, now, clock_sink());
      }
      write_side_records();
      finished_ = true;
    }
    const char* dir = flight_dump_dir();
    return dir != nullptr ? write_flight_file(dir) : 0;
  }
  if (finished_) return 0;
  Emitter e{this};
  closed_at_end_ = stack_.close_all(e);
  if (codec_ == format::Codec::kLzZe) lz_encoder().finish();
  if (codec_ == format::Codec::kLzRank) rank_encoder().finish();
  codec::OutputWindow* w = &encoder_window();
  // The final data block (event count, then the last bytes) and the
  // trailer go out in one write, so a file either has both or ends at a
  // block boundary before them.
  std::uint8_t* payload = block_ + kHeader;
  std::size_t n = static_cast<std::size_t>(w->cur - payload);
  const std::size_t count = sizeof(std::uint64_t);
  const std::size_t trailer = kHeader + sizeof(format::TrailerPayload);
  if (kHeader + count + n + trailer > block_bytes_) {
    drain(*w);
    n = 0;
  }
  // The last clock sample (end of the stream) and the side records still
  // buffered go out before the final block.
  const std::uint64_t events = this->events();
  if (clock_events_ != 0) {
    const std::uint64_t now = monotonic_ns();
    clock_between_events(events, now);  // a stall before the end pins the last events
    clock_filter_.keep(events, now, clock_sink());
  }
  write_side_records();
  if (discard_) n = 0;  // PARLOT_DISCARD: the final block holds only the count
  std::memmove(payload + count, payload, n);
  std::memcpy(payload, &events, count);
  format::BlockHeader h{format::kFinalBlockMagic, static_cast<std::uint32_t>(count + n),
                        sequence_++};
  std::memcpy(block_, &h, sizeof h);
  payload_bytes_ += count + n;
  std::uint8_t* p = block_;
  std::size_t total = kHeader + count + n;
  const auto& c = stack_.counters();
  format::TrailerPayload tp{};
  tp.events = events;
  tp.raw_bytes = 2 * events + 2 * large_values_;  // codec::raw_bytes_of, summed
  tp.payload_bytes = payload_bytes_;
  tp.end_ns = realtime_ns();
  tp.dropped_events = dropped_events + c.overflowed;
  tp.corrected_exits = c.corrected_exits;
  tp.unmatched_exits = c.unmatched_exits;
  tp.closed_at_end = closed_at_end_;
  tp.max_depth = stack_.max_depth();
  format::BlockHeader th{format::kTrailerMagic, sizeof tp, sequence_++};
  std::memcpy(p + total, &th, sizeof th);
  std::memcpy(p + total + kHeader, &tp, sizeof tp);
  total += trailer;
  int err = write_error_;
  if (err == 0) err = append(p, total);
  finished_ = true;
  return err;
}

int ThreadTrace::restart_in_child(const char* dir, std::uint64_t thread_index, FunctionIds& ids) {
  finished_ = true;
  if (flight()) {
    // The parent's window is the parent's: the child's starts empty.
    ring_.clear();
    finished_ = false;
  }
  reset_stream(zero_encoder_storage());
  int err = 0;
  if (flight()) {
    tid_ = static_cast<std::uint64_t>(syscall(SYS_gettid));
    thread = pthread_self();
    pid_ = static_cast<std::uint64_t>(getpid());
    start_ns_ = realtime_ns();
    thread_index_ = thread_index;
    finished_ = false;
  } else {
    err = open_file(dir, thread_index);
  }
  if (err != 0) return err;
  // A new stream: its reader knows no call site yet, and no frame's last
  // callee.
  std::memset(sites_, 0, sizeof sites_);
  for (std::size_t i = 0; i <= stack_.depth(); ++i) stack_.below(i).last_child_site = 0;
  // Frame i is at depth i + 1: only those within PARLOT_MAX_DEPTH emitted
  // their entry, and only they will emit an exit. Each gets the call site
  // its frame was entered from, as in the parent.
  for (std::size_t i = 0; i < stack_.depth() && i < stack_.record_depth(); ++i) {
    const ShadowFrame& f = stack_.frame(i);
    if (!sites_off_) {
      ShadowFrame& caller = stack_.below(i);
      note_site(caller, f.function, f.call_site);
      caller.last_child_site = f.call_site;
    }
    // Function IDs survive fork: the child's function table holds them all.
    Emitter{this, false}.emit_enter(ids.lookup(f.function));
  }
  return 0;
}

}  // namespace parlot::runtime
