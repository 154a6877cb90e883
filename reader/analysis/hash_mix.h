// The hash combination the loop-summary analyses share (loops, parting,
// loop_diff): their content hashes must be computed alike.
#pragma once

#include <cstdint>

namespace parlot::analysis {

/// `h` combined with `v` (boost-style mix, then a 64-bit multiply); not
/// commutative: the order of the values counts.
inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

}  // namespace parlot::analysis
