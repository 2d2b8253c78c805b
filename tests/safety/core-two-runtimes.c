// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-two-runtimes.c - two copies of the runtime in one process: the
 * program links the static one and loads the shared one (as a preloaded
 * tracer does).  Both would carve slot 0 of the one trampoline room, so
 * one's ops would receive the other's calls.  The second copy must find
 * the first and refuse (-EBUSY), leaving the first's sites and slots alone.
 *
 * Strategy: the static copy attaches ops A to f; the shared copy
 * (dlopen argv[1], dlsym) is asked to attach ops B to g and to count:
 * both -EBUSY; then f counts on A only, g is untraced, and the static
 * copy still attaches and detaches g.
 */
#include <dlfcn.h>

#include "core.h"

CORE_FN(f, 1)
CORE_FN(g, 2)

static unsigned long ahits, bhits;
static struct ps_ops a = { core_count, &ahits, NULL };
static struct ps_ops b = { core_count, &bhits, NULL };

NOTRACE int main(int argc, char **argv)
{
	int (*attach2)(void *, struct ps_ops *);
	long (*count2)(void);
	void *h;
	int r;

	core_name = "core-two-runtimes";
	EXPECT(argc == 2, "usage: core-two-runtimes PATH/libpatchsite-callops.so");
	EXPECT(ps_count() > 0, "not embedded: %ld", ps_count());
	EXPECT(ps_attach((void *)f, &a) == 0, "the static copy attaches A to f");
	EXPECT((h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)), "dlopen: %s", dlerror());
	*(void **)&attach2 = dlsym(h, "ps_attach");
	*(void **)&count2 = dlsym(h, "ps_count");
	EXPECT(attach2 && count2 && (void *)attach2 != (void *)ps_attach, "a second copy");
	r = attach2((void *)g, &b);
	EXPECT(r == -EBUSY, "the second copy's attach returned %d, want -EBUSY", r);
	EXPECT(count2() == -EBUSY, "the second copy's ps_count returned %ld, want -EBUSY",
	       count2());
	f(1);
	g(1);
	EXPECT(ahits == 1 && bhits == 0, "A counted %lu (want 1), B %lu (want 0)", ahits, bhits);
	EXPECT(ps_attach((void *)g, &a) == 0, "the static copy attaches A to g");
	g(1);
	EXPECT(ahits == 2 && bhits == 0, "A counted %lu (want 2), B %lu (want 0)", ahits, bhits);
	EXPECT(ps_detach_all() == 0, "detach all");
	core_ok();
	return 0;
}
