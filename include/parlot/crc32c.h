// CRC32C (Castagnoli, reflected polynomial 0x82f63b78, initial value and
// final xor 0xffffffff: the CRC of iSCSI, ext4 and SSE 4.2's crc32
// instruction), computed bytewise from a table built at compile time. The
// runtime checksums each side-record block with it when the block is
// written (not on the hot path), the reader checks it (docs/FORMAT.md,
// "Kind 5, block checksum"). No allocation, no system call: usable in the
// runtime's signal-safe paths.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace parlot::crc32c {

namespace detail {
constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) ? 0x82f63b78u : 0u);
    t[i] = c;
  }
  return t;
}
inline constexpr std::array<std::uint32_t, 256> kTable = make_table();
}  // namespace detail

/// CRC32C of the `n` bytes at `data` (any alignment). crc32c("123456789")
/// is 0xe3069283.
constexpr std::uint32_t of(const std::uint8_t* data, std::size_t n) {
  std::uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) c = detail::kTable[(c ^ data[i]) & 0xffu] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

}  // namespace parlot::crc32c
