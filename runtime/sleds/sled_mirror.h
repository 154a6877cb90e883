// The mirror of an object's text (docs/DESIGN.md "Sleds"): a patched sled
// is `call rel32` with rel32 = 0x90909090 (E8 90 90 90 90), so that its
// last four bytes stay the NOPs gcc emits and a thread stopped between two
// of gcc's one-byte NOPs while the first byte changes runs on unharmed.
// Every sled then calls its own address + 5 + (int32)0x90909090, about
// 1.87 GB below it: the mirror maps that range once per object, with at
// each sled's target a `jmp` to the object's hub, which jumps to
// parlot_sled_entry (sled_trampolines.S). Mapped read-write while filled,
// then read-execute, never changed after.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sleds/sled_scan.h"

namespace parlot::runtime {

/// The rel32 of a patched sled's call, as a signed offset: bytes 90 90 90 90.
inline constexpr std::intptr_t kSledCallDisplacement = static_cast<std::int32_t>(0x90909090u);
/// Length of a sled (bytes): a 5-byte call when patched.
inline constexpr std::uintptr_t kSledBytes = 5;

/// Where a patched sled at `sled` calls.
inline std::uintptr_t sled_call_target(std::uintptr_t sled) {
  return sled + kSledBytes + static_cast<std::uintptr_t>(kSledCallDisplacement);
}

/// A mapped mirror: [lo, hi) (bytes; the hub's page included).
struct SledMirror {
  std::uintptr_t lo = 0;
  std::uintptr_t hi = 0;
};

/// Maps the mirror of `table`'s text with a jump to `entry` at
/// sled_call_target(s) of each of its sleds (those outside the text are
/// skipped). Returns false, with nothing left mapped, when the
/// range is taken or lies below address 0 (a text below 1.87 GB: a non-PIE
/// executable). Cold: mmap, mprotect.
bool map_sled_mirror(const SledTable& table, std::uintptr_t entry, SledMirror& mirror);

/// Unmaps a mirror (its object was unloaded: no sled calls into it).
void unmap_sled_mirror(SledMirror& mirror);

}  // namespace parlot::runtime
