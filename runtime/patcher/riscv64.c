// SPDX-License-Identifier: GPL-2.0-only
/*
 * arch/riscv64.c - the runtime's riscv64 patcher (interface: ../patcher.h).
 *
 * Strategy: riscv64 DYNAMIC_FTRACE_WITH_CALL_OPS as Linux 6.16 has it.  A
 * site is the ops literal at func-8 (8-aligned) and a call slot of one
 * 4-byte instruction at func+4, after the `auipc t0, hi20` that embed
 * wrote once at func pointing at the segment's trampoline: idle `nop`,
 * enabled `jalr t0, lo12(t0)`.  Every site calls that one trampoline
 * (arch/riscv64.c of the tool), which reads the site's literal and calls
 * that ops, or jumps to its direct_call: so where an ops' sites call is
 * always the trampoline, and nothing is allocated per ops.  The jalr's
 * word is 4-aligned (func is 8-aligned), so it changes with one aligned
 * 32-bit store and a hart fetches the old or the new word whole; the
 * literal changes with one aligned 64-bit store.
 *
 * Order (as riscv64 ftrace has it).  Enable: every literal, a fence so
 * they are visible before any call can be, every jalr, then the
 * instruction caches of all threads over the bytes written; a thread that
 * still executes the NOP is untraced, one that executes the jalr finds the
 * new literal.  Disable: every NOP, the instruction caches, a fence, then
 * the default ops back into every literal, so that a late trampoline entry
 * still finds a valid ops.  Replacing one ops by another is an enable: the
 * jalr stays, the literal swaps.
 *
 * Instruction caches: riscv_flush_icache(start, end, 0), the kernel's
 * call for code a process writes (Linux 4.15 on): with flags 0 it makes
 * the change visible to every thread of the process, running (the harts
 * they run on execute FENCE.I, by IPI) or not (they do before they run
 * the process again), the calling one included.  It fails only for flags
 * it does not know.  membarrier SYNC_CORE would do as well, but riscv has
 * it only from Linux 6.9 and it needs a registration first; qemu-user
 * 7.2 accepts both (it tracks code writes itself).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "../patcher.h"

#if !defined(__riscv) || __riscv_xlen != 64
#error "runtime/patcher/riscv64.c is the patcher for riscv64 (runtime/Makefile picks it)"
#endif

#ifndef __NR_riscv_flush_icache
#define __NR_riscv_flush_icache	259	/* arch/riscv/include/uapi/asm/unistd.h: 244 + 15 */
#endif

#define RV_NOP		0x00000013u
#define RV_AUIPC_T0	0x00000297u	/* auipc t0, 0 */
#define RV_JALR_T0_T0	0x000282e7u	/* jalr t0, 0(t0) */
#define RV_AUIPC_MASK	0x00000fffu	/* opcode and rd of an auipc */

const unsigned int ps_arch_call_size = 4;

/* ps_arch_tramp_get/_put: the core's default (patcher.h), the segment's one trampoline. */

/*
 * The jalr completes the auipc before it: it reaches target only when that
 * auipc's upper 20 bits are the ones target needs (embed wrote them for
 * the trampoline); else -ERANGE.
 */
int ps_arch_encode(const struct ps_image *img, const struct ps_site *s, uint64_t target,
		   uint8_t *call)
{
	uint32_t insn = RV_NOP;

	if (target) {
		uint64_t at = s->call - 4 + img->bias;
		uint64_t d = target - at;
		uint32_t auipc;

		memcpy(&auipc, (const void *)(uintptr_t)at, sizeof(auipc));
		if ((auipc & RV_AUIPC_MASK) != RV_AUIPC_T0 || d & 1 ||
		    (uint32_t)((d + 0x800) & 0xfffff000u) != (auipc & 0xfffff000u) ||
		    d + UINT64_C(0x80000800) >= UINT64_C(0x100000000))
			return -ERANGE;
		insn = RV_JALR_T0_T0 | (uint32_t)(d & 0xfff) << 20;
	}
	memcpy(call, &insn, sizeof(insn));	/* riscv64 is little-endian: as stored */
	return 0;
}

static uint64_t *rv_lit(const struct ps_image *img, const struct ps_write *w)
{
	return (uint64_t *)(uintptr_t)(w->site->literal + img->bias);
}

static void rv_store_call(const struct ps_image *img, const struct ps_write *w)
{
	uint32_t insn;

	memcpy(&insn, w->call, sizeof(insn));
	__atomic_store_n((uint32_t *)(uintptr_t)(w->site->call + img->bias), insn,
			 __ATOMIC_RELAXED);
}

/* Every thread's instruction fetch sees the bytes written in the runs. */
static void rv_sync_icache(const struct ps_run *runs, size_t nruns)
{
	for (size_t r = 0; r < nruns; r++)
		syscall(__NR_riscv_flush_icache, (uintptr_t)runs[r].lo, (uintptr_t)runs[r].hi, 0UL);
}

int ps_arch_publish(const struct ps_image *img, const struct ps_write *w, size_t n,
		    int enable, const struct ps_run *runs, size_t nruns)
{
	if (enable) {
		for (size_t i = 0; i < n; i++)
			__atomic_store_n(rv_lit(img, &w[i]), w[i].lit, __ATOMIC_RELAXED);
		/* every literal is visible before any jalr that leads to it (fence rw,w) */
		__atomic_thread_fence(__ATOMIC_RELEASE);
		for (size_t i = 0; i < n; i++)
			rv_store_call(img, &w[i]);
		rv_sync_icache(runs, nruns);
	} else {
		for (size_t i = 0; i < n; i++)
			rv_store_call(img, &w[i]);
		rv_sync_icache(runs, nruns);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		for (size_t i = 0; i < n; i++)
			__atomic_store_n(rv_lit(img, &w[i]), w[i].lit, __ATOMIC_RELAXED);
	}
	return 0;
}

void ps_arch_fork_child(void)
{
	/* nothing per thread: a round leaves no state behind */
}
