// Return-address shadow for library calls (PARLOT_LIBCALLS; docs/DESIGN.md
// "Library calls"). A library call's return address, at stack slot `a` of
// the calling thread's stack, is replaced by the return thunk's; the real
// one is kept at `a - kLibcallShadowOffset`, in memory mapped for each
// thread's stack. The thunk's unwind information (libcall_trampolines.S)
// reads it there with the same subtraction, so exceptions, thread
// cancellation, backtrace() and debuggers unwind through a library call
// exactly as without Parlot.
#pragma once

// Shared with the assembler (libcall_trampolines.S): a plain #define.
#define PARLOT_LIBCALL_SHADOW_OFFSET 0x300000000000

#ifndef __ASSEMBLER__
#include <cstddef>
#include <cstdint>

namespace parlot::runtime {

/// Distance in bytes from a stack slot to its shadow (below it).
inline constexpr std::uintptr_t kLibcallShadowOffset = PARLOT_LIBCALL_SHADOW_OFFSET;

/// Maps the shadow of the stack range [lo, hi) (bytes; page-aligned inward)
/// unless it is mapped already (a thread reusing a cached stack). Returns
/// the range [*mapped_lo, *mapped_hi) of stack slots whose shadow is mapped
/// (empty when the shadow's addresses are taken or lo < the offset). Cold:
/// mmap, a process-wide lock. At most 64 MiB below `hi` are covered.
void map_libcall_shadow(std::uintptr_t lo, std::uintptr_t hi, std::uintptr_t* mapped_lo,
                        std::uintptr_t* mapped_hi);

/// The shadow word of stack slot `slot`.
inline std::uintptr_t* libcall_shadow_of(std::uintptr_t slot) {
  return reinterpret_cast<std::uintptr_t*>(slot - kLibcallShadowOffset);
}

}  // namespace parlot::runtime
#endif
