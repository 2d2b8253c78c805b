// SPDX-License-Identifier: GPL-2.0-only
/*
 * The traced functions of the benchmark, built with
 * -fpatchable-function-entry=4,2 -falign-functions=8 (see Makefile).
 * target() is the one the timed loop calls; other_0..other_99 exist only
 * so that "irrelevant" tracers have somewhere else to be attached.
 */
#include "bench.h"

__attribute__((noinline)) int target(int x)
{
	return x + 1;
}

#define OTHER(n) __attribute__((noinline)) int other_##n(int x) { return x + n; }
#define OTHER10(d) OTHER(d##0) OTHER(d##1) OTHER(d##2) OTHER(d##3) OTHER(d##4) \
		   OTHER(d##5) OTHER(d##6) OTHER(d##7) OTHER(d##8) OTHER(d##9)
OTHER(0) OTHER(1) OTHER(2) OTHER(3) OTHER(4) OTHER(5) OTHER(6) OTHER(7) OTHER(8) OTHER(9)
OTHER10(1) OTHER10(2) OTHER10(3) OTHER10(4) OTHER10(5) OTHER10(6) OTHER10(7) OTHER10(8)
OTHER10(9)

#undef OTHER
#define OTHER(n) other_##n,
int (*const others[NOTHERS])(int) = {
	OTHER(0) OTHER(1) OTHER(2) OTHER(3) OTHER(4) OTHER(5) OTHER(6) OTHER(7) OTHER(8) OTHER(9)
	OTHER10(1) OTHER10(2) OTHER10(3) OTHER10(4) OTHER10(5) OTHER10(6) OTHER10(7) OTHER10(8)
	OTHER10(9)
};
