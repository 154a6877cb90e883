// A thread's side records (docs/FORMAT.md "Side records"): clock samples
// are written in thread_trace.cpp; here generic records, call sites (kind
// 6), MPI call records (kinds 3 and 8) and the PAUX block that carries them.
#include <algorithm>
#include <cstring>

#include "errno_keeper.h"
#include "hot_path/leb128.h"
#include "hot_path/thread_trace.h"
#include "hot_path/trace_writes.h"
#include "parlot/crc32c.h"

namespace parlot::runtime {

void ThreadTrace::add_side_record(format::AuxKind kind, std::uint64_t event_index, const void* data,
                                  std::size_t n) {
  if (finished_) return;
  n = std::min(n, kMaxSideData);
  if (kind == format::AuxKind::kMpiCall) {
    add_mpi_call(event_index, data, n);
    return;
  }
  const std::size_t bytes = sizeof(format::AuxRecordHeader) + n;
  static_assert(sizeof(format::BlockHeader) + sizeof(format::AuxRecordHeader) + kMaxSideData <=
                kSideBytes);
  if (side_used_ + bytes > kSideBytes) write_side_records();
  format::AuxRecordHeader h{};
  h.kind = static_cast<std::uint8_t>(kind);
  h.data_bytes = static_cast<std::uint16_t>(n);
  h.event_index = event_index;
  std::memcpy(side_ + side_used_, &h, sizeof h);
  if (n != 0) std::memcpy(side_ + side_used_ + sizeof h, data, n);
  side_used_ += bytes;
  side_record_ = 0;  // the next clock sample starts a record of its own
  site_record_ = 0;  // and the next call site
}

void ThreadTrace::add_call_site(std::uint64_t entry, std::uintptr_t site) {
  constexpr std::size_t kMaxEntry = 20;  // two varints
  constexpr std::size_t kMaxData = 0xffff;
  if (finished_) return;
  if (site_record_ != 0) {
    const std::size_t data = side_used_ - site_record_ - sizeof(format::AuxRecordHeader);
    if (side_used_ + kMaxEntry > kSideBytes || data + kMaxEntry > kMaxData) write_side_records();
  }
  if (site_record_ == 0) {
    if (side_used_ + sizeof(format::AuxRecordHeader) + kMaxEntry > kSideBytes) {
      write_side_records();
    }
    site_record_ = side_used_;
    format::AuxRecordHeader h{};
    h.kind = static_cast<std::uint8_t>(format::AuxKind::kCallSites);
    h.event_index = entry;
    std::memcpy(side_ + side_used_, &h, sizeof h);
    side_used_ += sizeof h;
    last_site_entry_ = entry;
    last_site_ = 0;
  }
  // Entries come in stream order: the event delta is never negative.
  const auto delta = static_cast<std::int64_t>(site - last_site_);
  std::uint8_t* p = put_varint(side_ + side_used_, entry - last_site_entry_);
  p = put_varint(
      p, (static_cast<std::uint64_t>(delta) << 1) ^ static_cast<std::uint64_t>(delta >> 63));
  const auto n = static_cast<std::size_t>(p - (side_ + side_used_));
  side_used_ += n;
  std::uint16_t data_bytes;
  std::memcpy(&data_bytes, side_ + site_record_ + 2, sizeof data_bytes);
  data_bytes = static_cast<std::uint16_t>(data_bytes + n);
  std::memcpy(side_ + site_record_ + 2, &data_bytes, sizeof data_bytes);
  last_site_entry_ = entry;
  last_site_ = site;
  side_record_ = 0;  // the next clock sample starts a record of its own
}

void ThreadTrace::add_mpi_call(std::uint64_t entry, const void* data, std::size_t n) {
  static_assert(sizeof(format::BlockHeader) + sizeof(format::AuxRecordHeader) + kMpiStageBytes <=
                    kSideBytes &&
                kMpiStageBytes <= 0xffff && 20 + kMaxSideData <= kMpiStageBytes);
  // Framing: zigzag delta of the entry event from the previous call's (a
  // call's record may follow those of calls nested in it), then the count.
  std::uint8_t framing[20];
  auto frame = [&]() {
    const std::uint64_t from = mpi_stage_used_ == 0 ? entry : mpi_last_entry_;
    const auto delta = static_cast<std::int64_t>(entry - from);
    std::uint8_t* p = put_varint(framing, (static_cast<std::uint64_t>(delta) << 1) ^
                                              static_cast<std::uint64_t>(delta >> 63));
    p = put_varint(p, n);
    return static_cast<std::size_t>(p - framing);
  };
  std::size_t f = frame();
  if (mpi_stage_used_ + f + n > kMpiStageBytes) {
    move_mpi_stage_to_side();
    f = frame();
  }
  if (mpi_stage_used_ == 0) mpi_first_entry_ = entry;
  std::memcpy(mpi_stage_ + mpi_stage_used_, framing, f);
  if (n != 0) std::memcpy(mpi_stage_ + mpi_stage_used_ + f, data, n);
  mpi_stage_used_ += f + n;
  mpi_last_entry_ = entry;
}

void ThreadTrace::move_mpi_stage_to_side() {
  if (mpi_stage_used_ == 0) return;
  const std::size_t bytes = sizeof(format::AuxRecordHeader) + mpi_stage_used_;
  if (side_used_ + bytes > kSideBytes) write_side_block();
  format::AuxRecordHeader h{};
  h.kind = static_cast<std::uint8_t>(format::AuxKind::kMpiCalls);
  h.data_bytes = static_cast<std::uint16_t>(mpi_stage_used_);
  h.event_index = mpi_first_entry_;
  std::memcpy(side_ + side_used_, &h, sizeof h);
  std::memcpy(side_ + side_used_ + sizeof h, mpi_stage_, mpi_stage_used_);
  side_used_ += bytes;
  side_record_ = 0;  // the next clock sample starts a record of its own
  site_record_ = 0;  // and the next call site
  mpi_stage_used_ = 0;
}

void ThreadTrace::write_side_records() {
  move_mpi_stage_to_side();
  write_side_block();
}

void ThreadTrace::write_side_block(RingBlock what) {
  const std::size_t payload = side_used_ - sizeof(format::BlockHeader);
  side_used_ = sizeof(format::BlockHeader);
  side_record_ = 0;
  site_record_ = 0;
  if (payload == 0 || finished_ || write_error_ != 0 || discard_) return;
  // The block's checksum, its last record (docs/FORMAT.md "Kind 5"): a
  // reader then tells an overwritten clock sample from a real one.
  format::AuxRecordHeader c{};
  c.kind = static_cast<std::uint8_t>(format::AuxKind::kBlockChecksum);
  c.data_bytes = sizeof(std::uint32_t);
  const std::uint32_t crc = crc32c::of(side_ + sizeof(format::BlockHeader), payload);
  std::uint8_t* const end = side_ + sizeof(format::BlockHeader) + payload;
  std::memcpy(end, &c, sizeof c);
  std::memcpy(end + sizeof c, &crc, sizeof crc);
  const std::size_t block_payload = payload + format::kBlockChecksumRecordBytes;
  format::BlockHeader h{format::kAuxBlockMagic, static_cast<std::uint32_t>(block_payload),
                        sequence_++};
  std::memcpy(side_, &h, sizeof h);
  if (flight()) {
    ring_.push(h, what, side_ + sizeof h, block_payload);
    return;
  }
  const ErrnoKeeper keep_errno;  // inside hooks: clock samples, MPI calls
  if (append(side_, sizeof h + block_payload) != 0) report_thread_failure(*this);
}

}  // namespace parlot::runtime
