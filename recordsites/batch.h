/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * batch.h - one command over many images (a kernel package): the paths,
 * walked from directories, and forked workers that report in path order.
 */
#ifndef PATCHSITE_RECORDSITES_BATCH_H
#define PATCHSITE_RECORDSITES_BATCH_H

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

/* The most bytes of data a worker hands back with each image's result. */
#define BATCH_RESULT_MAX 256

/*
 * Run one image: its report to out, errors to stderr, and `res` (ressize
 * bytes, zeroed) filled with what the caller wants counted; returns its
 * exit status.
 */
typedef int (*batch_fn)(const char *path, FILE *out, void *res, void *ctx);
/* One image's result, in path order; res: ressize bytes, zeros where the worker died. */
typedef void (*batch_done_fn)(const char *path, int status, const void *res, const char *out,
			      size_t outlen, const char *err, size_t errlen, void *ctx);

/*
 * Run fn on every image in `jobs` forked workers (0: one a core), calling
 * done for each in path order.  ressize: the bytes of fn's res, at most
 * BATCH_RESULT_MAX.  0, or a negative errno when the workers could not be
 * started (printed).
 */
int batch_run(const struct batch *b, unsigned int jobs, size_t ressize, batch_fn fn,
	      batch_done_fn done, void *ctx);

#endif /* PATCHSITE_RECORDSITES_BATCH_H */
