/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * callops.h - attach a function to any traced function of a program that
 * `patchsite embed` has prepared (arm64, DYNAMIC_FTRACE_WITH_CALL_OPS layout).
 *
 * Build the program with -fpatchable-function-entry=4,2 -falign-functions=8
 * (PIE or not) and run `patchsite embed PROG -o PROG`.  embed adds a
 * loadable segment (struct ps_seg_header, the site table, the trampoline and
 * a default no-op ops); every traced function then starts with
 * `MOV X9, X30; NOP` and has an 8-byte ops literal just before its entry.
 * Link this runtime into the program (libpatchsite-callops.a), or preload it
 * (libpatchsite-callops.so, LD_PRELOAD); it finds the segment through the
 * main program's program headers.  ps_attach() points the literal at your
 * ops and turns the NOP into `BL trampoline`; the trampoline calls ops->func,
 * or branches to ops->direct_call when that is set.
 *
 * ops->func is called with ip = the traced function's address, parent_ip =
 * the return address of the traced call, and regs = the saved argument
 * registers (struct ps_regs).  It must not itself be traced (mark it
 * PS_NOTRACE) and, after ps_detach(), may still be running on another
 * thread for a short while: keep the ops alive.
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
#ifndef PATCHSITE_CALLOPS_H
#define PATCHSITE_CALLOPS_H

#include <stddef.h>
#include <stdint.h>

/* Keep a function out of the patch-site layout (for ops callbacks). */
#define PS_NOTRACE __attribute__((patchable_function_entry(0, 0)))

struct ps_ops;
typedef void (*ps_func_t)(unsigned long ip, unsigned long parent_ip, struct ps_ops *ops,
			  void *regs);

struct ps_ops {
	ps_func_t func;		/* offset 0: the trampoline loads it */
	void *priv;
	void *direct_call;	/* offset 16: if not NULL, BR here instead (see above) */
};

/* What regs points at (the trampoline's frame). */
struct ps_regs {
	uint64_t x[9];		/* x0-x8 on entry: arguments and indirect result */
	uint64_t parent_lr;	/* the traced function's return address */
	uint64_t fp;
	uint64_t pc;		/* where the traced function's body resumes */
	unsigned char q[8][16];	/* q0-q7 */
};

/* All return 0 or a negative errno (-ENOENT: not a traced function, -ENODEV:
   the program was not embedded, -EINVAL: no ops or no ops->func). */
int ps_attach(void *function, struct ps_ops *ops);
int ps_detach(void *function);
int ps_attach_all(struct ps_ops *ops);
int ps_detach_all(void);
/*
 * Batched: attach one ops to n functions (or detach them) in one call.
 * Every function is looked up first; if one is not traced, nothing is
 * changed and -ENOENT is returned.  The touched pages are made writable
 * once per contiguous range, all literals are stored, then all branches,
 * with one cache maintenance pass per range.
 */
int ps_attach_list(void *const *functions, size_t n, struct ps_ops *ops);
int ps_detach_list(void *const *functions, size_t n);
/* Number of traced functions (negative errno if not embedded); their addresses. */
long ps_count(void);
void *ps_function(long i);

/* --- The segment that `patchsite embed` adds (layout shared with it) ------- */

#include "segment.h"

#endif /* PATCHSITE_CALLOPS_H */
