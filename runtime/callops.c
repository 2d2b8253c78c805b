// SPDX-License-Identifier: GPL-2.0-only
/*
 * callops.c - the runtime half of `patchsite embed`: the architecture-neutral
 * core.  The patcher of the target (arch/<arch>.c, interface in patcher.h)
 * knows the instructions; nothing here does.
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
 * literal holds (ops - bias); the trampoline adds the bias back, so a PIE
 * needs no relocation and its text stays read-only except while we patch
 * it.  This file must itself be built without -fpatchable-function-entry:
 * the trampoline calls into it.
 *
 * Every call, one function or many, is one batch: look every function up
 * (an untraced one: nothing changes), find or create the ops' registry entry
 * (the patcher says where its sites call), have the patcher encode each
 * site's new call bytes, sort the sites by address and group their bytes
 * into runs of contiguous pages, make each run writable once (and keep it
 * executable, since other threads run it), let the patcher publish the
 * batch in its safe order, make the runs R+X again, then move the per-site
 * state and the registry counts, and hand an ops with no site left back to
 * the patcher.  Sites are written even when their state says they already
 * hold the bytes: a program may carry two copies of the runtime (linked and
 * preloaded), each with its own state, and the bytes are the truth.  The
 * page size comes from sysconf (4, 16 or 64 KiB on arm64).
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
#include "patcher.h"

static struct ps_image ps_img;		/* hdr NULL until the segment is found */
static pthread_once_t ps_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ps_lock = PTHREAD_MUTEX_INITIALIZER;

/* Under ps_lock: the per-site state (indexed like the table) and the registry. */
static struct ps_reg **ps_state;
#define PS_REG_BUCKETS	256
static struct ps_reg *ps_regs[PS_REG_BUCKETS];

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
			ps_img.bias = info->dlpi_addr;
			ps_img.sites = (const struct ps_site *)(uintptr_t)(h->sites + ps_img.bias);
			ps_img.hdr = h;
			break;
		}
	}
	return 1;	/* the first object is the main program: stop there */
}

static void ps_init(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	ps_img.pagesize = pg > 0 ? (uint64_t)pg : 4096;
	dl_iterate_phdr(ps_find_segment, NULL);
}

static int ps_ready(void)
{
	pthread_once(&ps_once, ps_init);
	return ps_img.hdr ? 0 : -ENODEV;
}

static const struct ps_site *ps_find(void *function)
{
	uint64_t f = (uint64_t)(uintptr_t)function - ps_img.bias;
	size_t lo = 0, hi = ps_img.hdr->count;

	/* embed writes the table sorted by function address */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ps_img.sites[mid].func < f)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ps_img.hdr->count && ps_img.sites[lo].func == f)
		return &ps_img.sites[lo];
	return NULL;
}

/* --- The ops registry ------------------------------------------------------ */

static struct ps_reg **ps_reg_slot(struct ps_ops *ops)
{
	uintptr_t h = (uintptr_t)ops;

	return &ps_regs[((h >> 4) ^ (h >> 12)) % PS_REG_BUCKETS];
}

static struct ps_reg *ps_reg_find(struct ps_ops *ops)
{
	struct ps_reg *r = *ps_reg_slot(ops);

	while (r && r->ops != ops)
		r = r->next;
	return r;
}

/* The entry of ops, created (and given its call target) if it has none. */
static int ps_reg_get(struct ps_ops *ops, struct ps_reg **out)
{
	struct ps_reg *r = ps_reg_find(ops), **slot;
	int err;

	if (r) {
		*out = r;
		return 0;
	}
	if (!(r = calloc(1, sizeof(*r))))
		return -ENOMEM;
	r->ops = ops;
	if ((err = ps_arch_tramp_get(&ps_img, r))) {
		free(r);
		return err;
	}
	slot = ps_reg_slot(ops);
	r->next = *slot;
	*slot = r;
	*out = r;
	return 0;
}

/* An entry with no site left: out of the registry, its target back to the patcher. */
static void ps_reg_put(struct ps_reg *r)
{
	struct ps_reg **p = ps_reg_slot(r->ops);

	while (*p != r)
		p = &(*p)->next;
	*p = r->next;
	ps_arch_tramp_put(&ps_img, r);
	free(r);
}

/* --- Batches --------------------------------------------------------------- */

/* The lowest and the end of the bytes a site's writes touch (runtime addresses). */
static uint64_t ps_lo(const struct ps_site *s)
{
	uint64_t lo = s->literal && s->literal < s->call ? s->literal : s->call;

	return lo + ps_img.bias;
}

static uint64_t ps_hi(const struct ps_site *s)
{
	uint64_t hi = s->call + ps_arch_call_size;

	if (s->literal && s->literal + 8 > hi)
		hi = s->literal + 8;
	return hi + ps_img.bias;
}

static int ps_cmp_site(const void *a, const void *b)
{
	const struct ps_site *x = *(const struct ps_site *const *)a;
	const struct ps_site *y = *(const struct ps_site *const *)b;

	return x->func < y->func ? -1 : x->func > y->func;
}

/* Make the pages [start, end) writable (and still executable), or back to R+X. */
static int ps_protect(uint64_t start, uint64_t end, int writable)
{
	int prot = PROT_READ | PROT_EXEC | (writable ? PROT_WRITE : 0);

	return mprotect((void *)(uintptr_t)start, end - start, prot) ? -errno : 0;
}

/*
 * Group the bytes of w[0..n) (sorted by address) into runs of contiguous
 * pages; store them in runs unless it is NULL (counting); return how many.
 */
static size_t ps_runs(const struct ps_write *w, size_t n, struct ps_run *runs)
{
	uint64_t pm = ps_img.pagesize - 1;
	struct ps_run cur = { 0, 0, 0, 0 };
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t lo = ps_lo(w[i].site), hi = ps_hi(w[i].site);
		uint64_t a = lo & ~pm, b = (hi + pm) & ~pm;

		if (i && a <= cur.end) {
			if (b > cur.end)
				cur.end = b;
			if (hi > cur.hi)
				cur.hi = hi;
			continue;
		}
		if (i && runs)
			runs[k - 1] = cur;
		cur = (struct ps_run){ a, b, lo, hi };
		k++;
	}
	if (n && runs)
		runs[k - 1] = cur;
	return k;
}

/*
 * Apply one batch: the n sites of v (any order, repeats allowed; sorted
 * here unless `sorted`) get ops (attach) or go idle (ops NULL).  Called
 * with ps_lock held.
 */
static int ps_apply(const struct ps_site **v, size_t n, int sorted, struct ps_ops *ops)
{
	struct ps_write one, *w = &one;
	struct ps_run run1, *runs = &run1;
	struct ps_reg *reg = NULL;
	size_t nw = 0, nruns, done = 0;
	uint64_t litv, target = 0;
	int err = 0, published = 0;

	if (!n)
		return 0;
	if (!ps_state && !(ps_state = calloc(ps_img.hdr->count, sizeof(*ps_state))))
		return -ENOMEM;
	if (ops) {
		if ((err = ps_reg_get(ops, &reg)))
			return err;
		target = reg->target;
		litv = (uint64_t)(uintptr_t)ops - ps_img.bias;
	} else {
		litv = ps_img.hdr->default_ops;
	}
	if (n > 1) {
		if (!sorted)
			qsort(v, n, sizeof(*v), ps_cmp_site);
		if (!(w = malloc(n * sizeof(*w)))) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (i && v[i] == v[i - 1])
			continue;	/* a function listed twice is written once */
		w[nw].site = v[i];
		w[nw].lit = litv;
		if ((err = ps_arch_encode(&ps_img, v[i], target, w[nw].call)))
			goto out;
		nw++;
	}
	n = nw;
	nruns = n > 1 ? ps_runs(w, n, NULL) : 1;
	if (nruns > 1 && !(runs = malloc(nruns * sizeof(*runs)))) {
		err = -ENOMEM;
		goto out;
	}
	ps_runs(w, n, runs);
	for (; done < nruns; done++)
		if ((err = ps_protect(runs[done].start, runs[done].end, 1)))
			goto restore;
	err = ps_arch_publish(&ps_img, w, n, ops != NULL, runs, nruns);
	published = !err;
restore:
	while (done--) {
		int e2 = ps_protect(runs[done].start, runs[done].end, 0);

		if (!err)
			err = e2;
	}
	if (published) {
		/* the bytes changed: the state follows, whatever mprotect said after */
		for (size_t i = 0; i < n; i++) {
			struct ps_reg **st = &ps_state[w[i].site - ps_img.sites], *old = *st;

			if (old == reg)
				continue;
			if (reg)
				reg->nsites++;
			*st = reg;
			if (old && !--old->nsites)
				ps_reg_put(old);
		}
	}
out:
	if (reg && !reg->nsites)	/* a new entry whose batch did not happen */
		ps_reg_put(reg);
	if (runs != &run1)
		free(runs);
	if (w != &one)
		free(w);
	return err;
}

/* --- The API --------------------------------------------------------------- */

static int ps_one(void *function, struct ps_ops *ops)
{
	const struct ps_site *s;
	int err;

	if ((err = ps_ready()))
		return err;
	if (!(s = ps_find(function)))
		return -ENOENT;
	pthread_mutex_lock(&ps_lock);
	err = ps_apply(&s, 1, 1, ops);
	pthread_mutex_unlock(&ps_lock);
	return err;
}

int ps_attach(void *function, struct ps_ops *ops)
{
	if (!ops || !ops->func)
		return -EINVAL;
	return ps_one(function, ops);
}

int ps_detach(void *function)
{
	return ps_one(function, NULL);
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
	err = ps_apply(v, n, 0, ops);
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
	n = ps_img.hdr->count;
	if (!n)
		return 0;
	if (!(v = malloc(n * sizeof(*v))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = &ps_img.sites[i];
	pthread_mutex_lock(&ps_lock);
	err = ps_apply(v, n, 1, ops);	/* the table is sorted */
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

	return err ? err : (long)ps_img.hdr->count;
}

void *ps_function(long i)
{
	if (ps_ready() || i < 0 || (uint64_t)i >= ps_img.hdr->count)
		return NULL;
	return (void *)(uintptr_t)(ps_img.sites[i].func + ps_img.bias);
}
