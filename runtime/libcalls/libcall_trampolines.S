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
#include "libcalls/libcall_registers.h"
#include "libcalls/libcall_shadow.h"
#include "libcalls/vector_save_macros.h"

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
// call) and %r10 (static chain) hold the call's values, %xmm0-7 (%ymm0-7,
// %zmm0-7) the vector arguments. All of them reach the target as they were.
// Frame: %rbp = the slot of the return address - 8; the general registers
// below it, the vector registers below those, 64-byte aligned.
        .macro entry_call kind, width
        subq $8*\width, %rsp
        save_vectors \kind, 8, 0
        .if \width-16
        vzeroupper
        .endif
        movl %r11d, %edi
        leaq 8(%rbp), %rsi              // the slot of the return address
        call parlot_libcall_enter
        movq %rax, %r11
        restore_vectors \kind, 8, 0
        .endm

        .p2align 4
        .type parlot_libcall_entry, @function
parlot_libcall_entry:
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
        entry_call xmm, 16
        jmp 9f
2:      entry_call ymm, 32
        jmp 9f
3:      entry_call zmm, 64
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
//
// The results: %rax, %rdx, %xmm0-1 (%ymm0, %zmm0) and the x87 stack (%st0,
// %st1: a long double or its complex), which must be empty for the C code
// called. Frame: %rbp = the slot; %rax and %rdx below it; below those,
// 64-byte aligned: %st0 and %st1 (16 bytes each), the x87 stack's top
// index (TOP: 7 with one value, 6 with two), then the vector registers.
        .macro exit_call kind, width
        subq $64+2*\width, %rsp
        save_vectors \kind, 2, 64
        .if \width-16
        vzeroupper
        .endif
        call exit_with_x87_saved
        restore_vectors \kind, 2, 64
        .endm

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
        pushq %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbp, 0
        movq %rsp, %rbp
        .cfi_def_cfa_register %rbp
        pushq %rax
        pushq %rdx
        andq $-64, %rsp
        cmpb $PARLOT_LIBCALL_VECTORS_AVX, parlot_libcall_vector_width(%rip)
        ja 3f
        je 2f
        exit_call xmm, 16
        jmp 9f
2:      exit_call ymm, 32
        jmp 9f
3:      exit_call zmm, 64
9:      .cfi_remember_state
        movq -8(%rbp), %rax
        movq -16(%rbp), %rdx
        movq %rbp, %rsp
        popq %rbp
        .cfi_def_cfa %rsp, 0
        .cfi_same_value %rbp
        jmp *%r11
        .cfi_restore_state

// Called by the thunk with its x87 save area at 8(%rsp) (the thunk's
// %rsp before the call): saves the values on the x87 stack there, calls
// parlot_libcall_exit(slot + 8) with the stack empty, reloads the values
// and returns the real return address in %r11.
// Its frame is the thunk's (CFA = %rbp + 8).
exit_with_x87_saved:
        fnstsw %ax
        shrl $11, %eax
        andl $7, %eax
        movl %eax, 8+32(%rsp)
        cmpl $7, %eax
        je 1f
        cmpl $6, %eax
        jne 2f
        fstpt 8(%rsp)
        fstpt 8+16(%rsp)
        jmp 2f
1:      fstpt 8(%rsp)
2:      subq $8, %rsp                   // 16-byte alignment of the call
        leaq 8(%rbp), %rdi
        call parlot_libcall_exit
        movq %rax, %r11
        addq $8, %rsp
        movl 8+32(%rsp), %eax
        cmpl $7, %eax
        je 1f
        cmpl $6, %eax
        jne 2f
        fldt 8+16(%rsp)
        fldt 8(%rsp)
        ret
1:      fldt 8(%rsp)
2:      ret
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
