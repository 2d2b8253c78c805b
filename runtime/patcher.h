/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * patcher.h - the interface between the runtime's architecture-neutral core
 * (callops.c) and the patcher of the target architecture (arch/<arch>.c).
 * Internal to libpatchsite-callops: not installed, not exported from the
 * shared library.
 *
 * The core owns everything that does not depend on instructions:
 *  - the segment layout (segment.h) and finding it at run time, the load
 *    bias, the page size, looking a function up in the site table;
 *  - the ops registry: one struct ps_reg per ops attached to at least one
 *    site, counting its sites, holding where they call (the patcher's
 *    answer) until the last one is detached;
 *  - the per-site state: which registry entry each site calls (NULL: idle);
 *  - batching: the sites of one call sorted by address, grouped into runs
 *    of contiguous pages, each run made writable (and kept executable) once
 *    and read-only again after; the lock; the public API of callops.h.
 *
 * A patcher owns what does: where an ops' sites call (a shared trampoline,
 * one carved for the ops, or ops->direct_call), a site's call bytes and
 * idle bytes, and the order and the instructions that make a batch of
 * writes visible to every thread.  It is chosen at build time by the target
 * (runtime/Makefile compiles arch/<arch>.c; callops.h includes
 * arch/<arch>.h, with an #error for a target that has none) and is
 * called only with the core's lock held.
 *
 * A site, as the segment describes it (struct ps_site): a call slot of
 * ps_arch_call_size bytes at `call`, which the patcher turns into a call
 * to a target or back into its idle form, and an optional 8-byte, 8-aligned
 * ops literal at `literal` (0: the architecture keeps none), which holds
 * the ops minus the load bias while attached and the segment's default ops
 * while idle.  Architectures as issue 19 plans them:
 *  - arm64 (arch/arm64.c): literal before the function, call slot `NOP` /
 *    `BL tramp`, one shared trampoline in the segment that reads the
 *    literal; one aligned store per word, then cache maintenance.
 *  - riscv64: the same shape (literal, `auipc` written once by embed, the
 *    call toggled by one aligned 4-byte store), icache flush for all threads
 *    (riscv_flush_icache or membarrier SYNC_CORE) in ps_arch_publish.
 *  - x86_64: no literal, a 5-byte NOP / `CALL rel32` slot; ps_arch_tramp_get
 *    carves the ops' own trampoline from shared executable pages (or returns
 *    ops->direct_call), ps_arch_tramp_put frees it once no thread can be in
 *    it, ps_arch_publish runs the INT3 / sync / tail / sync / head / sync
 *    protocol once for the whole batch.
 * Several ops on one site (a list trampoline) need no more from a patcher:
 * the core would attach its own list ops, whose func walks the site's ops,
 * and ask ps_arch_tramp_get for it like any other.
 */
#ifndef PATCHSITE_PATCHER_H
#define PATCHSITE_PATCHER_H

#include <stddef.h>
#include <stdint.h>

#include "callops.h"

#define PS_HIDDEN __attribute__((visibility("hidden")))

/* The most bytes a call slot can have (x86_64's CALL rel32 is 5). */
#define PS_CALL_MAX	8

/* What the core found, read-only for the patcher. */
struct ps_image {
	const struct ps_seg_header *hdr;	/* runtime address of the segment's header */
	const struct ps_site *sites;		/* runtime address of the site table */
	uint64_t bias;				/* the main program's load bias (0: ET_EXEC) */
	uint64_t pagesize;			/* sysconf(_SC_PAGESIZE) */
};

/* One ops in the registry (the core's). */
struct ps_reg {
	struct ps_ops *ops;
	size_t nsites;		/* sites whose state is this entry */
	uint64_t target;	/* runtime address its sites call: ps_arch_tramp_get */
	void *arch;		/* the patcher's own, e.g. the trampoline slot to free */
	size_t gone;		/* the core's scratch: sites a batch takes from it */
	struct ps_reg *next;	/* the core's hash chain */
};

/* One site's change in a batch, filled by the core. */
struct ps_write {
	const struct ps_site *site;	/* its table entry (link-time addresses) */
	uint64_t lit;			/* what its literal gets (none: ignored) */
	uint8_t call[PS_CALL_MAX];	/* what its call slot gets: ps_arch_call_size bytes */
};

/* A run of contiguous pages a batch writes into (runtime addresses). */
struct ps_run {
	uint64_t start, end;	/* page-aligned: writable while the batch is published */
	uint64_t lo, hi;	/* the bytes written inside, for cache maintenance */
};

/* The size of a site's call slot (arm64: 4). */
PS_HIDDEN extern const unsigned int ps_arch_call_size;

/*
 * Where the sites of r->ops call: set r->target (a runtime address) and, if
 * something is allocated for this ops, r->arch.  Called when r->ops gets its
 * first site, before any byte of that batch is written; a negative errno
 * cancels the batch (nothing written, the call returns it).  The core
 * defines both weakly for a segment with one shared trampoline (target =
 * hdr->tramp, nothing to free: arm64, riscv64); a patcher that carves one
 * per ops (x86_64) defines its own.
 */
PS_HIDDEN int ps_arch_tramp_get(const struct ps_image *img, struct ps_reg *r);

/*
 * r->ops has no site left, or its batch was cancelled: no site calls
 * r->target any more, although another thread may still be running in it.
 * Free what ps_arch_tramp_get allocated once no thread can be there (the
 * rule is the patcher's, stated in its file).  The core frees r afterwards.
 */
PS_HIDDEN void ps_arch_tramp_put(const struct ps_image *img, struct ps_reg *r);

/*
 * The ps_arch_call_size bytes of site s's call slot: the call to target (a
 * runtime address), or the idle form when target is 0.  -ERANGE when the
 * call cannot reach target from s.  No side effects: the core calls it for
 * every site of a batch before writing any.
 */
PS_HIDDEN int ps_arch_encode(const struct ps_image *img, const struct ps_site *s,
			     uint64_t target, uint8_t *call);

/*
 * Write the batch w[0..n) (sorted by address, none overlapping) so that
 * every thread sees it, in an order that is safe while those threads run
 * the sites: `enable` (calls appear or change: ops->func may be called
 * from the moment a call is seen, so the literals go first) or not (calls
 * go: the literals follow).  runs[0..nruns) are the page runs the writes
 * lie in, already writable, for cache maintenance.  It may refuse
 * (negative errno) before its first store (a one-time set-up such as
 * registering for membarrier; x86_64: a thread that blocks SIGTRAP,
 * -EDEADLK), and fail after it only by putting every site's old bytes
 * back (x86_64: a membarrier denied mid-round) and returning the error:
 * on a negative return no site has changed.
 */
PS_HIDDEN int ps_arch_publish(const struct ps_image *img, const struct ps_write *w, size_t n,
			      int enable, const struct ps_run *runs, size_t nruns);

/*
 * The idle round w[0..n) was refused with -EDEADLK (a thread that cannot
 * take the protocol's signal), and it takes every site away from each of
 * regs[0..nregs) (the core checked: no site keeps calling their targets,
 * each entry is put once the state follows).  Take their calls off without
 * changing code, or refuse (-EDEADLK: nothing changed): x86_64 stores NULL
 * in each slot's cell (sites still CALL the slot, which returns at once)
 * and puts the NOPs back in a later round that may place INT3s.  A
 * patcher that never refuses a round needs none: the core's weak default
 * refuses.
 */
PS_HIDDEN int ps_arch_dormant(const struct ps_image *img, struct ps_reg *const *regs,
			      size_t nregs, const struct ps_write *w, size_t n);

/*
 * The object of img was unloaded (the core forgot it after putting every
 * entry of its registry): drop whatever of the patcher's own state lives
 * in or points into its memory, which is no longer mapped, without
 * touching that memory.  The core's weak default does nothing.
 */
PS_HIDDEN void ps_arch_forget(const struct ps_image *img);

/*
 * ps_release (callops.h): unmap the patcher's own mappings if no site
 * calls into them, else -EBUSY.  The core's weak default has none: 0.
 */
PS_HIDDEN int ps_arch_release(void);

/*
 * In a fork child, before it returns from fork (the core holds its lock
 * across the fork, so no round is in flight): forget what belonged to the
 * parent's other threads.
 */
PS_HIDDEN void ps_arch_fork_child(void);

#endif /* PATCHSITE_PATCHER_H */
