/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arch/x86_64-stats.h - what the x86_64 patcher (arch/x86_64.c) counts, for
 * benches and tests that link libpatchsite-callops.a (the symbols are
 * hidden: not exported from the shared library, not part of callops.h's
 * API).  Counters only grow; read them before and after what you measure.
 */
#ifndef PATCHSITE_ARCH_X86_64_STATS_H
#define PATCHSITE_ARCH_X86_64_STATS_H

#include <stdint.h>

struct ps_arch_stats {
	uint64_t batches;	/* ps_arch_publish rounds that stored something */
	uint64_t syncs;		/* membarrier(PRIVATE_EXPEDITED_SYNC_CORE) calls that
				   succeeded: 3 a round */
	uint64_t emul_call;	/* INT3s at a site answered by emulating its new CALL */
	uint64_t emul_nop;	/* ... by emulating its new NOP (rip = site + 5) */
	uint64_t reexec;	/* ... by re-executing the site (the round had finished) */
	uint64_t chained;	/* SIGTRAPs handed to the program's own disposition */
	uint64_t slots_used;	/* trampoline slots holding a live ops now */
	uint64_t slots_retired;	/* slots of detached ops not yet proven unused */
	uint64_t slots_total;	/* slots of the rooms in use (one room per object) */
	uint64_t reclaims;	/* rounds asking every thread where it stands */
	uint64_t reclaim_kept;	/* retired slots a thread was found in (kept retired) */
	uint64_t reclaim_timeouts;	/* rounds a thread did not answer (nothing reused) */
	uint64_t refused_blocked;	/* rounds refused (-EDEADLK): a thread blocked SIGTRAP */
	uint64_t rounds_back;	/* rounds a failed sync put back (old bytes restored) */
	uint64_t interposed;	/* the program's sigaction(SIGTRAP) kept as the chained one */
	uint64_t dormant_detaches;	/* detaches refused INT3 (a thread blocked SIGTRAP)
				   made by a NULL in the slots' cells instead */
	uint64_t slots_dormant;	/* slots whose cell is NULL and which sites still call */
	uint64_t dormant_cleanups;	/* dormant slots whose sites a later round put back
				   to NOPs (then retired) */
};

__attribute__((visibility("hidden"))) void ps_arch_stats(struct ps_arch_stats *out);

/*
 * Test-only hooks (the runtime's own tests; leave them NULL/0):
 * ps_arch_test_hook(step) runs after each sync of a round (step 1: INT3s
 * placed, 2: tails written, 3: first bytes written), with the core's lock
 * held; ps_arch_test_slots, if not 0 before the first attach, caps the
 * slots carved from each object's room (to reach slot reuse with a few ops).
 */
__attribute__((visibility("hidden"))) extern void (*ps_arch_test_hook)(int step);
__attribute__((visibility("hidden"))) extern unsigned int ps_arch_test_slots;

#endif /* PATCHSITE_ARCH_X86_64_STATS_H */
