// Codec 2's block framing: a data block's payload is whole segments, each
// a u32 event count and then a fresh range coder's bytes (codec/FORMAT.md
// "Segments"). The sizes the encoder and the decoder both check.
#pragma once

#include <cstddef>
#include <cstdint>

#include "parlot/codec.h"

namespace parlot::codec::v2 {

/// Bytes a segment's header takes (its event count, u32 little-endian).
inline constexpr std::size_t kSegmentHeaderBytes = 4;
/// Output bytes reserved for one decision (length + literal) plus the
/// coder's final flush; the encoder starts a new segment when less is free.
inline constexpr std::size_t kReserveBytes = 160;
static_assert(kSegmentHeaderBytes + kReserveBytes <= kMinWindowBytes);
/// Largest event count of one segment (a u32; kept clear of overflow).
inline constexpr std::uint64_t kMaxSegmentEvents = 0xffffffffull - 2 * kMaxMatch;

}  // namespace parlot::codec::v2
