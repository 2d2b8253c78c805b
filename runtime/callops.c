// SPDX-License-Identifier: GPL-2.0-only
/*
 * callops.c - the runtime half of `patchsite embed` (arm64).
 *
 * Strategy: embed adds one loadable segment (R+X) to the program and puts
 * a struct ps_seg_header at its first byte, followed by the site table and
 * the trampoline.  The runtime needs no symbol and no reserved section: on
 * first use it walks the main program's program headers (dl_iterate_phdr,
 * whose first entry is the main program, in static and dynamic programs
 * alike, and also when this file is a preloaded shared object) and takes
 * the PT_LOAD that starts with PS_SEG_MAGIC and whose `self` field is its
 * own p_vaddr.  Every address in the segment is a link-time address; the
 * main program's load bias (dlpi_addr, 0 for ET_EXEC) is added here.  A
 * literal holds (ops - bias); the trampoline adds the bias it computes
 * PC-relatively, so a PIE needs no relocation and its text stays read-only
 * except while we patch it.  This file must itself be built without
 * -fpatchable-function-entry: the trampoline calls into it.
 *
 * Patching follows arm64 ftrace's CALL_OPS order.  Attach: store the ops
 * pointer into the literal (one aligned 64-bit store), then the BL (one
 * 32-bit store); a thread that still executes the NOP is untraced, one that
 * executes the BL finds the new literal.  Detach: the NOP first, then the
 * default ops back into the literal, so a late trampoline entry still finds a
 * valid ops.  The batched calls (ps_attach_list, ps_attach_all, ...) keep
 * that order across the whole batch: every literal, a barrier, then every
 * BL (detach: every NOP, cache maintenance, then every literal).  Text pages
 * are made writable only while patching (W^X as far as the rest of the
 * program is concerned) and are kept executable throughout, since other
 * threads run them; the page size comes from sysconf (4, 16 or 64 KiB).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "callops.h"

#define A64_NOP		0xd503201fu
#define A64_BL		0x94000000u

static const struct ps_seg_header *ps_hdr;	/* runtime address of the header */
static const struct ps_site *ps_sites;		/* runtime address of the table */
static uint64_t ps_bias;			/* main program's load bias */
static uint64_t ps_pagesize;
static pthread_once_t ps_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ps_lock = PTHREAD_MUTEX_INITIALIZER;

static int ps_find_segment(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size; (void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		const struct ps_seg_header *h;

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_R) ||
		    p->p_filesz < sizeof(*h))
			continue;
		h = (const struct ps_seg_header *)(uintptr_t)(info->dlpi_addr + p->p_vaddr);
		if (h->magic == PS_SEG_MAGIC && h->self == p->p_vaddr &&
		    h->sites >= p->p_vaddr + sizeof(*h) &&
		    (h->sites - p->p_vaddr) + h->count * sizeof(struct ps_site) <= p->p_filesz) {
			ps_bias = info->dlpi_addr;
			ps_sites = (const struct ps_site *)(uintptr_t)(h->sites + ps_bias);
			ps_hdr = h;
			break;
		}
	}
	return 1;	/* the first object is the main program: stop there */
}

static void ps_init(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	ps_pagesize = pg > 0 ? (uint64_t)pg : 4096;
	dl_iterate_phdr(ps_find_segment, NULL);
}

static int ps_ready(void)
{
	pthread_once(&ps_once, ps_init);
	return ps_hdr ? 0 : -ENODEV;
}

static const struct ps_site *ps_find(void *function)
{
	uint64_t f = (uint64_t)(uintptr_t)function - ps_bias;
	size_t lo = 0, hi = ps_hdr->count;

	/* embed writes the table sorted by function address */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ps_sites[mid].func < f)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ps_hdr->count && ps_sites[lo].func == f)
		return &ps_sites[lo];
	return NULL;
}

static uint64_t *ps_lit(const struct ps_site *s)
{
	return (uint64_t *)(uintptr_t)(s->literal + ps_bias);
}

static uint32_t *ps_insn(const struct ps_site *s)
{
	return (uint32_t *)(uintptr_t)(s->call + ps_bias);
}

/* What the literal holds for ops (see the header: ops minus the load bias). */
static uint64_t ps_lit_value(struct ps_ops *ops)
{
	return ops ? (uint64_t)(uintptr_t)ops - ps_bias : ps_hdr->default_ops;
}

static uint32_t ps_want(const struct ps_site *s, int attach)
{
	/* link-time addresses on both sides: the displacement is bias-free */
	return attach ? A64_BL | (uint32_t)(((int64_t)(ps_hdr->tramp - s->call) >> 2) & 0x3ffffff)
		      : A64_NOP;
}

/* Make the pages of [start, end) writable (and still executable), or back to R+X. */
static int ps_protect(uint64_t start, uint64_t end, int writable)
{
	int prot = PROT_READ | PROT_EXEC | (writable ? PROT_WRITE : 0);

	start &= ~(ps_pagesize - 1);
	end = (end + ps_pagesize - 1) & ~(ps_pagesize - 1);
	return mprotect((void *)(uintptr_t)start, end - start, prot) ? -errno : 0;
}

/* One site: the literal then the instruction (attach), or the reverse (detach). */
static int ps_patch(const struct ps_site *s, struct ps_ops *ops, int attach)
{
	uint64_t *lit = ps_lit(s);
	uint32_t *insn = ps_insn(s);
	uint64_t a = (uint64_t)(uintptr_t)lit, b = (uint64_t)(uintptr_t)(insn + 1);
	int err = ps_protect(a, b, 1);

	if (err)
		return err;
	if (attach) {
		__atomic_store_n(lit, ps_lit_value(ops), __ATOMIC_RELEASE);
		__builtin___clear_cache((char *)lit, (char *)(lit + 1));
		__atomic_store_n(insn, ps_want(s, 1), __ATOMIC_RELEASE);
		__builtin___clear_cache((char *)insn, (char *)(insn + 1));
	} else {
		__atomic_store_n(insn, ps_want(s, 0), __ATOMIC_RELEASE);
		__builtin___clear_cache((char *)insn, (char *)(insn + 1));
		__atomic_store_n(lit, ps_lit_value(NULL), __ATOMIC_RELEASE);
		__builtin___clear_cache((char *)lit, (char *)(lit + 1));
	}
	return ps_protect(a, b, 0);
}

int ps_attach(void *function, struct ps_ops *ops)
{
	const struct ps_site *s;
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
	const struct ps_site *s;
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

static int ps_cmp_site(const void *a, const void *b)
{
	const struct ps_site *x = *(const struct ps_site *const *)a;
	const struct ps_site *y = *(const struct ps_site *const *)b;

	return x->literal < y->literal ? -1 : x->literal > y->literal;
}

struct ps_run {
	uint64_t start, end;	/* page-aligned runtime addresses */
};

/*
 * The batch: sites (sorted by address) are covered by runs of contiguous
 * pages; each run is made writable once, all literals are stored, then (after
 * a full barrier) all instructions, one cache maintenance pass per run, and
 * the runs go back to R+X.  Detach reverses the order of the two passes.
 */
static int ps_batch(const struct ps_site **v, size_t n, struct ps_ops *ops, int attach)
{
	struct ps_run *runs = NULL;
	size_t nruns = 0, done = 0;
	uint64_t pm = ps_pagesize - 1, litv = ps_lit_value(attach ? ops : NULL);
	int err = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), ps_cmp_site);
	runs = malloc(n * sizeof(*runs));
	if (!runs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = (uint64_t)(uintptr_t)ps_lit(v[i]) & ~pm;
		uint64_t b = ((uint64_t)(uintptr_t)(ps_insn(v[i]) + 1) + pm) & ~pm;

		if (nruns && a <= runs[nruns - 1].end) {
			if (b > runs[nruns - 1].end)
				runs[nruns - 1].end = b;
		} else {
			runs[nruns].start = a;
			runs[nruns++].end = b;
		}
	}
	for (; done < nruns; done++)
		if ((err = ps_protect(runs[done].start, runs[done].end, 1)))
			goto restore;
	if (attach) {
		for (size_t i = 0; i < n; i++)
			__atomic_store_n(ps_lit(v[i]), litv, __ATOMIC_RELAXED);
		/* every literal is visible before any BL that leads to it */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		for (size_t i = 0; i < n; i++)
			__atomic_store_n(ps_insn(v[i]), ps_want(v[i], 1), __ATOMIC_RELAXED);
		for (size_t r = 0; r < nruns; r++)
			__builtin___clear_cache((char *)(uintptr_t)runs[r].start,
						(char *)(uintptr_t)runs[r].end);
	} else {
		for (size_t i = 0; i < n; i++)
			__atomic_store_n(ps_insn(v[i]), ps_want(v[i], 0), __ATOMIC_RELAXED);
		for (size_t r = 0; r < nruns; r++)
			__builtin___clear_cache((char *)(uintptr_t)runs[r].start,
						(char *)(uintptr_t)runs[r].end);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		for (size_t i = 0; i < n; i++)
			__atomic_store_n(ps_lit(v[i]), litv, __ATOMIC_RELAXED);
	}
restore:
	while (done--) {
		int e2 = ps_protect(runs[done].start, runs[done].end, 0);

		if (!err)
			err = e2;
	}
	free(runs);
	return err;
}

static int ps_list(void *const *functions, size_t n, struct ps_ops *ops, int attach)
{
	const struct ps_site **v;
	int err;

	if (attach && (!ops || !ops->func))
		return -EINVAL;
	if ((err = ps_ready()))
		return err;
	if (!n)
		return 0;
	if (!functions || !(v = malloc(n * sizeof(*v))))
		return functions ? -ENOMEM : -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!(v[i] = ps_find(functions[i]))) {
			free(v);
			return -ENOENT;
		}
	pthread_mutex_lock(&ps_lock);
	err = ps_batch(v, n, ops, attach);
	pthread_mutex_unlock(&ps_lock);
	free(v);
	return err;
}

int ps_attach_list(void *const *functions, size_t n, struct ps_ops *ops)
{
	return ps_list(functions, n, ops, 1);
}

int ps_detach_list(void *const *functions, size_t n)
{
	return ps_list(functions, n, NULL, 0);
}

static int ps_all(struct ps_ops *ops, int attach)
{
	const struct ps_site **v;
	size_t n;
	int err;

	if (attach && (!ops || !ops->func))
		return -EINVAL;
	if ((err = ps_ready()))
		return err;
	n = ps_hdr->count;
	if (!n)
		return 0;
	if (!(v = malloc(n * sizeof(*v))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = &ps_sites[i];
	pthread_mutex_lock(&ps_lock);
	err = ps_batch(v, n, ops, attach);
	pthread_mutex_unlock(&ps_lock);
	free(v);
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

	return err ? err : (long)ps_hdr->count;
}

void *ps_function(long i)
{
	if (ps_ready() || i < 0 || (uint64_t)i >= ps_hdr->count)
		return NULL;
	return (void *)(uintptr_t)(ps_sites[i].func + ps_bias);
}
