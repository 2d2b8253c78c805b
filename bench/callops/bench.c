// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench - cost of R relevant and I irrelevant tracers on one traced function,
 * the shape of the table in the arm64 DYNAMIC_FTRACE_WITH_CALL_OPS commit
 * (seed 003), under two dispatch schemes sharing patchsite's runtime, and
 * two references:
 *
 *   callops  kernel CALL_OPS semantics per site: no matching tracer -> site
 *            disabled (NOP); exactly one -> the site calls that tracer's ops
 *            (arm64: the literal points at it; x86_64: the site calls the
 *            ops' own trampoline); more than one -> the site calls a list
 *            ops that walks ALL registered tracers and tests each one's
 *            filter (like ftrace_ops_list_func).
 *   list     pre-CALL_OPS: every site some tracer wants calls the single
 *            list ops, which walks ALL registered tracers (R+I) and tests
 *            each one's filter; sites no tracer wants stay disabled.
 *   listhash as list, but each tracer tested as ftrace_ops_test tests an ops:
 *            its filter and notrace sets are hash sets (struct iphash), the
 *            address looked up in both.
 *   perfunc  every tracer attached (ps_attach) to the function it traces:
 *            with one, as callops; with more, the runtime's list trampoline,
 *            which walks only the ops attached to this function (seed 001).
 *   direct   as callops, but target()'s one relevant tracer is an ops with
 *            direct_call set (direct.S: counts, returns): the site calls it
 *            with no trampoline (R must be 1).
 *   plain    nothing attached: target()'s site stays a NOP (R and I must be
 *            0).  Needs no embedding, so the program as linked can run it
 *            under another tracer (bench/callops/run-x86_64.sh: uftrace).
 *
 * Relevant tracers filter on target(); irrelevant tracer i filters on
 * other_i() (never called in the timed loop), and is attached to it.
 *
 *   bench SCHEME R I N     prints one line: SCHEME R I N TOTAL_NS
 * The loop calls target() N times (after a warm-up of N/10 calls) and is timed
 * with clock_gettime(CLOCK_MONOTONIC), or with CLOCK_PROCESS_CPUTIME_ID when
 * BENCH_CLOCK=cpu is in the environment (the CPU time of the whole process,
 * qemu's under emulation: steadier than wall time on a shared host).
 * Exits 1 if a tracer saw the wrong number of calls or target() returned
 * the wrong sum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "callops.h"
#include "bench.h"

#define MAXTR (NOTHERS + 128)

/*
 * A function filter kept as ftrace keeps one (its filter and notrace sets):
 * a hash set of addresses, 2^bits buckets of singly linked entries,
 * multiplicative hashing; an empty filter set means every function.
 */
struct ipent {
	struct ipent *next;
	unsigned long ip;
};
struct iphash {
	unsigned int bits;
	unsigned long count;
	struct ipent **buckets;
};

struct tracer {
	struct ps_ops ops;		/* first: ops <-> tracer */
	unsigned long filter;		/* the one function it traces */
	unsigned long count;
	struct iphash *filter_hash;	/* listhash: {filter} */
	struct iphash *notrace_hash;	/* listhash: empty */
};

static struct tracer tracers[MAXTR];
static int ntracers;

/* The tracer function: trivial, like the ftrace_ops sample module's. */
PS_NOTRACE static void tracer_func(unsigned long ip, unsigned long parent_ip,
				   struct ps_ops *ops, void *regs)
{
	(void)ip; (void)parent_ip; (void)regs;
	((struct tracer *)ops)->count++;
}

/* ftrace_ops_list_func: walk every registered ops, call those whose filter matches. */
PS_NOTRACE static void list_func(unsigned long ip, unsigned long parent_ip,
				 struct ps_ops *ops, void *regs)
{
	(void)ops;
	for (int i = 0; i < ntracers; i++) {
		struct tracer *t = &tracers[i];

		if (t->filter == ip)
			t->ops.func(ip, parent_ip, &t->ops, regs);
	}
}

static struct ps_ops list_ops = { .func = list_func };

static unsigned long ip_bucket(unsigned long ip, unsigned int bits)
{
	return bits ? (ip * 0x61c8864680b583ebull) >> (64 - bits) : 0;	/* golden ratio */
}

static int iphash_has(const struct iphash *h, unsigned long ip)
{
	for (const struct ipent *e = h->buckets[ip_bucket(ip, h->bits)]; e; e = e->next)
		if (e->ip == ip)
			return 1;
	return 0;
}

static struct iphash *iphash_new(unsigned int bits, unsigned long ip)
{
	struct iphash *h = calloc(1, sizeof(*h));

	if (!h || !(h->buckets = calloc(1ul << bits, sizeof(*h->buckets)))) {
		fprintf(stderr, "bench: out of memory\n");
		exit(2);
	}
	h->bits = bits;
	if (ip) {
		struct ipent *e = malloc(sizeof(*e));

		if (!e) {
			fprintf(stderr, "bench: out of memory\n");
			exit(2);
		}
		e->ip = ip;
		e->next = NULL;
		h->buckets[ip_bucket(ip, bits)] = e;
		h->count = 1;
	}
	return h;
}

/*
 * The same walk, each ops tested as ftrace_ops_test tests one: the address
 * in its filter set (or that set empty) and not in its notrace set.
 */
PS_NOTRACE static void list_hash_func(unsigned long ip, unsigned long parent_ip,
				      struct ps_ops *ops, void *regs)
{
	(void)ops;
	for (int i = 0; i < ntracers; i++) {
		struct tracer *t = &tracers[i];
		const struct iphash *f = t->filter_hash, *nt = t->notrace_hash;

		if ((!f->count || iphash_has(f, ip)) && (!nt->count || !iphash_has(nt, ip)))
			t->ops.func(ip, parent_ip, &t->ops, regs);
	}
}

static struct ps_ops list_hash_ops = { .func = list_hash_func };

/* The direct scheme's relevant ops: its sites call direct_count (direct.S),
   never its func, which counts the calls it should not get. */
static unsigned long direct_func_calls;

PS_NOTRACE static void direct_func(unsigned long ip, unsigned long parent_ip,
				   struct ps_ops *ops, void *regs)
{
	(void)ip; (void)parent_ip; (void)ops; (void)regs;
	direct_func_calls++;
}

static struct ps_ops direct_ops = { .func = direct_func, .direct_call = (void *)direct_count };

static long long now_ns(void)
{
	static clockid_t clk = -1;
	struct timespec ts;

	if (clk == -1) {
		const char *c = getenv("BENCH_CLOCK");

		clk = c && !strcmp(c, "cpu") ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
	}
	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void add_tracer(void *fn)
{
	tracers[ntracers].ops.func = tracer_func;
	tracers[ntracers].filter = (unsigned long)fn;
	/* a one-function filter: ftrace sizes such a set at 2 buckets */
	tracers[ntracers].filter_hash = iphash_new(1, (unsigned long)fn);
	tracers[ntracers].notrace_hash = iphash_new(1, 0);
	ntracers++;
}

static void attach(void *fn, struct ps_ops *ops)
{
	int err = ps_attach(fn, ops);

	if (err) {
		fprintf(stderr, "bench: ps_attach: %d\n", err);
		exit(2);
	}
}

enum { LIST, LISTHASH, CALLOPS, PERFUNC };

/* Point each wanted site at the ops the scheme gives it. */
static void install(int how, void *fn)
{
	int n = 0, last = -1;

	for (int i = 0; i < ntracers; i++)
		if (tracers[i].filter == (unsigned long)fn) {
			n++, last = i;
			if (how == PERFUNC)
				attach(fn, &tracers[i].ops);
		}
	if (n == 0 || how == PERFUNC)
		return;			/* site stays disabled, or done */
	if (how == CALLOPS && n == 1)
		attach(fn, &tracers[last].ops);
	else
		attach(fn, how == LISTHASH ? &list_hash_ops : &list_ops);
}

static int is(const char *a, const char *b) { return !strcmp(a, b); }

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: bench callops|list|listhash|perfunc|direct|plain R I N\n");
		return 2;
	}
	const char *scheme = argv[1];
	int how = is(scheme, "list") ? LIST : is(scheme, "listhash") ? LISTHASH :
		  is(scheme, "perfunc") ? PERFUNC : CALLOPS;
	int plain = is(scheme, "plain"), direct = is(scheme, "direct");
	int r = atoi(argv[2]), irr = atoi(argv[3]);
	long n = atol(argv[4]);

	if ((!is(scheme, "callops") && !is(scheme, "list") && !is(scheme, "listhash") &&
	     !is(scheme, "perfunc") && !direct && !plain) || r < 0 ||
	    irr < 0 || irr > NOTHERS || r + irr > MAXTR || n <= 0 || (plain && r + irr) ||
	    (direct && r != 1)) {
		fprintf(stderr, "bench: bad arguments\n");
		return 2;
	}
	if (!plain && ps_count() < 0) {
		fprintf(stderr, "bench: not embedded (run patchsite embed)\n");
		return 2;
	}
	/* registration order: irrelevant first, so the list walk passes them */
	for (int i = 0; i < irr; i++)
		add_tracer((void *)others[i]);
	for (int i = 0; i < r; i++)
		add_tracer((void *)target);
	if (direct)
		attach((void *)target, &direct_ops);
	else if (!plain)
		install(how, (void *)target);
	for (int i = 0; i < irr; i++)
		install(how, (void *)others[i]);

	volatile int sink;
	int x = 0;
	long warm = n / 10;

	for (long i = 0; i < warm; i++)
		x = target(x);
	long long t0 = now_ns();
	for (long i = 0; i < n; i++)
		x = target(x);
	long long t1 = now_ns();
	sink = x;
	(void)sink;

	if (!plain && ps_detach_all()) {
		fprintf(stderr, "bench: ps_detach_all failed\n");
		return 2;
	}
	if ((long)x != n + warm) {
		fprintf(stderr, "bench: target() summed to %d, expected %ld\n", x, n + warm);
		return 1;
	}
	for (int i = 0; i < ntracers; i++) {
		unsigned long want = tracers[i].filter == (unsigned long)target && !direct ?
			(unsigned long)(n + warm) : 0;

		if (tracers[i].count != want) {
			fprintf(stderr, "bench: tracer %d saw %lu calls, expected %lu\n",
				i, tracers[i].count, want);
			return 1;
		}
	}
	if (direct_func_calls || direct_calls != (direct ? (unsigned long)(n + warm) : 0)) {
		fprintf(stderr, "bench: direct_call target saw %lu calls, expected %ld;"
			" the direct ops' func %lu, expected 0\n",
			direct_calls, direct ? n + warm : 0, direct_func_calls);
		return 1;
	}
	printf("%s %d %d %ld %lld\n", scheme, r, irr, n, t1 - t0);
	return 0;
}
