/*
 * bench/attach: time attaching one ops to every traced function of a
 * program with N (20,000+) of them, as one batched ps_attach_list() call and
 * as a loop of ps_attach(), and the same for detach.
 *
 *   bench REPS     prints one line per repetition:
 *                  `rep I list_attach S list_detach S loop_attach S loop_detach S`
 *
 * Times are CLOCK_MONOTONIC, or CLOCK_PROCESS_CPUTIME_ID when BENCH_CLOCK=cpu
 * is in the environment (the whole process's CPU time, qemu's under
 * emulation, kernel time included: steadier on a shared host; compare.sh).
 *
 * Each repetition checks that an attach really took: every function is
 * called once and the counting ops must see exactly N calls (and none after
 * detach).  Built without patchable entries: only traced.c is traced.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "callops.h"

extern const size_t bench_nfuncs;
extern void *const bench_funcs[];

static unsigned long calls;

static void count_cb(unsigned long ip, unsigned long pip, struct ps_ops *o, void *regs)
{
	(void)ip; (void)pip; (void)o; (void)regs;
	calls++;
}
static struct ps_ops ops = { count_cb, NULL, NULL };

static double now(void)
{
	static clockid_t clk = -1;
	struct timespec t;

	if (clk == -1) {
		const char *c = getenv("BENCH_CLOCK");

		clk = c && !strcmp(c, "cpu") ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
	}
	clock_gettime(clk, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
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

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	size_t n = bench_nfuncs;

	if (ps_count() != (long)n) {
		fprintf(stderr, "bench: %ld traced functions, want %zu (not embedded?)\n",
			ps_count(), n);
		return 2;
	}
	printf("functions %zu\n", n);
	for (int r = 0; r < reps; r++) {
		double t0, t1, t2, t3, t4;

		t0 = now();
		if (ps_attach_list(bench_funcs, n, &ops))
			return 2;
		t1 = now();
		if (verify(n, "after ps_attach_list"))
			return 1;
		t2 = now();
		if (ps_detach_list(bench_funcs, n))
			return 2;
		t3 = now();
		if (verify(0, "after ps_detach_list"))
			return 1;
		double la = t1 - t0, ld = t3 - t2;

		t0 = now();
		for (size_t i = 0; i < n; i++)
			if (ps_attach(bench_funcs[i], &ops))
				return 2;
		t1 = now();
		if (verify(n, "after the ps_attach loop"))
			return 1;
		t2 = now();
		for (size_t i = 0; i < n; i++)
			if (ps_detach(bench_funcs[i]))
				return 2;
		t3 = now();
		if (verify(0, "after the ps_detach loop"))
			return 1;
		t4 = t3 - t2;
		printf("rep %d list_attach %.6f list_detach %.6f loop_attach %.6f loop_detach %.6f\n",
		       r, la, ld, t1 - t0, t4);
		fflush(stdout);
	}
	return 0;
}
