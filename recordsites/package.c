// SPDX-License-Identifier: GPL-2.0-only
/*
 * package.c - the audit of a kernel package: every image of it audited,
 * the reports in path order, the totals counted.
 *
 * Strategy: batch.c collects the images and runs one audit per image in
 * forked workers.  A worker audits its image as the single-image command
 * does (record_scan, audit_run, audit_ignore, audit_print) and hands back,
 * beside the printed report, the findings by kind as numbers (struct
 * package_counts, batch's fixed-size result), so the totals are sums of
 * counts, never read back out of text.  The parent prints each image's
 * report as it comes in path order: in text, the lines of an image with
 * findings (or every image's with -v) after its path; in JSON, each report
 * inside one document whose "total" closes it.  The text's total line is
 * the command line's (patchsite.c), from the totals.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elfio/elfio.h"
#include "recordsites/batch.h"
#include "recordsites/package.h"

#define EXIT_FINDINGS	1
#define EXIT_ERROR	2

int package_audit_image(const struct package_options *o, const char *path, FILE *out,
			struct package_counts *c)
{
	struct elfio *e = elfio_open(path, 0);
	struct record *r = NULL;
	struct audit a;
	int ret;

	if (!e)
		return EXIT_ERROR;
	ret = record_scan(e, &o->ro, &r);
	if (!ret)
		ret = audit_run(r, &a);
	if (!ret) {
		audit_ignore(&a, o->ignore);
		if (c)
			for (int k = 0; k < FIND_COUNT; k++) {
				c->count[k] = a.count[k];
				c->ignored[k] = a.ignored[k];
			}
		ret = audit_print(r, &a, o->json, out) ? EXIT_ERROR : a.n ? EXIT_FINDINGS : 0;
		audit_free(&a);
	} else {
		ret = EXIT_ERROR;
	}
	record_free(r);
	elfio_close(e);
	return ret;
}

struct package_run {
	const struct package_options *o;
	struct package_totals *t;
	bool first_json;
};

static int audit_one(const char *path, FILE *out, void *res, void *vrun)
{
	const struct package_run *run = vrun;

	return package_audit_image(run->o, path, out, res);
}

/* One image of the package, in path order: its findings, each line naming it. */
static void audit_done(const char *path, int status, const void *res, const char *out,
		       size_t outlen, const char *err, size_t errlen, void *vrun)
{
	struct package_run *run = vrun;
	const struct package_options *o = run->o;
	struct package_totals *t = run->t;
	struct package_counts c;

	t->images++;
	fwrite(err, 1, errlen, stderr);
	if (errlen)
		t->said = true;		/* the worker gave its reason */
	if (status == EXIT_ERROR || status > EXIT_ERROR) {
		t->unreadable++;
		if (o->json) {
			printf("%s\n{\"path\":", run->first_json ? "" : ",");
			record_json_string(stdout, path);
			printf(",\"status\":2,\"audit\":null}");
			run->first_json = false;
		}
		return;
	}
	if (status == 0)
		t->clean++;
	else
		t->with_findings++;
	if (o->json) {
		printf("%s\n{\"path\":", run->first_json ? "" : ",");
		record_json_string(stdout, path);
		printf(",\"status\":%d,\"audit\":", status);
		size_t n = outlen;
		while (n && out[n - 1] == '\n')
			n--;
		fwrite(out, 1, n, stdout);
		putchar('}');
		run->first_json = false;
		return;
	}
	memcpy(&c, res, sizeof(c));
	for (int k = 0; k < FIND_COUNT; k++) {
		t->count[k] += c.count[k];
		t->ignored[k] += c.ignored[k];
	}
	/* the text's lines: the first (how the layout was established), the
	   findings, the summary */
	if (!status && !o->verbose)
		return;
	const char *p = out, *end = out + outlen;
	for (int line = 0; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		int len = (int)(nl ? nl - p : end - p);
		if (line || o->verbose)
			printf("%s: %.*s\n", path, len, p);
		p += len + 1;
	}
}

int package_audit(const struct package_options *o, char **args, int nargs,
		  struct package_totals *t)
{
	struct package_run run = { o, t, true };
	struct batch b;

	memset(t, 0, sizeof(*t));
	if (batch_collect(&b, args, nargs))
		return -ENOMEM;
	if (o->json)
		printf("{\"schema\":%d,\"images\":[", RECORD_JSON_SCHEMA);
	t->run = batch_run(&b, o->jobs, sizeof(struct package_counts), audit_one, audit_done,
			   &run);
	t->unreadable += b.unreadable;
	if (o->json)
		printf("\n],\"total\":{\"images\":%zu,\"clean\":%zu,\"with_findings\":%zu,"
		       "\"unreadable\":%zu}}\n", t->images, t->clean, t->with_findings,
		       t->unreadable);
	batch_free(&b);
	return 0;
}
