// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace/data.c - the tracer's record files read back (runtime/tracer/record.h
 * describes them), as calls per thread, filtered as uftrace record filters.
 *
 * Strategy: each thread's records (the rings of one tid, in ring order)
 * are read whole.  Three passes over them: the counter ticks become
 * CLOCK_MONOTONIC nanoseconds (the two calibration points of clock.txt),
 * less the measured cost of every record made before on that thread (kept
 * monotonic); every entry is matched with its exit (the recorder keeps
 * them nested: a call longjmp left gets its exit when that is seen); then
 * the filters decide, per call, whether it is kept, and the kept ones are
 * renumbered in depth:
 *
 *   -F GLOB   a call is kept only inside an activation of a matching
 *             function (itself included)
 *   -N GLOB   a matching function and everything beneath it are not kept
 *   -D DEPTH  a call is kept only if fewer than DEPTH kept calls are open
 *   -t TIME   a call is kept only if it ran TIME or longer (a call whose
 *             exit was never recorded ran until the end: kept)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfio/elfio.h"
#include "runtime/tracer/recfile.h"
#include "trace/trace.h"

int trace_globs_match(const struct trace_globs *g, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (fnmatch(g->v[i], name, 0) == 0)
			return 1;
	return 0;
}

/* a whole small file, NUL-terminated; NULL after a message */
static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	int fd;
	struct stat st;
	char *buf = NULL;
	size_t got = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		elfio_error(path, "%s (the traced program did not end normally, or the "
			    "tracer was not loaded)", strerror(errno));
		goto fail;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		elfio_error(path, "out of memory");
		goto fail;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r <= 0) {
			elfio_error(path, "read: %s", r < 0 ? strerror(errno) : "short");
			goto fail;
		}
		got += (size_t)r;
	}
	buf[got] = 0;
	if (len)
		*len = got;
	close(fd);
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int read_funcs(struct trace_data *d, const char *dir)
{
	char *text = slurp(dir, "funcs.txt", NULL), *line, *save = NULL;
	size_t cap = 0;
	int err = 0;

	if (!text)
		return -EIO;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp;
		unsigned long long v;

		if (!strncmp(line, "bias ", 5)) {
			d->bias = strtoull(line + 5, NULL, 0);
			continue;
		}
		v = strtoull(line, &sp, 0);
		if (*sp != ' ') {
			elfio_error(dir, "funcs.txt: bad line '%s'", line);
			err = -EINVAL;
			break;
		}
		if (d->nfn == cap) {
			struct trace_fn *q = realloc(d->fn, (cap = cap * 2 + 256) * sizeof(*q));

			if (!q) {
				elfio_error(dir, "out of memory");
				err = -ENOMEM;
				break;
			}
			d->fn = q;
		}
		d->fn[d->nfn].addr = v;
		d->fn[d->nfn].name = strdup(sp + 1);
		if (!d->fn[d->nfn].name) {
			elfio_error(dir, "out of memory");
			err = -ENOMEM;
			break;
		}
		d->nfn++;
	}
	free(text);
	return err;
}

struct ring_info {
	long seq;
	int tid;
	uint64_t records, dropped, lost, deep;
};

static int ring_cmp(const void *a, const void *b)
{
	const struct ring_info *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct frame {
	size_t entry;		/* record index */
	int kept;
	int f, n;		/* an -F / -N function */
};

/* one thread's records (recs, n) into events */
static int thread_events(struct trace_data *d, struct trace_thread *t, const struct trace_rec *recs,
			 size_t n, const struct trace_filter *f, double ns_per_tick, uint64_t tsc0,
			 uint64_t mono0, uint64_t ovh)
{
	uint64_t *ns = malloc((n ? n : 1) * sizeof(*ns)), prev = 0;
	size_t *match = malloc((n ? n : 1) * sizeof(*match)), *stack = NULL, sp = 0;
	struct frame *fr = NULL;
	size_t nfr = 0, kept_open = 0, nf = 0, nn = 0;
	int err = -ENOMEM;

	t->ev = malloc((n ? n : 1) * sizeof(*t->ev));
	stack = malloc((n ? n : 1) * sizeof(*stack));
	fr = malloc((n ? n : 1) * sizeof(*fr));
	if (!ns || !match || !t->ev || !stack || !fr)
		goto out;
	for (size_t k = 0; k < n; k++) {
		/* the ticks of the k records before this one, each the measured
		   cost of a record, taken off; never before the one before */
		double ticks = (double)(int64_t)(recs[k].tsc - tsc0) - (double)k * (double)ovh;
		double v = (double)mono0 + ticks * ns_per_tick;
		uint64_t u = v < 0 ? 0 : (uint64_t)v;

		if (k && u < prev)
			u = prev;
		ns[k] = prev = u;
		match[k] = SIZE_MAX;
	}
	for (size_t k = 0; k < n; k++) {
		if (!(recs[k].fn & TRACE_REC_EXIT)) {
			stack[sp++] = k;
			continue;
		}
		while (sp && (recs[stack[sp - 1]].fn | TRACE_REC_EXIT) != recs[k].fn)
			sp--;	/* never seen: not nested (not made by the recorder) */
		if (sp)
			match[stack[--sp]] = k;
	}
	for (size_t k = 0; k < n; k++) {
		uint32_t fi = recs[k].fn >> 1;

		if (fi >= d->nfn)
			continue;	/* not a function of funcs.txt: not made by the tracer */
		if (!(recs[k].fn & TRACE_REC_EXIT)) {
			const char *name = d->fn[fi].name;
			struct frame *x = &fr[nfr++];
			uint64_t dur = match[k] == SIZE_MAX ? UINT64_MAX : ns[match[k]] - ns[k];

			x->entry = k;
			x->f = f->F.n && trace_globs_match(&f->F, name);
			x->n = f->N.n && trace_globs_match(&f->N, name);
			nf += x->f;
			nn += x->n;
			x->kept = !nn && (!f->F.n || nf) && (!f->depth || kept_open < f->depth) &&
				  dur >= f->min_ns;
			if (x->kept) {
				struct trace_event *e = &t->ev[t->nev++];

				e->ns = ns[k];
				e->fn = fi;
				e->depth = (uint16_t)(kept_open > 1023 ? 1023 : kept_open);
				e->exit = 0;
				kept_open++;
			}
			continue;
		}
		/* an exit: its frame is the top one whose entry it matches */
		while (nfr && match[fr[nfr - 1].entry] != k) {
			/* an entry without this exit under it (not made by the recorder) */
			struct frame *x = &fr[--nfr];

			nf -= x->f;
			nn -= x->n;
			kept_open -= x->kept;
		}
		if (!nfr)
			continue;
		{
			struct frame *x = &fr[--nfr];

			if (x->kept) {
				struct trace_event *e = &t->ev[t->nev++];

				kept_open--;
				e->ns = ns[k];
				e->fn = fi;
				e->depth = (uint16_t)(kept_open > 1023 ? 1023 : kept_open);
				e->exit = 1;
			}
			nf -= x->f;
			nn -= x->n;
		}
	}
	err = 0;
out:
	if (err)
		elfio_error("trace", "out of memory for %zu records", n);
	free(ns);
	free(match);
	free(stack);
	free(fr);
	return err;
}

/*
 * No threads.txt (the program never reached the tracer's end: killed by a
 * signal, _exit): the ring files there are, as threads.txt would list them,
 * their records from their sizes, what was dropped not known.
 */
static int rings_listed(const char *dir, char **text)
{
	DIR *dd = opendir(dir);
	struct dirent *de;
	size_t len = 0;
	FILE *f;

	if (!dd) {
		elfio_error(dir, "%s", strerror(errno));
		return -errno;
	}
	f = open_memstream(text, &len);
	if (!f) {
		closedir(dd);
		elfio_error(dir, "out of memory");
		return -ENOMEM;
	}
	while ((de = readdir(dd))) {
		long seq;
		int tid, n = 0;
		struct stat st;
		char path[4096];

		if (sscanf(de->d_name, "ring-%ld-%d.raw%n", &seq, &tid, &n) != 2 ||
		    de->d_name[n])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st))
			continue;
		fprintf(f, "ring %ld tid %d records %llu dropped 0 lost 0 deep 0\n", seq, tid,
			(unsigned long long)st.st_size / sizeof(struct trace_rec));
	}
	closedir(dd);
	if (fclose(f)) {
		elfio_error(dir, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int trace_data_read(struct trace_data *d, const char *dir, const struct trace_filter *f)
{
	char *clock = NULL, *threads = NULL, *line, *save = NULL;
	unsigned long long tsc0, mono0, tsc1, mono1, ovh;
	struct ring_info *ri = NULL;
	size_t nri = 0, cap = 0;
	double ns_per_tick;
	int err = -EINVAL;
	long pid;
	char path[4096];

	memset(d, 0, sizeof(*d));
	clock = slurp(dir, "clock.txt", NULL);
	if (!clock) {
		err = -EIO;
		goto out;
	}
	if (sscanf(clock, "tsc0 %llu mono0 %llu tsc1 %llu mono1 %llu ovh %llu pid %ld", &tsc0, &mono0,
		   &tsc1, &mono1, &ovh, &pid) != 6 || tsc1 <= tsc0 || mono1 < mono0) {
		elfio_error(dir, "clock.txt: not the tracer's calibration line");
		goto out;
	}
	d->pid = (int)pid;
	ns_per_tick = (double)(mono1 - mono0) / (double)(tsc1 - tsc0);
	d->ovh_ns = (double)ovh * ns_per_tick;
	d->start_ns = mono0;
	d->end_ns = mono1;
	err = read_funcs(d, dir);
	if (err)
		goto out;
	snprintf(path, sizeof(path), "%s/threads.txt", dir);
	if (access(path, F_OK) == 0) {
		threads = slurp(dir, "threads.txt", NULL);
		if (!threads) {
			err = -EIO;
			goto out;
		}
	} else {
		err = rings_listed(dir, &threads);
		if (err)
			goto out;
		d->incomplete = 1;
	}
	for (line = strtok_r(threads, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct ring_info r;
		unsigned long long rec, dr, lo, de;

		if (sscanf(line, "ring %ld tid %d records %llu dropped %llu lost %llu deep %llu",
			   &r.seq, &r.tid, &rec, &dr, &lo, &de) != 6) {
			elfio_error(dir, "threads.txt: bad line '%s'", line);
			err = -EINVAL;
			goto out;
		}
		r.records = rec;
		r.dropped = dr;
		r.lost = lo;
		r.deep = de;
		if (nri == cap) {
			struct ring_info *q = realloc(ri, (cap = cap * 2 + 16) * sizeof(*q));

			if (!q) {
				err = -ENOMEM;
				elfio_error(dir, "out of memory");
				goto out;
			}
			ri = q;
		}
		ri[nri++] = r;
	}
	if (nri)
		qsort(ri, nri, sizeof(*ri), ring_cmp);
	d->th = calloc(nri ? nri : 1, sizeof(*d->th));
	if (!d->th) {
		err = -ENOMEM;
		elfio_error(dir, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nri;) {
		struct trace_thread *t = &d->th[d->nth++];
		struct trace_rec *recs = NULL;
		size_t n = 0, j;

		t->tid = ri[i].tid;
		for (j = i; j < nri && ri[j].tid == t->tid; j++) {
			char name[64];
			size_t len = 0;
			char *raw;
			struct trace_rec *q;

			t->records += ri[j].records;
			t->dropped += ri[j].dropped;
			t->lost += ri[j].lost;
			t->deep += ri[j].deep;
			if (!ri[j].records)
				continue;
			snprintf(name, sizeof(name), "ring-%ld-%d.raw", ri[j].seq, ri[j].tid);
			raw = slurp(dir, name, &len);
			if (!raw) {
				free(recs);
				err = -EIO;
				goto out;
			}
			q = realloc(recs, (n + len / sizeof(*recs) + 1) * sizeof(*recs));
			if (!q) {
				free(raw);
				free(recs);
				err = -ENOMEM;
				elfio_error(dir, "out of memory");
				goto out;
			}
			recs = q;
			memcpy(recs + n, raw, len / sizeof(*recs) * sizeof(*recs));
			n += len / sizeof(*recs);
			free(raw);
		}
		i = j;
		err = thread_events(d, t, recs, n, f, ns_per_tick, tsc0, mono0, ovh);
		free(recs);
		if (err)
			goto out;
	}
	err = 0;
out:
	free(clock);
	free(threads);
	free(ri);
	if (err)
		trace_data_free(d);
	return err;
}

void trace_data_free(struct trace_data *d)
{
	for (size_t i = 0; i < d->nfn; i++)
		free(d->fn[i].name);
	free(d->fn);
	for (size_t i = 0; i < d->nth; i++)
		free(d->th[i].ev);
	free(d->th);
	memset(d, 0, sizeof(*d));
}
