// SPDX-License-Identifier: GPL-2.0-only
/*
 * The traced functions of the benchmark, the only file built with patchable
 * entries (see Makefile: arm64 -fpatchable-function-entry=4,2
 * -falign-functions=8, x86_64 -fpatchable-function-entry=5).  target() is
 * the one the timed loop calls; other_000..other_999 exist only so that
 * "irrelevant" tracers have somewhere else to be attached.  Each has its
 * own constant, so that no two bodies are identical (GCC's -fipa-icf would
 * fold them).
 */
#include "bench.h"

#define NI __attribute__((noinline))

NI int target(int x)
{
	return x + 1;
}

#define O1(a, b, c) NI int other_##a##b##c(int x) { return x + (a * 100 + b * 10 + c + 2); }
#define O10(a, b) O1(a, b, 0) O1(a, b, 1) O1(a, b, 2) O1(a, b, 3) O1(a, b, 4) \
		  O1(a, b, 5) O1(a, b, 6) O1(a, b, 7) O1(a, b, 8) O1(a, b, 9)
#define O100(a) O10(a, 0) O10(a, 1) O10(a, 2) O10(a, 3) O10(a, 4) \
		O10(a, 5) O10(a, 6) O10(a, 7) O10(a, 8) O10(a, 9)
#define O1000 O100(0) O100(1) O100(2) O100(3) O100(4) O100(5) O100(6) O100(7) O100(8) O100(9)

O1000

#undef O1
#define O1(a, b, c) other_##a##b##c,
int (*const others[NOTHERS])(int) = { O1000 };
