// Which vector registers the library-call trampolines (libcall_trampolines.S)
// save in full: the argument registers %xmm0-7 and the results %xmm0-1 are
// saved as wide as the CPU and the kernel make them (docs/DESIGN.md
// "Library calls", "Registers"), because the runtime's own code between
// saving and restoring them may change their upper halves (the trace
// encoder's AVX2 code ends with vzeroupper).
#pragma once

// Shared with the assembler: the values of parlot_libcall_vector_width.
#define PARLOT_LIBCALL_VECTORS_SSE 0     // %xmm: 16 bytes a register
#define PARLOT_LIBCALL_VECTORS_AVX 1     // %ymm: 32 bytes
#define PARLOT_LIBCALL_VECTORS_AVX512 2  // %zmm: 64 bytes

#ifndef __ASSEMBLER__
extern "C" {
/// One of PARLOT_LIBCALL_VECTORS_*: what the trampolines save. SSE until
/// choose_libcall_vector_width() ran, which the first patching pass does
/// before it points any GOT entry at a stub (at the runtime's constructor
/// or at the process's first event, which may come earlier). Read by every
/// recorded library call.
extern unsigned char parlot_libcall_vector_width;
}

namespace parlot::runtime {

/// Sets parlot_libcall_vector_width from the CPU (cpuid) and the state the
/// kernel saves for threads (xgetbv): AVX-512 when both have the %zmm
/// state, else AVX when both have the %ymm state, else SSE. Returns the
/// value set. Cold; idempotent.
unsigned char choose_libcall_vector_width();

}  // namespace parlot::runtime
#endif
