/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * record.c - per-call records for libpatchsite-trace.so (record.h).
 *
 * Strategy: each thread has a ring of its own, made at its first record
 * (mmap, then pushed on a lock-free list of rings), with one producer (the
 * thread, inside the tracer's hook, its shadow stack marked busy so a
 * signal handler's call never writes into it half-way) and one consumer
 * (the writer thread).  The producer writes a record, then publishes the
 * head with a release store; the writer reads the head with an acquire
 * load, writes the records out, and publishes the tail.  No lock, no
 * system call on the hot path (but the ring's mmap, once per thread).
 *
 * A full ring never blocks the thread and never tears the trace: an entry
 * is recorded only when the ring has room for it and for the exits of
 * every recorded call still open (`reserved`) plus its own, so the exit of
 * a recorded entry always fits.  An entry that does not fit is dropped and
 * counted, and so is every call beneath it, until that activation is gone
 * (`skip`): the records kept are whole calls with whole callees.  The
 * counts go to threads.txt and `patchsite trace` reports them.
 *
 * Time is the cycle counter (rdtsc, cntvct_el0, rdtime), read against
 * CLOCK_MONOTONIC at start and at every drain: the writer turns ticks into
 * nanoseconds by the slope from start to then, and writes uftrace's own
 * records (recfile.h), so that the files need no second pass.  The cost
 * of one record (the counter read and the ring write, the part of the
 * tracer's cost that is measured here, in a loop at start) is taken off
 * every later record of the thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record.h"

#define HIDDEN __attribute__((visibility("hidden")))


HIDDEN int trace_recording;
static struct trace_ring *rings;	/* a lock-free list (pushed with CAS) */
static long ring_seq;
HIDDEN uint64_t trace_ring_size = 1u << 20;	/* records per ring, a power of 2 (16 MiB: a
					   thread making 20 million records a second
					   fills it in 50 ms, the writer drains it
					   every 5) */
static char *rec_dir;
static int dir_fd = -1;
static pthread_t writer;
static int writer_started, writer_stop;
static uint64_t tsc0, mono0, ovh;
static double ns_per_tick;	/* the counter's slope (record.c's writer) */
static uint64_t *fn_addr;	/* the functions' addresses, by index */
static long nfn;		/* published (release) after fn_addr[0..nfn) */
static long fn_cap;
static pid_t rec_pid;

HIDDEN __thread struct trace_ring *trace_my_ring;	/* its model: record.h */

static void rsay(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rsay(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), "patchsite-trace: ");

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0)
		return;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* the counter and CLOCK_MONOTONIC read together (the counter between two
   clock reads, the clock taken at their middle) */
static void clock_pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t a = mono_ns(), t = trace_tsc(), b = mono_ns();

	*tsc = t;
	*mono = a + (b - a) / 2;
}

/* --- The hot path -------------------------------------------------------- */

static struct trace_ring *PS_NOTRACE ring_new(void)
{
	size_t bytes = sizeof(struct trace_ring) + trace_ring_size * sizeof(struct trace_rec);
	struct trace_ring *r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED)
		return NULL;
	r->mask = trace_ring_size - 1;
	r->fd = -1;
	r->tid = (int)syscall(SYS_gettid);
	r->seq = __atomic_fetch_add(&ring_seq, 1, __ATOMIC_RELAXED);
	r->next = __atomic_load_n(&rings, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&rings, &r->next, r, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	return r;
}

/* the entry of trace_rec_entry (record.h) when its inline part cannot
   record at once: no ring yet, a dropped call open, or the ring looks full */
int PS_NOTRACE trace_rec_entry_slow(uint32_t fn, uint32_t depth)
{
	struct trace_ring *r = trace_my_ring;

	if (!r) {
		r = ring_new();
		if (!r)
			return 0;
		trace_my_ring = r;
	}
	if (r->skip) {
		if (depth >= r->skip) {
			/* beneath a dropped call (atomic: a signal handler's call
			   may count one in the middle, trace_rec_busy_drop) */
			__atomic_fetch_add(&r->dropped, 1, __ATOMIC_RELAXED);
			return 0;
		}
		r->skip = 0;		/* that call is gone: this one takes its place */
	}
	if (trace_ring_size - (r->head - r->tail_seen) < r->reserved + 2) {
		r->tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		if (trace_ring_size - (r->head - r->tail_seen) < r->reserved + 2) {
			__atomic_fetch_add(&r->dropped, 1, __ATOMIC_RELAXED);
			r->skip = depth + 1;
			return 0;
		}
	}
	trace_ring_put(r, fn << 1, depth);
	r->reserved++;
	return 1;
}

void PS_NOTRACE trace_rec_busy_drop(void)
{
	struct trace_ring *r = trace_my_ring;

	if (r)	/* no ring yet: no record of this thread to tear */
		__atomic_fetch_add(&r->dropped, 1, __ATOMIC_RELAXED);
}

void PS_NOTRACE trace_rec_too_deep(void)
{
	struct trace_ring *r = trace_my_ring;

	if (!r) {
		r = ring_new();
		if (!r)
			return;
		trace_my_ring = r;
	}
	r->deep++;
}

void PS_NOTRACE trace_rec_unrecorded_gone(uint32_t depth)
{
	struct trace_ring *r = trace_my_ring;

	if (r && r->skip == depth + 1)
		r->skip = 0;
}

/* --- The writer -------------------------------------------------------- */

/*
 * The counter's slope in fixed point, for the writer's loop: ns = ticks *
 * whole + (ticks * frac) >> 64 (no floating point per record: the double
 * multiply, compare and conversion were a third of the writer's own time).
 * The fraction's error is 2^-64 ns a tick, none that a record shows.
 */
struct slope {
	uint64_t whole, frac;
};

static struct slope slope_of(double ns_per_tick)
{
	struct slope s = { 0, 0 };
	double f;

	if (!(ns_per_tick > 0) || ns_per_tick >= 18446744073709551616.0)
		return s;
	s.whole = (uint64_t)ns_per_tick;
	f = (ns_per_tick - (double)s.whole) * 18446744073709551616.0;	/* 2^64 */
	s.frac = f >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)f;
	return s;
}

static inline uint64_t slope_ns(struct slope s, uint64_t ticks)
{
	return ticks * s.whole + (uint64_t)(((unsigned __int128)ticks * s.frac) >> 64);
}

/*
 * The records of r written out as uftrace's (recfile.h): the counter's
 * ticks made CLOCK_MONOTONIC nanoseconds by the slope measured from start
 * to this drain (the error at any record stays within the clock reads'
 * jitter), less the measured cost of the records before on the thread,
 * never before the record before; the function index made its address.
 * Returns the records written out (or lost).
 */
static uint64_t ring_drain(struct trace_ring *r, struct slope sl)
{
	static struct trace_urec out[16384];
	uint64_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), t = r->tail, t0 = t;
	/* after the head: every function a record names was published before */
	uint64_t nf = (uint64_t)__atomic_load_n(&nfn, __ATOMIC_ACQUIRE), last = r->last_ns;

	if (r->fd == -1 && h != t) {
		char name[64];

		snprintf(name, sizeof(name), "%d.dat", r->tid);
		r->fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (r->fd < 0) {
			rsay("%s/%s: %s: records lost (counted)", rec_dir, name, strerror(errno));
			r->fd = -2;
		}
	}
	while (t != h) {
		uint64_t n = h - t;
		size_t len;
		const char *p = (const char *)out;

		if (n > sizeof(out) / sizeof(out[0]))
			n = sizeof(out) / sizeof(out[0]);
		for (uint64_t i = 0; i < n; i++) {
			const struct trace_rec *x = &r->r[(t + i) & r->mask];
			/* the ticks since start less the cost of the records before */
			int64_t ticks = (int64_t)(x->tsc - tsc0) - (int64_t)((t + i) * ovh);
			uint64_t ns, fn = x->fn >> 1, back;

			if (ticks >= 0) {
				ns = mono0 + slope_ns(sl, (uint64_t)ticks);
			} else {
				back = slope_ns(sl, (uint64_t)-ticks);
				ns = back > mono0 ? 0 : mono0 - back;
			}
			if (ns < last)
				ns = last;
			last = ns;
			out[i].time = ns;
			out[i].bits = TRACE_UREC(x->fn & TRACE_REC_EXIT, x->depth, fn < nf ? fn_addr[fn] : 0);
		}
		len = (size_t)n * sizeof(out[0]);
		while (len && r->fd >= 0) {
			ssize_t w = write(r->fd, p, len);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rsay("%s/%d.dat: write: %s: records lost (counted)", rec_dir, r->tid,
				     w < 0 ? strerror(errno) : "no space");
				close(r->fd);
				r->fd = -2;	/* said once; nothing more written */
				break;
			}
			p += w;
			len -= (size_t)w;
		}
		r->lost += len / sizeof(out[0]);
		t += n;
		__atomic_store_n(&r->tail, t, __ATOMIC_RELEASE);
	}
	r->last_ns = last;
	return t - t0;
}

/* 1 if some ring was more than an eighth full: drain again at once */
static int drain_all(void)
{
	uint64_t tn, mn;
	struct slope sl;
	int busy = 0;

	/* the slope from start to now, once 10 ms are behind (before: the
	   start's own, over 2 ms) */
	clock_pair(&tn, &mn);
	if (mn - mono0 > 10000000 && tn > tsc0)
		ns_per_tick = (double)(mn - mono0) / (double)(tn - tsc0);
	sl = slope_of(ns_per_tick);
	for (struct trace_ring *r = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); r; r = r->next)
		busy |= ring_drain(r, sl) > trace_ring_size / 8;
	return busy;
}

static void *writer_thread(void *unused)
{
	struct timespec tick = { 0, 5 * 1000000 };

	(void)unused;
	while (!__atomic_load_n(&writer_stop, __ATOMIC_ACQUIRE))
		if (!drain_all())
			nanosleep(&tick, NULL);
	return NULL;
}

/* --- Start and end ------------------------------------------------------ */

static int write_file_to(const char *name, const char *text, int append)
{
	int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC),
			0644);
	size_t len = strlen(text);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		rsay("%s/%s: %s", rec_dir, name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	return close(fd) ? -errno : 0;
}

static int write_file(const char *name, const char *text)
{
	return write_file_to(name, text, 0);
}

/* the cost of one record: counter reads and ring writes into a ring of
   no thread's (the same code as the hot path's), per record */
static uint64_t measure_overhead(void)
{
	enum { N = 4096 };
	struct trace_ring *r = mmap(NULL, sizeof(struct trace_ring) + 2 * N * sizeof(struct trace_rec),
			      PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t best = UINT64_MAX;

	if (r == MAP_FAILED)
		return 0;
	r->mask = 2 * N - 1;
	for (int round = 0; round < 5; round++) {
		uint64_t a, b;

		r->head = 0;
		a = trace_tsc();
		for (uint32_t i = 0; i < N; i++) {
			trace_ring_put(r, i << 1, 1);
			trace_ring_put(r, i << 1 | 1, 1);
		}
		b = trace_tsc();
		if (b - a < best)
			best = b - a;
	}
	munmap(r, sizeof(struct trace_ring) + 2 * N * sizeof(struct trace_rec));
	return best / (2 * N);
}

int trace_record_start(const char *dir, const char *bufsize)
{
	int err;

	if (bufsize) {
		char *end;
		unsigned long long v = strtoull(bufsize, &end, 0);

		if (*end || v < 4 || v > (1ull << 30) || (v & (v - 1))) {
			rsay("PATCHSITE_TRACE_BUFSIZE=%s: not a power of 2 from 4 to 2^30 (records "
			     "per thread)", bufsize);
			return -EINVAL;
		}
		trace_ring_size = v;
	}
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0) {
		err = -errno;
		rsay("PATCHSITE_TRACE_RECORD=%s: %s", dir, strerror(errno));
		return err;
	}
	rec_dir = strdup(dir);
	if (!rec_dir) {
		rsay("PATCHSITE_TRACE_RECORD: out of memory");
		return -ENOMEM;
	}
	ovh = measure_overhead();
	clock_pair(&tsc0, &mono0);
	rec_pid = getpid();
	/* a first calibration over 2 ms, for a program that never reaches
	   trace_record_end (killed by a signal, _exit): the end's replaces it */
	{
		uint64_t t1, m1;
		struct timespec ms2 = { 0, 2000000 };
		char line[256];

		nanosleep(&ms2, NULL);
		clock_pair(&t1, &m1);
		ns_per_tick = t1 > tsc0 ? (double)(m1 - mono0) / (double)(t1 - tsc0) : 1.0;
		snprintf(line, sizeof(line), "tsc0 %llu mono0 %llu tsc1 %llu mono1 %llu ovh %llu pid %ld\n",
			 (unsigned long long)tsc0, (unsigned long long)mono0, (unsigned long long)t1,
			 (unsigned long long)m1, (unsigned long long)ovh, (long)rec_pid);
		if (write_file("clock.txt", line))
			return -EIO;
	}
	__atomic_store_n(&trace_recording, 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * The writer thread, started once the functions are attached: a thread
 * being created has every signal blocked for a moment, SIGTRAP included,
 * and the runtime refuses to patch while one does (-EDEADLK; it looks
 * again for 50 ms, which a loaded machine may not give the new thread).
 * Records made before it runs wait in their rings.
 */
int trace_record_writer(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	sigfillset(&all);
	sigdelset(&all, SIGTRAP);	/* as the control thread: see tracer.c */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	err = pthread_create(&writer, &attr, writer_thread, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		rsay("pthread_create: %s: records written at exit only", strerror(err));
		return -err;
	}
	writer_started = 1;
	return 0;
}

/* `ADDRESS NAME` lines of addr[lo..lo+n) into a new string; NULL without memory */
static char *funcs_text(const char *first, long lo, long n, const uintptr_t *addr,
			const char *const *name)
{
	size_t cap = 64 + strlen(first) + (size_t)n * 32, len;
	char *text = malloc(cap);

	if (!text)
		return NULL;
	len = (size_t)snprintf(text, cap, "%s", first);
	for (long i = lo; i < lo + n; i++) {
		const char *nm = name[i] ? name[i] : "?";
		size_t need = strlen(nm) + 32;

		if (len + need >= cap) {
			char *q = realloc(text, cap = cap * 2 + need);

			if (!q) {
				free(text);
				return NULL;
			}
			text = q;
		}
		len += (size_t)snprintf(text + len, cap - len, "%#lx %s\n", (unsigned long)addr[i], nm);
	}
	return text;
}

int trace_record_funcs(uintptr_t bias, long n, long cap, const uintptr_t *addr,
		       const char *const *name)
{
	char first[64], *text;
	int err;

	fn_addr = malloc((cap > n ? (size_t)cap : n ? (size_t)n : 1) * sizeof(*fn_addr));
	snprintf(first, sizeof(first), "bias %#lx\n", (unsigned long)bias);
	text = funcs_text(first, 0, n, addr, name);
	if (!text || !fn_addr) {
		free(text);
		return -ENOMEM;
	}
	for (long i = 0; i < n; i++)
		fn_addr[i] = addr[i];
	fn_cap = cap > n ? cap : n;
	__atomic_store_n(&nfn, n, __ATOMIC_RELEASE);
	err = write_file("funcs.txt", text);
	free(text);
	return err;
}

int trace_record_object(const char *path, uintptr_t bias, long lo, long n, const uintptr_t *addr,
			const char *const *name)
{
	char *first, *text;
	size_t len;
	int err;

	if (rec_pid != getpid())
		return 0;	/* a forked child records nothing */
	if (lo != nfn || lo + n > fn_cap)
		return -ENOSPC;
	len = strlen(path) + 64;
	if (!(first = malloc(len)))
		return -ENOMEM;
	snprintf(first, len, "object %#lx %s\n", (unsigned long)bias, path);
	text = funcs_text(first, 0, n, addr, name);
	free(first);
	if (!text)
		return -ENOMEM;
	for (long i = 0; i < n; i++)
		fn_addr[lo + i] = addr[i];
	/* the writer turns the new indices into addresses from here */
	__atomic_store_n(&nfn, lo + n, __ATOMIC_RELEASE);
	err = write_file_to("funcs.txt", text, 1);
	free(text);
	return err;
}

void trace_record_end(void)
{
	uint64_t tsc1, mono1;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (dir_fd < 0 || rec_pid != getpid())
		return;
	clock_pair(&tsc1, &mono1);
	if (writer_started) {
		__atomic_store_n(&writer_stop, 1, __ATOMIC_RELEASE);
		pthread_join(writer, NULL);
		writer_started = 0;
	}
	drain_all();
	__atomic_store_n(&trace_recording, 0, __ATOMIC_RELEASE);
	f = open_memstream(&text, &len);
	if (!f)
		return;
	for (struct trace_ring *r = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); r; r = r->next) {
		fprintf(f, "ring %ld tid %d records %llu dropped %llu lost %llu deep %llu\n", r->seq,
			r->tid, (unsigned long long)r->tail, (unsigned long long)r->dropped,
			(unsigned long long)r->lost, (unsigned long long)r->deep);
		if (r->fd >= 0)
			close(r->fd);
		r->fd = -2;
	}
	fclose(f);
	write_file("threads.txt", text ? text : "");
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return;
	fprintf(f, "tsc0 %llu mono0 %llu tsc1 %llu mono1 %llu ovh %llu pid %ld\n",
		(unsigned long long)tsc0, (unsigned long long)mono0, (unsigned long long)tsc1,
		(unsigned long long)mono1, (unsigned long long)ovh, (long)rec_pid);
	fclose(f);
	write_file("clock.txt", text ? text : "");
	free(text);
}

void trace_record_forked(void)
{
	/* the child's rings are copies the parent's writer drains: record
	   nothing here (the parent's files stay the parent's) */
	__atomic_store_n(&trace_recording, 0, __ATOMIC_RELEASE);
	writer_started = 0;
	trace_my_ring = NULL;
}
