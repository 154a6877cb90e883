// LEB128 varints as the side records store them (docs/FORMAT.md, "Version
// 2"): internal to the reader library.
#pragma once

#include <cstdint>

namespace parlot::detail {

/// Reads an unsigned LEB128 varint at `p` (< `end`) into `v` and advances
/// `p`. Returns false when it is cut short or longer than 10 bytes.
inline bool read_varint(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& v) {
  v = 0;
  for (unsigned shift = 0; shift < 70 && p < end; shift += 7) {
    const std::uint8_t b = *p++;
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace parlot::detail
