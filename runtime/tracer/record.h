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

/* the hot path (the caller has marked the thread's shadow stack busy):
   1 if the entry was recorded (its exit then has room), 0 if dropped */
int trace_rec_entry(uint32_t fn, uint32_t depth);
/* the exit of a recorded entry at depth */
void trace_rec_exit(uint32_t fn, uint32_t depth);
/* a signal handler's call while the thread's own hook ran: not recorded,
   counted as dropped */
void trace_rec_busy_drop(void);
/* a call deeper than the shadow stack: not recorded, counted */
void trace_rec_too_deep(void);
/* an entry at depth that was not recorded is gone (returned or left) */
void trace_rec_unrecorded_gone(uint32_t depth);

#endif /* PATCHSITE_TRACER_RECORD_H */
