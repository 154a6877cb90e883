// parlot_call_as_object(fn, ret_in_object, a, b, c): calls fn(a, b, c) so
// that fn's return address lies inside another loaded object (x86-64 System V;
// call_as_object.h). `ret_in_object` is the address of a byte 0xc3 (`ret`)
// in that object's code: fn returns there, and that `ret` returns here.
// The dynamic loader's entry points take their caller's object from their
// return address (dlsym's RTLD_DEFAULT searches the caller's lookup scope,
// dlopen searches the caller's run path and namespace): this makes them act
// for that object as if it called them itself.
        .text
        .p2align 4
        .globl parlot_call_as_object
        .hidden parlot_call_as_object
        .type parlot_call_as_object, @function
parlot_call_as_object:
        .cfi_startproc
        mov     %rdi, %rax              // fn
        mov     %rsi, %r11              // the `ret` inside the object
        mov     %rdx, %rdi
        mov     %rcx, %rsi
        mov     %r8, %rdx
        lea     1f(%rip), %r10
        push    %r10                    // where the object's `ret` returns to
        .cfi_adjust_cfa_offset 8
        push    %r11                    // fn's return address: inside the object
        .cfi_adjust_cfa_offset 8
        jmp     *%rax
1:      .cfi_adjust_cfa_offset -16
        ret
        .cfi_endproc
        .size parlot_call_as_object, .-parlot_call_as_object

        .section .note.GNU-stack,"",@progbits
