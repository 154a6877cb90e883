// Assembler macros of the trampolines (libcall_trampolines.S,
// sleds/sled_trampolines.S): saving and restoring the vector registers
// that carry arguments and results, as wide as the CPU has them.
#pragma once
#ifdef __ASSEMBLER__
// clang-format off
// The vector registers %xmm0-7 (entry) or %xmm0-1 (return), saved at
// \base(%rsp) as wide as parlot_libcall_vector_width says (libcall_registers.h)
// and restored from there. After a wide save, vzeroupper: the runtime's
// code that runs next uses legacy SSE encodings, which are slow with dirty
// upper halves, and may clear the upper halves anyway (the encoder's AVX2
// code ends with vzeroupper).
        .macro save_vectors kind, n, base
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7
        .if \i < \n
        .ifc \kind, xmm
        movaps %xmm\i, \base+16*\i(%rsp)
        .endif
        .ifc \kind, ymm
        vmovdqa %ymm\i, \base+32*\i(%rsp)
        .endif
        .ifc \kind, zmm
        vmovdqa64 %zmm\i, \base+64*\i(%rsp)
        .endif
        .endif
        .endr
        .endm
        .macro restore_vectors kind, n, base
        .irp i, 0, 1, 2, 3, 4, 5, 6, 7
        .if \i < \n
        .ifc \kind, xmm
        movaps \base+16*\i(%rsp), %xmm\i
        .endif
        .ifc \kind, ymm
        vmovdqa \base+32*\i(%rsp), %ymm\i
        .endif
        .ifc \kind, zmm
        vmovdqa64 \base+64*\i(%rsp), %zmm\i
        .endif
        .endif
        .endr
        .endm

// clang-format on
#endif
