/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * recfile.h - the files of the tracer's record mode (record.c writes them,
 * `patchsite trace`, trace/data.c, reads them), in the directory
 * PATCHSITE_TRACE_RECORD names:
 *
 *   TID.dat          thread TID's calls, uftrace's records (struct
 *                    trace_urec: uftrace 0.13's struct uftrace_record),
 *                    in the order the thread made them: the entry and exit
 *                    of each call, time in CLOCK_MONOTONIC ns, the depth
 *                    on the thread's shadow stack, the function's address
 *   threads.txt      at the end: `ring N tid T records R dropped D lost L
 *                    deep P`, one line per ring (D: calls not recorded, the
 *                    ring full; L: records the writer could not write out;
 *                    P: calls deeper than the shadow stack, not recorded)
 *   clock.txt        `tsc0 MONO0 tsc1 MONO1 ovh OVH pid PID`: the counter
 *                    against CLOCK_MONOTONIC (ns) at start and end (at
 *                    start and 2 ms later until the end is written), and
 *                    the measured cost of one record in counter ticks
 *
 * threads.txt is written at the end (exit, or a return from main): a
 * program killed by a signal has .dat files (what the writer wrote out
 * before) but no threads.txt, and what it dropped is not known.
 *   funcs.txt        `ADDRESS NAME`, one line per traced function (its
 *                    runtime address): the index in a record is the
 *                    number of its line among these (from 0); the first
 *                    line is `bias BIAS` (the program's load bias); an
 *                    embedded shared library has a line `object BIAS PATH`
 *                    (its load bias and file): those loaded at start after
 *                    the functions of every object loaded at start, one
 *                    dlopen()ed later followed by its own functions (a
 *                    library opened twice is listed twice).  Not sorted.
 */
#ifndef PATCHSITE_TRACER_RECFILE_H
#define PATCHSITE_TRACER_RECFILE_H

#include <stdint.h>

struct trace_rec {
	uint64_t tsc;		/* the cycle counter */
	uint32_t fn;		/* function index << 1 | TRACE_REC_EXIT for an exit */
	uint32_t depth;		/* the thread's shadow-stack depth of the call */
};

#define TRACE_REC_EXIT 1u

/* uftrace 0.13's record (its uftrace.h: time, then type:2 more:1 magic:3
   depth:10 addr:48 from the low bit up; magic 5) */
struct trace_urec {
	uint64_t time;
	uint64_t bits;
};

#define TRACE_UREC_MAGIC 5u
#define TRACE_UREC(exit, depth, addr) \
	((uint64_t)((exit) ? 1 : 0) | (uint64_t)TRACE_UREC_MAGIC << 3 | \
	 (uint64_t)((depth) & 1023) << 6 | ((uint64_t)(addr) & 0xffffffffffffull) << 16)
#define TRACE_UREC_EXIT(bits) (((bits) & 3) == 1)
#define TRACE_UREC_ADDR(bits) ((bits) >> 16)

_Static_assert(sizeof(struct trace_rec) == 16, "a record is 16 bytes");
_Static_assert(sizeof(struct trace_urec) == 16, "uftrace's record is 16 bytes");

#endif /* PATCHSITE_TRACER_RECFILE_H */
