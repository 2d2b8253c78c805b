/*
 * bench/attach: time attaching one ops to every traced function of a
 * program with N (20,000+) of them, as one batched ps_attach_list() call and
 * as a loop of ps_attach(), and the same for detach, optionally while other
 * threads call those functions (seed 004's shape).
 *
 *   bench REPS [THREADS [MODE]]
 *       THREADS  threads that call every traced function in a loop for the
 *                whole run (default 0); the timed work starts once each has
 *                made one pass;
 *       MODE     `all` (default): the batched calls and the loops; `list`:
 *                the batched calls only.
 *   prints one line per repetition:
 *       rep I list_attach S list_detach S [loop_attach S loop_detach S]
 *             list_attach_thread S list_detach_thread S [loop_..._thread S ...]
 *             [syncs_list_attach K syncs_list_detach K ...]
 *             faults_list_attach F ... (the process's minor page faults in the phase)
 *   and at the end `callers C1 ... traced T1 ...` (each calling thread's
 *   calls and how many of them its ops saw).
 *
 * The plain figures are CLOCK_MONOTONIC, or CLOCK_PROCESS_CPUTIME_ID when
 * BENCH_CLOCK=cpu is in the environment (the whole process's CPU time,
 * qemu's under emulation: steadier on a shared host; compare.sh; with
 * calling threads it counts theirs too).  The `_thread` figures are the
 * CPU time of the attaching thread alone (CLOCK_THREAD_CPUTIME_ID).  The
 * `syncs_` figures (x86_64) are the membarrier SYNC_CORE calls the runtime
 * made in the call (its counter; bench/attach/run-x86_64.sh counts them with
 * strace too).
 *
 * Each repetition checks that an attach really took: the attaching thread
 * calls every function once and its ops must see exactly N calls from that
 * thread (and none after detach); the ops counts per thread, so the calling
 * threads' calls do not blur it.  Built without patchable entries: only
 * traced.c is traced.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "callops.h"

extern const size_t bench_nfuncs;
extern void *const bench_funcs[];

static __thread unsigned long calls;	/* calls the ops saw, this thread's */

static void count_cb(unsigned long ip, unsigned long pip, struct ps_ops *o, void *regs)
{
	(void)ip; (void)pip; (void)o; (void)regs;
	calls++;
}
static struct ps_ops ops = { count_cb, NULL, NULL };

static double clock_s(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static clockid_t main_clock(void)
{
	const char *c = getenv("BENCH_CLOCK");

	return c && !strcmp(c, "cpu") ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
}

/* Call every traced function once; return how many calls the ops saw. */
static unsigned long call_all(void)
{
	unsigned long before = calls;
	volatile long sink = 0;

	for (size_t i = 0; i < bench_nfuncs; i++)
		sink += ((long (*)(long))bench_funcs[i])(1);
	(void)sink;
	return calls - before;
}

static int verify(unsigned long want, const char *what)
{
	unsigned long got = call_all();

	if (got != want) {
		fprintf(stderr, "bench: %s: %lu calls traced, want %lu\n", what, got, want);
		return 1;
	}
	return 0;
}

/* The calling threads: every function in turn, until told to stop. */
#define MAXTHREADS 16
static atomic_int stop;
struct caller {
	pthread_t t;
	unsigned long ncalls, traced;
};

static atomic_int started;	/* callers that have made one pass */

static void *caller(void *arg)
{
	struct caller *c = arg;
	unsigned long n = 0;
	volatile long sink = 0;

	do {
		for (size_t i = 0; i < bench_nfuncs; i++, n++)
			sink += ((long (*)(long))bench_funcs[i])(1);
		if (n == bench_nfuncs)
			atomic_fetch_add(&started, 1);
	} while (!atomic_load_explicit(&stop, memory_order_relaxed));
	(void)sink;
	c->ncalls = n;
	c->traced = calls;
	return NULL;
}

/* A timed phase: wall (or BENCH_CLOCK) and the thread's CPU time. */
struct phase {
	const char *name;
	double t, cpu;
	long syncs, faults;
};

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

#if defined(__x86_64__)
/* the x86_64 patcher's count of membarrier SYNC_CORE calls (linked statically) */
#include "patcher/x86_64-stats.h"

static long syncs_now(void)
{
	struct ps_arch_stats st;

	ps_arch_stats(&st);
	return (long)st.syncs;
}
#define SYNCS() syncs_now()
#define HAVE_SYNCS 1
#else
#define SYNCS() 0L
#define HAVE_SYNCS 0
#endif

#define PHASE(p, name_, stmt)							\
	do {									\
		struct phase *p_ = (p);						\
		long s0_ = SYNCS(), f0_ = minflt();				\
		double c0_ = clock_s(CLOCK_THREAD_CPUTIME_ID), t0_ = clock_s(clk); \
		stmt;								\
		p_->t = clock_s(clk) - t0_;					\
		p_->cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0_;		\
		p_->syncs = SYNCS() - s0_;					\
		p_->faults = minflt() - f0_;					\
		p_->name = name_;						\
	} while (0)

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	int nthreads = argc > 2 ? atoi(argv[2]) : 0;
	int loops = !(argc > 3 && !strcmp(argv[3], "list"));
	size_t n = bench_nfuncs;
	clockid_t clk = main_clock();
	struct caller callers[MAXTHREADS];

	if (reps <= 0 || nthreads < 0 || nthreads > MAXTHREADS ||
	    (argc > 3 && strcmp(argv[3], "list") && strcmp(argv[3], "all"))) {
		fprintf(stderr, "usage: bench REPS [THREADS (0..%d) [all|list]]\n", MAXTHREADS);
		return 2;
	}
	if (ps_count() != (long)n) {
		fprintf(stderr, "bench: %ld traced functions, want %zu (not embedded?)\n",
			ps_count(), n);
		return 2;
	}
	printf("functions %zu threads %d\n", n, nthreads);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&callers[i].t, NULL, caller, &callers[i])) {
			fprintf(stderr, "bench: pthread_create failed\n");
			return 2;
		}
	while (atomic_load(&started) < nthreads)	/* every caller running */
		sched_yield();
	for (int r = 0; r < reps; r++) {
		struct phase p[4];
		int np = 0, err = 0;

		PHASE(&p[np++], "list_attach", err = ps_attach_list(bench_funcs, n, &ops));
		if (err || verify(n, "after ps_attach_list"))
			return err ? 2 : 1;
		PHASE(&p[np++], "list_detach", err = ps_detach_list(bench_funcs, n));
		if (err || verify(0, "after ps_detach_list"))
			return err ? 2 : 1;
		if (loops) {
			PHASE(&p[np++], "loop_attach",
			      for (size_t i = 0; i < n && !err; i++) err = ps_attach(bench_funcs[i], &ops));
			if (err || verify(n, "after the ps_attach loop"))
				return err ? 2 : 1;
			PHASE(&p[np++], "loop_detach",
			      for (size_t i = 0; i < n && !err; i++) err = ps_detach(bench_funcs[i]));
			if (err || verify(0, "after the ps_detach loop"))
				return err ? 2 : 1;
		}
		printf("rep %d", r);
		for (int i = 0; i < np; i++)
			printf(" %s %.6f", p[i].name, p[i].t);
		for (int i = 0; i < np; i++)
			printf(" %s_thread %.6f", p[i].name, p[i].cpu);
		for (int i = 0; i < np && HAVE_SYNCS; i++)
			printf(" syncs_%s %ld", p[i].name, p[i].syncs);
		for (int i = 0; i < np; i++)
			printf(" faults_%s %ld", p[i].name, p[i].faults);
		printf("\n");
		fflush(stdout);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < nthreads; i++)
		pthread_join(callers[i].t, NULL);
	if (nthreads) {
		printf("callers");
		for (int i = 0; i < nthreads; i++)
			printf(" %lu", callers[i].ncalls);
		printf(" traced");
		for (int i = 0; i < nthreads; i++)
			printf(" %lu", callers[i].traced);
		printf("\n");
		for (int i = 0; i < nthreads; i++)
			if (!callers[i].ncalls || callers[i].traced > callers[i].ncalls) {
				fprintf(stderr, "bench: calling thread %d: %lu calls, %lu traced\n",
					i, callers[i].ncalls, callers[i].traced);
				return 1;
			}
	}
	return 0;
}
