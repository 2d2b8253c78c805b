// SPDX-License-Identifier: GPL-2.0-only
/*
 * callops.c - the runtime half of `patchsite embed` (arm64).
 *
 * Strategy: the library reserves the space embed fills, so embed never has
 * to add a segment: `.patchsite.tramp` (allocated, executable, zero-filled,
 * lands in the text segment next to .text so that a BL reaches it) and
 * `.patchsite.sites` (writable data holding struct ps_site_table, with
 * the address of ps_default_ops in its header so that embed finds it without
 * a symbol table).  This file must itself be built without
 * -fpatchable-function-entry: the trampoline calls into it.
 *
 * Patching follows arm64 ftrace's CALL_OPS order.  Attach: store the ops
 * pointer into the literal (one aligned 64-bit store), then the BL (one
 * 32-bit store); a thread that still executes the NOP is untraced, one that
 * executes the BL finds the new literal.  Detach: the NOP first, then the
 * default ops back into the literal, so a late trampoline entry still finds a
 * valid ops.  Text pages are made writable only while patching (W^X as far
 * as the rest of the program is concerned) and are kept executable
 * throughout, since other threads run them.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "callops.h"

#define A64_NOP		0xd503201fu
#define A64_BL		0x94000000u

/* The trampoline's space: embed writes the code. */
__asm__(".pushsection .patchsite.tramp, \"ax\", %progbits\n"
	".balign 16\n"
	".globl __patchsite_tramp\n"
	".type __patchsite_tramp, %function\n"
	"__patchsite_tramp:\n"
	".space 4096\n"
	".size __patchsite_tramp, 4096\n"
	".popsection\n");

static void ps_noop(unsigned long ip, unsigned long parent_ip, struct ps_ops *ops, void *regs)
{
	(void)ip; (void)parent_ip; (void)ops; (void)regs;
}

struct ps_ops ps_default_ops = { .func = ps_noop, .priv = NULL };

__attribute__((section(".patchsite.sites"), used, aligned(16)))
struct ps_site_table __patchsite_sites = {
	.magic = PS_SITES_MAGIC_EMPTY,
	.count = 0,
	.capacity = PS_MAX_SITES,
	.default_ops = (uint64_t)(uintptr_t)&ps_default_ops,
};

static pthread_mutex_t ps_lock = PTHREAD_MUTEX_INITIALIZER;

static int ps_ready(void)
{
	return __patchsite_sites.magic == PS_SITES_MAGIC_FULL ? 0 : -ENODEV;
}

static struct ps_site *ps_find(void *function)
{
	uint64_t f = (uint64_t)(uintptr_t)function;
	size_t lo = 0, hi = __patchsite_sites.count;

	/* embed writes the table sorted by function address */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (__patchsite_sites.sites[mid].func < f)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < __patchsite_sites.count && __patchsite_sites.sites[lo].func == f)
		return &__patchsite_sites.sites[lo];
	return NULL;
}

/* Make [a, a+len) writable (and still executable), or back to R+X. */
static int ps_protect(uint64_t a, size_t len, int writable)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = a & ~(pg - 1), end = (a + len + pg - 1) & ~(pg - 1);
	int prot = PROT_READ | PROT_EXEC | (writable ? PROT_WRITE : 0);

	return mprotect((void *)(uintptr_t)start, end - start, prot) ? -errno : 0;
}

static uint32_t ps_bl(uint64_t from, uint64_t to)
{
	return A64_BL | (uint32_t)(((int64_t)(to - from) >> 2) & 0x3ffffff);
}

/* Write the literal then the instruction (attach), or the reverse (detach). */
static int ps_patch(struct ps_site *s, struct ps_ops *ops, int attach)
{
	uint64_t *lit = (uint64_t *)(uintptr_t)s->literal;
	uint32_t *insn = (uint32_t *)(uintptr_t)s->call;
	uint32_t want = attach ? ps_bl(s->call, __patchsite_sites.tramp) : A64_NOP;
	int err;

	err = ps_protect(s->literal, s->call + 4 - s->literal, 1);
	if (err)
		return err;
	if (attach) {
		__atomic_store_n(lit, (uint64_t)(uintptr_t)ops, __ATOMIC_RELEASE);
		__builtin___clear_cache((char *)lit, (char *)(lit + 1));
		__atomic_store_n(insn, want, __ATOMIC_RELEASE);
		__builtin___clear_cache((char *)insn, (char *)(insn + 1));
	} else {
		__atomic_store_n(insn, want, __ATOMIC_RELEASE);
		__builtin___clear_cache((char *)insn, (char *)(insn + 1));
		__atomic_store_n(lit, (uint64_t)(uintptr_t)&ps_default_ops, __ATOMIC_RELEASE);
		__builtin___clear_cache((char *)lit, (char *)(lit + 1));
	}
	return ps_protect(s->literal, s->call + 4 - s->literal, 0);
}

int ps_attach(void *function, struct ps_ops *ops)
{
	struct ps_site *s;
	int err;

	if (!ops || !ops->func)
		return -EINVAL;
	if ((err = ps_ready()))
		return err;
	if (!(s = ps_find(function)))
		return -ENOENT;
	pthread_mutex_lock(&ps_lock);
	err = ps_patch(s, ops, 1);
	pthread_mutex_unlock(&ps_lock);
	return err;
}

int ps_detach(void *function)
{
	struct ps_site *s;
	int err;

	if ((err = ps_ready()))
		return err;
	if (!(s = ps_find(function)))
		return -ENOENT;
	pthread_mutex_lock(&ps_lock);
	err = ps_patch(s, NULL, 0);
	pthread_mutex_unlock(&ps_lock);
	return err;
}

static int ps_all(struct ps_ops *ops, int attach)
{
	int err;

	if ((err = ps_ready()))
		return err;
	if (attach && (!ops || !ops->func))
		return -EINVAL;
	pthread_mutex_lock(&ps_lock);
	for (uint64_t i = 0; i < __patchsite_sites.count && !err; i++)
		err = ps_patch(&__patchsite_sites.sites[i], ops, attach);
	pthread_mutex_unlock(&ps_lock);
	return err;
}

int ps_attach_all(struct ps_ops *ops)
{
	return ps_all(ops, 1);
}

int ps_detach_all(void)
{
	return ps_all(NULL, 0);
}

long ps_count(void)
{
	int err = ps_ready();

	return err ? err : (long)__patchsite_sites.count;
}

void *ps_function(long i)
{
	if (ps_ready() || i < 0 || (uint64_t)i >= __patchsite_sites.count)
		return NULL;
	return (void *)(uintptr_t)__patchsite_sites.sites[i].func;
}
