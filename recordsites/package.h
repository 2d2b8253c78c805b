/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * package.h - the audit of a kernel package: many images, or directories
 * walked for them (batch.h), each audited in a worker, with the totals
 * handed to the caller as counts.
 */
#ifndef PATCHSITE_RECORDSITES_PACKAGE_H
#define PATCHSITE_RECORDSITES_PACKAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "recordsites/recordsites.h"

/* What every image of an audit is run with. */
struct package_options {
	struct record_options ro;
	bool json;		/* each image's report as JSON, in one document */
	bool verbose;		/* every image's lines, clean or not */
	unsigned int ignore;	/* audit_ignore's mask */
	unsigned int jobs;	/* workers (0: one a core) */
};

/* One image's findings by kind, and those --ignore left out (audit.count, .ignored). */
struct package_counts {
	uint64_t count[FIND_COUNT];
	uint64_t ignored[FIND_COUNT];
};

/* The totals of a package's audit. */
struct package_totals {
	size_t images, clean, with_findings, unreadable;
	size_t count[FIND_COUNT], ignored[FIND_COUNT];	/* of the images that were read */
	bool said;		/* an image's error was printed on stderr */
	int run;		/* 0, or the negative errno the workers failed with (printed) */
};

/*
 * Audit one image: its report (text or JSON) to out, its counts to *c (may
 * be NULL).  Returns its exit status: 0 clean, 1 findings, 2 not read.
 */
int package_audit_image(const struct package_options *o, const char *path, FILE *out,
			struct package_counts *c);

/*
 * Audit the images named by args (files, or directories walked): each
 * image's report to stdout in path order (text: its lines that matter, each
 * naming it; JSON: {"schema":...,"images":[...],"total":{...}}, whole),
 * errors to stderr, and the totals to *t (t->run: the workers' failure).
 * The text's total line is the caller's.  0, or -ENOMEM when the images
 * could not be collected (then nothing was printed).
 */
int package_audit(const struct package_options *o, char **args, int nargs,
		  struct package_totals *t);

#endif /* PATCHSITE_RECORDSITES_PACKAGE_H */
