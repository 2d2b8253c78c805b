// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-thread-churn.c - threads that come and go while slots are
 * reclaimed.  A thread listed and asked by a reclaim round that exits
 * before it answers never answers; the round must not wait the full
 * answer time for it (nor fail for it).
 *
 * Strategy: a room of 2 slots; two threads create short-lived threads
 * without pause; the main thread attaches 3 distinct ops in turn, 25
 * rounds, each needing a reclaim: every attach returns 0 (or -EDEADLK,
 * tried again: a thread being created or exiting blocks every signal for
 * a moment) and takes well under the 5 s wait.
 */
#include "core.h"

CORE_FN(f0, 1)
CORE_FN(f1, 2)
CORE_FN(f2, 3)

static int (*const fn[3])(int) = { f0, f1, f2 };
static unsigned long hits[3];
static struct ps_ops ops[3];
static volatile int stop;

NOTRACE static void *brief(void *arg)
{
	(void)arg;
	return NULL;
}

NOTRACE static void *churn(void *arg)
{
	pthread_attr_t at;

	(void)arg;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	while (!stop) {
		pthread_t t;

		if (pthread_create(&t, &at, brief, NULL))
			usleep(100);
	}
	return NULL;
}

NOTRACE int main(void)
{
	pthread_t c[2];

	core_name = "core-thread-churn";
	EXPECT(ps_count() > 0, "not embedded: %ld", ps_count());
	ps_arch_test_slots = 2;
	for (int i = 0; i < 3; i++)
		ops[i] = (struct ps_ops){ core_count, &hits[i], NULL };
	for (int i = 0; i < 2; i++)
		pthread_create(&c[i], NULL, churn, NULL);
	usleep(20000);
	for (int i = 0; i < 25; i++) {
		int r, tries = 0;

		do {	/* -EDEADLK: a thread being created or exiting blocks every signal */
			double t0 = core_now(), dt;

			r = ps_attach((void *)fn[i % 3], &ops[i % 3]);
			dt = core_now() - t0;
			EXPECT(r == 0 || r == -EDEADLK, "round %d: attach returned %d after %.1f s",
			       i, r, dt);
			EXPECT(dt < 2.5, "round %d: attach took %.1f s", i, dt);
		} while (r && ++tries < 200);
		EXPECT(r == 0, "round %d: refused %d times", i, tries);
		do
			r = ps_detach((void *)fn[i % 3]);
		while (r == -EDEADLK);
		EXPECT(r == 0, "round %d: detach returned %d", i, r);
	}
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(c[i], NULL);
	core_ok();
	return 0;
}
