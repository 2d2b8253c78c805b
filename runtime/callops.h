/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * callops.h - attach a function to any traced function of a program that
 * `patchsite embed` has prepared (arm64, DYNAMIC_FTRACE_WITH_CALL_OPS layout).
 *
 * Build the program with -fpatchable-function-entry=4,2 -falign-functions=8
 * -no-pie and link libpatchsite-callops.a into it; then run
 * `patchsite embed PROG -o PROG`.  Every traced function then starts with
 * `MOV X9, X30; NOP` and has the address of an ops in its 8-byte literal
 * just before its entry.  ps_attach() points the literal at your ops and
 * turns the NOP into `BL trampoline`; the trampoline calls ops->func.
 *
 * ops->func is called with ip = the traced function's address, parent_ip =
 * the return address of the traced call, and regs = the saved argument
 * registers (struct ps_regs).  It must not itself be traced (mark it
 * PS_NOTRACE) and, after ps_detach(), may still be running on another
 * thread for a short while: keep the ops alive.
 */
#ifndef PATCHSITE_CALLOPS_H
#define PATCHSITE_CALLOPS_H

#include <stdint.h>

/* Keep a function out of the patch-site layout (for ops callbacks). */
#define PS_NOTRACE __attribute__((patchable_function_entry(0, 0)))

struct ps_ops;
typedef void (*ps_func_t)(unsigned long ip, unsigned long parent_ip, struct ps_ops *ops,
			  void *regs);

struct ps_ops {
	ps_func_t func;		/* first: the trampoline loads it at offset 0 */
	void *priv;
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
   the program was not embedded). */
int ps_attach(void *function, struct ps_ops *ops);
int ps_detach(void *function);
int ps_attach_all(struct ps_ops *ops);
int ps_detach_all(void);
/* Number of traced functions (negative errno if not embedded); their addresses. */
long ps_count(void);
void *ps_function(long i);

/* The ops every literal points at while nothing is attached: func does nothing. */
extern struct ps_ops ps_default_ops;

/* --- The table that `patchsite embed` fills (layout shared with it) --------- */

#define PS_SITES_MAGIC_EMPTY	0x305345544953u	/* "SITES0", before embed */
#define PS_SITES_MAGIC_FULL	0x315345544953u	/* "SITES1", after embed */
#ifndef PS_MAX_SITES
#define PS_MAX_SITES		4096
#endif

struct ps_site {
	uint64_t func;		/* function entry (symbol address) */
	uint64_t literal;	/* func - 8: the 8-aligned ops literal */
	uint64_t call;		/* the NOP that becomes BL trampoline */
	uint64_t reserved;
};

struct ps_site_table {
	uint64_t magic;
	uint64_t count;
	uint64_t capacity;
	uint64_t default_ops;	/* &ps_default_ops, for embed */
	uint64_t tramp;		/* trampoline address, written by embed */
	uint64_t reserved[3];
	struct ps_site sites[PS_MAX_SITES];
};

#endif /* PATCHSITE_CALLOPS_H */
