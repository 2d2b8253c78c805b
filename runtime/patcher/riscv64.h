/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arch/riscv64.h - the riscv64 part of callops.h (included by it; do not
 * include directly): the site, the trampoline's frame and the direct-call
 * convention, as riscv64 DYNAMIC_FTRACE_WITH_CALL_OPS has them (Linux 6.16).
 *
 * Build the program with -fpatchable-function-entry=8,4 (with the C
 * extension: four c.nop before each function and four at its entry) or
 * -fpatchable-function-entry=4,2 (without it: two nop each), and
 * -falign-functions=8, PIE or not; then `patchsite embed PROG -o PROG`.
 * Every traced function then starts with `auipc t0, hi20(trampoline);
 * nop`, and the 8 bytes before it, its ops literal, hold the segment's
 * default ops.  ps_attach() points the literal at your ops and turns the
 * NOP into `jalr t0, lo12(t0)`, one aligned 4-byte store
 * (runtime/patcher/riscv64.c); the trampoline (arch/riscv64.c of the tool)
 * calls ops->func, or jumps to ops->direct_call when that is set.
 *
 * ops->direct_call, when not NULL, is entered by `jr t4` instead of the
 * generic save-and-call, as riscv64 ftrace enters a direct trampoline:
 * a0-a7 and fa0-fa7 hold the traced function's arguments, t2 its static
 * chain, ra the traced function's return address, t0 the address where the
 * function body resumes; t1, t3 and t4 are scratch.  It must preserve the
 * argument registers, t2 and the callee-saved registers, and return with
 * `jr t0` with ra = the traced function's return address.
 */
#ifndef PATCHSITE_ARCH_RISCV64_H
#define PATCHSITE_ARCH_RISCV64_H

#include <stdint.h>

/* What regs points at (the trampoline's frame). */
struct ps_regs {
	uint64_t a[8];		/* a0-a7 on entry: the integer arguments */
	uint64_t parent_ra;	/* ra: the traced function's return address */
	uint64_t fp;		/* s0 */
	uint64_t pc;		/* t0: where the traced function's body resumes */
	uint64_t t2;		/* the static chain of a nested function */
	uint64_t fa[8];		/* fa0-fa7 (the D extension's 64 bits) */
};

/*
 * Where the traced function will return to: the trampoline reloads ra from
 * parent_ra before it resumes the body, so storing another address there
 * makes the function return to it (a tracer's return hook).
 */
static inline uint64_t *ps_regs_return_slot(void *regs)
{
	return &((struct ps_regs *)regs)->parent_ra;
}

#endif /* PATCHSITE_ARCH_RISCV64_H */
