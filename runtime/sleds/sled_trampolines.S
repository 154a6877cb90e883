// Machine code of sled tracing (x86-64 System V; docs/DESIGN.md "Sleds").
//
// parlot_sled_entry: where a patched sled leads (call from the function's
// first bytes, then the mirror's jmp and the hub's, sled_mirror.h). At
// entry (%rsp) = the sled's end (where the function goes on) and 8(%rsp)
// = the function's return address into its caller. Saves the argument
// registers, calls parlot_sled_enter(sled's end, slot of the return
// address) (hooks.cpp), which records the entry and may replace the return
// address by the return thunk of library calls (libcall_trampolines.S),
// restores the registers and returns into the function, which then runs as
// if the sled were NOPs.
#include "libcalls/libcall_registers.h"
#include "libcalls/vector_save_macros.h"

// Frame: %rbp = the slot of the sled's end - 8; the general registers
// below it, the vector registers below those, 64-byte aligned.
        .macro sled_entry_call kind, width
        subq $8*\width, %rsp
        save_vectors \kind, 8, 0
        .if \width-16
        vzeroupper
        .endif
        movq 8(%rbp), %rdi              // the sled's end
        leaq 16(%rbp), %rsi             // the slot of the function's return address
        call parlot_sled_enter
        restore_vectors \kind, 8, 0
        .endm

        .text
        .p2align 4
        .globl parlot_sled_entry
        .hidden parlot_sled_entry
        .type parlot_sled_entry, @function
parlot_sled_entry:
        .cfi_startproc
        pushq %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbp, 0
        movq %rsp, %rbp
        .cfi_def_cfa_register %rbp
        pushq %rax
        pushq %rdi
        pushq %rsi
        pushq %rdx
        pushq %rcx
        pushq %r8
        pushq %r9
        pushq %r10
        andq $-64, %rsp
        cmpb $PARLOT_LIBCALL_VECTORS_AVX, parlot_libcall_vector_width(%rip)
        ja 3f
        je 2f
        sled_entry_call xmm, 16
        jmp 9f
2:      sled_entry_call ymm, 32
        jmp 9f
3:      sled_entry_call zmm, 64
9:      leaq -64(%rbp), %rsp
        popq %r10
        popq %r9
        popq %r8
        popq %rcx
        popq %rdx
        popq %rsi
        popq %rdi
        popq %rax
        popq %rbp
        .cfi_def_cfa %rsp, 8
        .cfi_same_value %rbp
        ret
        .cfi_endproc
        .size parlot_sled_entry, . - parlot_sled_entry

        .section .note.GNU-stack, "", @progbits
