/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * batch.h - one command over many images (a kernel package): the paths,
 * walked from directories, and forked workers that report in path order.
 */
#ifndef PATCHSITE_BATCH_H
#define PATCHSITE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct batch {
	char **paths;		/* in the order given; a directory's files sorted */
	size_t n;
	size_t dirs;		/* directories walked */
	size_t unreadable;	/* directories that could not be walked, or held no image */
};

/* Collect the images named by args (files, or directories to walk).  0 or -ENOMEM. */
int batch_collect(struct batch *b, char **args, int nargs);
void batch_free(struct batch *b);

/* Run one image: its report to out, errors to stderr; returns its exit status. */
typedef int (*batch_fn)(const char *path, FILE *out, void *ctx);
/* One image's result, in path order. */
typedef void (*batch_done_fn)(const char *path, int status, const char *out, size_t outlen,
			      const char *err, size_t errlen, void *ctx);

/*
 * Run fn on every image in `jobs` forked workers (0: one a core), calling
 * done for each in path order.  0, or a negative errno when the workers
 * could not be started (printed).
 */
int batch_run(const struct batch *b, unsigned int jobs, batch_fn fn, batch_done_fn done,
	      void *ctx);

#endif /* PATCHSITE_BATCH_H */
