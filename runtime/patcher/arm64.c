// SPDX-License-Identifier: GPL-2.0-only
/*
 * arch/arm64.c - the runtime's arm64 patcher (interface: ../patcher.h).
 *
 * Strategy: arm64 DYNAMIC_FTRACE_WITH_CALL_OPS.  A site is the ops literal
 * at func-8 (8-aligned) and a call slot of one instruction at func+4
 * (func+8 after BTI C), idle as `NOP` after `MOV X9, X30`.  Every site
 * calls the one trampoline embed put in the segment (arch/arm64.c of the
 * tool), which reads the site's literal and calls that ops, or branches to
 * its direct_call: so where an ops' sites call is always that trampoline,
 * and nothing is allocated per ops.  Each word changes with one aligned
 * store (single-copy atomic: a thread sees the old or the new word).
 *
 * Order (as arm64 ftrace has it).  Enable: every literal, a DSB so they
 * are complete before any call can be seen, every BL, cache maintenance
 * over the bytes written (inline, below); a thread that still executes a NOP is untraced,
 * one that executes the BL finds the new literal.  Disable: every NOP,
 * cache maintenance (it ends with DSB and ISB), then the default ops back
 * into every literal, so that a late trampoline entry still finds a valid
 * ops.  Replacing one ops by another is an enable: the BL stays, the
 * literal swaps.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "../patcher.h"

#if !defined(__aarch64__) || !defined(__AARCH64EL__)
#error "runtime/patcher/arm64.c is the patcher for little-endian arm64 (runtime/Makefile picks it)"
#endif

#define A64_NOP		0xd503201fu
#define A64_BL		0x94000000u
#define A64_BL_RANGE	(INT64_C(1) << 27)	/* +-128 MiB */

const unsigned int ps_arch_call_size = 4;

/* ps_arch_tramp_get/_put: the core's default (patcher.h), the segment's one trampoline. */

int ps_arch_encode(const struct ps_image *img, const struct ps_site *s, uint64_t target,
		   uint8_t *call)
{
	uint32_t insn = A64_NOP;

	if (target) {
		int64_t d = (int64_t)(target - (s->call + img->bias));

		if (d % 4 || d < -A64_BL_RANGE || d >= A64_BL_RANGE)
			return -ERANGE;
		insn = A64_BL | (uint32_t)((d >> 2) & 0x3ffffff);
	}
	memcpy(call, &insn, sizeof(insn));	/* arm64 Linux is little-endian: as stored */
	return 0;
}

static uint64_t *a64_lit(const struct ps_image *img, const struct ps_write *w)
{
	return (uint64_t *)(uintptr_t)(w->site->literal + img->bias);
}

static void a64_store_call(const struct ps_image *img, const struct ps_write *w)
{
	uint32_t insn;

	memcpy(&insn, w->call, sizeof(insn));
	__atomic_store_n((uint32_t *)(uintptr_t)(w->site->call + img->bias), insn,
			 __ATOMIC_RELAXED);
}

/*
 * Make the instructions written in the runs visible to instruction fetch on
 * every CPU: clean the data cache to the point of unification, DSB,
 * invalidate the instruction cache to it, DSB, ISB, by the line sizes
 * CTR_EL0 gives (read once); its IDC and DIC bits say when a step is not
 * needed.  Linux lets EL0 read CTR_EL0 and issue these (it traps and
 * emulates them where a core's errata need it).  Inline rather than
 * __builtin___clear_cache: publishing then makes no call and needs no
 * signed frame (qemu emulates pointer authentication at a cost).
 */
static uint64_t a64_ctr;

static inline __attribute__((always_inline))
void a64_sync_icache(const struct ps_run *runs, size_t nruns)
{
	uint64_t ctr = __atomic_load_n(&a64_ctr, __ATOMIC_RELAXED), line;

	if (!ctr) {
		__asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
		__atomic_store_n(&a64_ctr, ctr, __ATOMIC_RELAXED);
	}
	if (!(ctr & (UINT64_C(1) << 28))) {		/* IDC clear: clean D to PoU */
		line = UINT64_C(4) << ((ctr >> 16) & 0xf);
		for (size_t r = 0; r < nruns; r++)
			for (uint64_t a = runs[r].lo & ~(line - 1); a < runs[r].hi; a += line)
				__asm__ volatile("dc cvau, %0" : : "r"(a) : "memory");
	}
	__asm__ volatile("dsb ish" ::: "memory");
	if (!(ctr & (UINT64_C(1) << 29))) {		/* DIC clear: invalidate I to PoU */
		line = UINT64_C(4) << (ctr & 0xf);
		for (size_t r = 0; r < nruns; r++)
			for (uint64_t a = runs[r].lo & ~(line - 1); a < runs[r].hi; a += line)
				__asm__ volatile("ic ivau, %0" : : "r"(a) : "memory");
		__asm__ volatile("dsb ish" ::: "memory");
	}
	__asm__ volatile("isb" ::: "memory");
}

int ps_arch_publish(const struct ps_image *img, const struct ps_write *w, size_t n,
		    int enable, const struct ps_run *runs, size_t nruns)
{
	if (enable) {
		for (size_t i = 0; i < n; i++)
			__atomic_store_n(a64_lit(img, &w[i]), w[i].lit, __ATOMIC_RELAXED);
		/* every literal is complete before any BL that leads to it */
		__asm__ volatile("dsb ish" ::: "memory");
		for (size_t i = 0; i < n; i++)
			a64_store_call(img, &w[i]);
		a64_sync_icache(runs, nruns);
	} else {
		for (size_t i = 0; i < n; i++)
			a64_store_call(img, &w[i]);
		a64_sync_icache(runs, nruns);
		__asm__ volatile("dsb ish" ::: "memory");
		for (size_t i = 0; i < n; i++)
			__atomic_store_n(a64_lit(img, &w[i]), w[i].lit, __ATOMIC_RELAXED);
	}
	return 0;
}

void ps_arch_fork_child(void)
{
	/* nothing per thread: a round leaves no state behind */
}
