// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-handler-replace.c - the program installs its own SIGTRAP handler
 * while rounds are in flight.  A worker calls a traced function in a loop;
 * an installer thread puts in one of two SIGTRAP handlers of its own,
 * again and again, and raises SIGTRAP now and then; the main thread
 * attaches and detaches the function in rounds whose INT3 window is
 * widened to 2 ms.  Had the program's handler replaced the runtime's mid-
 * round, the worker's INT3 would reach it and the worker would resume in
 * the middle of an instruction (SIGSEGV or SIGILL).
 *
 * Strategy: the runtime interposes sigaction() and signal() for SIGTRAP
 * once its handler is in: the program's handler becomes the chained one.
 * Checked: the process lives; every SIGTRAP the program raised reached
 * one of its handlers (its own count); none of the runtime's INT3s did
 * (a program handler that sees si_code SI_KERNEL counts a stray);
 * sigaction(SIGTRAP, NULL, &old) reports the program's last handler; the
 * ops counted calls while attached.
 */
#include "core.h"

CORE_FN(work, 1)

static volatile int stop, started;
static volatile unsigned long loops;
static unsigned long hits, mine, strays;
static struct ps_ops ops = { core_count, &hits, NULL };

NOTRACE static void on_trap_a(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)ctx;
	if (si->si_code == SI_KERNEL)
		__atomic_fetch_add(&strays, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&mine, 1, __ATOMIC_RELAXED);
}

NOTRACE static void on_trap_b(int sig)
{
	(void)sig;
	__atomic_fetch_add(&mine, 1, __ATOMIC_RELAXED);
}

NOTRACE static void *worker(void *arg)
{
	(void)arg;
	started = 1;
	while (!stop) {
		work(1);
		loops++;
	}
	return NULL;
}

static unsigned long raised;

NOTRACE static void *installer(void *arg)
{
	struct sigaction sa;
	unsigned long i = 0;

	(void)arg;
	while (!stop) {
		memset(&sa, 0, sizeof(sa));
		sigemptyset(&sa.sa_mask);
		if (i & 1) {
			sa.sa_sigaction = on_trap_a;
			sa.sa_flags = SA_SIGINFO;
			if (sigaction(SIGTRAP, &sa, NULL))
				FAIL("sigaction: %s", strerror(errno));
		} else if (signal(SIGTRAP, on_trap_b) == SIG_ERR) {
			FAIL("signal: %s", strerror(errno));
		}
		if (i % 64 == 0) {
			raise(SIGTRAP);
			raised++;
		}
		i++;
	}
	/* the last one the program put in stays its, as it reads it back */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap_a;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, NULL);
	return NULL;
}

NOTRACE int main(void)
{
	void *fns[1] = { (void *)work };
	struct sigaction old;
	pthread_t wt, it;
	int done = 0;
	unsigned long seen;

	core_name = "core-handler-replace";
	EXPECT(ps_count() > 0, "not embedded: %ld", ps_count());
	core_slow_rounds();
	/* one round first: the runtime's handler is in before the installer starts */
	EXPECT(ps_attach_list(fns, 1, &ops) == 0, "first attach");
	EXPECT(ps_detach_list(fns, 1) == 0, "first detach");
	pthread_create(&wt, NULL, worker, NULL);
	while (!started)
		usleep(1000);
	pthread_create(&it, NULL, installer, NULL);
	for (int i = 0; i < 300; i++) {
		int r = ps_attach_list(fns, 1, &ops);

		EXPECT(r == 0 || r == -EDEADLK, "round %d: attach returned %d", i, r);
		if (r)
			continue;
		do
			r = ps_detach_list(fns, 1);
		while (r == -EDEADLK);
		EXPECT(r == 0, "round %d: detach returned %d", i, r);
		done++;
	}
	stop = 1;
	pthread_join(it, NULL);
	pthread_join(wt, NULL);
	seen = __atomic_load_n(&mine, __ATOMIC_RELAXED);
	EXPECT(done > 0 && loops > 0, "no round done (%d) or the worker did not run (%lu)", done, loops);
	EXPECT(hits > 0, "the ops never counted a call");
	EXPECT(strays == 0, "%lu of the runtime's INT3s reached the program's handler", strays);
	EXPECT(seen == raised, "the program raised SIGTRAP %lu times, its handlers saw %lu", raised, seen);
	EXPECT(sigaction(SIGTRAP, NULL, &old) == 0 && (old.sa_flags & SA_SIGINFO) &&
	       old.sa_sigaction == on_trap_a, "sigaction(SIGTRAP) does not report the program's handler");
	printf("core-handler-replace: %d rounds, %lu own SIGTRAPs delivered\n", done, raised);
	core_ok();
	return 0;
}
