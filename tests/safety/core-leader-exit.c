// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-leader-exit.c - the main thread calls pthread_exit; the zombie
 * leader stays listed in /proc/self/task and never answers a reclaim
 * question.  Reclaiming trampoline slots must not wait on it.
 *
 * Strategy: a room of 2 slots (ps_arch_test_slots); after the leader has
 * exited, a worker attaches and detaches 6 distinct ops in turn, so each
 * attach from the third on needs a reclaim: each must return 0, and
 * quickly (well under the runtime's 5 s answer wait).
 */
#include "core.h"

CORE_FN(f0, 1)
CORE_FN(f1, 2)
CORE_FN(f2, 3)

static int (*const fn[3])(int) = { f0, f1, f2 };
static unsigned long hits[6];
static struct ps_ops ops[6];

NOTRACE static void *worker(void *arg)
{
	(void)arg;
	usleep(50000);		/* the leader is a zombie by now */
	for (int i = 0; i < 6; i++) {
		double t0 = core_now(), dt;
		int r;

		ops[i] = (struct ps_ops){ core_count, &hits[i], NULL };
		r = ps_attach((void *)fn[i % 3], &ops[i]);
		dt = core_now() - t0;
		EXPECT(r == 0, "attach %d with the leader gone returned %d after %.1f s", i, r, dt);
		EXPECT(dt < 2.0, "attach %d took %.1f s", i, dt);
		fn[i % 3](1);
		EXPECT(hits[i] == 1, "ops %d counted %lu", i, hits[i]);
		EXPECT(ps_detach((void *)fn[i % 3]) == 0, "detach %d", i);
	}
	core_ok();
	exit(0);
}

NOTRACE int main(void)
{
	pthread_t t;

	core_name = "core-leader-exit";
	EXPECT(ps_count() > 0, "not embedded: %ld", ps_count());
	ps_arch_test_slots = 2;
	pthread_create(&t, NULL, worker, NULL);
	pthread_exit(NULL);
}
