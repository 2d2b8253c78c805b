/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rewriter.h - commands that rewrite relocatable objects before the final
 * link.  Each works through elfio's edit list and atomic writer: the input
 * is never written in place, and on any failure it is left as it was.
 */
#ifndef PATCHSITE_REWRITER_H
#define PATCHSITE_REWRITER_H

#include <stdbool.h>
#include <stddef.h>

struct pin_options {
	const char **extra_points;	/* more patch point names, NULL-terminated */
	bool dry_run;			/* report, write nothing */
	bool pin_mcount;		/* also pin -pg calls to _mcount (default on) */
};

struct pin_report {
	size_t objects;			/* objects read */
	size_t written;			/* objects rewritten */
	size_t points;			/* patch points pinned now */
	size_t points_already;		/* patch points that were already fixed-size */
	size_t mcount;			/* _mcount calls pinned now */
	size_t mcount_already;
	size_t points_seen_named;	/* named (extra) points found */
};

/*
 * Pin every ftrace patch point in the riscv64 objects `paths` (objects or
 * thin archives) so that linker relaxation cannot shrink it: the
 * R_RISCV_RELAX that accompanies its call relocation becomes R_RISCV_NONE.
 * Prints one line per pinned point.  Returns 0 or negative errno.
 */
int pin_objects(const char *const *paths, size_t n, const struct pin_options *o,
		struct pin_report *rep);

#endif /* PATCHSITE_REWRITER_H */
