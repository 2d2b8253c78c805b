/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arch/arm64.h - the arm64 part of callops.h (included by it; do not include
 * directly): the site, the trampoline's frame and the direct-call convention,
 * as arm64 DYNAMIC_FTRACE_WITH_CALL_OPS has them.
 *
 * Build the program with -fpatchable-function-entry=4,2 -falign-functions=8
 * (PIE or not) and run `patchsite embed PROG -o PROG`: every traced function
 * then starts with `[BTI C] MOV X9, X30; NOP` and has an 8-byte ops literal
 * just before its entry.  ps_attach() points the literal at your ops and
 * turns the NOP into `BL trampoline` (runtime/patcher/arm64.c); the trampoline
 * (arch/arm64.c of the tool) calls ops->func, or branches to
 * ops->direct_call when that is set.
 *
 * ops->direct_call, when not NULL, is entered by `BR X17` instead of the
 * generic save-and-call, exactly as arm64 ftrace enters a direct trampoline:
 * x0-x8 hold the traced function's arguments, x9 the caller's LR (the
 * traced function's return address), x30 the address where the function
 * body resumes; x10, x11, x16 and x17 are scratch.  It must start with
 * `BTI C` (or PACIASP) when BTI is enforced, preserve x0-x8 and the
 * callee-saved registers, and return by `mov x10, x30; mov x30, x9; ret x10`
 * (or an equivalent that resumes the body with x30 = the caller's LR).
 */
#ifndef PATCHSITE_ARCH_ARM64_H
#define PATCHSITE_ARCH_ARM64_H

#include <stdint.h>

/* What regs points at (the trampoline's frame). */
struct ps_regs {
	uint64_t x[9];		/* x0-x8 on entry: arguments and indirect result */
	uint64_t parent_lr;	/* the traced function's return address */
	uint64_t fp;
	uint64_t pc;		/* where the traced function's body resumes */
	unsigned char q[8][16];	/* q0-q7 */
};

/*
 * Where the traced function will return to: the trampoline reloads x9 from
 * parent_lr and resumes the body with x30 = x9, so storing another address
 * there makes the function return to it (a tracer's return hook).
 */
static inline uint64_t *ps_regs_return_slot(void *regs)
{
	return &((struct ps_regs *)regs)->parent_lr;
}

#endif /* PATCHSITE_ARCH_ARM64_H */
