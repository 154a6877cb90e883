// Machine code of library-call tracing (PARLOT_LIBCALLS, x86-64 System V;
// docs/DESIGN.md "Library calls").
//
// parlot_libcall_stubs: kLibcallStubs entry stubs of 16 bytes. The runtime
// points a GOT entry of an instrumented object at stub i; the stub loads i
// into %r11 (a scratch register free at a call through the PLT) and jumps to
// parlot_libcall_entry, which saves the argument registers, calls
// parlot_libcall_enter(i, slot of the return address) and jumps to the
// function it returns, leaving the stack as the caller made it.
//
// parlot_libcall_return_thunk: where a recorded library call returns to (its
// return address was replaced); calls parlot_libcall_exit(rsp) with the
// return registers saved and jumps to the real return address it returns.
// Its unwind information says where the real return address is (the
// shadow word, libcall_shadow.h), so an unwinder going through a library
// call's frame goes on into the caller exactly; its personality routine
// records the end of a call an exception or a cancellation unwinds.
#include "libcall_shadow.h"

#define STUBS 4096

        .text
        .p2align 4
        .globl parlot_libcall_stubs
        .hidden parlot_libcall_stubs
        .type parlot_libcall_stubs, @function
parlot_libcall_stubs:
        .cfi_startproc
        .set stub_index, 0
        .rept STUBS
        endbr64
        movl $stub_index, %r11d
        jmp parlot_libcall_entry
        .p2align 4, 0xcc
        .set stub_index, stub_index + 1
        .endr
        .cfi_endproc
        .size parlot_libcall_stubs, . - parlot_libcall_stubs

// At entry: (%rsp) = the return address into the caller, %r11d = the stub's
// index; the argument registers, %rax (vector register count of a variadic
// call) and %r10 (static chain) hold the call's values.
        .p2align 4
        .type parlot_libcall_entry, @function
parlot_libcall_entry:
        .cfi_startproc
        pushq %rax
        .cfi_adjust_cfa_offset 8
        pushq %rdi
        .cfi_adjust_cfa_offset 8
        pushq %rsi
        .cfi_adjust_cfa_offset 8
        pushq %rdx
        .cfi_adjust_cfa_offset 8
        pushq %rcx
        .cfi_adjust_cfa_offset 8
        pushq %r8
        .cfi_adjust_cfa_offset 8
        pushq %r9
        .cfi_adjust_cfa_offset 8
        pushq %r10
        .cfi_adjust_cfa_offset 8
        subq $136, %rsp                 // xmm0-7, and 16-byte alignment of the call
        .cfi_adjust_cfa_offset 136
        movups %xmm0, 0(%rsp)
        movups %xmm1, 16(%rsp)
        movups %xmm2, 32(%rsp)
        movups %xmm3, 48(%rsp)
        movups %xmm4, 64(%rsp)
        movups %xmm5, 80(%rsp)
        movups %xmm6, 96(%rsp)
        movups %xmm7, 112(%rsp)
        movl %r11d, %edi
        leaq 200(%rsp), %rsi            // the slot of the return address
        call parlot_libcall_enter
        movq %rax, %r11
        movups 0(%rsp), %xmm0
        movups 16(%rsp), %xmm1
        movups 32(%rsp), %xmm2
        movups 48(%rsp), %xmm3
        movups 64(%rsp), %xmm4
        movups 80(%rsp), %xmm5
        movups 96(%rsp), %xmm6
        movups 112(%rsp), %xmm7
        addq $136, %rsp
        .cfi_adjust_cfa_offset -136
        popq %r10
        .cfi_adjust_cfa_offset -8
        popq %r9
        .cfi_adjust_cfa_offset -8
        popq %r8
        .cfi_adjust_cfa_offset -8
        popq %rcx
        .cfi_adjust_cfa_offset -8
        popq %rdx
        .cfi_adjust_cfa_offset -8
        popq %rsi
        .cfi_adjust_cfa_offset -8
        popq %rdi
        .cfi_adjust_cfa_offset -8
        popq %rax
        .cfi_adjust_cfa_offset -8
        jmp *%r11
        .cfi_endproc
        .size parlot_libcall_entry, . - parlot_libcall_entry

// Reached by the `ret` of a recorded library call: %rsp = its slot + 8,
// the caller's stack pointer after the call. For an unwinder it is a frame
// between the library function and its caller: CFA = %rsp (+ what the thunk
// pushed), the caller's address at CFA - 8 - PARLOT_LIBCALL_SHADOW_OFFSET
// (DW_CFA_expression, register 16: DW_OP_constu 8 + offset, DW_OP_minus).
// The byte before the thunk belongs to it: an unwinder looks up a return
// address minus one.
//
// That frame and the caller's have the same stack pointer, and unwinders
// tell frames apart by it (libgcc: the CFA of the frame, minus one for a
// frame after a signal frame). So the thunk's frame is marked a signal
// frame (augmentation 'S'), and the shadow word holds the return address
// minus one: the caller's frame is then found at CFA - 1, and its address
// is used as is (inside the call instruction, as a return address minus one
// would be) to find its unwind information and its exception handlers.
        .p2align 4
        .globl parlot_libcall_return_thunk
        .hidden parlot_libcall_return_thunk
        .type parlot_libcall_return_thunk, @function
        .cfi_startproc
        .cfi_personality 0x9b, parlot_libcall_personality_ref
        .cfi_signal_frame
        .cfi_def_cfa %rsp, 0
        .cfi_escape 0x10, 0x10, 0x09, 0x10, 0x88, 0x80, 0x80, 0x80, 0x80, 0x80, 0x0c, 0x1c
        nop
parlot_libcall_return_thunk:
        subq $64, %rsp                  // rax, rdx, xmm0, xmm1; 16-byte aligned
        .cfi_adjust_cfa_offset 64
        movq %rax, 32(%rsp)
        movq %rdx, 40(%rsp)
        movups %xmm0, 0(%rsp)
        movups %xmm1, 16(%rsp)
        leaq 64(%rsp), %rdi
        call parlot_libcall_exit
        movq %rax, %r11
        movq 32(%rsp), %rax
        movq 40(%rsp), %rdx
        movups 0(%rsp), %xmm0
        movups 16(%rsp), %xmm1
        addq $64, %rsp
        .cfi_adjust_cfa_offset -64
        jmp *%r11
        .cfi_endproc
        .size parlot_libcall_return_thunk, . - parlot_libcall_return_thunk

// The thunk frame's personality routine (hooks.cpp): an exception or a
// thread cancellation that unwinds through a library call ends the call.
// Encoding 0x9b: indirect, pc-relative, signed 4 bytes.
        .section .data.rel.ro, "aw"
        .p2align 3
        .hidden parlot_libcall_personality_ref
        .type parlot_libcall_personality_ref, @object
parlot_libcall_personality_ref:
        .quad parlot_libcall_personality
        .size parlot_libcall_personality_ref, 8

        .section .note.GNU-stack, "", @progbits
