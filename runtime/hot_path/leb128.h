// LEB128 varints for the runtime's side records (docs/FORMAT.md "Side
// records"). Async-signal-safe: no allocation, no system call.
#pragma once

#include <cstdint>

namespace parlot::runtime {

/** Writes `v` as an unsigned LEB128 varint at `p` (at most 10 bytes) and
 *  returns the byte after it. */
inline std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}

/** Reads an unsigned LEB128 varint at `p` (before `end`) into `v` and moves
 *  `p` past it; false when the input ends first or the varint is longer
 *  than 64 bits. */
inline bool get_varint(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& v) {
  v = 0;
  for (unsigned shift = 0; p < end && shift < 64; shift += 7) {
    const std::uint8_t b = *p++;
    v |= std::uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace parlot::runtime
