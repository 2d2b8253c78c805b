/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * record.h - the tracer's per-call records (record.c): the entry and exit
 * of every traced call, per thread, stamped by the cycle counter, into
 * lock-free per-thread rings that a writer thread of the tracer's own
 * drains into files.  `patchsite trace` (trace/) reads those files and
 * writes what tools read (uftrace's data directory, Chrome JSON, the
 * summary).  The files it writes: recfile.h.
 */
#ifndef PATCHSITE_TRACER_RECORD_H
#define PATCHSITE_TRACER_RECORD_H

#include <stdint.h>

#include "callops.h"
#include "recfile.h"

/* the cycle counter of this architecture, read in a few instructions */
static inline uint64_t PS_NOTRACE trace_tsc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
#elif defined(__aarch64__)
	uint64_t v;

	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#elif defined(__riscv) && __riscv_xlen == 64
	uint64_t v;

	__asm__ __volatile__("rdtime %0" : "=r"(v));
	return v;
#else
	return 0;
#endif
}

extern int trace_recording;	/* PATCHSITE_TRACE_RECORD was given and opened */

/* start: the directory, the ring size in records; 0 or -errno after a
   message (through say) */
int trace_record_start(const char *dir, const char *bufsize);
/* the writer thread started (after the functions are attached); 0 or
   -errno after a message (the records are then written at exit) */
int trace_record_writer(void);
/* the functions (addresses, names, the load bias) into funcs.txt, with room
   for cap in all (those of libraries that come later) */
int trace_record_funcs(uintptr_t bias, long n, long cap, const uintptr_t *addr,
		       const char *const *name);
/* an embedded shared library (its file, load bias) into funcs.txt, and with
   n > 0 its functions addr[0..n), name[0..n), numbered from lo (which
   must be the count so far); 0 or -errno */
int trace_record_object(const char *path, uintptr_t bias, long lo, long n, const uintptr_t *addr,
			const char *const *name);
/* stop the writer, drain every ring, write threads.txt and clock.txt */
void trace_record_end(void);
/* a forked child records nothing (its rings are the parent's copies) */
void trace_record_forked(void);

/*
 * The hot path, inline in the tracer's hook (a call and the ring's
 * thread-local load less per record; record.c's Strategy says how the ring
 * works): a thread's ring, its producer's side and the writer's.
 */
struct trace_ring {
	/* the producer's (the thread's) side */
	uint64_t head;		/* records written (release) */
	uint64_t reserved;	/* exits owed: recorded calls still open */
	uint64_t dropped;	/* calls not recorded */
	uint64_t deep;		/* calls deeper than the shadow stack */
	uint64_t tail_seen;	/* the writer's tail as last read: reread only when
				   the ring looks full (its cache line is the writer's) */
	uint32_t skip;		/* depth + 1 of a dropped activation still open, or 0 */
	int tid;
	long seq;
	struct trace_ring *next;
	uint64_t mask;
	/* the writer's side, on a cache line of its own */
	uint64_t tail __attribute__((aligned(64)));	/* records written out (release) */
	uint64_t lost;		/* records the writer could not write out */
	uint64_t last_ns;	/* the time of the last record written out */
	int fd;			/* -1: not opened yet; -2: failed */
	char pad[64 - 3 * sizeof(uint64_t) - sizeof(int)];
	struct trace_rec r[];
};

#define TRACE_HIDDEN __attribute__((visibility("hidden")))
/* initial-exec when preloaded; the -p build (TRACE_ATTACH), dlopen'ed
   into a running program, never records: global-dynamic, no static TLS */
#ifdef TRACE_ATTACH
extern __thread struct trace_ring *trace_my_ring
	__attribute__((tls_model("global-dynamic"))) TRACE_HIDDEN;
#else
extern __thread struct trace_ring *trace_my_ring
	__attribute__((tls_model("initial-exec"))) TRACE_HIDDEN;
#endif
extern uint64_t trace_ring_size TRACE_HIDDEN;	/* records per ring, a power of 2 */

/* the entry when the inline part cannot record at once (no ring yet, a
   dropped call still open, the ring looks full): record.c */
int trace_rec_entry_slow(uint32_t fn, uint32_t depth) TRACE_HIDDEN;

static inline void PS_NOTRACE trace_ring_put(struct trace_ring *r, uint32_t fn, uint32_t depth)
{
	uint64_t h = r->head;
	struct trace_rec *p = &r->r[h & r->mask];

	p->tsc = trace_tsc();
	p->fn = fn;
	p->depth = depth;
	__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
}

/* the caller has marked the thread's shadow stack busy: 1 if the entry was
   recorded (its exit then has room: the ring keeps room for the exits of
   every recorded call still open), 0 if dropped */
static inline int PS_NOTRACE trace_rec_entry(uint32_t fn, uint32_t depth)
{
	struct trace_ring *r = trace_my_ring;

	if (!r || r->skip || trace_ring_size - (r->head - r->tail_seen) < r->reserved + 2)
		return trace_rec_entry_slow(fn, depth);
	trace_ring_put(r, fn << 1, depth);
	r->reserved++;
	return 1;
}

/* the exit of a recorded entry at depth */
static inline void PS_NOTRACE trace_rec_exit(uint32_t fn, uint32_t depth)
{
	struct trace_ring *r = trace_my_ring;

	if (!r)
		return;
	trace_ring_put(r, fn << 1 | TRACE_REC_EXIT, depth);
	r->reserved--;
}
/* a signal handler's call while the thread's own hook ran: not recorded,
   counted as dropped */
void trace_rec_busy_drop(void);
/* a call deeper than the shadow stack: not recorded, counted */
void trace_rec_too_deep(void);
/* an entry at depth that was not recorded is gone (returned or left) */
void trace_rec_unrecorded_gone(uint32_t depth);

#endif /* PATCHSITE_TRACER_RECORD_H */
