// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace/data.c - the tracer's files read back (runtime/tracer/recfile.h
 * describes them), as calls per thread, filtered as uftrace record filters.
 *
 * Strategy: funcs.txt, clock.txt and threads.txt are small and always
 * read.  A thread's TID.dat (uftrace's records, times already in
 * CLOCK_MONOTONIC nanoseconds, written by the tracer's writer thread) is
 * read whole only when the calls are needed (filters, the summary, Chrome
 * JSON).  With -t every entry is first matched with its exit (the recorder
 * keeps them nested: a call longjmp left gets its exit when that is seen);
 * then one pass decides, per call, whether it is kept, and renumbers the
 * kept ones in depth:
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
	buf = elfio_calloc((size_t)st.st_size + 1, 1);
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
	elfio_free(buf);
	return NULL;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct trace_fn *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int read_funcs(struct trace_data *d, const char *dir)
{
	char *text = slurp(dir, "funcs.txt", NULL), *line, *save = NULL;
	size_t cap = 0, ocap = 0;
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
		if (!strncmp(line, "object ", 7)) {
			struct trace_object *o;

			v = strtoull(line + 7, &sp, 0);
			if (*sp != ' ' || !sp[1]) {
				elfio_error(dir, "funcs.txt: bad line '%s'", line);
				err = -EINVAL;
				break;
			}
			if (elfio_grow(&d->obj, &ocap, d->nobj + 1, sizeof(*d->obj))) {
				elfio_error(dir, "out of memory");
				err = -ENOMEM;
				break;
			}
			o = &d->obj[d->nobj];
			o->bias = v;
			if (!(o->path = elfio_strdup(sp + 1))) {
				elfio_error(dir, "out of memory");
				err = -ENOMEM;
				break;
			}
			d->nobj++;
			continue;
		}
		v = strtoull(line, &sp, 0);
		if (*sp != ' ') {
			elfio_error(dir, "funcs.txt: bad line '%s'", line);
			err = -EINVAL;
			break;
		}
		if (elfio_grow(&d->fn, &cap, d->nfn + 1, sizeof(*d->fn))) {
			elfio_error(dir, "out of memory");
			err = -ENOMEM;
			break;
		}
		d->fn[d->nfn].addr = v;
		d->fn[d->nfn].name = elfio_strdup(sp + 1);
		if (!d->fn[d->nfn].name) {
			elfio_error(dir, "out of memory");
			err = -ENOMEM;
			break;
		}
		d->nfn++;
	}
	elfio_free(text);
	/* by address (libraries loaded later come after, anywhere): fn_of
	   searches it; an address listed twice (a library opened again at the
	   same place) has the same name, and its first is found */
	if (!err && d->nfn)
		qsort(d->fn, d->nfn, sizeof(*d->fn), fn_cmp);
	return err;
}

/* the time of a TID.dat's first record (dflt: none) */
static uint64_t first_time(const char *dir, const char *name, uint64_t dflt)
{
	char path[4096];
	struct trace_urec r;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dflt;
	if (read(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		r.time = dflt;
	close(fd);
	return r.time;
}

/* a thread's TID.dat into *recs (*n records): read straight into place */
static int read_dat(const char *dir, const char *name, struct trace_urec **recs, size_t *n)
{
	char path[4096];
	struct stat st;
	struct trace_urec *q;
	size_t want, got = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err = -errno;
		elfio_error(path, "%s", strerror(errno));
		goto out;
	}
	want = (size_t)st.st_size / sizeof(**recs) * sizeof(**recs);
	size_t cap = *n;	/* elfio_grow keeps what the block already holds */
	if (elfio_grow(recs, &cap, *n + want / sizeof(**recs) + 1, sizeof(**recs))) {
		err = -ENOMEM;
		elfio_error(path, "out of memory");
		goto out;
	}
	q = *recs;
	while (got < want) {
		ssize_t r = read(fd, (char *)(q + *n) + got, want - got);

		if (r <= 0) {
			err = r < 0 ? -errno : -EIO;
			elfio_error(path, "read: %s", r < 0 ? strerror(errno) : "short");
			goto out;
		}
		got += (size_t)r;
	}
	*n += want / sizeof(**recs);
out:
	if (fd >= 0)
		close(fd);
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
	uint32_t fn;
	uint32_t kept;
	uint32_t f, n;		/* an -F / -N function */
	size_t entry;		/* record index (for -t) */
};

/* the function of an address (funcs.txt is sorted by address), or -1 */
static long fn_of(const struct trace_data *d, uint64_t addr)
{
	size_t lo = 0, hi = d->nfn;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->fn[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->nfn && d->fn[lo].addr == addr ? (long)lo : -1;
}

/*
 * -t: each entry's duration (UINT64_MAX: its exit never came), by matching
 * entries and exits on a stack.  NULL without memory.
 */
static uint64_t *durations(const struct trace_urec *recs, size_t n)
{
	uint64_t *dur = elfio_calloc(n ? n : 1, sizeof(*dur));
	size_t *stack = NULL, sp = 0, cap = 0;

	if (!dur)
		return NULL;
	for (size_t k = 0; k < n; k++) {
		dur[k] = UINT64_MAX;
		if (!TRACE_UREC_EXIT(recs[k].bits)) {
			if (elfio_grow(&stack, &cap, sp + 1, sizeof(*stack))) {
				elfio_free(dur);
				dur = NULL;
				break;
			}
			stack[sp++] = k;
			continue;
		}
		while (sp && TRACE_UREC_ADDR(recs[stack[sp - 1]].bits) != TRACE_UREC_ADDR(recs[k].bits))
			sp--;	/* never seen: not nested (not made by the recorder) */
		if (sp) {
			sp--;
			dur[stack[sp]] = recs[k].time - recs[stack[sp]].time;
		}
	}
	elfio_free(stack);
	return dur;
}

/* one thread's records (recs, n) into events, filtered */
static int thread_events(struct trace_data *d, struct trace_thread *t, const struct trace_urec *recs,
			 size_t n, const struct trace_filter *f)
{
	uint64_t *dur = NULL;
	struct frame *fr = NULL;
	size_t nfr = 0, cap = 0, kept_open = 0, nf = 0, nn = 0;
	long cache_addr_fn = -1;
	uint64_t cache_addr = UINT64_MAX;
	int err = -ENOMEM;

	t->ev = elfio_calloc(n ? n : 1, sizeof(*t->ev));
	if (!t->ev || (f->min_ns && !(dur = durations(recs, n))))
		goto out;
	for (size_t k = 0; k < n; k++) {
		uint64_t addr = TRACE_UREC_ADDR(recs[k].bits), ns = recs[k].time;
		struct trace_event *e;
		uint32_t fi;

		if (addr != cache_addr) {
			cache_addr = addr;
			cache_addr_fn = fn_of(d, addr);
		}
		if (cache_addr_fn < 0)
			continue;	/* not a function of funcs.txt: not made by the tracer */
		fi = (uint32_t)cache_addr_fn;
		if (!TRACE_UREC_EXIT(recs[k].bits)) {
			const char *name = d->fn[fi].name;
			struct frame *x;

			if (elfio_grow(&fr, &cap, nfr + 1, sizeof(*fr)))
				goto out;
			x = &fr[nfr++];
			x->fn = fi;
			x->entry = k;
			x->f = f->F.n && trace_globs_match(&f->F, name);
			x->n = f->N.n && trace_globs_match(&f->N, name);
			nf += x->f;
			nn += x->n;
			x->kept = !nn && (!f->F.n || nf) && (!f->depth || kept_open < f->depth) &&
				  (!dur || dur[k] >= f->min_ns);
			if (!x->kept)
				continue;
			e = &t->ev[t->nev++];
			e->ns = ns;
			e->fn = fi;
			e->depth = (uint16_t)(kept_open > 1023 ? 1023 : kept_open);
			e->exit = 0;
			kept_open++;
			continue;
		}
		/* an exit: its frame is the top one of its function */
		while (nfr && fr[nfr - 1].fn != fi) {
			/* an entry without its exit (not made by the recorder) */
			struct frame *x = &fr[--nfr];

			nf -= x->f;
			nn -= x->n;
			kept_open -= x->kept;
		}
		if (!nfr)
			continue;
		nfr--;
		nf -= fr[nfr].f;
		nn -= fr[nfr].n;
		if (!fr[nfr].kept)
			continue;
		kept_open--;
		e = &t->ev[t->nev++];
		e->ns = ns;
		e->fn = fi;
		e->depth = (uint16_t)(kept_open > 1023 ? 1023 : kept_open);
		e->exit = 1;
	}
	err = 0;
out:
	if (err)
		elfio_error("trace", "out of memory for %zu records", n);
	elfio_free(dur);
	elfio_free(fr);
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

		seq = 0;
		if (sscanf(de->d_name, "%d.dat%n", &tid, &n) != 1 || de->d_name[n])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st))
			continue;
		fprintf(f, "ring %ld tid %d records %llu dropped 0 lost 0 deep 0\n", seq, tid,
			(unsigned long long)st.st_size / sizeof(struct trace_urec));
	}
	closedir(dd);
	if (fclose(f)) {
		free(*text);	/* open_memstream's: the library's malloc */
		*text = NULL;
		elfio_error(dir, "out of memory");
		return -ENOMEM;
	}
	/* ours from here, freed as slurp's text is (open_memstream's is malloc'd) */
	char *m = *text;
	*text = elfio_strdup(m);
	free(m);
	if (!*text) {
		elfio_error(dir, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int trace_data_read(struct trace_data *d, const char *dir, const struct trace_filter *f, int events)
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
		if (elfio_grow(&ri, &cap, nri + 1, sizeof(*ri))) {
			err = -ENOMEM;
			elfio_error(dir, "out of memory");
			goto out;
		}
		ri[nri++] = r;
	}
	if (nri)
		qsort(ri, nri, sizeof(*ri), ring_cmp);
	d->th = elfio_calloc(nri ? nri : 1, sizeof(*d->th));
	if (!d->th) {
		err = -ENOMEM;
		elfio_error(dir, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nri;) {
		struct trace_thread *t = &d->th[d->nth++];
		struct trace_urec *recs = NULL;
		size_t n = 0, j;
		char name[64];

		t->tid = ri[i].tid;
		for (j = i; j < nri && ri[j].tid == t->tid; j++) {
			t->records += ri[j].records;
			t->dropped += ri[j].dropped;
			t->lost += ri[j].lost;
			t->deep += ri[j].deep;
		}
		i = j;
		snprintf(name, sizeof(name), "%d.dat", t->tid);
		t->first_ns = first_time(dir, name, d->start_ns);
		if (!events || !t->records)
			continue;
		err = read_dat(dir, name, &recs, &n);
		if (!err)
			err = thread_events(d, t, recs, n, f);
		elfio_free(recs);
		if (err)
			goto out;
	}
	err = 0;
out:
	elfio_free(clock);
	elfio_free(threads);
	elfio_free(ri);
	if (err)
		trace_data_free(d);
	return err;
}

void trace_data_free(struct trace_data *d)
{
	for (size_t i = 0; i < d->nfn; i++)
		elfio_free(d->fn[i].name);
	elfio_free(d->fn);
	for (size_t i = 0; i < d->nobj; i++)
		elfio_free(d->obj[i].path);
	elfio_free(d->obj);
	for (size_t i = 0; i < d->nth; i++)
		elfio_free(d->th[i].ev);
	elfio_free(d->th);
	memset(d, 0, sizeof(*d));
}
