/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arch/x86_64.h - the x86_64 part of callops.h (included by it; do not
 * include directly): the site, the trampoline's frame and the direct-call
 * convention.
 *
 * Build the program with any entry-site flavour `patchsite record` knows in
 * user programs: `-pg -mfentry` (calls to __fentry__), `-pg -mfentry
 * -mnop-mcount`, or `-fpatchable-function-entry=5` (GCC's five 1-byte NOPs
 * or clang's one 5-byte NOP), with or without -fcf-protection (ENDBR64
 * first), PIE or not, static or dynamic; then `patchsite embed PROG -o
 * PROG`.  Every traced function then holds one 5-byte NOP (0f 1f 44 00 00)
 * at its entry, after ENDBR64 if it has one, and embed's segment has a
 * zero-filled trampoline room within rel32 reach of every site.
 *
 * ps_attach() turns the NOP into `CALL rel32` to the ops' own trampoline, a
 * 16-byte slot carved from the room (runtime/patcher/x86_64.c), which names
 * the ops' cell and jumps to the shared save-and-call code (it loads the
 * ops from the cell; NULL: a dormant slot, it returns at once); a function with
 * several ops calls the list ops' slot, whose func walks that function's
 * ops.  Sites change while other threads run them by the kernel's
 * text_poke_bp protocol (INT3 first, membarrier SYNC_CORE between steps, a
 * SIGTRAP handler emulating the new instruction meanwhile).
 *
 * ops->direct_call, when not NULL, is called by the site itself
 * (`CALL direct_call`, or through a slot holding `JMP *addr` when it is out
 * of rel32 reach), as x86 ftrace's direct calls are: on entry (%rsp) is
 * where the traced function's body resumes and 8(%rsp) the traced
 * function's return address; the traced function's arguments are in
 * rdi, rsi, rdx, rcx, r8, r9, rax (a variadic call's vector-register count),
 * r10 (static chain) and xmm0-7, and the stack is 16-byte aligned.  It must
 * preserve all of those and the callee-saved registers, and return with
 * `RET` (only r11 is scratch).
 */
#ifndef PATCHSITE_ARCH_X86_64_H
#define PATCHSITE_ARCH_X86_64_H

#include <stdint.h>

/* What regs points at (the trampoline's frame). */
struct ps_regs {
	uint64_t di, si, dx, cx, r8, r9;	/* the integer arguments */
	uint64_t ax;		/* a variadic call's count of vector registers used */
	uint64_t r10;		/* the static chain of a nested function */
	uint64_t *ret;		/* the traced function's return-address slot (its %rsp
				   at entry): *ret is parent_ip; storing another address
				   there makes the function return to it */
	uint64_t pc;		/* where the traced function's body resumes */
	unsigned char xmm[8][16] __attribute__((aligned(16)));	/* xmm0-7 */
};

/* Where the traced function will return to (a tracer may redirect it). */
static inline uint64_t *ps_regs_return_slot(void *regs)
{
	return ((struct ps_regs *)regs)->ret;
}

#endif /* PATCHSITE_ARCH_X86_64_H */
