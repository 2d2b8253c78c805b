// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-nested-handler.c - a signal handler nested in the runtime's own
 * SIGTRAP handler.  A worker calls a traced function in a loop while
 * SIGUSR1 floods it; the SIGUSR1 handler calls another traced function.
 * Both are attached and detached in one batch per round.  If the
 * runtime's handler let SIGUSR1 in (an empty sa_mask), the SIGUSR1 handler
 * would run with SIGTRAP blocked and die at the other function's INT3.
 *
 * Strategy: each round's INT3 window widened to 2 ms (core_slow_rounds);
 * 400 rounds of ps_attach_list / ps_detach_list over both
 * functions; every call returns 0 or -EDEADLK (a round that found the
 * worker inside the runtime's handler, all signals blocked there); the
 * process lives and the worker keeps running.  On arm64 and riscv64 (no
 * INT3) every round must succeed.
 */
#include "core.h"

CORE_FN(work, 1)
CORE_FN(in_handler, 2)

static volatile int stop, started;
static volatile unsigned long loops, handled;
static unsigned long hits;
static struct ps_ops ops = { core_count, &hits, NULL };
static pthread_t wt;

NOTRACE static void on_usr1(int sig)
{
	(void)sig;
	in_handler(1);
	handled++;
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

NOTRACE static void *flooder(void *arg)
{
	(void)arg;
	while (!stop)
		pthread_kill(wt, SIGUSR1);
	return NULL;
}

NOTRACE int main(void)
{
	void *fns[2] = { (void *)work, (void *)in_handler };
	struct sigaction sa;
	pthread_t ft;
	int done = 0;

	core_name = "core-nested-handler";
	EXPECT(ps_count() > 0, "not embedded: %ld", ps_count());
	core_slow_rounds();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&wt, NULL, worker, NULL);
	while (!started)
		usleep(1000);
	pthread_create(&ft, NULL, flooder, NULL);
	for (int i = 0; i < core_scale(400); i++) {
		int r = ps_attach_list(fns, 2, &ops);

		EXPECT(r == 0 || (CORE_INT3 && r == -EDEADLK), "round %d: attach returned %d", i, r);
		if (r)
			continue;
		do
			r = ps_detach_list(fns, 2);
		while (r == -EDEADLK);
		EXPECT(r == 0, "round %d: detach returned %d", i, r);
		done++;
	}
	stop = 1;
	pthread_join(ft, NULL);
	pthread_join(wt, NULL);
	EXPECT(done > 0, "no round done");
	EXPECT(handled > 0 && loops > 0, "the worker did not run (%lu loops, %lu signals)",
	       loops, handled);
	core_ok();
	return 0;
}
