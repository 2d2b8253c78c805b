// SPDX-License-Identifier: GPL-2.0-only
/*
 * arch/x86_64.c - the runtime's x86_64 patcher (interface: ../patcher.h).
 *
 * Strategy: a site is the 5-byte NOP (0f 1f 44 00 00) embed leaves at a
 * traced function's entry (after ENDBR64 if it has one); attached, it is
 * `CALL rel32` to where its ops' sites call.  There is no literal: each
 * ops gets its own trampoline in each object it is attached in, a 16-byte
 * slot carved from that object's own trampoline room (embed gives every
 * object one: zero-filled R+X, within rel32 reach of every site of that
 * object, so a -no-pie program and its libraries far above trace
 * together): `movabs $cell, %r11; jmp common`, where the cell is the
 * slot's word in a runtime-owned array (mmap'd with the room, never
 * moved) holding the ops, and `common` is the shared save-and-call code
 * (patcher/x86_64.S) copied to the start of the room at first use: it
 * loads the ops from the cell and returns into the body at once when it
 * is NULL.  A room serves only its own object's sites, so an object that
 * is unloaded (dlclose) takes its room with it and leaves no other
 * object calling into it: nothing is pinned; ps_arch_forget drops the
 * room's bookkeeping and unmaps its cells.  An ops with
 * direct_call has its sites call direct_call itself when it is within
 * rel32 reach of every site, else a slot holding
 * `jmp *0(%rip); .quad direct_call` (no cell).  A slot's page is writable (and still
 * executable: other slots on it run) only while that slot is written.
 *
 * Publishing (the kernel's text_poke_bp protocol, once for a whole batch):
 * INT3 on the first byte of every site whose bytes change, membarrier
 * PRIVATE_EXPEDITED_SYNC_CORE, the other 4 bytes of each, sync, the first
 * bytes, sync.  A thread that meets an INT3 meanwhile gets SIGTRAP; our
 * handler checks the address is a site of an object it has seen, finds
 * it in a copy of the batch (in never-freed memory, under a sequence
 * counter, so a handler that runs late never reads freed or half-written
 * entries) and emulates the new instruction (CALL: push
 * site + 5, rip = target; NOP: rip = site + 5); a site no longer holding
 * INT3 (the round is over) is re-executed; any other SIGTRAP goes to the
 * disposition the program had (SIG_DFL: restored and re-raised).  The
 * handler and membarrier registration are set up before the first store
 * of the first round (failing, the round returns the error having stored
 * nothing), and the handler is put back before a round if the program
 * replaced it.  The handler runs with every signal blocked (no handler
 * nests in it, where an INT3 would be fatal).  Before the first INT3 of a
 * round every other thread's blocked mask is read from /proc: one that blocks
 * SIGTRAP would die at an INT3, so the round is refused (-EDEADLK,
 * nothing stored; looked at again for about 50 ms first).  Every sync is
 * checked: a failed first or second sync (membarrier denied mid-round)
 * puts the old bytes back and returns the error.  runtime/README.md "Safety" states the guarantees and limits.
 *
 * Dormant slots: a refused round that only takes calls away, and leaves
 * no site calling the slots it takes sites from (the core checks:
 * ps_arch_dormant), is made by a data store instead: NULL in each slot's
 * cell (sequentially consistent: a thread whose load in common comes
 * after it returns sees it).  The sites still CALL the slot, which now
 * returns at once; the slot is SLOT_DORMANT and its sites are listed.
 * Every later round that passes the threads' check adds the NOP of each
 * listed site still calling its slot (its page made writable here: it is
 * not among the core's runs) to its batch, unless the batch writes that
 * site anyway; when that round has published (or nothing calls them any
 * more), the slots are retired like any other.  A round with nothing of
 * its own to change and a thread blocking SIGTRAP leaves them for later.
 *
 * Freeing rule: a slot holds instructions only in its first 15 bytes and
 * ops->func returns into `common`, never into the slot (a dormant slot's
 * `ret` is common's too), so a thread can be in a slot only with its
 * program counter inside those bytes, or about to load its cell: at
 * common's first instruction with %r11 the cell's address (a reused slot's
 * cell holds the next ops: that thread would call it).  Past that load
 * %r11 is the ops, as before.  A slot
 * whose ops has no site left is retired, its bytes kept.  Retired slots
 * are reused only when their room has no free slot left, and only after every other
 * thread of the process has reported where it stands: each is sent SIGTRAP
 * (rt_tgsigqueueinfo, SI_QUEUE, a marker naming the round) and our handler
 * records the interrupted rip and %r11; a retired slot that holds some
 * thread's rip (or whose cell it is about to load) stays retired, the
 * others become free.  A thread that runs nowhere (a
 * zombie leader, a thread exiting: /proc state Z or X, or no entry) is
 * not asked, nor waited for once it is gone.  A thread that does not
 * answer within five seconds (SIGTRAP blocked, stopped) means nothing is
 * reused this time.  A handler that emulates a CALL into a slot runs with SIGTRAP
 * blocked, so its thread answers only after landing in the slot.  Limit:
 * a thread interrupted inside a slot by another signal whose handler is
 * still running reports that handler's rip, not the slot's; it resumes in
 * the slot later.  Threads created after a slot was retired cannot reach
 * it (no site calls it; the round ended with a sync).  The question is a
 * signal (handler with SA_RESTART): a thread blocked in a call that no
 * handler restarts (nanosleep, poll, epoll_wait...) returns EINTR, as with
 * any handled signal; it is asked only when a room is full (a 128 KiB
 * room holds about 8,000 slots).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../patcher.h"
#include "x86_64-stats.h"

#if !defined(__x86_64__) || defined(__ILP32__)
#error "runtime/patcher/x86_64.c is the patcher for x86_64 (runtime/Makefile picks it)"
#endif

#define X86_CALL	0xe8
#define X86_INT3	0xcc
#define X86_SLOT	16u
#define X86_MARKER	UINT64_C(0x70735f78)	/* high word of a reclaim round's sival */
#define X86_WAIT_NS	5000000000L		/* how long threads get to answer */
#define X86_TRAP_BIT	(1ull << (SIGTRAP - 1))	/* SIGTRAP in /proc's blocked mask */

static const uint8_t x86_nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

const unsigned int ps_arch_call_size = 5;

/* The template (arch/x86_64.S). */
extern const uint8_t ps_x86_common[] PS_HIDDEN, ps_x86_common_end[] PS_HIDDEN;

void (*ps_arch_test_hook)(int step);
unsigned int ps_arch_test_slots;

static struct ps_arch_stats x86_st;

#define X86_COUNT(field, v) __atomic_fetch_add(&x86_st.field, (v), __ATOMIC_RELAXED)

void ps_arch_stats(struct ps_arch_stats *out)
{
	uint64_t *d = (uint64_t *)out, *s = (uint64_t *)&x86_st;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

static long x86_gettid(void)
{
	return syscall(SYS_gettid);
}

/* --- The objects, their rooms and slots (under the core's lock) -------------- */

enum { SLOT_FREE, SLOT_USED, SLOT_RETIRED, SLOT_DORMANT };

/*
 * One per object the patcher has seen (a slot carved, or a round
 * published): its site table for the SIGTRAP handler and its own room.
 * A room serves only its own object's sites (embed put it within rel32
 * reach of every one of them), so a dlclose() of an object leaves no other
 * object calling into it: nothing is pinned.  The list only grows and an
 * entry is never freed (the handler walks it without a lock); an object
 * that was unloaded keeps its entry with nsites 0 and no room.
 */
struct x86_obj {
	const struct ps_image *img;	/* the core's, never freed: the key */
	/* read by the handler: the site table, while nsites is not 0 */
	const struct ps_site *sites;
	uint64_t bias;
	uint64_t lo, hi;	/* runtime addresses of the first and last call slot */
	uint64_t nsites;	/* 0: unloaded (its memory is not read again) */
	/* the room: base NULL until its first slot, and again once forgotten */
	uint8_t *base;		/* runtime address; `common` at its start */
	uint32_t nslots;
	uint8_t *state;		/* per slot */
	uint32_t *free, nfree;	/* a stack: the lowest index on top */
	uint32_t *retired, nretired;
	/*
	 * The cells: one word per slot, the ops its `common` calls (NULL:
	 * dormant).  mmap'd with the room, never moved (a slot names its
	 * cell by absolute address); unmapped when the object is (no slot
	 * is left to load one) or by ps_arch_release.
	 */
	struct ps_ops **cell;
	size_t ncell;		/* cells mapped */
	struct x86_obj *next;
};
static struct x86_obj *x86_objs;	/* appended with a release store */
static struct x86_obj **x86_objs_tail = &x86_objs;
static uint64_t x86_pagesize;
static size_t x86_common_len;	/* bytes of common, rounded up to a slot */
/* The sites that may still call a dormant slot (under the core's lock). */
struct x86_dorm {
	struct x86_obj *ob;	/* its object, whose room holds the slot */
	uint64_t addr;		/* the site's runtime address */
	uint32_t slot;
	uint32_t open;		/* its page made writable for the round in flight */
};
static struct x86_dorm *x86_dorm;
static size_t x86_ndorm, x86_dorm_cap;

/*
 * The entry of img's object; with `make` (the object is mapped), created
 * if there is none (NULL: no memory).  Without, nothing of the object is
 * read: ps_arch_forget asks after it was unmapped.
 */
static struct x86_obj *x86_obj_of(const struct ps_image *img, int make)
{
	static struct x86_obj *last;	/* the last one asked for: most calls ask again */
	struct x86_obj *ob;
	uint64_t n;

	if (last && last->img == img)
		return last;
	for (ob = x86_objs; ob; ob = ob->next)
		if (ob->img == img)
			return last = ob;
	if (!make || !(ob = calloc(1, sizeof(*ob))))
		return NULL;
	n = img->hdr->count;
	ob->img = img;
	ob->sites = img->sites;
	ob->bias = img->bias;
	ob->lo = n ? img->sites[0].call + img->bias : 1;
	ob->hi = n ? img->sites[n - 1].call + img->bias : 0;
	__atomic_store_n(&ob->nsites, n, __ATOMIC_RELAXED);
	__atomic_store_n(x86_objs_tail, ob, __ATOMIC_RELEASE);
	x86_objs_tail = &ob->next;
	return last = ob;
}

static uint8_t *x86_slot(const struct x86_obj *ob, uint32_t i)
{
	return ob->base + x86_common_len + (size_t)i * X86_SLOT;
}

/* Copy len bytes to code at dst: its pages writable (and executable) only meanwhile. */
static int x86_text_write(uint8_t *dst, const void *src, size_t len)
{
	uintptr_t pm = x86_pagesize - 1;
	uintptr_t a = (uintptr_t)dst & ~pm, b = ((uintptr_t)dst + len + pm) & ~pm;

	if (mprotect((void *)a, b - a, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -errno;
	memcpy(dst, src, len);
	if (mprotect((void *)a, b - a, PROT_READ | PROT_EXEC))
		return -errno;
	return 0;
}

/* The room's bookkeeping freed and its cells unmapped (nothing of the object touched). */
static void x86_room_drop(struct x86_obj *ob)
{
	/* its retired and dormant slots leave the counters with it */
	for (uint32_t i = 0; ob->base && i < ob->nslots; i++) {
		if (ob->state[i] == SLOT_RETIRED)
			X86_COUNT(slots_retired, -(uint64_t)1);
		else if (ob->state[i] == SLOT_DORMANT)
			X86_COUNT(slots_dormant, -(uint64_t)1);
	}
	free(ob->state), free(ob->free), free(ob->retired);
	ob->state = NULL, ob->free = ob->retired = NULL;
	if (ob->cell)
		munmap(ob->cell, ob->ncell * sizeof(*ob->cell));
	ob->cell = NULL;
	ob->ncell = 0;
	if (ob->base)
		X86_COUNT(slots_total, -(uint64_t)ob->nslots);
	ob->nslots = ob->nfree = ob->nretired = 0;
	ob->base = NULL;
}

/* The object's own room ready to carve from: -ENOSPC if it has none. */
static int x86_room_init(struct x86_obj *ob)
{
	const struct ps_image *img = ob->img;
	size_t len = (size_t)(ps_x86_common_end - ps_x86_common);
	uint64_t size = img->hdr->tramp_size, n;
	uint8_t *base = (uint8_t *)(uintptr_t)(img->hdr->tramp + img->bias);
	void *p;
	int err;

	if (ob->base)
		return 0;
	x86_pagesize = img->pagesize;
	x86_common_len = (len + X86_SLOT - 1) & ~(size_t)(X86_SLOT - 1);
	if (!img->hdr->tramp || size < x86_common_len + X86_SLOT ||
	    (img->hdr->tramp + img->bias) % img->pagesize)
		return -ENOSPC;
	n = (size - x86_common_len) / X86_SLOT;
	if (n > UINT32_MAX - 1)
		n = UINT32_MAX - 1;
	if (ps_arch_test_slots && ps_arch_test_slots < n)
		n = ps_arch_test_slots;
	ob->state = calloc(n, 1);
	ob->free = malloc(n * sizeof(*ob->free));
	ob->retired = malloc(n * sizeof(*ob->retired));
	p = mmap(NULL, n * sizeof(*ob->cell), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	ob->cell = p == MAP_FAILED ? NULL : p;
	ob->ncell = p == MAP_FAILED ? 0 : n;
	err = !ob->state || !ob->free || !ob->retired || !ob->cell ? -ENOMEM : 0;
	if (err || (err = x86_text_write(base, ps_x86_common, len))) {
		x86_room_drop(ob);
		return err;
	}
	ob->nslots = (uint32_t)n;
	for (uint32_t i = 0; i < ob->nslots; i++)
		ob->free[i] = ob->nslots - 1 - i;
	ob->nfree = ob->nslots;
	ob->base = base;
	X86_COUNT(slots_total, ob->nslots);
	return 0;
}

/* --- The SIGTRAP handler and what it reads ---------------------------------- */

/* One site of the round being published: its runtime address and new bytes. */
struct x86_ent {
	uint64_t addr;
	uint64_t bytes;		/* the 5 new bytes, little-endian (the handler emulates them) */
	uint64_t old;		/* the 5 bytes it held: put back if the round must go back */
};

struct x86_batch {
	size_t cap, n;
	struct x86_ent e[];
};

/* One thread asked where it stands in a reclaim round. */
struct x86_reply {
	int32_t tid;
	uint32_t done;
	uint64_t rip;
	uint64_t r11;	/* names a slot's cell at common's first instruction */
};

static struct x86_batch *x86_cur;	/* mmap'd, never unmapped (a late handler may read one) */
static uint64_t x86_gen;		/* odd while x86_cur or its entries change */
/*
 * The program's SIGTRAP disposition, the one x86_chain acts on: two
 * copies and the index of the current one, so a handler running on
 * another thread reads a whole one while sigaction() below writes the
 * other.  Writers hold x86_prev_busy with every signal blocked.
 */
static struct sigaction x86_prev_buf[2];
static int x86_prev_cur;
static int x86_prev_busy;
static int x86_installed;		/* our handler was put in once */
static int x86_registered;		/* membarrier SYNC_CORE registered (a fork child
					   inherits it with the mm) */
static struct x86_reply *x86_rep;	/* mmap'd, never unmapped */
static uint32_t x86_rep_cap, x86_rep_n;
static uint32_t x86_round;		/* the open reclaim round; 0: none */

static void x86_trap(int sig, siginfo_t *si, void *ctx);

/*
 * Is a (runtime address) the call slot of a site of an object seen?  The
 * range check first: the table of an object unloaded since (and not yet
 * forgotten) is read only for an address inside its sites' range, which
 * a thread can hit only while something is mapped there.
 */
static int x86_is_site(uint64_t a)
{
	for (const struct x86_obj *ob = __atomic_load_n(&x86_objs, __ATOMIC_ACQUIRE); ob;
	     ob = __atomic_load_n(&ob->next, __ATOMIC_ACQUIRE)) {
		uint64_t n = __atomic_load_n(&ob->nsites, __ATOMIC_ACQUIRE);
		uint64_t lo = 0, hi = n, want = a - ob->bias;

		if (!n || a < ob->lo || a > ob->hi)
			continue;
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo) / 2;

			if (ob->sites[mid].call < want)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && ob->sites[lo].call == want)
			return 1;
	}
	return 0;
}

/*
 * The index of a among e[0..m) (sorted by addr), or m: relaxed loads, so
 * the SIGTRAP handler may search a batch another thread is filling (it
 * checks the generation around it).
 */
static size_t x86_ent_find(const struct x86_ent *e, size_t m, uint64_t a)
{
	size_t lo = 0, hi = m;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (__atomic_load_n(&e[mid].addr, __ATOMIC_RELAXED) < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m && __atomic_load_n(&e[lo].addr, __ATOMIC_RELAXED) == a ? lo : m;
}

/* Look a in the round's copy up, consistently; 1 found, 0 not there, -1 changing. */
static int x86_lookup(uint64_t a, uint64_t *bytes)
{
	uint64_t g1 = __atomic_load_n(&x86_gen, __ATOMIC_ACQUIRE), g2;
	const struct x86_batch *b;
	int found = 0;

	if (g1 & 1)
		return -1;
	b = __atomic_load_n(&x86_cur, __ATOMIC_RELAXED);
	if (b) {
		size_t n = __atomic_load_n(&b->n, __ATOMIC_RELAXED), i;

		if (n > b->cap)
			return -1;
		if ((i = x86_ent_find(b->e, n, a)) < n) {
			*bytes = __atomic_load_n(&b->e[i].bytes, __ATOMIC_RELAXED);
			found = 1;
		}
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	g2 = __atomic_load_n(&x86_gen, __ATOMIC_RELAXED);
	return g1 == g2 ? found : -1;
}

/* An INT3 at a site: emulate the new instruction or re-execute.  0: not ours. */
static int x86_emulate(ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t a = (uint64_t)g[REG_RIP] - 1, bytes;

	if (!x86_is_site(a))
		return 0;
	for (;;) {
		int r = x86_lookup(a, &bytes);

		if (r == 1) {
			if ((uint8_t)bytes == X86_CALL) {
				int32_t rel = (int32_t)(uint32_t)(bytes >> 8);

				g[REG_RSP] -= 8;
				*(uint64_t *)(uintptr_t)g[REG_RSP] = a + 5;
				g[REG_RIP] = (greg_t)(a + 5 + (int64_t)rel);
				X86_COUNT(emul_call, 1);
			} else {
				g[REG_RIP] = (greg_t)(a + 5);
				X86_COUNT(emul_nop, 1);
			}
			return 1;
		}
		if (*(volatile uint8_t *)(uintptr_t)a != X86_INT3) {
			g[REG_RIP] = (greg_t)a;		/* the round is over: run what is there */
			X86_COUNT(reexec, 1);
			return 1;
		}
		if (r == 0)
			return 0;	/* an INT3 of the program's own at a site */
		syscall(SYS_sched_yield);	/* a round is being prepared: look again */
	}
}

/* A reclaim round's question: record where this thread was interrupted. */
static void x86_answer(uint32_t round, const ucontext_t *uc)
{
	struct x86_reply *rep;
	uint32_t n;
	int32_t tid;

	if (round != __atomic_load_n(&x86_round, __ATOMIC_ACQUIRE))
		return;		/* a round that timed out: nobody listens */
	rep = __atomic_load_n(&x86_rep, __ATOMIC_ACQUIRE);
	n = __atomic_load_n(&x86_rep_n, __ATOMIC_ACQUIRE);
	tid = (int32_t)x86_gettid();
	for (uint32_t i = 0; i < n; i++)
		if (rep[i].tid == tid) {
			rep[i].rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
			rep[i].r11 = (uint64_t)uc->uc_mcontext.gregs[REG_R11];
			__atomic_store_n(&rep[i].done, 1, __ATOMIC_RELEASE);
			return;
		}
}

/*
 * Interposed sigaction() and signal() (weak: a program's own definition,
 * or a static libc's, wins; libc's internal callers are not interposed).
 * Once the runtime's handler is in, the program's SIGTRAP disposition is
 * the chained one: sigaction(SIGTRAP, act, old) stores act there and
 * reports the program's previous one, and the runtime's handler stays, so
 * a handler the program installs while a round is in flight never sees
 * the round's INT3s and the program's own SIGTRAPs still reach it.  Any
 * other signal, and SIGTRAP before the runtime's first round, go straight
 * to libc.  Async-signal-safe, as sigaction must be: the writer's lock is
 * taken with every signal blocked.
 */
extern int __sigaction(int, const struct sigaction *, struct sigaction *);

static void x86_prev_set(const struct sigaction *act, struct sigaction *old)
{
	sigset_t all, saved;
	int next;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	while (__atomic_exchange_n(&x86_prev_busy, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	next = !__atomic_load_n(&x86_prev_cur, __ATOMIC_RELAXED);
	if (old)
		*old = x86_prev_buf[!next];
	if (act) {
		x86_prev_buf[next] = *act;
		__atomic_store_n(&x86_prev_cur, next, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&x86_prev_busy, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

__attribute__((weak, visibility("default")))
int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction cur;

	if (sig != SIGTRAP || !__atomic_load_n(&x86_installed, __ATOMIC_ACQUIRE))
		return __sigaction(sig, act, old);
	/* ours still in? (a raw rt_sigaction may have replaced it) */
	if (__sigaction(SIGTRAP, NULL, &cur))
		return -1;
	if (!(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != x86_trap)
		return __sigaction(sig, act, old);
	X86_COUNT(interposed, 1);
	x86_prev_set(act, old);
	return 0;
}

__attribute__((weak, visibility("default")))
sighandler_t signal(int sig, sighandler_t h)
{
	struct sigaction sa, old;

	/* glibc's signal(): BSD semantics */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaddset(&sa.sa_mask, sig) || sigaction(sig, &sa, &old))
		return SIG_ERR;
	return old.sa_handler;
}

/* Any other SIGTRAP: what the program's disposition would have done. */
static void x86_chain(int sig, siginfo_t *si, void *ctx)
{
	struct sigaction p = x86_prev_buf[__atomic_load_n(&x86_prev_cur, __ATOMIC_ACQUIRE)];

	X86_COUNT(chained, 1);
	if (p.sa_flags & SA_SIGINFO) {
		if (p.sa_sigaction && p.sa_sigaction != x86_trap)
			p.sa_sigaction(sig, si, ctx);
		return;
	}
	if (p.sa_handler == SIG_IGN)
		return;
	if (p.sa_handler != SIG_DFL) {
		p.sa_handler(sig);
		return;
	}
	/* SIG_DFL: restore it and raise again; delivered (fatally) once we return */
	memset(&p, 0, sizeof(p));
	p.sa_handler = SIG_DFL;
	__sigaction(SIGTRAP, &p, NULL);
	syscall(SYS_rt_tgsigqueueinfo, getpid(), x86_gettid(), SIGTRAP, si);
}

/*
 * The threads running x86_trap now: their SigBlk shows SIGTRAP blocked (the
 * handler blocks every signal), yet they return to a mask that lets it in
 * (they got one), so a round need not refuse for them.  A slot is the tid
 * of a thread in the handler, or 0; a full table only means such a thread
 * is judged by its mask.
 */
#define X86_INH	64
static int32_t x86_inh[X86_INH];

static int x86_inh_enter(int32_t tid)
{
	for (int i = 0; i < X86_INH; i++) {
		int32_t none = 0;

		if (__atomic_compare_exchange_n(&x86_inh[i], &none, tid, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return i;
	}
	return -1;
}

static int x86_in_handler(int32_t tid)
{
	for (int i = 0; i < X86_INH; i++)
		if (__atomic_load_n(&x86_inh[i], __ATOMIC_ACQUIRE) == tid)
			return 1;
	return 0;
}

static void x86_trap(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno, slot = x86_inh_enter((int32_t)x86_gettid());

	if (si->si_code == SI_QUEUE && si->si_pid == getpid() &&
	    ((uint64_t)(uintptr_t)si->si_value.sival_ptr >> 32) == X86_MARKER)
		x86_answer((uint32_t)(uintptr_t)si->si_value.sival_ptr, ctx);
	else if (!(si->si_code == SI_KERNEL && x86_emulate(ctx)))
		x86_chain(sig, si, ctx);
	if (slot >= 0)
		__atomic_store_n(&x86_inh[slot], 0, __ATOMIC_RELEASE);
	errno = saved;
}

/* Our handler in place (again, if the program replaced it). */
static int x86_handler(void)
{
	struct sigaction cur, sa;

	if (__sigaction(SIGTRAP, NULL, &cur))
		return -errno;
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == x86_trap)
		return 0;
	/* put in by a way sigaction() below does not see (the raw system
	   call, a libc-internal path): that one becomes the chained one */
	x86_prev_set(&cur, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = x86_trap;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	/* every signal blocked while it runs: no other handler nests in it,
	   where SIGTRAP is blocked and an INT3 would be fatal */
	sigfillset(&sa.sa_mask);
	if (__sigaction(SIGTRAP, &sa, NULL))
		return -errno;
	__atomic_store_n(&x86_installed, 1, __ATOMIC_RELEASE);
	return 0;
}

static int x86_setup(const struct ps_image *img)
{
	if (!x86_registered) {
		long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

		if (q < 0)
			return -errno;
		if (!(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE))
			return -ENOSYS;
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE,
			    0, 0))
			return -errno;
		x86_registered = 1;
	}
	x86_pagesize = img->pagesize;
	/* the handler knows this object's sites before any INT3 goes on one */
	if (!x86_obj_of(img, 1))
		return -ENOMEM;
	return x86_handler();
}

/* --- What each thread can take ------------------------------------------------ */

enum { X86_TASK_GONE = 1, X86_TASK_BLOCKS = 2 };

/*
 * What /proc says of thread tid: X86_TASK_GONE (no entry, or state Z or X:
 * it runs nowhere and will not answer: a zombie leader after pthread_exit,
 * a thread exiting), X86_TASK_BLOCKS (SIGTRAP in its blocked mask: an INT3
 * would kill the process, a question would never be answered), or 0.
 * From /proc/self/task/TID/stat: field 3 the state, field 32 the blocked
 * mask of the first 32 signals (SIGTRAP is one), cheaper to read than
 * status (which also counts the memory).
 */
static int x86_task(long tid)
{
	char path[64], buf[1024], *p;
	unsigned long long blocked;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return X86_TASK_GONE;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return X86_TASK_GONE;
	buf[len] = 0;
	if (!(p = strrchr(buf, ')')) || p[1] != ' ')
		return X86_TASK_BLOCKS;		/* unreadable: assume the worst */
	p += 2;
	if (*p == 'Z' || *p == 'X')
		return X86_TASK_GONE;
	for (int f = 3; f < 32 && p; f++)	/* p at field f: on to field 32 */
		if ((p = strchr(p, ' ')))
			p++;
	if (!p)
		return X86_TASK_BLOCKS;
	blocked = strtoull(p, NULL, 10);
	return blocked & X86_TRAP_BIT ? X86_TASK_BLOCKS : 0;
}

/*
 * Before a round stores its first INT3: 0 if every other live thread can
 * take SIGTRAP, -EDEADLK if one blocks it (a worker that leaves signals to
 * a sigwait thread, a handler running with SIGTRAP in its mask), -errno if
 * /proc cannot tell.  A mask changed after this look is the protocol's
 * stated limit (runtime/README.md).
 */
static int x86_threads_scan(void)
{
	long self = x86_gettid();
	struct dirent *de;
	int err = 0;
	DIR *d;

	if (!(d = opendir("/proc/self/task")))
		return -errno;
	while (!err && (de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid > 0 && tid != self && x86_task(tid) == X86_TASK_BLOCKS &&
		    !x86_in_handler((int32_t)tid))
			err = -EDEADLK;
	}
	closedir(d);
	return err;
}

/*
 * A mask blocked for a moment passes: a thread being created or exiting,
 * or one between the kernel's delivery of SIGTRAP and the first line of
 * our handler (or its last line and sigreturn), preempted there on a
 * loaded machine.  Look again for about 50 ms before refusing.
 */
static int x86_threads_ok(void)
{
	struct timespec nap = { 0, 250000 };
	int err;

	for (int i = 0; (err = x86_threads_scan()) == -EDEADLK && i < 80; i++) {
		if (i < 20) {
			syscall(SYS_sched_yield);	/* most windows last microseconds */
			continue;
		}
		nap.tv_nsec = i < 40 ? 250000 : 1000000;
		nanosleep(&nap, NULL);
	}
	if (err == -EDEADLK)
		X86_COUNT(refused_blocked, 1);
	return err;
}

/* --- Reclaiming retired slots ------------------------------------------------- */

/* Never-freed memory for what a late handler may still read. */
static void *x86_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int x86_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Ask every other thread where it stands; free the retired slots of ob's
 * room none is in.  Returns how many were freed (0 on any doubt).
 */
static uint32_t x86_reclaim(struct x86_obj *ob)
{
	static uint32_t seq;
	pid_t pid = getpid();
	int32_t self = (int32_t)x86_gettid();
	uint32_t n = 0, freed = 0, round;
	struct timespec t0, now, nap = { 0, 100000 };
	struct dirent *de;
	DIR *d;
	int ok = 1;

	if (!ob->nretired || x86_handler() || !(d = opendir("/proc/self/task")))
		return 0;
	X86_COUNT(reclaims, 1);
	while ((de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid <= 0 || tid == self)
			continue;
		/* one that runs nowhere (a zombie leader, a thread exiting) is not
		   asked; one that blocks SIGTRAP is, and answers once it unblocks
		   it (a handler with SIGTRAP in its mask) or the wait ends */
		if (x86_task(tid) == X86_TASK_GONE)
			continue;
		if (n == x86_rep_cap) {
			uint32_t cap = x86_rep_cap ? 2 * x86_rep_cap : 64;
			struct x86_reply *r = x86_map(cap * sizeof(*r));

			if (!r) {
				ok = 0;
				break;
			}
			if (n)
				memcpy(r, x86_rep, n * sizeof(*r));
			__atomic_store_n(&x86_rep, r, __ATOMIC_RELEASE);	/* the old one stays mapped */
			x86_rep_cap = cap;
		}
		x86_rep[n].tid = (int32_t)tid;
		x86_rep[n].done = 0;
		x86_rep[n].rip = 0;
		x86_rep[n].r11 = 0;
		n++;
	}
	closedir(d);
	if (!ok)
		return 0;
	if (++seq == 0)
		seq = 1;
	round = seq;
	__atomic_store_n(&x86_rep_n, n, __ATOMIC_RELEASE);
	__atomic_store_n(&x86_round, round, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < n; i++) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		si.si_signo = SIGTRAP;
		si.si_code = SI_QUEUE;
		si.si_pid = pid;
		si.si_uid = getuid();
		si.si_value.sival_ptr = (void *)(uintptr_t)(X86_MARKER << 32 | round);
		if (syscall(SYS_rt_tgsigqueueinfo, pid, x86_rep[i].tid, SIGTRAP, &si)) {
			if (errno != ESRCH) {
				ok = 0;
				break;
			}
			/* gone since we listed it: it runs nowhere */
			__atomic_store_n(&x86_rep[i].done, 1, __ATOMIC_RELEASE);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0, naps = 0; ok && i < n; ) {
		if (__atomic_load_n(&x86_rep[i].done, __ATOMIC_ACQUIRE)) {
			i++;
			continue;
		}
		/* a thread that exited (or became a zombie) since it was asked never
		   answers: every 10 naps, look whether it is still there */
		if (++naps % 10 == 0 && x86_task(x86_rep[i].tid) == X86_TASK_GONE) {
			x86_rep[i].rip = 0;
			__atomic_store_n(&x86_rep[i].done, 1, __ATOMIC_RELEASE);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) > X86_WAIT_NS) {
			X86_COUNT(reclaim_timeouts, 1);
			ok = 0;
			break;
		}
		nanosleep(&nap, NULL);
	}
	__atomic_store_n(&x86_round, 0, __ATOMIC_RELEASE);	/* late answers are dropped */
	if (!ok)
		return 0;
	/* keep the slots some thread is in; free the rest, the lowest on top */
	qsort(ob->retired, ob->nretired, sizeof(*ob->retired), x86_cmp_u32);
	for (uint32_t k = ob->nretired; k-- > 0; ) {
		uint32_t s = ob->retired[k];
		uint64_t lo = (uint64_t)(uintptr_t)x86_slot(ob, s), hi = lo + X86_SLOT;
		uint64_t cell = (uint64_t)(uintptr_t)&ob->cell[s];
		int busy = 0;

		/* in the slot, or at common's load with %r11 naming its cell */
		for (uint32_t i = 0; i < n && !busy; i++)
			busy = (x86_rep[i].rip >= lo && x86_rep[i].rip < hi) ||
			       (x86_rep[i].rip == (uint64_t)(uintptr_t)ob->base &&
				x86_rep[i].r11 == cell);
		if (busy) {
			X86_COUNT(reclaim_kept, 1);
			continue;
		}
		ob->retired[k] = ob->retired[--ob->nretired];
		ob->state[s] = SLOT_FREE;
		ob->free[ob->nfree++] = s;
		freed++;
	}
	/* the loop above pushed the highest first: the lowest is on top */
	X86_COUNT(slots_retired, -(uint64_t)freed);
	return freed;
}

/* --- The patcher interface ------------------------------------------------------ */

/* Can a CALL at every site reach t? */
static int x86_reaches_all(const struct ps_image *img, uint64_t t)
{
	uint64_t n = img->hdr->count;
	int64_t d1, d2;

	if (!n)
		return 1;
	d1 = (int64_t)(t - (img->sites[0].call + img->bias + 5));
	d2 = (int64_t)(t - (img->sites[n - 1].call + img->bias + 5));
	return d1 >= INT32_MIN && d1 <= INT32_MAX && d2 >= INT32_MIN && d2 <= INT32_MAX;
}

/*
 * The object of img was unloaded: the handler stops reading its site
 * table, its dormant sites are dropped and its room's bookkeeping and
 * cells go.  Its room served only its own sites, so no other object
 * calls into what is no longer mapped.
 */
void ps_arch_forget(const struct ps_image *img)
{
	struct x86_obj *ob = x86_obj_of(img, 0);
	size_t k = 0;

	if (!ob)
		return;
	__atomic_store_n(&ob->nsites, 0, __ATOMIC_RELEASE);
	for (size_t i = 0; i < x86_ndorm; i++)
		if (x86_dorm[i].ob != ob)
			x86_dorm[k++] = x86_dorm[i];
	x86_ndorm = k;
	x86_room_drop(ob);
}

/*
 * The runtime is about to be unloaded (trace -p, every thread seen out of
 * it and of the rooms): the cells go, unless a site still calls a slot
 * (used or dormant), whose `common` would load its cell.  The rooms'
 * bytes stay in their objects' segments; their bookkeeping is dropped
 * and made again at the next use (by this copy, or by a later one).
 */
int ps_arch_release(void)
{
	for (struct x86_obj *ob = x86_objs; ob; ob = ob->next)
		for (uint32_t i = 0; ob->base && i < ob->nslots; i++)
			if (ob->state[i] == SLOT_USED || ob->state[i] == SLOT_DORMANT)
				return -EBUSY;
	/* no thread in a room (the caller's word): set up again at next use */
	for (struct x86_obj *ob = x86_objs; ob; ob = ob->next)
		x86_room_drop(ob);
	x86_ndorm = 0;
	return 0;
}

int ps_arch_tramp_get(const struct ps_image *img, struct ps_reg *r)
{
	uint64_t dc = (uint64_t)(uintptr_t)r->ops->direct_call;
	uint8_t code[X86_SLOT], *slot;
	struct x86_obj *ob;
	uint32_t s;
	int err;

	if (dc && x86_reaches_all(img, dc)) {
		r->target = dc;
		r->arch = NULL;
		return 0;
	}
	/* the object's own room: within reach of each of its sites (embed checked) */
	if (!(ob = x86_obj_of(img, 1)))
		return -ENOMEM;
	if ((err = x86_room_init(ob)))
		return err;
	if (!ob->nfree && !x86_reclaim(ob))
		return -ENOMEM;
	s = ob->free[--ob->nfree];
	slot = x86_slot(ob, s);
	memset(code, X86_INT3, sizeof(code));
	if (dc) {
		static const uint8_t jmp[6] = { 0xff, 0x25, 0, 0, 0, 0 };	/* jmp *0(%rip) */

		memcpy(code, jmp, sizeof(jmp));
		memcpy(code + 6, &dc, 8);
	} else {
		uint64_t cell = (uint64_t)(uintptr_t)&ob->cell[s];
		int32_t rel = (int32_t)((int64_t)(uintptr_t)ob->base - (int64_t)(uintptr_t)(slot + 15));

		/* the cell first: no site calls the slot before this batch */
		__atomic_store_n(&ob->cell[s], r->ops, __ATOMIC_RELEASE);
		code[0] = 0x49, code[1] = 0xbb;		/* movabs $cell, %r11 */
		memcpy(code + 2, &cell, 8);
		code[10] = 0xe9;			/* jmp rel32 common */
		memcpy(code + 11, &rel, 4);
	}
	if ((err = x86_text_write(slot, code, sizeof(code)))) {
		ob->nfree++;
		return err;
	}
	ob->state[s] = SLOT_USED;
	X86_COUNT(slots_used, 1);
	r->target = (uint64_t)(uintptr_t)slot;
	r->arch = (void *)(uintptr_t)(s + 1);
	return 0;
}

void ps_arch_tramp_put(const struct ps_image *img, struct ps_reg *r)
{
	struct x86_obj *ob;
	uint32_t s;

	if (!r->arch)
		return;
	s = (uint32_t)((uintptr_t)r->arch - 1);
	r->arch = NULL;
	X86_COUNT(slots_used, -(uint64_t)1);
	if (!(ob = x86_obj_of(img, 0)) || !ob->base)
		return;		/* its room was released: nothing to keep */
	if (ob->state[s] == SLOT_DORMANT) {
		/* sites still call it: retired by the round that puts their NOPs back */
		X86_COUNT(slots_dormant, 1);
		return;
	}
	ob->state[s] = SLOT_RETIRED;
	ob->retired[ob->nretired++] = s;
	X86_COUNT(slots_retired, 1);
}

/* The CALL rel32 at runtime address a to slot s of ob's room, as 5 little-endian bytes. */
static uint64_t x86_call_bytes(const struct x86_obj *ob, uint64_t a, uint32_t s)
{
	int32_t rel = (int32_t)((int64_t)(uintptr_t)x86_slot(ob, s) - (int64_t)(a + 5));

	return X86_CALL | (uint64_t)(uint32_t)rel << 8;
}

static uint64_t x86_site_bytes(uint64_t a)
{
	uint64_t v = 0;

	memcpy(&v, (const void *)(uintptr_t)a, 5);
	return v;
}

int ps_arch_dormant(const struct ps_image *img, struct ps_reg *const *regs, size_t nregs,
		    const struct ps_write *w, size_t n)
{
	struct x86_obj *ob = x86_obj_of(img, 0);
	size_t add = 0;

	/* every one a slot of this object's room with a cell (a direct call,
	   even through a slot's `jmp *`, has none: a NULL cell would not stop it) */
	if (!ob || !ob->base)
		return -EDEADLK;
	for (size_t k = 0; k < nregs; k++) {
		uintptr_t a = (uintptr_t)regs[k]->arch;

		if (!a || regs[k]->ops->direct_call || a - 1 >= ob->nslots ||
		    ob->state[a - 1] != SLOT_USED ||
		    regs[k]->target != (uint64_t)(uintptr_t)x86_slot(ob, (uint32_t)(a - 1)))
			return -EDEADLK;
	}
	if (x86_ndorm + n > x86_dorm_cap) {
		size_t cap = 2 * x86_dorm_cap > x86_ndorm + n ? 2 * x86_dorm_cap : x86_ndorm + n + 64;
		struct x86_dorm *d = realloc(x86_dorm, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		x86_dorm = d;
		x86_dorm_cap = cap;
	}
	/* the sites that call them now: the NOPs a later round puts back */
	for (size_t i = 0; i < n; i++) {
		uint64_t a = w[i].site->call + img->bias, now = x86_site_bytes(a);

		for (size_t k = 0; k < nregs; k++) {
			uint32_t s = (uint32_t)((uintptr_t)regs[k]->arch - 1);

			if (now == x86_call_bytes(ob, a, s)) {
				x86_dorm[x86_ndorm + add++] = (struct x86_dorm){ ob, a, s, 0 };
				break;
			}
		}
	}
	/* a slot no site calls (none did) is retired as usual by tramp_put */
	for (size_t j = x86_ndorm; j < x86_ndorm + add; j++)
		ob->state[x86_dorm[j].slot] = SLOT_DORMANT;
	x86_ndorm += add;
	/* the data stores that take the ops off: every later load in common
	   reads NULL (sequentially consistent: visible before we return) */
	for (size_t k = 0; k < nregs; k++)
		__atomic_store_n(&ob->cell[(uintptr_t)regs[k]->arch - 1], NULL, __ATOMIC_SEQ_CST);
	X86_COUNT(dormant_detaches, 1);
	return 0;
}

static int x86_cmp_ent(const void *a, const void *b)
{
	uint64_t x = ((const struct x86_ent *)a)->addr, y = ((const struct x86_ent *)b)->addr;

	return x < y ? -1 : x > y;
}


/* The pages of the dormant sites a round writes: writable (and executable), or R+X again. */
static int x86_dormant_open(size_t i)
{
	uintptr_t pm = x86_pagesize - 1, a = x86_dorm[i].addr & ~pm;
	uintptr_t b = (x86_dorm[i].addr + 5 + pm) & ~pm;

	if (mprotect((void *)a, b - a, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -errno;
	x86_dorm[i].open = 1;
	return 0;
}

static int x86_dormant_close(void)
{
	int err = 0;

	for (size_t i = 0; i < x86_ndorm; i++) {
		uintptr_t pm = x86_pagesize - 1, a = x86_dorm[i].addr & ~pm;
		uintptr_t b = (x86_dorm[i].addr + 5 + pm) & ~pm;

		if (!x86_dorm[i].open)
			continue;
		x86_dorm[i].open = 0;
		if (mprotect((void *)a, b - a, PROT_READ | PROT_EXEC) && !err)
			err = -errno;
	}
	return err;
}

/* A round put every dormant site's NOP back (or found it changed): retire the slots. */
static void x86_dormant_done(void)
{
	for (size_t i = 0; i < x86_ndorm; i++) {
		struct x86_obj *ob = x86_dorm[i].ob;
		uint32_t s = x86_dorm[i].slot;

		if (ob->state[s] != SLOT_DORMANT)
			continue;
		ob->state[s] = SLOT_RETIRED;
		ob->retired[ob->nretired++] = s;
		X86_COUNT(slots_dormant, -(uint64_t)1);
		X86_COUNT(slots_retired, 1);
		X86_COUNT(dormant_cleanups, 1);
	}
	x86_ndorm = 0;
}

int ps_arch_encode(const struct ps_image *img, const struct ps_site *s, uint64_t target,
		   uint8_t *call)
{
	int64_t d;
	int32_t rel;

	if (!target) {
		memcpy(call, x86_nop5, sizeof(x86_nop5));
		return 0;
	}
	d = (int64_t)(target - (s->call + img->bias + 5));
	if (d < INT32_MIN || d > INT32_MAX)
		return -ERANGE;
	rel = (int32_t)d;
	call[0] = X86_CALL;
	memcpy(call + 1, &rel, 4);
	return 0;
}

/* One sync of the protocol: 0, or -errno (a seccomp filter may deny it after registration). */
static int x86_sync(int step)
{
	int err = 0;

	if (!syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0))
		X86_COUNT(syncs, 1);
	else
		err = errno ? -errno : -EIO;
	if (ps_arch_test_hook)
		ps_arch_test_hook(step);
	return err;
}

/*
 * A sync failed after INT3 went on the m sites of b (and their tails, if
 * `tails`): the round goes back.  The handler's copy gets the old bytes
 * first (a thread meeting an INT3 now emulates the old instruction), then
 * the old tails go back under the INT3s, then the old first bytes.
 */
static void x86_back(struct x86_batch *b, size_t m, int tails)
{
	__atomic_store_n(&x86_gen, x86_gen + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (size_t i = 0; i < m; i++)
		__atomic_store_n(&b->e[i].bytes, b->e[i].old, __ATOMIC_RELAXED);
	__atomic_store_n(&x86_gen, x86_gen + 1, __ATOMIC_RELEASE);
	for (size_t i = 0; tails && i < m; i++) {
		uint8_t *p = (uint8_t *)(uintptr_t)b->e[i].addr;

		for (int k = 1; k < 5; k++)
			__atomic_store_n(p + k, (uint8_t)(b->e[i].old >> (8 * k)), __ATOMIC_RELAXED);
	}
	for (size_t i = 0; i < m; i++)
		__atomic_store_n((uint8_t *)(uintptr_t)b->e[i].addr, (uint8_t)b->e[i].old,
				 __ATOMIC_RELAXED);
	X86_COUNT(rounds_back, 1);
}

void ps_arch_fork_child(void)
{
	/* the parent's reclaim round (none is open: the core held its lock) and
	   its threads' answers are not the child's */
	__atomic_store_n(&x86_round, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&x86_rep_n, 0, __ATOMIC_RELEASE);
	/* a parent thread inside sigaction() below is not the child's */
	__atomic_store_n(&x86_prev_busy, 0, __ATOMIC_RELEASE);
}

/* ps_arch_publish's round; *cleaned: the dormant sites' NOPs are back. */
static int x86_publish(const struct ps_image *img, const struct ps_write *w, size_t n,
		       int *cleaned)
{
	struct x86_batch *b = x86_cur;
	size_t m = 0, mine, want = n + x86_ndorm;
	int err, shut = 0;	/* shut: a dormant site's page could not be opened */

	*cleaned = 0;
	if ((err = x86_setup(img)))
		return err;
	if (!b || b->cap < want) {
		size_t cap = b && 2 * b->cap > want ? 2 * b->cap : (want < 256 ? 256 : want);

		if (!(b = x86_map(sizeof(*b) + cap * sizeof(b->e[0]))))
			return -ENOMEM;
		b->cap = cap;
	}
	/* the copy the handler reads: sites whose bytes change, sorted */
	__atomic_store_n(&x86_gen, x86_gen + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&x86_cur, b, __ATOMIC_RELAXED);	/* a smaller one stays mapped */
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = (uint8_t *)(uintptr_t)(w[i].site->call + img->bias);
		uint64_t bytes = 0;

		uint64_t old = 0;

		if (!memcmp(p, w[i].call, 5))
			continue;
		memcpy(&bytes, w[i].call, 5);
		memcpy(&old, p, 5);
		__atomic_store_n(&b->e[m].addr, (uint64_t)(uintptr_t)p, __ATOMIC_RELAXED);
		__atomic_store_n(&b->e[m].bytes, bytes, __ATOMIC_RELAXED);
		b->e[m].old = old;
		m++;
	}
	/* the sites still calling a dormant slot get their NOPs back (their
	   pages are not among the core's runs: made writable here), unless
	   this batch writes them anyway; with a page that cannot be made
	   writable, none is cleaned this time */
	mine = m;
	for (size_t i = 0; i < x86_ndorm; i++) {
		uint64_t a = x86_dorm[i].addr, now = x86_site_bytes(a), nop = 0;

		if (now != x86_call_bytes(x86_dorm[i].ob, a, x86_dorm[i].slot) ||
		    x86_ent_find(b->e, mine, a) < mine)
			continue;
		if (x86_dormant_open(i)) {
			m = mine;
			shut = 1;
			break;
		}
		memcpy(&nop, x86_nop5, 5);
		__atomic_store_n(&b->e[m].addr, a, __ATOMIC_RELAXED);
		__atomic_store_n(&b->e[m].bytes, nop, __ATOMIC_RELAXED);
		b->e[m].old = now;
		m++;
	}
	if (m > mine)
		qsort(b->e, m, sizeof(b->e[0]), x86_cmp_ent);
	__atomic_store_n(&b->n, m, __ATOMIC_RELAXED);
	__atomic_store_n(&x86_gen, x86_gen + 1, __ATOMIC_RELEASE);
	if (!m) {
		*cleaned = !shut;	/* no site calls a dormant slot any more */
		return 0;
	}
	/* every other thread must be able to take an INT3, or nothing is stored;
	   with only dormant sites to clean, that waits for a later round */
	if ((err = x86_threads_ok()))
		return mine ? err : 0;
	X86_COUNT(batches, 1);
	for (size_t i = 0; i < m; i++)
		__atomic_store_n((uint8_t *)(uintptr_t)b->e[i].addr, X86_INT3, __ATOMIC_RELAXED);
	if ((err = x86_sync(1))) {
		x86_back(b, m, 0);
		return err;
	}
	for (size_t i = 0; i < m; i++) {
		uint8_t *p = (uint8_t *)(uintptr_t)b->e[i].addr;
		uint64_t bytes = b->e[i].bytes;

		for (int k = 1; k < 5; k++)
			__atomic_store_n(p + k, (uint8_t)(bytes >> (8 * k)), __ATOMIC_RELAXED);
	}
	if ((err = x86_sync(2))) {
		x86_back(b, m, 1);
		return err;
	}
	for (size_t i = 0; i < m; i++)
		__atomic_store_n((uint8_t *)(uintptr_t)b->e[i].addr, (uint8_t)b->e[i].bytes,
				 __ATOMIC_RELAXED);
	/* the new instructions are whole: a failed last sync only leaves a core
	   that may still meet an INT3, which the handler re-executes */
	x86_sync(3);
	*cleaned = !shut;
	return 0;
}

int ps_arch_publish(const struct ps_image *img, const struct ps_write *w, size_t n,
		    int enable, const struct ps_run *runs, size_t nruns)
{
	int cleaned, err;

	(void)enable, (void)runs, (void)nruns;	/* no literal: one order both ways */
	err = x86_publish(img, w, n, &cleaned);
	/* R+X again; a page mprotect leaves writable changes no byte: the
	   round's result stands */
	x86_dormant_close();
	if (cleaned)
		x86_dormant_done();
	return err;
}
