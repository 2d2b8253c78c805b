/*
 * tracer-signal-timing.c - a traced function called from a signal handler
 * while the preloaded tracer times calls (tests/e2e/safety-tracer.sh).
 *
 * Strategy: the main thread calls t_work in a loop while a second thread
 * sends it SIGUSR1 as fast as it can; the handler calls t_inhandler.  A
 * signal that lands inside the tracer's entry hook for t_work runs
 * t_inhandler's entry hook on the same thread's shadow stack: if the
 * interrupted record can be overwritten, t_work returns into the handler
 * and the process dies (SIGSEGV), or the sums below come out wrong.  The
 * program counts its own calls (the oracle for the tracer's table) and
 * checks every value t_work returned against the same arithmetic done
 * inline.
 *
 *   tracer-signal-timing SIGNALS      send SIGNALS signals, then stop
 *   tracer-signal-timing 0 CALLS      no signals: CALLS calls of t_work,
 *                                     prints ns_per_call (the per-call cost)
 *
 * Prints `count NAME N` for t_work and t_inhandler, `bad N` (values that
 * were wrong; 0 expected) and exits 0 only when nothing was wrong.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) unsigned long t_work(unsigned long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

__attribute__((noinline)) unsigned long t_inhandler(unsigned long x)
{
	__asm__ volatile("" ::: "memory");
	return x ^ 0x55;
}

static volatile sig_atomic_t stop;
static volatile unsigned long handler_calls, handler_bad;
static pthread_t main_thread;
static long nsignals;

static void on_usr1(int sig)
{
	unsigned long n = handler_calls + 1;

	(void)sig;
	handler_calls = n;
	if (t_inhandler(n) != (n ^ 0x55))
		handler_bad++;
}

static void *sender(void *unused)
{
	(void)unused;
	for (long i = 0; i < nsignals; i++) {
		pthread_kill(main_thread, SIGUSR1);
		if (i % 64 == 63)
			sched_yield();
	}
	stop = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { 0 };
	unsigned long calls = 0, bad = 0;
	pthread_t th;
	struct timespec t0, t1;

	if (argc < 2)
		return 2;
	nsignals = atol(argv[1]);
	main_thread = pthread_self();
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return 2;
	if (nsignals == 0) {
		long n = argc > 2 ? atol(argv[2]) : 10000000;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (long i = 0; i < n; i++, calls++)
			bad += t_work((unsigned long)i) != (unsigned long)i * 3 + 1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("ns_per_call %.2f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)n);
	} else {
		if (pthread_create(&th, NULL, sender, NULL))
			return 2;
		while (!stop) {
			bad += t_work(calls) != calls * 3 + 1;
			calls++;
		}
		pthread_join(th, NULL);
	}
	bad += handler_bad;
	printf("count t_work %lu\ncount t_inhandler %lu\nbad %lu\n", calls, handler_calls, bad);
	return bad ? 1 : 0;
}
