// The mirror of an object's text (sled_mirror.h).
#include "sleds/sled_mirror.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace parlot::runtime {

bool map_sled_mirror(const SledTable& table, std::uintptr_t entry, SledMirror& mirror) {
  const std::uintptr_t text_lo = table.text_lo;
  const std::uintptr_t text_hi = table.text_hi;
  mirror = SledMirror{};
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  // The displacement is negative: the mirror lies below the text.
  const auto below = static_cast<std::uintptr_t>(-kSledCallDisplacement) - kSledBytes;
  if (text_lo < below + page) return false;
  const std::uintptr_t lo = (text_lo - below) & ~(page - 1);
  const std::uintptr_t hub = ((text_hi - below) + page - 1) & ~(page - 1);
  const std::uintptr_t hi = hub + page;
  void* want = reinterpret_cast<void*>(lo);
  void* got = mmap(want, hi - lo, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  if (got == MAP_FAILED) return false;
  if (got != want) {  // a kernel without MAP_FIXED_NOREPLACE placed it elsewhere
    munmap(got, hi - lo);
    return false;
  }
  // The hub: jmp *0(%rip), then the entry's address.
  auto* h = reinterpret_cast<unsigned char*>(hub);
  const unsigned char jmp_indirect[6] = {0xff, 0x25, 0, 0, 0, 0};
  std::memcpy(h, jmp_indirect, sizeof jmp_indirect);
  std::memcpy(h + sizeof jmp_indirect, &entry, sizeof entry);
  // Each sled's target: jmp rel32 to the hub (E9, 5 bytes; sleds are at
  // least 6 bytes apart, a sled and a `ret`, so targets never overlap).
  for (std::size_t k = 0; k < table.sections; ++k) {
    for (std::size_t i = 0; i < table.count[k]; ++i) {
      const std::uintptr_t s = table.entries[k][i];
      if (s < text_lo || s + kSledBytes > text_hi) continue;
      auto* at = reinterpret_cast<unsigned char*>(sled_call_target(s));
      const auto rel = static_cast<std::int32_t>(
          static_cast<std::intptr_t>(hub) - static_cast<std::intptr_t>(sled_call_target(s) + 5));
      at[0] = 0xe9;
      std::memcpy(at + 1, &rel, sizeof rel);
    }
  }
  if (mprotect(want, hi - lo, PROT_READ | PROT_EXEC) != 0) {
    munmap(want, hi - lo);
    return false;
  }
  mirror.lo = lo;
  mirror.hi = hi;
  return true;
}

void unmap_sled_mirror(SledMirror& mirror) {
  if (mirror.hi != 0) munmap(reinterpret_cast<void*>(mirror.lo), mirror.hi - mirror.lo);
  mirror = SledMirror{};
}

}  // namespace parlot::runtime
