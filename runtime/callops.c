// SPDX-License-Identifier: GPL-2.0-only
/*
 * callops.c - the runtime half of `patchsite embed`: the architecture-neutral
 * core.  The patcher of the target (arch/<arch>.c, interface in patcher.h)
 * knows the instructions; nothing here does.
 *
 * Strategy: embed adds one loadable segment (R+X) to the program and puts
 * a struct ps_seg_header at its first byte, followed by the site table and
 * the trampoline.  The runtime needs no symbol and no reserved section: it
 * walks the program headers of every loaded object (dl_iterate_phdr, in
 * static and dynamic programs alike, and also when this file is a
 * preloaded shared object) and takes, in each, the PT_LOAD that starts
 * with PS_SEG_MAGIC and whose `self` field is its own p_vaddr: the program
 * and every embedded shared library, each an object of the registry with
 * its own bias, per-site state and ops registry.  Each API call rescans
 * when dlpi_adds or dlpi_subs moved (a dlopen or dlclose happened) and
 * forgets an object that is gone without touching its memory.  Every
 * address in a segment is a link-time address; the object's load bias
 * (dlpi_addr, 0 for ET_EXEC) is added here.  A
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
 *
 * Safety (runtime/README.md): the first copy of the runtime to run claims
 * the segment and a second one refuses (-EBUSY); the lock is held across
 * fork (pthread_atfork) so a child never inherits a round in flight; a
 * call runs with cancellation disabled and, under the lock, every signal
 * blocked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "callops.h"
#include "patcher.h"

static pthread_once_t ps_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ps_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t ps_pagesize;

/*
 * The ops of one site, read without the lock by the list ops' func
 * (ps_list_func) on any thread: a fixed array of slots, each NULL or an
 * ops.  An ops keeps its slot while it stays attached; a full array is
 * replaced by a copy twice its size and the old one is kept, never freed,
 * on the new one's `retired` chain (a thread may still be walking it; the
 * arrays of a site add up to less than twice its largest), so a thread walking either sees every ops that is
 * attached throughout exactly once.
 */
struct ps_list {
	size_t cap;
	struct ps_list *retired;	/* the arrays this one replaced (kept, never freed) */
	struct ps_ops *_Atomic ops[];
};

/* Under ps_lock: the per-site state (indexed like the table) and the registry. */
struct ps_sstate {
	struct ps_reg *caller;		/* what the site calls: NULL (idle), the one ops'
					   entry, or the list ops' entry (ps_list_reg) */
	size_t n;			/* ops attached (non-NULL slots of list) */
	struct ps_list *_Atomic list;	/* NULL until the site first has an ops */
};
#define PS_REG_BUCKETS	64

/*
 * One embedded object (the program or a shared library), found by a scan
 * (ps_scan).  The list is append-only and its entries are never freed, so
 * the list ops' func walks it without the lock; an object that was
 * unloaded is marked gone and nothing of its memory is touched again (its
 * state and registry, which are ours, are freed).
 */
struct ps_obj {
	struct ps_image img;
	struct ps_sstate *state;	/* per site; NULL until its first batch */
	struct ps_reg *regs[PS_REG_BUCKETS];	/* the ops registry of this object */
	int hdr_prot;			/* the header segment's protection (from p_flags) */
	int claimed;			/* 0: this copy owns the segment; -EBUSY: another does */
	_Atomic int gone;		/* unloaded: never touched again */
	unsigned mark;			/* the last scan that saw it */
	uint64_t count;			/* its sites (read once: the header may go away) */
	uint64_t lo, hi;		/* runtime addresses of its first and last function */
	char *name;			/* dlpi_name ("" for the main program) */
	struct ps_obj *_Atomic next;
};
static struct ps_obj *_Atomic ps_objs;
static struct ps_obj *_Atomic *ps_objs_tail = &ps_objs;	/* under ps_lock */
static unsigned long long ps_adds, ps_subs;	/* dlpi_adds, dlpi_subs at the last scan */
static unsigned ps_mark;			/* scans done (0: none yet) */

static void ps_list_func(unsigned long ip, unsigned long parent_ip, struct ps_ops *ops,
			 void *regs);
/* The core's own ops: a site with several ops calls it, and it calls them. */
static struct ps_ops ps_list_ops = { .func = ps_list_func };

/* The PT_LOAD of info that `patchsite embed` added, or NULL. */
static const struct ps_seg_header *ps_segment(struct dl_phdr_info *info, int *prot)
{
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
			*prot = PROT_READ | (p->p_flags & PF_X ? PROT_EXEC : 0) |
				(p->p_flags & PF_W ? PROT_WRITE : 0);
			return h;
		}
	}
	return NULL;
}

/*
 * One runtime per process.  A program may carry two copies (it links the
 * static runtime and a tracer linked with the shared one is preloaded):
 * each would carve the same trampoline slots and keep its own idea of
 * every site.  The first copy to start claims the segment: it stores its
 * own address in the header's reserved word (the page writable only
 * meanwhile; the file is untouched); a copy that finds another's there
 * refuses every call with -EBUSY.  A fork child inherits the claim with
 * the copy that made it.
 */
static uint64_t ps_me(void)
{
	return (uint64_t)(uintptr_t)&ps_objs;
}

static int ps_claim(const struct ps_seg_header *h, int prot)
{
	uint64_t *w = (uint64_t *)(uintptr_t)&h->reserved;
	uint64_t me = ps_me(), none = 0;
	uintptr_t pm = ps_pagesize - 1, a = (uintptr_t)w & ~pm;
	uint64_t cur = __atomic_load_n(w, __ATOMIC_ACQUIRE);

	if (cur == me)
		return 0;
	if (cur)
		return -EBUSY;
	if (mprotect((void *)a, pm + 1, prot | PROT_WRITE))
		return -errno;
	__atomic_compare_exchange_n(w, &none, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	if (!(prot & PROT_WRITE))
		mprotect((void *)a, pm + 1, prot);
	return __atomic_load_n(w, __ATOMIC_ACQUIRE) == me ? 0 : -EBUSY;
}

/*
 * fork: the lock is taken before the fork, so no round is in flight in
 * the parent when the child is made (no INT3 or half-written site, every
 * page R+X again); the child gets the lock free and the patcher resets
 * what belonged to the parent's other threads.
 */
static void ps_fork_prepare(void)
{
	pthread_mutex_lock(&ps_lock);
}

static void ps_fork_parent(void)
{
	pthread_mutex_unlock(&ps_lock);
}

static void ps_fork_child(void)
{
	pthread_mutex_unlock(&ps_lock);
	ps_arch_fork_child();
}

static void ps_init(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	ps_pagesize = pg > 0 ? (uint64_t)pg : 4096;
	pthread_atfork(ps_fork_prepare, ps_fork_parent, ps_fork_child);
}

/*
 * The lock, taken by every call that changes a site.  Cancellation is
 * disabled for the whole call (a canceled caller would leave the lock
 * held: the reclaim wait sleeps, a cancellation point), and every signal
 * is blocked while the lock is held (no handler of the program runs on
 * this thread mid-round or re-enters the runtime).  Both are restored.
 */
struct ps_guard {
	int cancel;
	sigset_t mask;
};

static void ps_lock_take(struct ps_guard *g)
{
	sigset_t all;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &g->cancel);
	pthread_mutex_lock(&ps_lock);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &g->mask);
}

static void ps_lock_drop(struct ps_guard *g)
{
	pthread_sigmask(SIG_SETMASK, &g->mask, NULL);
	pthread_mutex_unlock(&ps_lock);
	pthread_setcancelstate(g->cancel, NULL);
}

/* --- The embedded objects ------------------------------------------------- */

static struct ps_obj *ps_first(void)
{
	return atomic_load_explicit(&ps_objs, memory_order_acquire);
}

static struct ps_obj *ps_next(struct ps_obj *o)
{
	return atomic_load_explicit(&o->next, memory_order_acquire);
}

static int ps_live(struct ps_obj *o)
{
	return !atomic_load_explicit(&o->gone, memory_order_acquire);
}

/*
 * The site of function (a runtime address) and its object, or NULL.
 * Lock-free (the list ops' func calls it): the list only grows.
 */
static const struct ps_site *ps_find(void *function, struct ps_obj **objp)
{
	for (struct ps_obj *o = ps_first(); o; o = ps_next(o)) {
		uint64_t a = (uint64_t)(uintptr_t)function, f = a - o->img.bias;
		size_t lo = 0, hi = o->count;

		if (!ps_live(o) || a < o->lo || a > o->hi)
			continue;
		/* embed writes the table sorted by function address */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (o->img.sites[mid].func < f)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < o->count && o->img.sites[lo].func == f) {
			*objp = o;
			return &o->img.sites[lo];
		}
	}
	return NULL;
}

static void ps_reg_put(struct ps_obj *o, struct ps_reg *r);

/*
 * An object that was unloaded: its registry entries go back to the patcher
 * (which keeps its own state apart from the object's memory), its state is
 * freed, and it is skipped from now on.  Nothing in its memory is read or
 * written: it is no longer mapped.
 */
static void ps_forget(struct ps_obj *o)
{
	atomic_store_explicit(&o->gone, 1, memory_order_release);
	for (size_t b = 0; b < PS_REG_BUCKETS; b++)
		while (o->regs[b])
			ps_reg_put(o, o->regs[b]);
	ps_arch_forget(&o->img);
	if (o->state) {
		for (uint64_t i = 0; i < o->count; i++) {
			struct ps_list *l = atomic_load_explicit(&o->state[i].list,
								 memory_order_relaxed);

			while (l) {
				struct ps_list *r = l->retired;

				free(l);
				l = r;
			}
		}
		free(o->state);
		o->state = NULL;
	}
}

struct ps_scan {
	int started;	/* the first object (the counters) was seen */
	int full;	/* something was loaded or unloaded: every object is looked at */
};

static int ps_scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct ps_scan *sc = data;
	const struct ps_seg_header *h;
	struct ps_obj *o;
	int prot = 0;

	if (!sc->started) {
		sc->started = 1;
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
			if (ps_mark && info->dlpi_adds == ps_adds && info->dlpi_subs == ps_subs)
				return 1;	/* nothing loaded or unloaded since the last scan */
			ps_adds = info->dlpi_adds;
			ps_subs = info->dlpi_subs;
		}
		sc->full = 1;
		ps_mark++;
	}
	if (!(h = ps_segment(info, &prot)))
		return 0;
	/*
	 * The same object as before: same header, same bias, and our claim
	 * still in it (a copy loaded again at the same address has the
	 * file's 0 there).
	 */
	for (o = ps_first(); o; o = ps_next(o))
		if (ps_live(o) && o->img.hdr == h && o->img.bias == info->dlpi_addr &&
		    (o->claimed || __atomic_load_n(&h->reserved, __ATOMIC_ACQUIRE) == ps_me())) {
			o->mark = ps_mark;
			return 0;
		}
	if (!(o = calloc(1, sizeof(*o))) || !(o->name = strdup(info->dlpi_name ? info->dlpi_name : ""))) {
		free(o);
		return 0;	/* out of memory: not found this time */
	}
	o->img.hdr = h;
	o->img.bias = info->dlpi_addr;
	o->img.sites = (const struct ps_site *)(uintptr_t)(h->sites + o->img.bias);
	o->img.pagesize = ps_pagesize;
	o->count = h->count;
	o->hdr_prot = prot;
	o->lo = h->count ? o->img.sites[0].func + o->img.bias : 1;
	o->hi = h->count ? o->img.sites[h->count - 1].func + o->img.bias : 0;
	o->claimed = ps_claim(h, prot);
	o->mark = ps_mark;
	atomic_store_explicit(ps_objs_tail, o, memory_order_release);
	ps_objs_tail = &o->next;
	return 0;
}

/*
 * Under ps_lock: bring the list up to date with the objects loaded now.
 * dl_iterate_phdr's dlpi_adds and dlpi_subs (glibc, musl) say whether
 * anything was loaded or unloaded since the last scan; if not, the scan
 * stops at the first object.  An object no longer loaded is forgotten.
 */
static void ps_scan(void)
{
	struct ps_scan sc = { 0, 0 };

	dl_iterate_phdr(ps_scan_one, &sc);
	if (!sc.full)
		return;
	for (struct ps_obj *o = ps_first(); o; o = ps_next(o))
		if (ps_live(o) && o->mark != ps_mark)
			ps_forget(o);
}

/*
 * Under ps_lock: scan, then 0 if some object is ours, -EBUSY if every one
 * is another copy's, -ENODEV if none is embedded.
 */
static int ps_ready_locked(void)
{
	int any = 0;

	ps_scan();
	for (struct ps_obj *o = ps_first(); o; o = ps_next(o)) {
		if (!ps_live(o))
			continue;
		if (!o->claimed)
			return 0;
		any = 1;
	}
	return any ? -EBUSY : -ENODEV;
}

/* --- The ops registry ------------------------------------------------------ */

/*
 * The default of ps_arch_tramp_get/_put (patcher.h): every site calls the
 * segment's one trampoline (arm64, riscv64), which reads the site's
 * literal; nothing is allocated per ops.  Weak: a patcher that carves a
 * trampoline per ops (x86_64) defines its own, which the link takes.
 */
__attribute__((weak)) int ps_arch_tramp_get(const struct ps_image *img, struct ps_reg *r)
{
	r->target = img->hdr->tramp + img->bias;
	return 0;
}

__attribute__((weak)) void ps_arch_tramp_put(const struct ps_image *img, struct ps_reg *r)
{
	(void)img, (void)r;
}

/* A patcher with no mappings of its own has nothing to release. */
__attribute__((weak)) int ps_arch_release(void)
{
	return 0;
}

/* A patcher with no state in an object's memory has nothing to forget. */
__attribute__((weak)) void ps_arch_forget(const struct ps_image *img)
{
	(void)img;
}

/* A patcher whose rounds are never refused has no other way (patcher.h). */
__attribute__((weak)) int ps_arch_dormant(const struct ps_image *img, struct ps_reg *const *regs,
					  size_t nregs, const struct ps_write *w, size_t n)
{
	(void)img, (void)regs, (void)nregs, (void)w, (void)n;
	return -EDEADLK;
}

static struct ps_reg **ps_reg_slot(struct ps_obj *o, struct ps_ops *ops)
{
	uintptr_t h = (uintptr_t)ops;

	return &o->regs[((h >> 4) ^ (h >> 12)) % PS_REG_BUCKETS];
}

static struct ps_reg *ps_reg_find(struct ps_obj *o, struct ps_ops *ops)
{
	struct ps_reg *r = *ps_reg_slot(o, ops);

	while (r && r->ops != ops)
		r = r->next;
	return r;
}

/* The entry of ops, created (and given its call target) if it has none. */
static int ps_reg_get(struct ps_obj *o, struct ps_ops *ops, struct ps_reg **out)
{
	struct ps_reg *r = ps_reg_find(o, ops), **slot;
	int err;

	if (r) {
		*out = r;
		return 0;
	}
	if (!(r = calloc(1, sizeof(*r))))
		return -ENOMEM;
	r->ops = ops;
	if ((err = ps_arch_tramp_get(&o->img, r))) {
		free(r);
		return err;
	}
	slot = ps_reg_slot(o, ops);
	r->next = *slot;
	*slot = r;
	*out = r;
	return 0;
}

/* An entry with no site left: out of the registry, its target back to the patcher. */
static void ps_reg_put(struct ps_obj *o, struct ps_reg *r)
{
	struct ps_reg **p = ps_reg_slot(o, r->ops);

	while (*p != r)
		p = &(*p)->next;
	*p = r->next;
	ps_arch_tramp_put(&o->img, r);
	free(r);
}

/* --- Batches --------------------------------------------------------------- */

/* The lowest and the end of the bytes a site's writes touch (runtime addresses). */
static uint64_t ps_lo(const struct ps_image *img, const struct ps_site *s)
{
	uint64_t lo = s->literal && s->literal < s->call ? s->literal : s->call;

	return lo + img->bias;
}

static uint64_t ps_hi(const struct ps_image *img, const struct ps_site *s)
{
	uint64_t hi = s->call + ps_arch_call_size;

	if (s->literal && s->literal + 8 > hi)
		hi = s->literal + 8;
	return hi + img->bias;
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
static size_t ps_runs(const struct ps_image *img, const struct ps_write *w, size_t n,
		      struct ps_run *runs)
{
	uint64_t pm = ps_pagesize - 1;
	struct ps_run cur = { 0, 0, 0, 0 };
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t lo = ps_lo(img, w[i].site), hi = ps_hi(img, w[i].site);
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

/* --- Several ops on one site ----------------------------------------------- */

static struct ps_list *ps_list_load(struct ps_sstate *st)
{
	return atomic_load_explicit(&st->list, memory_order_acquire);
}

/* The slot of ops in l, or l->cap (l may be NULL). */
static size_t ps_list_index(const struct ps_list *l, const struct ps_ops *ops)
{
	size_t i = 0;

	if (!l)
		return 0;
	while (i < l->cap && atomic_load_explicit(&l->ops[i], memory_order_relaxed) != ops)
		i++;
	return i;
}

/*
 * The list ops' func: call every ops of the site that called it (ip is the
 * traced function's runtime address).  Lock-free: an object's state and a site's
 * list are published before any site calls the list ops.
 */
static void ps_list_func(unsigned long ip, unsigned long parent_ip, struct ps_ops *ops,
			 void *regs)
{
	struct ps_obj *o = NULL;
	const struct ps_site *s = ps_find((void *)(uintptr_t)ip, &o);
	struct ps_list *l;

	(void)ops;
	if (!s || !o->state || !(l = ps_list_load(&o->state[s - o->img.sites])))
		return;
	for (size_t i = 0; i < l->cap; i++) {
		struct ps_ops *o = atomic_load_explicit(&l->ops[i], memory_order_acquire);

		if (o)
			o->func(ip, parent_ip, o, regs);
	}
}

enum ps_mode {
	PS_ADD,		/* ops joins each site's ops */
	PS_REMOVE,	/* ops leaves each site that has it */
	PS_CLEAR,	/* every ops leaves each site */
};

/* One site of a batch. */
struct ps_change {
	const struct ps_site *site;
	struct ps_reg *caller;		/* what it calls afterwards (NULL: idle) */
	struct ps_list *grown;		/* PS_ADD: a larger copy of its list, ops in it */
	size_t slot;			/* PS_ADD, PS_REMOVE: ops' slot in its list */
	int member;			/* PS_ADD, PS_REMOVE: ops was in its list */
	int write;			/* its bytes are written */
	int done;			/* published */
};

/* A site's list with room for one more ops: the slot, or a grown copy. */
static int ps_list_room(struct ps_sstate *st, struct ps_ops *ops, struct ps_change *c)
{
	struct ps_list *l = ps_list_load(st), *g;
	size_t cap = l ? l->cap : 0, k = 0;

	for (size_t i = 0; i < cap; i++)
		if (!atomic_load_explicit(&l->ops[i], memory_order_relaxed)) {
			c->slot = i;
			return 0;
		}
	cap = cap ? 2 * cap : 2;
	if (!(g = calloc(1, sizeof(*g) + cap * sizeof(g->ops[0]))))
		return -ENOMEM;
	g->cap = cap;
	for (size_t i = 0; l && i < l->cap; i++) {
		struct ps_ops *o = atomic_load_explicit(&l->ops[i], memory_order_relaxed);

		if (o)
			atomic_init(&g->ops[k++], o);
	}
	atomic_init(&g->ops[k], ops);
	g->retired = l;		/* a thread may still walk l: reachable, never freed */
	c->slot = k;
	c->grown = g;
	return 0;
}

/* Does the site's list hold an ops with direct_call (other than except)? */
static int ps_list_direct(struct ps_sstate *st, const struct ps_ops *except)
{
	struct ps_list *l = ps_list_load(st);

	for (size_t i = 0; l && i < l->cap; i++) {
		struct ps_ops *o = atomic_load_explicit(&l->ops[i], memory_order_relaxed);

		if (o && o != except && o->direct_call)
			return 1;
	}
	return 0;
}

/* The one ops left in a site's list other than gone (n == 2 before removal). */
static struct ps_ops *ps_list_other(struct ps_sstate *st, const struct ps_ops *gone)
{
	struct ps_list *l = ps_list_load(st);

	for (size_t i = 0; l && i < l->cap; i++) {
		struct ps_ops *o = atomic_load_explicit(&l->ops[i], memory_order_relaxed);

		if (o && o != gone)
			return o;
	}
	return NULL;
}

/*
 * Make the writes w[0..n) (sorted) visible: their pages writable (and
 * executable) once per run, the patcher's publish, the pages back to R+X.
 * *published says whether the bytes changed (then the state must follow,
 * whatever mprotect said afterwards).
 */
static int ps_publish(struct ps_obj *o, const struct ps_write *w, size_t n, int enable,
		      int *published)
{
	struct ps_run run1, *runs = &run1;
	size_t nruns, done = 0;
	int err;

	*published = 0;
	if (!n)
		return 0;
	nruns = n > 1 ? ps_runs(&o->img, w, n, NULL) : 1;
	if (nruns > 1 && !(runs = malloc(nruns * sizeof(*runs))))
		return -ENOMEM;
	ps_runs(&o->img, w, n, runs);
	for (err = 0; done < nruns && !err; done++)
		err = ps_protect(runs[done].start, runs[done].end, 1);
	if (err)
		done--;		/* the run that failed was not made writable */
	else if (!(err = ps_arch_publish(&o->img, w, n, enable, runs, nruns)))
		*published = 1;
	while (done--) {
		int e2 = ps_protect(runs[done].start, runs[done].end, 0);

		if (!err)
			err = e2;
	}
	if (runs != &run1)
		free(runs);
	return err;
}

/* A registry entry gains or loses d sites; one with none left is put. */
static void ps_reg_count(struct ps_obj *o, struct ps_reg *r, long d)
{
	r->nsites += (size_t)d;
	if (!r->nsites)
		ps_reg_put(o, r);
}

/*
 * The idle round w[0..n) of a batch that only takes calls away (no site
 * keeps or gains one) was refused (-EDEADLK): if, for every entry some of
 * those sites call, the batch takes all of its sites (so the state that
 * follows puts it), the patcher may take the calls off without a round
 * (patcher.h: ps_arch_dormant).  0: done, the state may follow as if the
 * round had happened.
 */
static int ps_dormant(struct ps_obj *obj, const struct ps_change *c, size_t nc,
		      const struct ps_write *w, size_t n, struct ps_ops *ops, enum ps_mode mode,
		      struct ps_reg *lreg)
{
	struct ps_reg **regs;
	size_t nr = 0;
	int err;

	for (size_t b = 0; b < PS_REG_BUCKETS; b++)
		for (struct ps_reg *r = obj->regs[b]; r; r = r->next)
			r->gone = 0;
	for (size_t i = 0; i < nc; i++) {
		struct ps_sstate *st = &obj->state[c[i].site - obj->img.sites];
		struct ps_list *l = ps_list_load(st);

		if (mode == PS_REMOVE) {
			ps_reg_find(obj, ops)->gone++;	/* c holds the sites ops is on */
			continue;
		}
		for (size_t k = 0; l && k < l->cap; k++) {	/* PS_CLEAR: all leave */
			struct ps_ops *o = atomic_load_explicit(&l->ops[k], memory_order_relaxed);

			if (o)
				ps_reg_find(obj, o)->gone++;
		}
		if (lreg && st->caller == lreg)
			lreg->gone++;
	}
	if (!(regs = malloc(n * sizeof(*regs))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct ps_reg *r = obj->state[w[i].site - obj->img.sites].caller;

		if (!r || r->gone == SIZE_MAX)
			continue;	/* idle (its bytes may call a dormant slot), or listed */
		if (r->gone != r->nsites) {
			free(regs);
			return -EDEADLK;	/* a site would keep calling it */
		}
		r->gone = SIZE_MAX;
		regs[nr++] = r;
	}
	err = nr ? ps_arch_dormant(&obj->img, regs, nr, w, n) : 0;
	free(regs);
	return err;
}

/*
 * Apply one batch to the n sites of v (any order, repeats allowed; sorted
 * here unless `sorted`): ops joins them (PS_ADD), leaves them (PS_REMOVE;
 * with `strict`, a site without it is -ENOENT), or every ops leaves them
 * (PS_CLEAR, ops NULL).  Called with ps_lock held.
 *
 * Order: everything that can fail first (registry entries and their
 * trampolines, grown lists, every site's new bytes); then an ops joining a
 * list is stored in it (so a site that starts calling the list ops finds
 * it there); then the bytes are published, the sites that keep a call
 * first (one round), those going idle after (another round); then an ops
 * leaving a list is taken out (a site that stopped calling the list ops
 * may still have a thread in it, which then calls that ops once more: it
 * was attached until this call returns).
 */
/* One batch of ps_apply: what it asks, and what it plans. */
struct ps_batch {
	struct ps_obj *o;
	const struct ps_site **v;	/* its sites, sorted */
	size_t n;
	struct ps_ops *ops;
	enum ps_mode mode;
	int strict;
	struct ps_change *c;		/* each distinct site's change (nc) */
	struct ps_write *w;		/* the writes: keeping a call (ne), then going idle (nd) */
	size_t nc, ne, nd;
	struct ps_reg *reg;		/* ops' registry entry */
	struct ps_reg *lreg;		/* the list ops' entry */
	int want_list;			/* a site will call the list ops */
};

/* Each distinct site: its new caller, and whether its bytes are written.  0 or -errno. */
static int ps_plan_changes(struct ps_batch *b)
{
	struct ps_obj *o = b->o;
	int err;

	for (size_t i = 0; i < b->n; i++) {
		struct ps_change *ch = &b->c[b->nc];
		struct ps_sstate *st;
		size_t left;

		if (i && b->v[i] == b->v[i - 1])
			continue;	/* a function listed twice is changed once */
		st = &o->state[b->v[i] - o->img.sites];
		ch->site = b->v[i];
		ch->write = 1;
		if (b->mode == PS_CLEAR) {
			ch->caller = NULL;
			b->nc++;
			continue;
		}
		ch->slot = ps_list_index(ps_list_load(st), b->ops);
		ch->member = ps_list_load(st) && ch->slot < ps_list_load(st)->cap;
		if (b->mode == PS_ADD) {
			if ((b->ops->direct_call && st->n > (size_t)ch->member) ||
			    (st->n && ps_list_direct(st, b->ops)))
				return -EBUSY;	/* a direct call shares its site with no ops */
			left = st->n + !ch->member;
			if (!ch->member && (err = ps_list_room(st, b->ops, ch)))
				return err;
			ch->caller = left == 1 ? b->reg : NULL;
		} else {	/* PS_REMOVE */
			if (!ch->member) {
				if (b->strict)
					return -ENOENT;
				continue;
			}
			left = st->n - 1;
			ch->caller = NULL;
			if (left == 1)
				ch->caller = ps_reg_find(o, ps_list_other(st, b->ops));
			/* list to list: the bytes stay as they are */
			ch->write = !(left >= 2);
		}
		if (left >= 2)
			b->want_list = 1;
		b->nc++;
	}
	return 0;
}

/*
 * Every site's new bytes: those keeping a call (w[0..ne)), then those
 * going idle, each group in the order of c.  0 or -errno.
 */
static int ps_plan_writes(struct ps_batch *b)
{
	struct ps_obj *o = b->o;
	struct ps_change *c = b->c;
	int err;

	for (size_t i = 0; i < b->nc; i++) {
		struct ps_sstate *st = &o->state[c[i].site - o->img.sites];
		size_t left = b->mode == PS_CLEAR ? 0 : b->mode == PS_ADD ? st->n + !c[i].member
							   : st->n - c[i].member;

		if (left >= 2)
			c[i].caller = b->lreg;
		if (c[i].write)
			(c[i].caller ? &b->ne : &b->nd)[0]++;
	}
	for (size_t i = 0, ke = 0, kd = b->ne; i < b->nc; i++) {
		struct ps_reg *to = c[i].caller;
		struct ps_write *x;

		if (!c[i].write)
			continue;
		x = &b->w[to ? ke++ : kd++];
		x->site = c[i].site;
		x->lit = to ? (uint64_t)(uintptr_t)to->ops - o->img.bias : o->img.hdr->default_ops;
		if ((err = ps_arch_encode(&o->img, c[i].site, to ? to->target : 0, x->call)))
			return err;
	}
	return 0;
}

/* PS_ADD: ops joins the lists first, so a site that starts calling the list ops finds it. */
static void ps_join_lists(struct ps_batch *b)
{
	if (b->mode != PS_ADD)
		return;
	for (size_t i = 0; i < b->nc; i++) {
		struct ps_change *ch = &b->c[i];
		struct ps_sstate *st = &b->o->state[ch->site - b->o->img.sites];

		if (ch->member)
			continue;
		if (ch->grown) {
			atomic_store_explicit(&st->list, ch->grown, memory_order_release);
			ch->grown = NULL;	/* published: never freed */
		} else {
			atomic_store_explicit(&ps_list_load(st)->ops[ch->slot], b->ops,
					      memory_order_release);
		}
	}
}

/*
 * The bytes: the sites that keep a call (one round), then those going idle
 * (another, or none where dormant slots do it).  ne and nd are left
 * counting the writes that happened.  0 or -errno; where nothing happened,
 * ops has left the lists it joined again.
 */
static int ps_publish_batch(struct ps_batch *b)
{
	int pub = 0, err = ps_publish(b->o, b->w, b->ne, 1, &pub);

	if (!err || pub) {
		int pub2 = 0, e2 = ps_publish(b->o, b->w + b->ne, b->nd, 0, &pub2);

		/* refused, it may still be done without a round (dormant slots) */
		if (e2 == -EDEADLK && !b->ne &&
		    !ps_dormant(b->o, b->c, b->nc, b->w + b->ne, b->nd, b->ops, b->mode, b->lreg))
			e2 = 0, pub2 = 1;
		if (!err)
			err = e2;
		if (!pub2)
			b->nd = 0;	/* the idle round did not happen */
	}
	if (!pub)
		b->ne = 0;
	if (!b->ne && !b->nd && err && b->mode == PS_ADD) {
		/* nothing was published: ops leaves the lists it joined */
		for (size_t i = 0; i < b->nc; i++)
			if (!b->c[i].member)
				atomic_store_explicit(
					&ps_list_load(&b->o->state[b->c[i].site - b->o->img.sites])
						 ->ops[b->c[i].slot],
					NULL, memory_order_release);
	}
	return err;
}

/* The state follows the bytes: each site whose change happened. */
static void ps_follow_state(struct ps_batch *b)
{
	struct ps_obj *o = b->o;
	struct ps_change *c = b->c;
	struct ps_reg *lreg = b->lreg;

	for (size_t i = 0; i < b->nc; i++) {
		struct ps_sstate *st = &o->state[c[i].site - o->img.sites];
		struct ps_list *l = ps_list_load(st);

		if (c[i].write) {
			/* w[0..ne) and w[ne..) kept the order of c */
			int happened = c[i].caller ? b->ne > 0 : b->nd > 0;

			if (!happened)
				continue;
		}
		if (st->caller == lreg && lreg && c[i].caller != lreg)
			lreg->nsites--;
		else if (c[i].caller == lreg && lreg && st->caller != lreg)
			lreg->nsites++;
		st->caller = c[i].caller;
		if (b->mode == PS_ADD && !c[i].member) {
			st->n++;
			b->reg->nsites++;
		} else if (b->mode == PS_REMOVE) {
			atomic_store_explicit(&l->ops[c[i].slot], NULL, memory_order_release);
			st->n--;
			ps_reg_count(o, b->reg, -1);
		} else if (b->mode == PS_CLEAR) {
			for (size_t k = 0; l && k < l->cap; k++) {
				struct ps_ops *x = atomic_load_explicit(&l->ops[k], memory_order_relaxed);

				if (!x)
					continue;
				atomic_store_explicit(&l->ops[k], NULL, memory_order_release);
				ps_reg_count(o, ps_reg_find(o, x), -1);
			}
			st->n = 0;
		}
	}
}

static int ps_apply(struct ps_obj *o, const struct ps_site **v, size_t n, int sorted,
		    struct ps_ops *ops, enum ps_mode mode, int strict)
{
	struct ps_batch b = { .o = o, .v = v, .n = n, .ops = ops, .mode = mode, .strict = strict };
	int err = 0;

	if (!n)
		return 0;
	if (!o->state && !(o->state = calloc(o->count, sizeof(*o->state))))
		return -ENOMEM;
	if (n > 1 && !sorted)
		qsort(v, n, sizeof(*v), ps_cmp_site);
	if (!(b.c = calloc(n, sizeof(*b.c))) || !(b.w = calloc(n, sizeof(*b.w)))) {
		err = -ENOMEM;
		goto out;
	}
	if (mode == PS_ADD && (err = ps_reg_get(o, ops, &b.reg)))
		goto out;
	if (mode == PS_REMOVE && !(b.reg = ps_reg_find(o, ops))) {
		err = strict ? -ENOENT : 0;	/* on no site at all */
		goto out;
	}
	if ((err = ps_plan_changes(&b)))
		goto out;
	/* the list ops' entry: sites may stop or start calling it */
	b.lreg = ps_reg_find(o, &ps_list_ops);
	if (b.want_list && !b.lreg && (err = ps_reg_get(o, &ps_list_ops, &b.lreg)))
		goto out;
	if ((err = ps_plan_writes(&b)))
		goto out;
	ps_join_lists(&b);
	err = ps_publish_batch(&b);
	if (!b.ne && !b.nd && err)
		goto out;
	ps_follow_state(&b);
out:
	for (size_t i = 0; b.c && i < b.nc; i++)
		free(b.c[i].grown);	/* lists grown for a batch that did not happen */
	if (b.reg && mode == PS_ADD && !b.reg->nsites)	/* a new entry whose batch did not happen */
		ps_reg_put(o, b.reg);
	if (b.lreg && !b.lreg->nsites)
		ps_reg_put(o, b.lreg);
	free(b.w);
	free(b.c);
	return err;
}

/* --- The API --------------------------------------------------------------- */

/* A site of a batch and its object. */
struct ps_pick {
	struct ps_obj *obj;
	const struct ps_site *site;
};

static int ps_cmp_pick(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct ps_pick *)a)->site;
	uintptr_t y = (uintptr_t)((const struct ps_pick *)b)->site;

	return x < y ? -1 : x > y;
}

/* Does ops sit on site s of o? */
static int ps_member(struct ps_obj *o, const struct ps_site *s, struct ps_ops *ops)
{
	struct ps_list *l = o->state ? ps_list_load(&o->state[s - o->img.sites]) : NULL;

	return l && ps_list_index(l, ops) < l->cap;
}

/*
 * Apply the sites of p[0..n) (sorted by table address, so grouped by object
 * and, inside one, sorted by function), one batch per object.  An attach
 * is all or nothing: if an object's batch fails (-ENOMEM, x86_64: its
 * trampoline room full; -ERANGE, a site out of reach), ops leaves again the sites
 * of the objects before it that it joined.  A detach that fails stops
 * there (the objects before it are detached).
 */
static int ps_apply_picks(struct ps_pick *p, size_t n, struct ps_ops *ops, enum ps_mode mode,
			  int strict)
{
	const struct ps_site **v;
	char *joined = NULL;
	size_t i = 0;
	int err = 0;

	if (!n)
		return 0;
	if (!(v = malloc(n * sizeof(*v))) || (mode == PS_ADD && !(joined = calloc(n, 1)))) {
		free(v);
		return -ENOMEM;
	}
	for (size_t j = 0; joined && j < n; j++)
		joined[j] = !ps_member(p[j].obj, p[j].site, ops);
	while (i < n && !err) {
		size_t k = 0;
		struct ps_obj *o = p[i].obj;

		while (i + k < n && p[i + k].obj == o) {
			v[k] = p[i + k].site;
			k++;
		}
		if ((err = ps_apply(o, v, k, 1, ops, mode, strict)))
			break;
		i += k;
	}
	/* an attach that failed in an object: undone in those before it */
	for (size_t j = 0; err && joined && j < i;) {
		size_t k = 0;
		struct ps_obj *o = p[j].obj;

		for (; j < i && p[j].obj == o; j++)
			if (joined[j])
				v[k++] = p[j].site;
		ps_apply(o, v, k, 1, ops, PS_REMOVE, 0);
	}
	free(joined);
	free(v);
	return err;
}

static int ps_one(void *function, struct ps_ops *ops, enum ps_mode mode)
{
	const struct ps_site *s;
	struct ps_obj *o = NULL;
	struct ps_guard g;
	int err;

	pthread_once(&ps_once, ps_init);
	ps_lock_take(&g);
	if (!(err = ps_ready_locked())) {
		if (!(s = ps_find(function, &o)))
			err = -ENOENT;
		else if (!(err = o->claimed))
			err = ps_apply(o, &s, 1, 1, ops, mode, 1);
	}
	ps_lock_drop(&g);
	return err;
}

int ps_attach(void *function, struct ps_ops *ops)
{
	if (!ops || !ops->func)
		return -EINVAL;
	return ps_one(function, ops, PS_ADD);
}

int ps_detach(void *function)
{
	return ps_one(function, NULL, PS_CLEAR);
}

int ps_detach_ops(void *function, struct ps_ops *ops)
{
	if (!ops)
		return -EINVAL;
	return ps_one(function, ops, PS_REMOVE);
}

static int ps_list(void *const *functions, size_t n, struct ps_ops *ops, enum ps_mode mode)
{
	struct ps_pick *v;
	struct ps_guard g;
	int err;

	if ((mode == PS_ADD && (!ops || !ops->func)) || (mode == PS_REMOVE && !ops))
		return -EINVAL;
	pthread_once(&ps_once, ps_init);
	ps_lock_take(&g);
	if ((err = ps_ready_locked()) || !n)
		goto out;
	if (!functions || !(v = malloc(n * sizeof(*v)))) {
		err = functions ? -ENOMEM : -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < n && !err; i++)
		if (!(v[i].site = ps_find(functions[i], &v[i].obj)))
			err = -ENOENT;
		else
			err = v[i].obj->claimed;
	if (!err) {
		qsort(v, n, sizeof(*v), ps_cmp_pick);
		err = ps_apply_picks(v, n, ops, mode, 0);
	}
	free(v);
out:
	ps_lock_drop(&g);
	return err;
}

int ps_attach_list(void *const *functions, size_t n, struct ps_ops *ops)
{
	return ps_list(functions, n, ops, PS_ADD);
}

int ps_detach_list(void *const *functions, size_t n)
{
	return ps_list(functions, n, NULL, PS_CLEAR);
}

int ps_detach_ops_list(void *const *functions, size_t n, struct ps_ops *ops)
{
	return ps_list(functions, n, ops, PS_REMOVE);
}

/* Every site of every object of ours (only: the one whose bias is `only`, if any). */
static int ps_all(struct ps_ops *ops, enum ps_mode mode, int one, uintptr_t only)
{
	struct ps_guard g;
	int err, found = !one;

	if ((mode == PS_ADD && (!ops || !ops->func)) || (mode == PS_REMOVE && !ops))
		return -EINVAL;
	pthread_once(&ps_once, ps_init);
	ps_lock_take(&g);
	if (!(err = ps_ready_locked())) {
		struct ps_pick *v = NULL;
		size_t n = 0, k = 0;

		for (struct ps_obj *o = ps_first(); o; o = ps_next(o))
			if (ps_live(o) && !o->claimed && (!one || o->img.bias == only)) {
				found = 1;
				n += o->count;
			}
		if (n && !(v = malloc(n * sizeof(*v))))
			err = -ENOMEM;
		for (struct ps_obj *o = ps_first(); v && o; o = ps_next(o))
			if (ps_live(o) && !o->claimed && (!one || o->img.bias == only))
				for (size_t i = 0; i < o->count; i++)
					v[k++] = (struct ps_pick){ o, &o->img.sites[i] };
		if (v) {
			qsort(v, n, sizeof(*v), ps_cmp_pick);	/* the objects' tables in order */
			err = ps_apply_picks(v, n, ops, mode, 0);
		}
		free(v);
	}
	ps_lock_drop(&g);
	return err ? err : found ? 0 : -ENOENT;
}

int ps_attach_all(struct ps_ops *ops)
{
	return ps_all(ops, PS_ADD, 0, 0);
}

int ps_detach_all(void)
{
	return ps_all(NULL, PS_CLEAR, 0, 0);
}

int ps_detach_ops_all(struct ps_ops *ops)
{
	return ps_all(ops, PS_REMOVE, 0, 0);
}

int ps_detach_object(uintptr_t bias)
{
	return ps_all(NULL, PS_CLEAR, 1, bias);
}

int ps_release(void)
{
	struct ps_guard g;
	int err;

	pthread_once(&ps_once, ps_init);
	ps_lock_take(&g);
	err = ps_arch_release();
	ps_lock_drop(&g);
	return err;
}

int ps_attach_object(uintptr_t bias, struct ps_ops *ops)
{
	return ps_all(ops, PS_ADD, 1, bias);
}

long ps_objects(struct ps_object *out, long max)
{
	struct ps_guard g;
	long k = 0, first = 0;
	int err;

	pthread_once(&ps_once, ps_init);
	ps_lock_take(&g);
	if (!(err = ps_ready_locked()))
		for (struct ps_obj *o = ps_first(); o; o = ps_next(o)) {
			if (!ps_live(o) || o->claimed)
				continue;
			if (out && k < max)
				out[k] = (struct ps_object){ o->name, (uintptr_t)o->img.bias,
							     first, (long)o->count };
			first += (long)o->count;
			k++;
		}
	ps_lock_drop(&g);
	return err ? err : k;
}

long ps_count(void)
{
	struct ps_guard g;
	long n = 0;
	int err;

	pthread_once(&ps_once, ps_init);
	ps_lock_take(&g);
	if (!(err = ps_ready_locked()))
		for (struct ps_obj *o = ps_first(); o; o = ps_next(o))
			if (ps_live(o) && !o->claimed)
				n += (long)o->count;
	ps_lock_drop(&g);
	return err ? err : n;
}

/*
 * Lock-free and without a scan (a tracer calls it once per function, right
 * after ps_count, which scanned): the objects as the last call left them.
 */
void *ps_function(long i)
{
	if (i < 0)
		return NULL;
	pthread_once(&ps_once, ps_init);
	for (struct ps_obj *o = ps_first(); o; o = ps_next(o)) {
		if (!ps_live(o) || o->claimed)
			continue;
		if ((uint64_t)i < o->count)
			return (void *)(uintptr_t)(o->img.sites[i].func + o->img.bias);
		i -= (long)o->count;
	}
	return NULL;
}
