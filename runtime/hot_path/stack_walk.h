// The calling thread's real stack, walked with the C runtime's unwinder
// (libgcc's _Unwind_Backtrace, linked into the runtime and hidden): it
// opens no file and creates no descriptor, unlike libunwind, whose first
// local unwind keeps a pipe open for the life of the process (two of the
// program's lowest descriptor numbers). No allocation; frames are found
// through the loaded objects' .eh_frame_hdr. A frame without unwind
// information ends the walk.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parlot::runtime {

/// Writes into `out` (room for `cap`) the instruction pointers of the
/// calling function's callers, innermost first, after skipping `skip`
/// frames: skip 0 starts with the return address into the caller of
/// walk_own_stack's caller. Returns how many were written.
std::size_t walk_own_stack(std::uintptr_t* out, std::size_t cap, std::size_t skip);

/// From inside a signal handler: the interrupted thread's stack, innermost
/// first: the interrupted instruction (from `ucontext`, a ucontext_t*),
/// then the return addresses of its callers. Returns how many were written
/// (at least 1 when `ucontext` is not null).
std::size_t walk_interrupted_stack(const void* ucontext, std::uintptr_t* out, std::size_t cap);

}  // namespace parlot::runtime
