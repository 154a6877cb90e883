// The flight recorder's side of a thread trace (docs/DESIGN.md "Flight
// recorder"): restart points that open each ring block, and the window
// written from the ring on a trigger.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <new>

#include "errno_keeper.h"
#include "hot_path/current_trace.h"
#include "hot_path/leb128.h"
#include "hot_path/thread_trace.h"
#include "io/raw_io.h"
#include "parlot/crc32c.h"
#include "time/monotonic_clock.h"

namespace parlot::runtime {
namespace {

constexpr std::size_t kHeader = sizeof(format::BlockHeader);

}  // namespace

void ThreadTrace::flight_restart(std::uint32_t v) {
  // Inside put(): events() counts the event being put, the new block's
  // first. Its frames open before it: an entry's own frame is on top of
  // the shadow stack already; an exit's frame was just popped and is
  // still in the stack's storage, just above the top.
  const std::uint64_t index = events() - 1;
  const std::size_t depth = stack_.depth();
  const std::size_t frames = v != 0 ? (depth == 0 ? 0 : depth - 1) : depth + 1;
  if (kHeader + sizeof(format::AuxRecordHeader) + sizeof(std::uint64_t) + 4 * frames > kSideBytes) {
    return;  // too deep for one record: this block carries the codec state on
  }
  const ErrnoKeeper keep_errno;  // inside a hook: madvise below
  rank_encoder().flush();        // the block (whole segments) to the ring
  write_side_records();
  const codec::OutputWindow w{block_ + kHeader, block_ + block_bytes_};
  if (zero_encoder_storage()) {
    new (encoder_) RankEncoder(*this, w, codec::ZeroedStorage{});
  } else {
    new (encoder_) RankEncoder(*this, w);
  }
  push_restart(index, frames);
}

void ThreadTrace::push_restart(std::uint64_t index, std::size_t frames) {
  // The side buffer holds no record here (it was just written), so the
  // restart record is a block of its own.
  write_side_records();
  format::AuxRecordHeader h{};
  h.kind = static_cast<std::uint8_t>(format::AuxKind::kRestart);
  h.data_bytes = static_cast<std::uint16_t>(sizeof(std::uint64_t) + 4 * frames);
  h.event_index = index;
  std::uint8_t* p = side_ + side_used_;
  std::memcpy(p, &h, sizeof h);
  p += sizeof h;
  std::memcpy(p, &index, sizeof index);  // events recorded before it
  p += sizeof index;
  for (std::size_t i = 0; i < frames; ++i) {
    const std::uint32_t id = g_function_ids.lookup(stack_.frame(i).function);
    std::memcpy(p, &id, sizeof id);
    p += sizeof id;
  }
  side_used_ = static_cast<std::size_t>(p - side_);
  write_side_block(RingBlock::kRestart);
}

namespace {

// Copies the side records of a PAUX payload `in` (`n` bytes, ended by its
// checksum record) to `out` for a window whose first restart point was
// event `first` and that starts with `synthesized` entries: event index i
// becomes max(i, first) - first + synthesized (a clock sample about an
// event before the window is placed at its first event, so indices still
// never go back), and a checksum record computed anew ends them. Returns
// the bytes written (never more than `n`).
std::size_t rebase_side_records(const std::uint8_t* in, std::size_t n, std::uint8_t* out,
                                std::uint64_t first, std::uint64_t synthesized) {
  const auto rebase = [&](std::uint64_t i) {
    return (i < first ? first : i) - first + synthesized;
  };
  std::size_t at = 0;
  std::size_t o = 0;
  while (at + sizeof(format::AuxRecordHeader) <= n) {
    format::AuxRecordHeader h;
    std::memcpy(&h, in + at, sizeof h);
    if (h.kind == static_cast<std::uint8_t>(format::AuxKind::kBlockChecksum) ||
        at + sizeof h + h.data_bytes > n) {
      break;
    }
    const std::uint8_t* data = in + at + sizeof h;
    at += sizeof h + h.data_bytes;
    if (h.kind == static_cast<std::uint8_t>(format::AuxKind::kClockSamples) &&
        h.event_index < first && h.data_bytes >= sizeof(std::uint64_t)) {
      // Re-encoded with every index rebased: the deltas only shrink.
      std::uint8_t* const rec = out + o;
      std::uint8_t* q = rec + sizeof h + sizeof(std::uint64_t);
      std::memcpy(rec + sizeof h, data, sizeof(std::uint64_t));
      const std::uint8_t* p = data + sizeof(std::uint64_t);
      const std::uint8_t* const end = data + h.data_bytes;
      std::uint64_t index = h.event_index;
      std::uint64_t last = rebase(index);
      std::uint64_t di = 0;
      std::uint64_t dt = 0;
      while (p < end && get_varint(p, end, di) && get_varint(p, end, dt)) {
        index += di;
        const std::uint64_t now = rebase(index);
        q = put_varint(q, now - last);
        q = put_varint(q, dt);
        last = now;
      }
      h.event_index = rebase(h.event_index);
      h.data_bytes = static_cast<std::uint16_t>(q - rec - sizeof h);
      std::memcpy(rec, &h, sizeof h);
      o = static_cast<std::size_t>(q - out);
      continue;
    }
    h.event_index = rebase(h.event_index);
    std::memcpy(out + o, &h, sizeof h);
    std::memcpy(out + o + sizeof h, data, h.data_bytes);
    o += sizeof h + h.data_bytes;
  }
  format::AuxRecordHeader c{};
  c.kind = static_cast<std::uint8_t>(format::AuxKind::kBlockChecksum);
  c.data_bytes = sizeof(std::uint32_t);
  const std::uint32_t crc = crc32c::of(out, o);
  std::memcpy(out + o, &c, sizeof c);
  std::memcpy(out + o + sizeof c, &crc, sizeof crc);
  return o + format::kBlockChecksumRecordBytes;
}

}  // namespace

int ThreadTrace::write_flight_window(const char* dir) {
  if (!flight()) return 0;
  if (!finished_) {
    // Held out of its hooks: what the encoder holds goes to the ring (its
    // codec state carries on), with the clock samples read so far.
    rank_encoder().flush();
    commit_clock_samples();
    write_side_records();
  }
  return write_flight_file(dir);
}

int ThreadTrace::write_flight_file(const char* dir) {
  // The window starts at the oldest restart point left in the ring.
  FlightRing::Position first = 0;
  while (first < ring_.used() &&
         ring_.header_at(first).sequence != static_cast<std::uint64_t>(RingBlock::kRestart)) {
    first = ring_.next(first);
  }
  const std::uint64_t events = this->events();
  std::uint64_t before = events;  // events recorded before the window
  std::uint64_t synthesized = 0;  // frames open at its start
  if (first < ring_.used()) {
    format::AuxRecordHeader r{};
    ring_.copy_payload(first, 0, &r, sizeof r);
    before = r.event_index;
    synthesized = (r.data_bytes - sizeof(std::uint64_t)) / 4;
  }
  const std::uint64_t total = synthesized + (events - before);
  char name[96];
  TextBuilder nb(name, sizeof name);
  nb.str("thread-").u64(thread_index_).ch('-').u64(tid_).str(".trace");
  char path[1280];
  if (!join_path(path, sizeof path, dir, nb.c_str())) return ENAMETOOLONG;
  const int fd = open_trace_file(path, O_WRONLY | O_CREAT | O_EXCL);
  if (fd < 0) return -fd;
  const format::TraceFileHeader fh =
      file_header(format::kFlightVersion, start_ns_,
                  format::kTraceFlagAuxChecksums | format::kTraceFlagFlightWindow);
  int err = write_all(fd, &fh, sizeof fh);
  std::uint64_t sequence = 0;
  std::uint64_t payload_bytes = 0;
  alignas(8) std::uint8_t side[kSideBytes + format::kBlockChecksumRecordBytes];
  alignas(8) std::uint8_t rebased[kSideBytes + format::kBlockChecksumRecordBytes];
  for (FlightRing::Position p = first; err == 0 && p < ring_.used(); p = ring_.next(p)) {
    format::BlockHeader h = ring_.header_at(p);
    const bool data = h.sequence == static_cast<std::uint64_t>(RingBlock::kData);
    h.sequence = sequence++;
    if (data) {
      const std::uint8_t* a;
      const std::uint8_t* b;
      std::size_t an;
      std::size_t bn;
      ring_.payload_pieces(p, &a, &an, &b, &bn);
      payload_bytes += h.payload_bytes;
      err = write_all(fd, &h, sizeof h);
      if (err == 0) err = write_all(fd, a, an);
      if (err == 0 && bn != 0) err = write_all(fd, b, bn);
      continue;
    }
    if (h.payload_bytes > sizeof side) {  // not one of ours: never happens
      --sequence;
      continue;
    }
    ring_.copy_payload(p, 0, side, h.payload_bytes);
    h.payload_bytes = static_cast<std::uint32_t>(
        rebase_side_records(side, h.payload_bytes, rebased, before, synthesized));
    err = write_all(fd, &h, sizeof h);
    if (err == 0) err = write_all(fd, rebased, h.payload_bytes);
  }
  // The final block holds only the count; the trailer follows.
  struct {
    format::BlockHeader fin;
    std::uint64_t count;
    format::BlockHeader end;
    format::TrailerPayload tp;
  } __attribute__((packed)) tail{};
  tail.fin = {format::kFinalBlockMagic, sizeof(std::uint64_t), sequence++};
  tail.count = total;
  payload_bytes += sizeof(std::uint64_t);
  tail.end = {format::kTrailerMagic, sizeof(format::TrailerPayload), sequence++};
  const auto& c = stack_.counters();
  tail.tp.events = total;
  tail.tp.raw_bytes = 2 * total;
  tail.tp.payload_bytes = payload_bytes;
  tail.tp.end_ns = realtime_ns();
  tail.tp.dropped_events = dropped_events + c.overflowed;
  tail.tp.corrected_exits = c.corrected_exits;
  tail.tp.unmatched_exits = c.unmatched_exits;
  tail.tp.closed_at_end = finished_ ? closed_at_end_ : 0;
  tail.tp.max_depth = stack_.max_depth();
  if (err == 0) err = write_all(fd, &tail, sizeof tail);
  close(fd);
  return err;
}

}  // namespace parlot::runtime
