// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-fork.c - fork() while another thread publishes rounds.  The child
 * must get a consistent runtime: no lock held (its first call does not
 * hang), no site left as INT3, the text read-only again, and it can attach
 * and detach at once with counts of its own.
 *
 * Strategy: a thread attaches and detaches 8 functions in batches without
 * pause; the main thread forks 120 children.  Each child (alarm: 5 s)
 * checks every site's first byte (the NOP's 0x0f or CALL's 0xe8, never
 * INT3's 0xcc) and that no mapping holding them is writable (/proc/self/
 * maps), then attaches its own ops to f0, calls it 10 times, counts 10,
 * detaches.  The parent wants every child to exit 0.  On arm64 and
 * riscv64 (30 children under qemu) the same without the INT3 check.
 */
#include <sys/wait.h>

#include "core.h"

CORE_FN(f0, 1)
CORE_FN(f1, 2)
CORE_FN(f2, 3)
CORE_FN(f3, 4)
CORE_FN(f4, 5)
CORE_FN(f5, 6)
CORE_FN(f6, 7)
CORE_FN(f7, 8)

static void *fns[8] = { (void *)f0, (void *)f1, (void *)f2, (void *)f3,
			(void *)f4, (void *)f5, (void *)f6, (void *)f7 };
static unsigned long phits, chits;
static struct ps_ops pops = { core_count, &phits, NULL };
static struct ps_ops cops = { core_count, &chits, NULL };
static volatile int stop;

NOTRACE static void *rounds(void *arg)
{
	(void)arg;
	while (!stop) {
		ps_attach_list(fns, 8, &pops);
		ps_detach_list(fns, 8);
	}
	return NULL;
}

/* Is any mapping that holds addr writable? */
NOTRACE static int writable(void *addr)
{
	unsigned long a = (unsigned long)addr, lo, hi;
	char line[512], perm[8];
	FILE *m = fopen("/proc/self/maps", "r");
	int w = 0;

	if (!m)
		return 1;
	while (fgets(line, sizeof(line), m))
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3 && a >= lo && a < hi)
			w = perm[1] == 'w';
	fclose(m);
	return w;
}

NOTRACE static int child(void)
{
	alarm(5);
	for (int i = 0; i < 8; i++) {
#if CORE_INT3
		unsigned char b = core_slot0(fns[i]);

		if (b != 0x0f && b != 0xe8)
			return 10 + i;	/* INT3 or a torn site */
#endif
		if (writable(fns[i]))
			return 20 + i;
	}
	if (ps_attach((void *)f0, &cops))
		return 30;
	for (int i = 0; i < 10; i++)
		f0(i);
	if (chits != 10)
		return 31;
	if (ps_detach_ops((void *)f0, &cops))
		return 32;
	f0(1);
	return chits == 10 ? 0 : 33;
}

NOTRACE int main(void)
{
	pthread_t t;
	int bad = 0, first = 0, n = core_scale(120);

	core_name = "core-fork";
	EXPECT(ps_count() > 0, "not embedded: %ld", ps_count());
	pthread_create(&t, NULL, rounds, NULL);
	usleep(10000);
	for (int i = 0; i < n; i++) {
		int st;
		pid_t p;

		fflush(NULL);
		if ((p = fork()) == 0)
			_exit(child());
		EXPECT(p > 0, "fork: %s", strerror(errno));
		EXPECT(waitpid(p, &st, 0) == p, "waitpid");
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			if (!bad++)
				first = WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
		}
	}
	stop = 1;
	pthread_join(t, NULL);
	EXPECT(!bad, "%d of %d children failed (first: %s %d)", bad, n,
	       first >= 1000 ? "signal" : "exit", first >= 1000 ? first - 1000 : first);
	core_ok();
	return 0;
}
