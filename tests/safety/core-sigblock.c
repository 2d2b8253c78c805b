// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-sigblock.c - a worker thread that blocks every signal (the common
 * server shape: signals left to one sigwait thread) calls a traced
 * function in a loop while the main thread attaches and detaches it in
 * rounds.  An INT3 met with SIGTRAP blocked is fatal (the kernel forces
 * the default action), so the runtime must refuse those rounds (-EDEADLK),
 * every byte as it was, and patch again once the worker unblocks it.
 *
 * Strategy: 60 rounds while the worker blocks everything: each attach
 * returns 0 or -EDEADLK (a refused one leaves the site idle: the ops is
 * never called), the process lives; then the worker is stopped and an
 * attach must succeed with exact counts.  On arm64 and riscv64 (literal
 * swaps, no INT3, no signal) a mask does not matter: every round must
 * succeed.
 */
#include "core.h"

CORE_FN(work, 1)

static volatile int stop, blocked;
static unsigned long hits;
static struct ps_ops ops = { core_count, &hits, NULL };

NOTRACE static void *worker(void *arg)
{
	(void)arg;
	core_mask_all(SIG_BLOCK);
	blocked = 1;
	while (!stop)
		work(1);
	return NULL;
}

NOTRACE int main(void)
{
	pthread_t t;
	int refused = 0;

	core_name = "core-sigblock";
	EXPECT(ps_count() > 0, "not embedded: %ld", ps_count());
	core_slow_rounds();
	pthread_create(&t, NULL, worker, NULL);
	while (!blocked)
		usleep(1000);
	for (int i = 0; i < core_scale(60); i++) {
		int r = ps_attach((void *)work, &ops);

		EXPECT(r == 0 || r == -EDEADLK, "round %d: attach returned %d", i, r);
		if (r == -EDEADLK) {
			refused++;
#if CORE_INT3
			EXPECT(core_slot0((void *)work) == 0x0f,
			       "refused, yet the site holds %#x", core_slot0((void *)work));
#endif
			continue;
		}
		EXPECT(ps_detach((void *)work) == 0, "round %d: detach", i);
	}
#if CORE_INT3
	EXPECT(refused > 0, "no round refused while a thread blocks SIGTRAP");
	EXPECT(hits == 0, "refused rounds, yet the ops was called %lu times", hits);
#else
	EXPECT(refused == 0, "%d rounds refused where no INT3 is used", refused);
#endif
	stop = 1;
	pthread_join(t, NULL);
	/* the worker's calls counted (a call that entered the trampoline before
	   a detach returned still reaches the ops: counted only once it is gone) */
	hits = 0;
	EXPECT(ps_attach((void *)work, &ops) == 0, "attach once the worker is gone");
	for (int i = 0; i < 1000; i++)
		work(i);
	EXPECT(hits == 1000, "%lu calls counted, want 1000", hits);
	EXPECT(ps_detach((void *)work) == 0, "detach");
	core_ok();
	return 0;
}
