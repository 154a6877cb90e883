// The flight recorder's ring (PARLOT_MODE=flight): a thread's most recent
// file blocks kept in memory instead of written, oldest dropped first
// (docs/DESIGN.md, "Flight recorder"). One mapping of exactly the
// configured size; no allocation, no system call once mapped.
#pragma once

#include <cstddef>
#include <cstdint>

#include "parlot/format.h"

namespace parlot::runtime {

/// What a block in the ring is (kept in its header's sequence field while
/// it is in the ring; a dump numbers the blocks anew).
enum class RingBlock : std::uint64_t {
  kData = 0,  ///< a data block (PBLK): codec bytes
  kSide = 1,  ///< side records (PAUX)
  kRestart =
      2,  ///< a restart point (PAUX, one kind-7 record): the next data block starts a fresh codec
};

/// A byte FIFO of whole file blocks (16-byte BlockHeader, then payload)
/// in one anonymous mapping. push() drops the oldest blocks until the new
/// one fits. Used only by its own thread, or by a dump while that thread is
/// held out of its hooks; async-signal-safe.
class FlightRing {
 public:
  /// Maps `bytes` (rounded up to whole pages) for the ring. Returns false
  /// when the mapping cannot be had.
  bool map(std::size_t bytes);
  /// Unmaps the ring (nothing if none).
  void unmap();
  /// True once map() succeeded.
  bool mapped() const { return base_ != nullptr; }
  /// Capacity in bytes.
  std::size_t capacity() const { return cap_; }
  /// Drops every block (a fork child's window starts empty).
  void clear() { tail_ = used_ = 0; }
  /// Bytes in use.
  std::size_t used() const { return used_; }

  /// Appends a block: header `h` (its sequence field set to `what`), then
  /// `n` payload bytes of `payload`. Drops the oldest blocks while it does
  /// not fit. Returns false (nothing appended) when one block is bigger than
  /// the whole ring.
  bool push(format::BlockHeader h, RingBlock what, const void* payload, std::size_t n);

  /// A position in the ring: the offset of a block's header from the
  /// oldest block's (0 .. used()).
  using Position = std::size_t;
  /// The header of the block at `p` (p < used()).
  format::BlockHeader header_at(Position p) const;
  /// Copies `n` bytes starting `skip` bytes after the header of the block
  /// at `p` into `out`.
  void copy_payload(Position p, std::size_t skip, void* out, std::size_t n) const;
  /// The payload of the block at `p` as at most two contiguous pieces (the
  /// second empty unless it wraps): for writing without a copy.
  void payload_pieces(Position p, const std::uint8_t** a, std::size_t* an, const std::uint8_t** b,
                      std::size_t* bn) const;
  /// The position after the block at `p`.
  Position next(Position p) const;

 private:
  void copy_out(std::size_t offset, void* out, std::size_t n) const;  // offset from the oldest
  void copy_in(const void* data, std::size_t n);                      // at the head

  std::uint8_t* base_ = nullptr;
  std::size_t cap_ = 0;
  std::size_t map_bytes_ = 0;
  std::size_t tail_ = 0;  // offset of the oldest block in the mapping
  std::size_t used_ = 0;
};

}  // namespace parlot::runtime
