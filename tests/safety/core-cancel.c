// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-cancel.c - a thread canceled inside ps_attach.  The reclaim wait
 * sleeps (a cancellation point); canceled there with the runtime's lock
 * held, the thread would leave the lock held and every later call hang.
 *
 * Strategy: a room of 1 slot, retired; a thread that blocks SIGTRAP keeps
 * the reclaim waiting; thread A calls ps_attach (which reclaims and
 * waits) and is canceled 200 ms in.  A is joined; the blocker unblocks;
 * then the main thread's ps_attach must return 0 (the script's timeout
 * catches a hang), and the ops must count.
 */
#include "core.h"

CORE_FN(f0, 1)
CORE_FN(f1, 2)

static unsigned long hits[2];
static struct ps_ops ops[2] = { { core_count, &hits[0], NULL }, { core_count, &hits[1], NULL } };
static volatile int release, blocking, in_call;

NOTRACE static void *blocker(void *arg)
{
	sigset_t s;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGTRAP);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	blocking = 1;
	while (!release)
		usleep(1000);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	for (;;)
		pause();
	return NULL;
}

NOTRACE static void *caller(void *arg)
{
	(void)arg;
	in_call = 1;
	ps_attach((void *)f1, &ops[1]);
	pthread_testcancel();
	return NULL;
}

NOTRACE int main(void)
{
	pthread_t b, a;
	void *res;
	int r;

	core_name = "core-cancel";
	EXPECT(ps_count() > 0, "not embedded: %ld", ps_count());
	ps_arch_test_slots = 1;
	EXPECT(ps_attach((void *)f0, &ops[0]) == 0 && ps_detach((void *)f0) == 0,
	       "the one slot used and retired");
	pthread_create(&b, NULL, blocker, NULL);
	while (!blocking)
		usleep(1000);
	pthread_create(&a, NULL, caller, NULL);
	while (!in_call)
		usleep(1000);
	usleep(200000);
	pthread_cancel(a);
	pthread_join(a, &res);
	EXPECT(res == PTHREAD_CANCELED, "the caller was canceled");
	release = 1;
	usleep(50000);
	r = ps_attach((void *)f1, &ops[1]);
	EXPECT(r == 0, "attach after the cancel returned %d", r);
	f1(1);
	EXPECT(hits[1] == 1, "ops counted %lu", hits[1]);
	EXPECT(ps_detach((void *)f1) == 0, "detach");
	core_ok();
	return 0;
}
