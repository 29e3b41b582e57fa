/*
 * The lazy entry of every forwarder (x86-64, System V): reached on a name's
 * first call, and on every call of a name whose target depends on the caller,
 * with the name's slot index in %r11d, the caller's arguments still in place
 * and its return address at (%rsp). Saves every register that can carry an
 * argument (the six integer ones, %xmm0-7, and %rax, whose %al counts the
 * vector registers of a variadic call), asks tb_forward_resolve for the
 * target of this caller (which also stores it in the slot where it is every
 * caller's, so later calls jump there directly), restores them and jumps to
 * the target as if it had been called.
 */
    .text
    .globl tb_forward_lazy
    .hidden tb_forward_lazy
    .type tb_forward_lazy, @function
    .p2align 4
tb_forward_lazy:
    .cfi_startproc
    endbr64
    pushq %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq %rsp, %rbp
    .cfi_def_cfa_register %rbp
    subq $192, %rsp
    movq %rdi, 0(%rsp)
    movq %rsi, 8(%rsp)
    movq %rdx, 16(%rsp)
    movq %rcx, 24(%rsp)
    movq %r8, 32(%rsp)
    movq %r9, 40(%rsp)
    movq %rax, 48(%rsp)
    movaps %xmm0, 64(%rsp)
    movaps %xmm1, 80(%rsp)
    movaps %xmm2, 96(%rsp)
    movaps %xmm3, 112(%rsp)
    movaps %xmm4, 128(%rsp)
    movaps %xmm5, 144(%rsp)
    movaps %xmm6, 160(%rsp)
    movaps %xmm7, 176(%rsp)
    movl %r11d, %edi
    movq 8(%rbp), %rsi
    call tb_forward_resolve
    movq %rax, %r11
    movq 0(%rsp), %rdi
    movq 8(%rsp), %rsi
    movq 16(%rsp), %rdx
    movq 24(%rsp), %rcx
    movq 32(%rsp), %r8
    movq 40(%rsp), %r9
    movq 48(%rsp), %rax
    movaps 64(%rsp), %xmm0
    movaps 80(%rsp), %xmm1
    movaps 96(%rsp), %xmm2
    movaps 112(%rsp), %xmm3
    movaps 128(%rsp), %xmm4
    movaps 144(%rsp), %xmm5
    movaps 160(%rsp), %xmm6
    movaps 176(%rsp), %xmm7
    leave
    .cfi_def_cfa %rsp, 8
    jmp *%r11
    .cfi_endproc
    .size tb_forward_lazy, .-tb_forward_lazy

    .section .note.GNU-stack,"",@progbits
#include "cet_note.h"
