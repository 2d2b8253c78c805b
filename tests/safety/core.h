/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core.h - what the runtime core's safety programs (tests/safety/core-*.c)
 * share.  Each program is built -O2 -pg -mfentry, embedded, and run by
 * tests/e2e/safety-core.sh under `timeout`; it prints "NAME: ok" and exits
 * 0, or says what went wrong and exits 1.  A hang or a death by signal is
 * the script's failure.
 *
 * Strategy: the functions the runtime patches are TRACED (compiled with a
 * __fentry__ call that embed turns into a site); everything the runtime
 * calls back (ops) is NOTRACE.  Counts are the program's own: an ops adds
 * one to the counter its priv points at.
 */
#ifndef SAFETY_CORE_H
#define SAFETY_CORE_H

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "callops.h"
#if defined(__x86_64__)
#include "patcher/x86_64-stats.h"
#define CORE_INT3 1	/* rounds place INT3s (refusals possible); elsewhere literal swaps */
#else
#define CORE_INT3 0
#endif

/* not traced: neither -pg's __fentry__ call nor a patchable entry */
#define NOTRACE __attribute__((no_instrument_function, patchable_function_entry(0, 0)))
#define TRACED __attribute__((noinline, noclone))

static const char *core_name = "core";

#define FAIL(...) do {						\
	fprintf(stderr, "%s: FAIL: ", core_name);		\
	fprintf(stderr, __VA_ARGS__);				\
	fputc('\n', stderr);					\
	exit(1);						\
} while (0)
#define EXPECT(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)

static volatile unsigned long core_sink;

/* Traced functions: distinct bodies, nothing for the compiler to fold. */
#define CORE_FN(name, k)						\
	TRACED int name(int x)						\
	{								\
		core_sink += (unsigned long)x;				\
		__asm__ volatile("" ::: "memory");			\
		return x + (k);						\
	}

/* An ops' func: one more call on the counter at ops->priv. */
NOTRACE static inline void core_count(unsigned long ip, unsigned long parent_ip, struct ps_ops *ops,
			       void *regs)
{
	(void)ip, (void)parent_ip, (void)regs;
	__atomic_fetch_add((unsigned long *)ops->priv, 1, __ATOMIC_RELAXED);
}

NOTRACE static inline double core_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#if CORE_INT3
NOTRACE static void core_slow_hook(int step)
{
	struct timespec t = { 0, 2000000 };

	if (step == 1)
		nanosleep(&t, NULL);
}
#endif

/* x86_64: the first byte of a function's call slot (after ENDBR64 if it has one). */
NOTRACE static inline unsigned char core_slot0(void *f)
{
	const unsigned char *p = f;

	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		p += 4;
	return *(volatile const unsigned char *)p;
}

/*
 * x86_64: widen each round's INT3 window to 2 ms (the runtime's test hook
 * runs after each sync), as a loaded machine would: a thread that can meet
 * an INT3 then meets one.
 */
NOTRACE static inline void core_slow_rounds(void)
{
#if CORE_INT3
	ps_arch_test_hook = core_slow_hook;
#endif
}

/* Under qemu-user (every run that is not x86_64 here) loops are shorter. */
NOTRACE static inline int core_scale(int n)
{
	return CORE_INT3 ? n : (n + 3) / 4;
}

/* the calling thread blocks every signal (a server's worker shape), or
   unblocks them again */
NOTRACE static inline void core_mask_all(int how)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(how, &all, NULL);
}

NOTRACE static inline void core_ok(void)
{
	printf("%s: ok\n", core_name);
	fflush(stdout);
}

#endif /* SAFETY_CORE_H */
