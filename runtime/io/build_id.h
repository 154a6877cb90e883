// Reads the GNU build ID from an ELF note segment (PT_NOTE) in memory.
// Async-signal-safe; used for the load map (object_table.cpp).
#pragma once

#include <elf.h>
#include <link.h>

#include <cstddef>
#include <cstring>

namespace parlot::runtime {

/// Scans the notes at [p, p + n) for NT_GNU_BUILD_ID. On success writes the
/// ID as lowercase hex, NUL-terminated, into `out` (room for `cap` bytes)
/// and returns true.
inline bool find_gnu_build_id(const unsigned char* p, std::size_t n, char* out, std::size_t cap) {
  const unsigned char* end = p + n;
  while (p + sizeof(ElfW(Nhdr)) <= end) {
    ElfW(Nhdr) nh;
    std::memcpy(&nh, p, sizeof nh);
    const unsigned char* name = p + sizeof nh;
    const unsigned char* desc = name + ((nh.n_namesz + 3) & ~3u);
    const unsigned char* next = desc + ((nh.n_descsz + 3) & ~3u);
    if (next > end) return false;
    if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
      if (2 * nh.n_descsz + 1 > cap) return false;
      static const char kHex[] = "0123456789abcdef";
      for (unsigned k = 0; k < nh.n_descsz; ++k) {
        out[2 * k] = kHex[desc[k] >> 4];
        out[2 * k + 1] = kHex[desc[k] & 15];
      }
      out[2 * nh.n_descsz] = '\0';
      return true;
    }
    p = next;
  }
  return false;
}

}  // namespace parlot::runtime
