/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracer.c - libpatchsite-trace.so, a ready tracer for programs that
 * `patchsite embed` has prepared: LD_PRELOAD it, name the functions in the
 * environment, read per-function call counts and times at exit.
 *
 *   PATCHSITE_TRACE=glob[,glob...]   functions to trace, by name (fnmatch)
 *   PATCHSITE_TRACE_OUT=file         where the table goes (default stderr;
 *                                    %p in the name is the process id)
 *   PATCHSITE_TRACE_FORMAT=text|tsv|json
 *   PATCHSITE_TRACE_SIGNAL=SIGUSR2   dump the table on that signal too
 *   PATCHSITE_TRACE_CTL=fifo         commands while the program runs:
 *                                    attach GLOBS, detach [GLOBS], dump, reset
 *   PATCHSITE_TRACE_TIME=off         counts only, no return hook
 *   PATCHSITE_TRACE_RECORD=DIR       record mode (`patchsite trace`): the
 *                                    entry and exit of every call into
 *                                    per-thread rings (record.c), no table
 *   PATCHSITE_TRACE_BUFSIZE=N        records per ring
 *
 * Built on the runtime's public API only (callops.h), for every
 * architecture the runtime has a patcher for: the one piece that is not
 * C is the return stub below, one short block per architecture.
 *
 * Names come from the file of each embedded object loaded at start (the
 * program's /proc/self/exe, a shared library's path; ps_objects), .symtab
 * or else .dynsym, read by the small ELF64 reader here (no libelf in the
 * traced process); a function is traceable if it is one of the runtime's
 * sites (ps_function(i)) and has a name.  Embedded libraries dlopen()ed
 * later are added when they load (late_add) and traced by the globs in
 * force; in record mode each library, at start or later, is listed in
 * funcs.txt (its file and load bias) with its functions, so that the
 * records name them.
 *
 * Time per call: the entry callback (on_entry, the ops' func) replaces the
 * traced function's return address (ps_regs_return_slot) with the address
 * of return stub k, k being the depth on this thread's shadow stack, where
 * it keeps the real return address and the entry time.  Stub k enters
 * trace_exit(k), which takes entry k, adds the time and gives back the real
 * return address, and the stub returns there with the traced function's
 * return registers as they were.  Because each depth has its own stub, a
 * return always finds its own entry, even when frames above it were left
 * by longjmp: entries above k are dropped then, and an entry whose frame
 * lies below the stack pointer of a new call (a frame that longjmp left) is
 * dropped when that call is pushed.  Time is wall time while the function
 * is on the thread's stack: a recursive call inside an activation of the
 * same function is counted but adds no time (no double counting), so a
 * function's total never exceeds the time its threads ran.  When the shadow
 * stack is full (TRACE_DEPTH entries) a call is counted, not timed.
 *
 * Signals: a signal handler runs on the interrupted thread and may call
 * traced functions, in the middle of the entry hook or of trace_exit.
 * Both mark the thread's shadow stack busy (`building`: the frame of the
 * call whose record they write or take) for as long as they change it; a call that finds
 * it busy is a handler's call nested in that work: counted, not timed, the
 * shadow stack left to the interrupted hook.  A busy mark whose frame lies
 * at or below the new call's frame (within STALE_SPAN) was left by a
 * siglongjmp out of the handler and is dropped.
 *
 * fork: pthread_atfork takes the control lock around fork (a command in
 * progress finishes first; 2 s at most), and the child starts its own counts (the
 * activations open at the fork counted once), closes its copies of the
 * FIFO and the signal pipe (the parent's control thread stays the one
 * reader) and writes its own table at exit.
 *
 * Descriptors: the output file, the FIFO and the signal pipe are opened
 * O_CLOEXEC and moved to high numbers (below 1024 and the descriptor
 * limit), and each is known by its device and inode.  A program that
 * closes them (closefrom, close_range) and reuses the numbers is detected
 * before the tracer writes or reads: the output file is re-opened by name
 * (appending), the FIFO re-opened, the pipe made anew; the control thread
 * wakes once a second to check, so it never spins on a closed descriptor.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "callops.h"
#include "record.h"

#define TRACE_DEPTH 512		/* shadow-stack entries per thread (and stubs) */
#define HIDDEN __attribute__((visibility("hidden")))
#define PFX "patchsite-trace: "

/* --- State ------------------------------------------------------------- */

struct fn {
	uintptr_t addr;		/* ps_function(i) */
	const char *name;	/* NULL: no symbol at that address */
	uint64_t calls;		/* atomics */
	uint64_t timed;
	uint64_t total_ns;
	int attached;		/* by this tracer (under ctl_lock) */
	int selected;		/* scratch of set_attached (under ctl_lock) */
	int gone;		/* its library was unloaded (under ctl_lock) */
};

/*
 * fns[0..nstart): the functions of the objects loaded at start, sorted by
 * address; then, up to fcap, those of each library dlopen()ed later (a
 * struct late each, sorted inside).  Entries are never moved or freed: the
 * hot path reads them without a lock; nfns and nlate are published after
 * the entries they cover.
 */
#define TRACE_SPARE 65536	/* room for the functions of libraries dlopen()ed later */
#define TRACE_LATE 256		/* libraries dlopen()ed later */
struct late {
	long lo, n;		/* fns[lo..lo+n) */
	uintptr_t bias, first, last;
	int gone;		/* unloaded (atomics) */
};
static struct late late[TRACE_LATE];
static int nlate;		/* atomics */
static long nstart, fcap;
static uintptr_t *start_bias;	/* the objects loaded at start */
static const char **start_name;	/* their files ("": the program) */
static long nstart_obj;
static char *force;		/* the globs attached so far: a dlopen()ed library gets them */

static struct fn *fns;		/* one per site, sorted by address */
static const char *prog_name(void);
static char *names_buf;		/* their names */
static long nfns;
static long nnamed;		/* sites with a name */
static const char *names_from;	/* ".symtab" or ".dynsym" */
static int timing = 1;
static int recording;		/* PATCHSITE_TRACE_RECORD: records, not the table */
static int out_fd = 2;
static int msg_fd = 2;		/* messages (patchsite trace -p: a file it relays) */
#ifdef TRACE_ATTACH
static char *attach_conf;	/* patchsite_trace_attach's configuration, split */
static struct sigaction trap_before;	/* SIGTRAP's disposition before the attach */
#endif
static enum { FMT_TEXT, FMT_TSV, FMT_JSON } format;
static int dump_sig;
static int sig_pipe[2] = { -1, -1 };	/* [1] read by the signal handler: atomics */
static int ctl_fd = -1;
static const char *ctl_path;
static pid_t ctl_made;		/* the process that created the FIFO (it removes it at exit) */
static int active;		/* the constructor finished and attached (or waits for ctl) */
static int starting;		/* in the constructor: a message means nothing is traced */
static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static int dump_pending;	/* the dump signal came (atomics) */

/* a descriptor of the tracer's own, known by what it is open on: the
   program may close the number and open something else there */
struct own_fd {
	dev_t dev;
	ino_t ino;
};
static struct own_fd out_id, ctl_id, pipe_id[2];
static char *out_path;		/* PATCHSITE_TRACE_OUT with %p expanded (re-opened by it) */
static const char *out_pattern;	/* PATCHSITE_TRACE_OUT as given */
static pid_t out_pid;		/* the process out_path was expanded for */

#define CTL_LINE_MAX 4095	/* longest control line, its newline not counted */

struct shadow_ent {
	uint64_t ret;		/* the real return address */
	uint64_t t0;		/* entry time, ns */
	uintptr_t key;		/* where its return address lies: where the call stood */
	uint32_t fn;		/* index into fns */
	uint32_t nested;	/* 1: an outer activation of the same function is live;
				   2: its entry was recorded (record.c): its exit is owed */
};

struct shadow {
	unsigned depth;
	uintptr_t building;	/* nonzero: the entry hook or trace_exit is changing
				   this shadow stack (the key of the call's record) */
	struct shadow_ent e[TRACE_DEPTH];
};

/* initial-exec when preloaded (static TLS, no call on the hot path); the
   -p build (TRACE_ATTACH), dlopen'ed into a running program where static
   TLS has no room for it, counts only and never touches it */
#ifdef TRACE_ATTACH
#define TRACE_TLS_MODEL "global-dynamic"
#else
#define TRACE_TLS_MODEL "initial-exec"
#endif
static __thread struct shadow shadow __attribute__((tls_model(TRACE_TLS_MODEL)));

/* the return stubs (asm below): stub k is at trace_stubs + k * STUB_SIZE */
extern const char trace_stubs[] HIDDEN;
HIDDEN uint64_t trace_exit(unsigned k);

/* --- The return stubs, one block per architecture ----------------------- */

/*
 * Stub k puts k in a scratch register and jumps to the common part, which
 * saves the return registers, calls trace_exit(k) for the real return
 * address, restores them and returns there.  Entered by the traced
 * function's own return, with the stack pointer where its caller had it.
 */
#if defined(__aarch64__)
#define STUB_SIZE 8
/* x0-x7 and q0-q7 may hold the return value (HFA/HVA, x8 is not kept on
   return); entered by RET, left by RET x16: no BTI landing pad needed */
__asm__(".text\n"
	".balign 16\n"
	".globl trace_stubs\n"
	".hidden trace_stubs\n"
	".type trace_stubs, %function\n"
	"trace_stubs:\n"
	".set trace_k, 0\n"
	".rept " "512" "\n"
	"	mov x16, #trace_k\n"
	"	b trace_stub_common\n"
	".set trace_k, trace_k + 1\n"
	".endr\n"
	"trace_stub_common:\n"
	"	sub sp, sp, #208\n"
	"	stp x29, x30, [sp, #0]\n"
	"	stp x0, x1, [sp, #16]\n"
	"	stp x2, x3, [sp, #32]\n"
	"	stp x4, x5, [sp, #48]\n"
	"	stp x6, x7, [sp, #64]\n"
	"	stp q0, q1, [sp, #80]\n"
	"	stp q2, q3, [sp, #112]\n"
	"	stp q4, q5, [sp, #144]\n"
	"	stp q6, q7, [sp, #176]\n"
	"	mov x29, sp\n"
	"	mov w0, w16\n"
	"	bl trace_exit\n"
	"	mov x16, x0\n"
	"	ldp q6, q7, [sp, #176]\n"
	"	ldp q4, q5, [sp, #144]\n"
	"	ldp q2, q3, [sp, #112]\n"
	"	ldp q0, q1, [sp, #80]\n"
	"	ldp x6, x7, [sp, #64]\n"
	"	ldp x4, x5, [sp, #48]\n"
	"	ldp x2, x3, [sp, #32]\n"
	"	ldp x0, x1, [sp, #16]\n"
	"	ldp x29, x30, [sp, #0]\n"
	"	add sp, sp, #208\n"
	"	ret x16\n"
	".size trace_stubs, . - trace_stubs\n");
#elif defined(__x86_64__)
#define STUB_SIZE 16
/* rax, rdx, xmm0 and xmm1 may hold the return value; st(0) (long double)
   is left alone: trace_exit does not touch the x87 stack.  Entered by the
   traced function's RET with %rsp as before its call: 16-byte aligned by
   the ABI, but GCC's -pg code calls a leaf without aligning (a function
   that makes no frame calls straight on), so the stub aligns it itself. */
__asm__(".text\n"
	".balign 16\n"
	".globl trace_stubs\n"
	".hidden trace_stubs\n"
	".type trace_stubs, @function\n"
	"trace_stubs:\n"
	".set trace_k, 0\n"
	".rept " "512" "\n"
	"	.balign 16\n"
	"	movl $trace_k, %r11d\n"
	"	jmp trace_stub_common\n"
	".set trace_k, trace_k + 1\n"
	".endr\n"
	"	.balign 16\n"
	"trace_stub_common:\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	andq $-16, %rsp\n"
	"	pushq %rax\n"
	"	pushq %rdx\n"
	"	subq $32, %rsp\n"
	"	movdqu %xmm0, 0(%rsp)\n"
	"	movdqu %xmm1, 16(%rsp)\n"
	"	movl %r11d, %edi\n"
	"	call trace_exit\n"
	"	movq %rax, %r11\n"
	"	movdqu 0(%rsp), %xmm0\n"
	"	movdqu 16(%rsp), %xmm1\n"
	"	addq $32, %rsp\n"
	"	popq %rdx\n"
	"	popq %rax\n"
	"	movq %rbp, %rsp\n"
	"	popq %rbp\n"
	"	jmp *%r11\n"
	".size trace_stubs, . - trace_stubs\n");
#elif defined(__riscv) && __riscv_xlen == 64
#define STUB_SIZE 8
/* a0, a1, fa0 and fa1 may hold the return value; entered by the traced
   function's `ret` with sp as its caller had it (16-byte aligned); norvc
   keeps every stub two 4-byte instructions */
__asm__(".text\n"
	".option push\n"
	".option norvc\n"
	".balign 16\n"
	".globl trace_stubs\n"
	".hidden trace_stubs\n"
	".type trace_stubs, @function\n"
	"trace_stubs:\n"
	".set trace_k, 0\n"
	".rept " "512" "\n"
	"	addi t1, zero, trace_k\n"
	"	j trace_stub_common\n"
	".set trace_k, trace_k + 1\n"
	".endr\n"
	"trace_stub_common:\n"
	"	addi sp, sp, -48\n"
	"	sd a0, 0(sp)\n"
	"	sd a1, 8(sp)\n"
	"	fsd fa0, 16(sp)\n"
	"	fsd fa1, 24(sp)\n"
	"	sd s0, 32(sp)\n"
	"	addi s0, sp, 48\n"
	"	mv a0, t1\n"
	"	call trace_exit\n"
	"	mv t1, a0\n"
	"	ld a0, 0(sp)\n"
	"	ld a1, 8(sp)\n"
	"	fld fa0, 16(sp)\n"
	"	fld fa1, 24(sp)\n"
	"	ld s0, 32(sp)\n"
	"	addi sp, sp, 48\n"
	"	jr t1\n"
	".size trace_stubs, . - trace_stubs\n"
	".option pop\n");
#else
#error "libpatchsite-trace: no return stub for this architecture (arm64, x86_64, riscv64)"
#endif

_Static_assert(TRACE_DEPTH == 512, "the stubs' .rept count is TRACE_DEPTH");

/* --- The hot path: entry callback and return -------------------------- */

static inline uint64_t PS_NOTRACE now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The functions of the objects loaded at start, fns[0, nstart), hashed by
 * address (open addressing, at most half full): the entry callback's
 * lookup of a call's function in one or two probes (a binary search over
 * 2,000 functions took half the counting path's time,
 * bench/tracer/debian.sh).  Built once at start, before any site is
 * attached, never changed while one is; libraries dlopen()ed later are
 * searched in their own runs.
 */
static inline size_t PS_NOTRACE site_hash(uintptr_t a)
{
	return (size_t)(((uint64_t)a >> 2) * 0x9e3779b97f4a7c15ull >> 20);
}

struct site_slot {
	uintptr_t addr;
	long i;			/* -1: empty */
};

static inline long PS_NOTRACE site_lookup(const struct site_slot *hash, size_t hmask, uintptr_t a)
{
	for (size_t h = site_hash(a) & hmask; hash[h].i >= 0; h = (h + 1) & hmask)
		if (hash[h].addr == a)
			return hash[h].i;
	return -ENOENT;
}

static struct site_slot *fn_hash;
static size_t fn_hmask;

/* fns[lo, hi) hashed by address, at most half full (*hmask: its size - 1);
   NULL when out of memory */
static struct site_slot *sites_hashed(long lo, long hi, size_t *hmask)
{
	struct site_slot *hash;
	size_t m = 15;

	while (m + 1 < 2 * (size_t)(hi - lo))
		m = m * 2 + 1;
	if (!(hash = malloc((m + 1) * sizeof(*hash))))
		return NULL;
	memset(hash, 0xff, (m + 1) * sizeof(*hash));
	for (long i = lo; i < hi; i++) {
		size_t h = site_hash(fns[i].addr) & m;

		while (hash[h].i >= 0)
			h = (h + 1) & m;
		hash[h].addr = fns[i].addr;
		hash[h].i = i;
	}
	*hmask = m;
	return hash;
}

static int fn_hash_build(void)
{
	fn_hash = sites_hashed(0, nstart, &fn_hmask);
	return fn_hash ? 0 : -ENOMEM;
}

static long PS_NOTRACE find_in(uintptr_t ip, long lo, long end)
{
	long hi = end;

	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;

		if (fns[mid].addr < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < end && fns[lo].addr == ip ? lo : -1;
}

static long PS_NOTRACE find_fn(uintptr_t ip)
{
	long i = fn_hash ? site_lookup(fn_hash, fn_hmask, ip) : find_in(ip, 0, nstart);

	if (i >= 0)
		return i;
	/* the libraries dlopen()ed later, the newest first */
	for (int k = __atomic_load_n(&nlate, __ATOMIC_ACQUIRE) - 1; k >= 0; k--) {
		struct late *l = &late[k];

		if (ip < l->first || ip > l->last || __atomic_load_n(&l->gone, __ATOMIC_RELAXED))
			continue;
		return find_in(ip, l->lo, l->lo + l->n);
	}
	return -1;
}

/* record mode: the entries above depth d are gone (longjmp, or a tail call
   returning through several stubs): the exits of those recorded, innermost
   first, stamped now; the thread's shadow stack is marked busy */
static void PS_NOTRACE rec_left(struct shadow *s, unsigned d)
{
	for (unsigned j = s->depth; j > d && j <= TRACE_DEPTH; j--) {
		if (s->e[j - 1].nested & 2)
			trace_rec_exit(s->e[j - 1].fn, j - 1);
		else
			trace_rec_unrecorded_gone(j - 1);
		s->e[j - 1].nested &= ~2u;
	}
}

/* a frame left by longjmp lies below a new call's frame, but not far below
   (a signal handler on an alternate stack is far from the thread's stack) */
#define STALE_SPAN (1u << 20)

static void PS_NOTRACE on_entry(unsigned long ip, unsigned long parent_ip, struct ps_ops *ops,
				void *regs)
{
	long i = find_fn(ip);
	struct shadow *s;
	uint64_t *slot;
	/* the key is where the return address lies: on x86_64 the stack slot
	   itself, which moves with every nested call, where the trampoline's
	   frame (aligned down to 16) may not: a leaf called without a frame
	   of its caller's own has the same trampoline frame as its caller */
	uintptr_t key = (uintptr_t)ps_regs_return_slot(regs), b;
	unsigned d, nested = 0;

	(void)ops;
	if (i < 0)
		return;
	if (!recording)
		__atomic_fetch_add(&fns[i].calls, 1, __ATOMIC_RELAXED);
	if (!timing)
		return;
	s = &shadow;
	b = s->building;
	if (b && !(b <= key && key - b < STALE_SPAN)) {
		/* a signal handler's call inside the hook: counted, not timed
		   (record mode: not recorded, counted as dropped) */
		if (recording)
			trace_rec_busy_drop();
		return;
	}
	s->building = key;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	d = s->depth;
	if (parent_ip - (uintptr_t)trace_stubs < (uintptr_t)d * STUB_SIZE) {
		/* a tail call from a timed function (its return slot holds stub
		   j): entry j is live, any above it were left by longjmp */
		d = (unsigned)((parent_ip - (uintptr_t)trace_stubs) / STUB_SIZE) + 1;
	} else {
		/* frames at or below this call's frame are gone (longjmp) */
		while (d > 0 && s->e[d - 1].key <= key && key - s->e[d - 1].key < STALE_SPAN)
			d--;
	}
	if (recording) {
		/* the calls longjmp left: their exits, now (innermost first);
		   tested here, the call is for longjmp alone */
		if (s->depth > d)
			rec_left(s, d);
		s->depth = d;
		if (d >= TRACE_DEPTH) {
			trace_rec_too_deep();
			goto done;
		}
	}
	if (d >= TRACE_DEPTH) {
		s->depth = d;
		goto done;	/* counted, not timed */
	}
	slot = ps_regs_return_slot(regs);
	if (*slot != parent_ip)
		goto done;	/* not the frame the header describes: leave it */
	for (unsigned j = 0; j < d && !recording; j++)	/* record mode: not needed */
		if (s->e[j].fn == (uint32_t)i) {
			nested = 1;
			break;
		}
	s->e[d].ret = parent_ip;
	s->e[d].key = key;
	s->e[d].fn = (uint32_t)i;
	if (recording && __atomic_load_n(&trace_recording, __ATOMIC_RELAXED) &&
	    trace_rec_entry((uint32_t)i, d))
		nested |= 2;
	s->e[d].nested = nested;
	s->e[d].t0 = recording ? 0 : now_ns();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->depth = d + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*slot = (uint64_t)(uintptr_t)(trace_stubs + (size_t)d * STUB_SIZE);
done:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->building = 0;
}

HIDDEN uint64_t PS_NOTRACE trace_exit(unsigned k)
{
	struct shadow *s = &shadow;
	struct shadow_ent e;
	uint64_t t;

	/* busy, marked with the returning call's frame: a handler's call
	   nested here lies below it, a call after a siglongjmp out of that
	   handler at or above it */
	s->building = s->e[k].key;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e = s->e[k];
	if (recording) {
		if (s->depth > k + 1)
			rec_left(s, k + 1);	/* above k: left by longjmp */
		if (e.nested & 2)
			trace_rec_exit(e.fn, k);
		else
			trace_rec_unrecorded_gone(k);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		s->depth = k;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		s->building = 0;
		return e.ret;
	}
	t = now_ns();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->depth = k;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->building = 0;
	__atomic_fetch_add(&fns[e.fn].timed, 1, __ATOMIC_RELAXED);
	if (!(e.nested & 1))
		__atomic_fetch_add(&fns[e.fn].total_ns, t - e.t0, __ATOMIC_RELAXED);
	return e.ret;
}

static struct ps_ops trace_ops = { on_entry, NULL, NULL };

/* --- Counts only: the sites call a counter, not the trampoline ---------- */

/*
 * With PATCHSITE_TRACE_TIME=off (counts, no return hook) on x86_64, the
 * program's own functions (the object loaded first, which is never
 * unloaded) are attached with count_ops, whose direct_call is count_stub:
 * each site calls it instead of the save-and-call path (callops.h's
 * direct-call convention, arch/x86_64.h: only %r11 is scratch), and it
 * adds one to the function's counter in count_tab, found by where the body
 * resumes ((resume - count_lo) >> 2: two sites are at least 6 bytes apart,
 * a 5-byte call and the shortest body), and returns into the body.  No
 * register is saved and nothing is looked up: bench/RESULTS.md, "Two
 * programs from Debian's sources", has what that saves.  Libraries keep
 * trace_ops (on_entry).  count_lo, count_span and count_tab are set before
 * count_ops is first attached and never change while a site calls it; the
 * table is anonymous memory, touched only where a function is called.
 * What it costs: a detach of count_ops while a thread blocks SIGTRAP is
 * refused (-EDEADLK, nothing changed): a direct call has no cell to empty,
 * so it cannot be made dormant as the trampoline's slots are.
 */
#if defined(__x86_64__)
HIDDEN uintptr_t count_lo, count_span;
HIDDEN uint64_t *count_tab;
HIDDEN void count_stub(void);
__asm__(".text\n"
	".p2align 4\n"
	".globl count_stub\n"
	".hidden count_stub\n"
	".type count_stub, @function\n"
	"count_stub:\n"
	"	endbr64\n"
	"	movq	(%rsp), %r11\n"		/* where the body resumes */
	"	subq	count_lo(%rip), %r11\n"
	"	cmpq	count_span(%rip), %r11\n"
	"	jae	1f\n"
	"	shrq	$2, %r11\n"
	"	shlq	$3, %r11\n"
	"	addq	count_tab(%rip), %r11\n"
	"	lock incq (%r11)\n"
	"1:	ret\n"
	".size count_stub, . - count_stub\n");
static struct ps_ops count_ops = { on_entry, NULL, (void *)count_stub };
static size_t count_bytes;

/* where the body of the function at a resumes once its site has called:
   the site is the function's first instruction, or follows its ENDBR64 */
static uintptr_t count_resume(uintptr_t a)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

	return a + (memcmp((const void *)a, endbr64, 4) ? 0 : 4) + 5;
}

/* the counter of fns[i], or NULL when count_ops does not serve it */
static uint64_t *count_slot(long i)
{
	uintptr_t r;

	if (!count_tab || i >= nstart)
		return NULL;
	r = count_resume(fns[i].addr) - count_lo;
	return r < count_span ? &count_tab[r >> 2] : NULL;
}

/* counts only: the table for the program's own functions (fns[lo, hi)
   of the first object, sorted), before anything is attached */
static void count_setup(void)
{
	long nobj = ps_objects(NULL, 0), k = 0;
	uintptr_t first = 1, last = 0, lo = UINTPTR_MAX, hi = 0;
	struct ps_object *objs;
	void *t;

#ifdef TRACE_ATTACH
	/* `patchsite trace -p` must detach whatever the threads block: the
	   trampoline's dormant slots, never a direct call's -EDEADLK */
	return;
#endif
	if (timing || recording || nobj <= 0 || !(objs = malloc((size_t)nobj * sizeof(*objs))))
		return;
	nobj = ps_objects(objs, nobj);
	while (k < nobj && objs[k].name[0])
		k++;
	if (k < nobj && objs[k].count) {
		first = (uintptr_t)ps_function(objs[k].first);
		last = (uintptr_t)ps_function(objs[k].first + objs[k].count - 1);
	}
	free(objs);
	for (long i = 0; i < nstart; i++)
		if (fns[i].addr >= first && fns[i].addr <= last) {
			uintptr_t r = count_resume(fns[i].addr);

			lo = r < lo ? r : lo;
			hi = r > hi ? r : hi;
		}
	if (hi < lo)
		return;
	count_bytes = (((hi - lo) >> 2) + 1) * sizeof(uint64_t);
	t = mmap(NULL, count_bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED)
		return;		/* on_entry counts them instead */
	count_lo = lo;
	count_span = hi - lo + 1;
	count_tab = t;
}

/* every counter back to 0: the pages given back (they read as zeros) */
static void count_zero(void)
{
	if (count_tab)
		madvise(count_tab, count_bytes, MADV_DONTNEED);
}

/* the ops that serves the function at a */
static struct ps_ops *ops_of(uintptr_t a)
{
	uintptr_t r;

	if (!count_tab)
		return &trace_ops;
	r = count_resume(a) - count_lo;
	return r < count_span ? &count_ops : &trace_ops;
}
#else
static uint64_t *const count_tab = NULL;
static uint64_t *count_slot(long i) { (void)i; return NULL; }
static void count_setup(void) {}
static void count_zero(void) {}
static struct ps_ops *ops_of(uintptr_t a) { (void)a; return &trace_ops; }
#endif

/* the calls of fns[i] so far */
static uint64_t calls_of(long i)
{
	uint64_t *c = count_slot(i);

	return __atomic_load_n(&fns[i].calls, __ATOMIC_RELAXED) +
	       (c ? __atomic_load_n(c, __ATOMIC_RELAXED) : 0);
}

/*
 * Attach (or detach) n functions, each through the ops that serves it:
 * count_ops' ones first, then trace_ops'; an attach that fails half-way
 * takes back what it made.  The list is reordered.
 */
static int ops_list(void **list, size_t n, int attach)
{
	size_t m = 0;
	int err = 0;

	for (size_t i = 0; i < n; i++)
		if (ops_of((uintptr_t)list[i]) != &trace_ops) {
			void *t = list[m];

			list[m++] = list[i];
			list[i] = t;
		}
	if (m)
		err = attach ? ps_attach_list(list, m, ops_of((uintptr_t)list[0]))
			     : ps_detach_ops_list(list, m, ops_of((uintptr_t)list[0]));
	if (!err && n > m)
		err = attach ? ps_attach_list(list + m, n - m, &trace_ops)
			     : ps_detach_ops_list(list + m, n - m, &trace_ops);
	if (err && attach && m && n > m)
		ps_detach_ops_list(list, m, ops_of((uintptr_t)list[0]));
	return err;
}

static int out_get(void);
static int open_ctl(const char *path);

/* --- Messages ---------------------------------------------------------- */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), PFX);

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n < (int)sizeof(buf) && starting)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, ": nothing traced");
	if (n >= (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(msg_fd, buf, (size_t)n) < 0)
		return;
}

/* --- Descriptors of the tracer's own ------------------------------------ */

/*
 * fd moved to a high number (O_CLOEXEC): the program's own files take the
 * lowest free numbers, so it rarely meets the tracer's.  Below 1024 (a
 * larger number makes the kernel grow the process's descriptor table) and
 * below the descriptor limit; fd itself when there is no room up there.
 */
static int fd_high(int fd)
{
	struct rlimit rl;
	long top = 1024;
	int hi;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (long)rl.rlim_cur < top)
		top = (long)rl.rlim_cur;
	if (top < 128 || fd >= top - 64)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)(top - 64));
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

static void fd_know(int fd, struct own_fd *id)
{
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0) {
		id->dev = st.st_dev;
		id->ino = st.st_ino;
	}
}

/* fd is still open on what the tracer opened there (async-signal-safe) */
static int fd_ours(int fd, const struct own_fd *id)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
}

/* a new signal pipe, high, non-blocking; 0 or -errno */
static int make_pipe(void)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	p[0] = fd_high(p[0]);
	p[1] = fd_high(p[1]);
	fd_know(p[0], &pipe_id[0]);
	fd_know(p[1], &pipe_id[1]);
	sig_pipe[0] = p[0];
	__atomic_store_n(&sig_pipe[1], p[1], __ATOMIC_RELEASE);
	return 0;
}

/* --- Names: a small ELF64 reader of /proc/self/exe ------------------------ */

static int phdr_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = info->dlpi_addr;
	return 1;		/* the first entry is the main program */
}

static int in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* map the pages of b[off, off+len) at once rather than fault them in one
   by one (Linux 5.14; without it, nothing is lost but time) */
static void populate(const unsigned char *b, uint64_t off, uint64_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)b + off) & ~(page - 1);

	if (len)
		madvise((void *)lo, (uintptr_t)b + off + len - lo, MADV_POPULATE_READ);
}


/* The blocks of names: each starts with a pointer to the one before. */
static void names_free(void)
{
	while (names_buf) {
		char *prev;

		memcpy(&prev, names_buf, sizeof(prev));
		free(names_buf);
		names_buf = prev;
	}
}

/* What read_names_of's steps share: the object, its mapping, the names picked. */
struct obj_names {
	const char *prog, *path;	/* the program's name, the object's file */
	int main;			/* the program itself (messages name prog) */
	uintptr_t bias;
	const struct site_slot *hash;	/* the sites by address */
	size_t hmask;
	long flo, fhi;			/* the object's sites in fns[] */
	const unsigned char *b;		/* the file, mapped */
	uint64_t size;
	const Elf64_Shdr *tab, *str;	/* its symbol table and their names */
	struct { uint64_t sym; size_t len; int global; } *best;	/* indexed like fns */
	size_t namebytes;		/* the block of names' size */
};

/* The object's file, mapped. 0, or -errno said. */
static int names_map(struct obj_names *o)
{
	int fd = open(o->path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0) {
		int err = -errno;

		say("%s: cannot read %s: %s", o->prog, o->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return err;
	}
	o->size = (uint64_t)st.st_size;
	o->b = o->size >= sizeof(Elf64_Ehdr) ?
		mmap(NULL, o->size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	if (o->b == MAP_FAILED) {
		say("%s: not an ELF file", o->main ? o->prog : o->path);
		return -ENOEXEC;
	}
	return 0;
}

/*
 * The symbol table (.symtab, else .dynsym; the program's says where names
 * come from) and its strings, inside the file.  0 or -ENOEXEC said.
 */
static int names_symtab(struct obj_names *o)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)o->b;
	const char *who = o->main ? o->prog : o->path;
	const Elf64_Shdr *sh, *tab = NULL;
	uint64_t size = o->size, shnum = eh->e_shnum;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr)) {
		say("%s: not an ELF64 file with section headers", who);
		return -ENOEXEC;
	}
	if (!in_file(eh->e_shoff, sizeof(Elf64_Shdr), size) || eh->e_shoff % 8)
		goto badsh;
	sh = (const Elf64_Shdr *)(o->b + eh->e_shoff);
	if (shnum == 0)
		shnum = sh[0].sh_size;
	if (shnum > size / sizeof(Elf64_Shdr) || !in_file(eh->e_shoff, shnum * sizeof(Elf64_Shdr), size))
		goto badsh;
	for (uint64_t i = 0; i < shnum && !tab; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			tab = &sh[i];
	for (uint64_t i = 0; i < shnum && !tab; i++)
		if (sh[i].sh_type == SHT_DYNSYM)
			tab = &sh[i];
	if (o->main)
		names_from = tab && tab->sh_type == SHT_SYMTAB ? ".symtab" : ".dynsym";
	if (!tab) {
		say("%s: no .symtab or .dynsym: functions have no names to match", who);
		return -ENOEXEC;
	}
	if (tab->sh_link >= shnum || !in_file(tab->sh_offset, tab->sh_size, size) ||
	    tab->sh_offset % 8 || (tab->sh_entsize && tab->sh_entsize != sizeof(Elf64_Sym)))
		goto badsh;
	o->tab = tab;
	o->str = &sh[tab->sh_link];
	if (o->str->sh_type != SHT_STRTAB || !in_file(o->str->sh_offset, o->str->sh_size, size))
		goto badsh;
	return 0;
badsh:
	say("%s: bad section headers or symbol table", who);
	return -ENOEXEC;
}

/*
 * Per site, the symbol that names it: a global one first, else the first
 * in the table (no sort: each symbol looked up among the sites); the
 * names' bytes.  0 or -ENOMEM said.
 */
static int names_pick(struct obj_names *o)
{
	const Elf64_Sym *sy = (const Elf64_Sym *)(o->b + o->tab->sh_offset);
	const char *strs = (const char *)o->b + o->str->sh_offset;
	uint64_t nsyms = o->tab->sh_size / sizeof(Elf64_Sym), strsz = o->str->sh_size;
	long flo = o->flo, fhi = o->fhi;

	populate(o->b, o->tab->sh_offset, o->tab->sh_size);
	populate(o->b, o->str->sh_offset, o->str->sh_size);
	o->best = malloc((fhi > flo ? (size_t)(fhi - flo) : 1) * sizeof(*o->best));
	if (!o->best) {
		say("%s: out of memory for %ld names", o->prog, fhi - flo);
		return -ENOMEM;
	}
	o->best -= flo;	/* indexed like fns */
	for (long i = flo; i < fhi; i++)
		o->best[i].sym = UINT64_MAX;
	o->namebytes = sizeof(char *);
	for (uint64_t k = 0; k < nsyms; k++) {
		unsigned t = ELF64_ST_TYPE(sy[k].st_info), bind = ELF64_ST_BIND(sy[k].st_info);
		int global = bind == STB_GLOBAL || bind == STB_WEAK;
		long i;

		if (t != STT_FUNC || sy[k].st_shndx == SHN_UNDEF || !sy[k].st_value ||
		    sy[k].st_name == 0 || sy[k].st_name >= strsz)
			continue;
		i = site_lookup(o->hash, o->hmask, (uintptr_t)sy[k].st_value + o->bias);
		if (i < flo || i >= fhi ||
		    (o->best[i].sym != UINT64_MAX && (o->best[i].global || !global)))
			continue;
		const char *nm = strs + sy[k].st_name;
		const char *end = memchr(nm, 0, strsz - sy[k].st_name);

		if (!end)
			continue;
		if (o->best[i].sym != UINT64_MAX)
			o->namebytes -= o->best[i].len + 1;
		o->best[i].sym = k;
		o->best[i].global = global;
		o->best[i].len = (size_t)(end - nm);
		o->namebytes += o->best[i].len + 1;
	}
	return 0;
}

/*
 * The names of the sites not named yet, copied (the mapping goes), in a
 * block chained to the blocks of the objects read before.  0 or -ENOMEM
 * said.
 */
static int names_copy(struct obj_names *o)
{
	const Elf64_Sym *sy = (const Elf64_Sym *)(o->b + o->tab->sh_offset);
	const char *strs = (const char *)o->b + o->str->sh_offset;
	char *p = malloc(o->namebytes);

	if (!p) {
		say("%s: out of memory for names", o->prog);
		return -ENOMEM;
	}
	memcpy(p, &names_buf, sizeof(names_buf));
	names_buf = p;
	p += sizeof(char *);
	for (long i = o->flo; i < o->fhi; i++) {
		if (o->best[i].sym == UINT64_MAX || fns[i].name)
			continue;
		memcpy(p, strs + sy[o->best[i].sym].st_name, o->best[i].len + 1);
		fns[i].name = p;
		nnamed++;
		p += o->best[i].len + 1;
	}
	return 0;
}

/*
 * Give the sites in fns[] that lie in one object their names from its
 * symbol table: the file at path (the program: /proc/self/exe), loaded at
 * bias, the sites hashed by address in hash.  main: the program, whose
 * symbol table says where names come from (names_from).  Returns 0, or
 * -errno after one message.
 */
static int read_names_of(const char *prog, const char *path, uintptr_t bias, int main,
			 const struct site_slot *hash, size_t hmask, long flo, long fhi)
{
	struct obj_names o = { .prog = prog, .path = path, .main = main, .bias = bias,
			       .hash = hash, .hmask = hmask, .flo = flo, .fhi = fhi };
	int err = names_map(&o);

	if (err)
		return err;
	if (!(err = names_symtab(&o)) && !(err = names_pick(&o)))
		err = names_copy(&o);
	if (o.best)
		free(o.best + flo);
	munmap((void *)o.b, o.size);
	return err;
}

/*
 * Give every site in fns[] its name from the symbol table of the object
 * that holds it: the program's file (/proc/self/exe) and each embedded
 * shared library's (its path as the dynamic linker loaded it).  Returns 0,
 * or -errno after one message (the program's table, or memory: a library
 * whose table cannot be read leaves its functions without names, said in
 * one line).
 */
static int read_names(const char *prog)
{
	struct site_slot *hash = NULL;
	struct ps_object *objs = NULL;
	size_t hmask = 0;
	long nobj = ps_objects(NULL, 0);
	int err = -ENOMEM;

	if (nobj < 0) {
		say("%s: %s", prog, strerror((int)-nobj));
		return (int)nobj;
	}
	/* the sites by address, hashed (the symbol table is in no useful order) */
	hash = sites_hashed(0, nfns, &hmask);
	objs = malloc((nobj ? (size_t)nobj : 1) * sizeof(*objs));
	if (!hash || !objs) {
		say("%s: out of memory for %ld names", prog, nfns);
		goto out;
	}
	nobj = ps_objects(objs, nobj);
	start_name = malloc((nobj ? (size_t)nobj : 1) * sizeof(*start_name));
	if ((start_bias = malloc((nobj ? (size_t)nobj : 1) * sizeof(*start_bias))) && start_name) {
		for (long k = 0; k < nobj; k++) {
			start_bias[k] = objs[k].bias;
			start_name[k] = objs[k].name;
		}
		nstart_obj = nobj;
	}
	err = 0;
	for (long k = 0; k < nobj && !err; k++) {
		int main = !objs[k].name[0];

		err = read_names_of(prog, main ? "/proc/self/exe" : objs[k].name, objs[k].bias, main,
				    hash, hmask, 0, nfns);
		if (!main && err != -ENOMEM)
			err = 0;	/* said; its functions have no names */
	}
out:
	free(objs);
	free(hash);
	return err;
}

/* --- Selecting and attaching ------------------------------------------- */

/*
 * fnmatch(3) with flags 0 for globs of `*`, `?` and plain characters (the
 * common case, and glibc's fnmatch costs as much as the rest of start-up
 * over 20,000 names); fnmatch itself for bracket expressions and escapes.
 */
static int glob_simple(const char *p, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s) {
		if (*p == '*') {
			star = ++p;
			resume = s;
		} else if (*p == '?' || *p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star;
			s = ++resume;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

/* a glob list split once: globs_split (NULL without memory), globs_match */
struct glob {
	char *pat;
	int simple;		/* no bracket or escape: glob_simple */
};

static struct glob *globs_split(const char *globs, size_t *n)
{
	size_t k = 1, len = strlen(globs);
	struct glob *g;
	char *copy;

	for (const char *c = globs; *c; c++)
		k += *c == ',';
	g = malloc(k * sizeof(*g) + len + 1);
	if (!g)
		return NULL;
	copy = memcpy((char *)(g + k), globs, len + 1);
	*n = 0;
	for (char *tok = copy, *next; tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = 0;
		if (!*tok)
			continue;
		g[*n].pat = tok;
		g[*n].simple = !strpbrk(tok, "[\\");
		(*n)++;
	}
	return g;
}

static int globs_match(const struct glob *g, size_t n, const char *name)
{
	for (size_t k = 0; k < n; k++)
		if (g[k].simple ? glob_simple(g[k].pat, name) : fnmatch(g[k].pat, name, 0) == 0)
			return 1;
	return 0;
}

static int globs_ok(const char *globs, const char *what)
{
	const char *g = globs;

	if (!*g) {
		say("%s is empty: give glob[,glob...]", what);
		return 0;
	}
	while (*g) {
		size_t l = strcspn(g, ",");

		if (l == 0) {
			say("%s=%s: an empty glob", what, globs);
			return 0;
		}
		g += l;
		if (*g == ',')
			g++;
	}
	return 1;
}

/*
 * x86_64: an object whose sites cannot reach its own trampoline room (a
 * segment embed would not have written: embed checks the reach) refuses
 * the whole batch with -ERANGE.  Then each object's functions of list[0..n)
 * are attached alone, and an
 * object that refuses is said once and left out (its functions not
 * marked attached).  0, or the first other error.
 */
static int attach_each_object(void **list, long n, const char *what)
{
	long nobj = ps_objects(NULL, 0);
	struct ps_object *objs;
	void **part = malloc((n ? (size_t)n : 1) * sizeof(*part));
	int err = 0;

	if (nobj < 0) {
		free(part);
		return (int)nobj;
	}
	if (!part || !(objs = malloc((nobj ? (size_t)nobj : 1) * sizeof(*objs)))) {
		free(part);
		return -ENOMEM;
	}
	nobj = ps_objects(objs, nobj);
	for (long k = 0; k < nobj && !err; k++) {
		uintptr_t lo, hi;
		long m = 0;
		int e;

		if (!objs[k].count)
			continue;
		lo = (uintptr_t)ps_function(objs[k].first);
		hi = (uintptr_t)ps_function(objs[k].first + objs[k].count - 1);
		for (long i = 0; i < n; i++)
			if ((uintptr_t)list[i] >= lo && (uintptr_t)list[i] <= hi)
				part[m++] = list[i];
		if (!m)
			continue;
		e = ops_list(part, (size_t)m, 1);
		if (e == -ERANGE) {
			int was = starting;

			starting = 0;	/* the other objects are traced */
			say("%s: %s: not traced: out of reach of its trampoline room (x86_64)",
			    what, objs[k].name[0] ? objs[k].name : prog_name());
			starting = was;
			for (long i = 0; i < nfns; i++)
				if (fns[i].addr >= lo && fns[i].addr <= hi)
					fns[i].selected = 0;
		} else {
			err = e;
		}
	}
	free(objs);
	free(part);
	return err;
}

/* attach (or detach) the functions whose names match globs; called with
   ctl_lock held.  Returns how many changed, or -errno after a message. */
static long set_attached_from(long from, const char *globs, int attach, const char *what)
{
	void **list = malloc((nfns ? nfns : 1) * sizeof(*list));
	size_t ng = 0;
	struct glob *g = globs ? globs_split(globs, &ng) : NULL;
	long n = 0, matched = 0;
	int err;

	if (!list || (globs && !g)) {
		say("%s: out of memory", what);
		free(list);
		free(g);
		return -ENOMEM;
	}
	for (long i = 0; i < nfns; i++) {
		fns[i].selected = i >= from && !fns[i].gone && fns[i].name &&
				  (!globs || globs_match(g, ng, fns[i].name));
		if (!fns[i].selected)
			continue;
		matched++;
		if (fns[i].attached != attach)
			list[n++] = (void *)fns[i].addr;
	}
	free(g);
	if (from && !matched) {
		free(list);
		return 0;	/* a library dlopen()ed later that has none of them */
	}
	if (globs && !matched && names_from && strcmp(names_from, ".symtab")) {
		/* stripped: the names are missing, not the functions */
		say("%s=%s: no traced function matches: the program is stripped (no .symtab), "
		    "only %ld of its %ld traced functions have a name (from .dynsym); trace the "
		    "unstripped file, or link with -rdynamic", what, globs, nnamed, nfns);
		free(list);
		return -ENOENT;
	}
	if (globs && !matched) {
		say("%s=%s: no traced function matches", what, globs);
		free(list);
		return -ENOENT;
	}
	err = !n ? 0 : ops_list(list, (size_t)n, attach);
	if (err == -ERANGE && attach)
		err = attach_each_object(list, n, what);
	free(list);
	if (err) {
		say("%s: %s failed: %s", what, attach ? "ps_attach_list" : "ps_detach_ops_list",
		    strerror(-err));
		return err;
	}
	for (long i = 0; i < nfns; i++)
		if (fns[i].selected)
			fns[i].attached = attach;
	return n;
}

/* The globs in force: those attached so far (a `detach` of all clears them). */
static void force_add(const char *globs)
{
	size_t a = force ? strlen(force) : 0, b = globs ? strlen(globs) : 0;
	char *f;

	if (!globs) {
		free(force);
		force = NULL;
		return;
	}
	if (!(f = realloc(force, a + b + 2)))
		return;
	if (a)
		f[a++] = ',';
	memcpy(f + a, globs, b + 1);
	force = f;
}

static long set_attached(const char *globs, int attach, const char *what)
{
	long n = set_attached_from(0, globs, attach, what);

	if (n >= 0 && (attach || !globs))
		force_add(attach ? globs : NULL);
	return n;
}

/* --- The table --------------------------------------------------------- */

struct row {
	long i;
	uint64_t calls, timed, total;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(fns[x->i].name, fns[y->i].name);
}

struct buf {
	char *p;
	size_t len, cap;
	int failed;
};

static void bput(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bput(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len)
			break;
		size_t cap = b->cap * 2 + (size_t)n + 1;
		char *q = realloc(b->p, cap);

		if (!q) {
			b->failed = 1;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	b->len += (size_t)n;
}

/* a JSON string body: names are C identifiers in practice, but escape anyway */
static void bput_json(struct buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			bput(b, "\\%c", c);
		else if (c < 0x20)
			bput(b, "\\u%04x", c);
		else
			bput(b, "%c", c);
	}
}

static void dump(const char *reason)
{
	struct row *rows;
	long n = 0, attached = 0, called = 0;
	struct buf b = { malloc(4096), 0, 4096, 0 };
	int fd;

	pthread_mutex_lock(&ctl_lock);
	rows = malloc((nfns ? nfns : 1) * sizeof(*rows));
	if (!rows || !b.p) {
		say("dump: out of memory");
		goto out;
	}
	for (long i = 0; i < nfns; i++) {
		struct row r = { i, calls_of(i),
				 __atomic_load_n(&fns[i].timed, __ATOMIC_RELAXED),
				 __atomic_load_n(&fns[i].total_ns, __ATOMIC_RELAXED) };

		if (!fns[i].name)
			continue;
		attached += fns[i].attached;
		if (!fns[i].attached && !r.calls)
			continue;
		called += r.calls != 0;
		if (format == FMT_TEXT && !r.calls)
			continue;
		rows[n++] = r;
	}
	qsort(rows, (size_t)n, sizeof(*rows), row_cmp);
	if (format == FMT_TEXT) {
		bput(&b, "# patchsite-trace: pid %ld, %s: %ld functions attached, %ld called%s\n",
		     (long)getpid(), reason, attached, called, timing ? "" : " (counts only)");
		bput(&b, "%12s %10s %12s %12s  %s\n", "calls", "timed", "total_ms", "avg_us",
		     "function");
		for (long k = 0; k < n; k++) {
			struct row *r = &rows[k];

			bput(&b, "%12llu %10llu %12.3f %12.3f  %s\n", (unsigned long long)r->calls,
			     (unsigned long long)r->timed, (double)r->total / 1e6,
			     r->timed ? (double)r->total / (double)r->timed / 1e3 : 0.0,
			     fns[r->i].name);
		}
	} else if (format == FMT_TSV) {
		bput(&b, "# patchsite-trace\tpid %ld\t%s\t%ld attached\t%ld called\n",
		     (long)getpid(), reason, attached, called);
		bput(&b, "function\taddress\tattached\tcalls\ttimed\ttotal_ns\tavg_ns\n");
		for (long k = 0; k < n; k++) {
			struct row *r = &rows[k];

			bput(&b, "%s\t%#lx\t%d\t%llu\t%llu\t%llu\t%llu\n", fns[r->i].name,
			     (unsigned long)fns[r->i].addr, fns[r->i].attached,
			     (unsigned long long)r->calls, (unsigned long long)r->timed,
			     (unsigned long long)r->total,
			     (unsigned long long)(r->timed ? r->total / r->timed : 0));
		}
	} else {
		bput(&b, "{\"pid\": %ld, \"reason\": \"%s\", \"timing\": %s, \"attached\": %ld, "
		     "\"called\": %ld, \"functions\": [", (long)getpid(), reason,
		     timing ? "true" : "false", attached, called);
		for (long k = 0; k < n; k++) {
			struct row *r = &rows[k];

			bput(&b, "%s{\"name\": \"", k ? ", " : "");
			bput_json(&b, fns[r->i].name);
			bput(&b, "\", \"address\": %lu, \"attached\": %s, \"calls\": %llu, "
			     "\"timed\": %llu, \"total_ns\": %llu, \"avg_ns\": %llu}",
			     (unsigned long)fns[r->i].addr, fns[r->i].attached ? "true" : "false",
			     (unsigned long long)r->calls, (unsigned long long)r->timed,
			     (unsigned long long)r->total,
			     (unsigned long long)(r->timed ? r->total / r->timed : 0));
		}
		bput(&b, "]}\n");	/* one line: repeated dumps are JSON Lines */
	}
	if (b.failed) {
		say("dump: out of memory");
		goto out;
	}
	fd = out_get();
	for (size_t off = 0; fd >= 0 && off < b.len;) {
		ssize_t w = write(fd, b.p + off, b.len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			say("dump: write: %s", strerror(errno));
			break;
		}
		off += (size_t)w;
	}
out:
	pthread_mutex_unlock(&ctl_lock);
	free(rows);
	free(b.p);
}

/* --- Signal and control thread ------------------------------------------ */

/* the dump signal: a flag for the control thread, and a byte in its pipe
   to wake it at once, written only while the pipe is still the tracer's */
static void on_signal(int sig)
{
	int e = errno;
	char c = (char)sig;
	int fd = __atomic_load_n(&sig_pipe[1], __ATOMIC_ACQUIRE);

	__atomic_store_n(&dump_pending, 1, __ATOMIC_RELEASE);
	if (fd >= 0 && fd_ours(fd, &pipe_id[1]) && write(fd, &c, 1) < 0) {
		/* pipe full: a dump is pending anyway */
	}
	errno = e;
}

static void ctl_command(char *line)
{
	char *arg;
	long n;

	while (*line == ' ' || *line == '\t')
		line++;
	arg = line + strcspn(line, " \t");
	if (*arg)
		*arg++ = 0;
	while (*arg == ' ' || *arg == '\t')
		arg++;
	if (!*line)
		return;
	if (!strcmp(line, "dump") && !*arg) {
		dump("ctl");
	} else if (!strcmp(line, "reset") && !*arg) {
		for (long i = 0; i < nfns; i++) {
			__atomic_store_n(&fns[i].calls, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&fns[i].timed, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&fns[i].total_ns, 0, __ATOMIC_RELAXED);
		}
		count_zero();
		say("ctl: reset");
	} else if (!strcmp(line, "attach") || !strcmp(line, "detach")) {
		int attach = line[0] == 'a';

		if (attach && !*arg) {
			say("ctl: attach needs glob[,glob...]");
			return;
		}
		if (*arg && !globs_ok(arg, "ctl"))
			return;
		pthread_mutex_lock(&ctl_lock);
		n = set_attached(*arg ? arg : NULL, attach, "ctl");
		pthread_mutex_unlock(&ctl_lock);
		if (n >= 0)
			say("ctl: %s %ld functions%s%s", attach ? "attached" : "detached", n,
			    *arg ? " matching " : "", arg);
	} else {
		say("ctl: unknown command '%s' (attach GLOBS, detach [GLOBS], dump, reset)", line);
	}
}

/*
 * The control thread's descriptors, checked after every wake-up (once a
 * second at least): one the program closed, or opened something else at,
 * is replaced (its number is left alone: it may be the program's now).
 * Returns 1 if one was.
 */
static int ctl_check(void)
{
	int changed = 0;

	if (sig_pipe[0] >= 0 && (!fd_ours(sig_pipe[0], &pipe_id[0]) ||
				 !fd_ours(__atomic_load_n(&sig_pipe[1], __ATOMIC_RELAXED), &pipe_id[1]))) {
		int old[2] = { sig_pipe[0], __atomic_exchange_n(&sig_pipe[1], -1, __ATOMIC_SEQ_CST) };
		int err;

		for (int k = 0; k < 2; k++)
			if (fd_ours(old[k], &pipe_id[k]))
				close(old[k]);
		sig_pipe[0] = -1;
		err = make_pipe();
		if (err)
			say("the program closed the tracer's signal pipe: pipe: %s (a signal's dump "
			    "waits up to a second)", strerror(-err));
		changed = 1;
	}
	if (ctl_fd >= 0 && !fd_ours(ctl_fd, &ctl_id)) {
		ctl_fd = open_ctl(ctl_path);
		if (ctl_fd >= 0)
			say("ctl: the program closed the tracer's FIFO descriptor: re-opened %s",
			    ctl_path ? ctl_path : "");
		else
			say("ctl: the program closed the tracer's FIFO descriptor: no more commands");
		changed = 1;
	}
	return changed;
}

static void *ctl_thread(void *unused)
{
	static char buf[CTL_LINE_MAX + 2];	/* a line, its newline, a NUL */
	size_t len = 0;
	int discarding = 0;	/* in a line too long: until its newline */

	(void)unused;
	for (;;) {
		struct pollfd pf[2] = { { sig_pipe[0], POLLIN, 0 }, { ctl_fd, POLLIN, 0 } };
		int n = poll(pf, 2, 1000);	/* a negative fd is left out */

		if (n < 0 && errno != EINTR) {
			say("poll: %s", strerror(errno));
			return NULL;
		}
		if (ctl_check()) {
			if (pf[1].fd != ctl_fd) {	/* a line begun in the old FIFO is lost */
				len = 0;
				discarding = 0;
			}
			continue;	/* revents are about the old numbers */
		}
		if (n > 0 && (pf[0].revents & POLLIN)) {
			char c[64];

			while (read(sig_pipe[0], c, sizeof(c)) > 0)
				;
		}
		if (__atomic_exchange_n(&dump_pending, 0, __ATOMIC_ACQ_REL))
			dump("signal");
		if (n > 0 && ctl_fd >= 0 && (pf[1].revents & POLLIN)) {
			ssize_t r = read(ctl_fd, buf + len, sizeof(buf) - 1 - len);
			char *start = buf, *nl;

			if (r <= 0)
				continue;
			len += (size_t)r;
			while ((nl = memchr(start, '\n', len - (size_t)(start - buf)))) {
				*nl = 0;
				if (discarding)
					discarding = 0;	/* the end of a line too long */
				else
					ctl_command(start);
				start = nl + 1;
			}
			len -= (size_t)(start - buf);
			memmove(buf, start, len);
			if (len == sizeof(buf) - 1) {
				/* CTL_LINE_MAX + 1 bytes and no newline: the whole line goes */
				if (!discarding)
					say("ctl: a line longer than %d bytes, discarded", CTL_LINE_MAX);
				discarding = 1;
				len = 0;
			}
		}
	}
	return NULL;
}

/* --- fork ---------------------------------------------------------------- */

/*
 * A control command in progress finishes before the fork: the child gets
 * the tracer's state whole.  The wait is bounded (2 s): a command waits on
 * the runtime's lock inside ps_attach_list, and if the runtime's own fork
 * handler took that lock first (its handler ran before this one), waiting
 * here for ever would deadlock; after 2 s the fork goes on without the
 * lock (the command is then still waiting, its changes not begun).  The
 * child makes its lock anew either way.
 */
static int fork_locked;

static void fork_prepare(void)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 2000; i++) {
		if (pthread_mutex_trylock(&ctl_lock) == 0) {
			fork_locked = 1;
			return;
		}
		nanosleep(&ms, NULL);
	}
	fork_locked = 0;
}

static void fork_parent(void)
{
	if (fork_locked)
		pthread_mutex_unlock(&ctl_lock);
}

#ifdef TRACE_ATTACH
/* -p, every site detached: the tracer inert (nothing attached, SIGTRAP's
   disposition as before the attach, its files closed) */
static void attach_off(void)
{
	for (long i = 0; i < nfns; i++)
		fns[i].attached = 0;
	active = 0;
	sigaction(SIGTRAP, &trap_before, NULL);
	if (out_fd > 2)
		close(out_fd);
	out_fd = 2;
	free(out_path);
	out_path = NULL;
	if (msg_fd != 2)
		close(msg_fd);
	msg_fd = 2;
}
#endif

/* the child (one thread, async-signal-safe calls only): its own counts,
   no FIFO and no signal pipe (the parent's control thread keeps them) */
static void fork_child(void)
{
	struct shadow *s = timing ? &shadow : NULL;

	ctl_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
#ifdef TRACE_ATTACH
	/* -p: the child is left clean, as the program would be had patchsite
	   never come (its sites back to the file's bytes, SIGTRAP's
	   disposition as before, the tracer inert and silent: no table, its
	   copies of patchsite's files closed); what it runs after an exec is
	   its own image, untouched */
	if (active && !ps_detach_ops_all(&trace_ops)) {
		attach_off();
		return;
	}
	/* not detached (said through patchsite): its calls are counted in its
	   own table, written at its exit as below */
	if (active)
		say("a forked child (pid %ld) could not be detached: it stays traced",
		    (long)getpid());
#endif
	if (recording)
		trace_record_forked();
	for (long i = 0; i < nfns; i++) {
		__atomic_store_n(&fns[i].calls, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&fns[i].timed, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&fns[i].total_ns, 0, __ATOMIC_RELAXED);
	}
	count_zero();
	/* the activations open at the fork return in the child too: counted */
	if (s)
		for (unsigned j = 0; j < s->depth && j < TRACE_DEPTH; j++)
			__atomic_fetch_add(&fns[s->e[j].fn].calls, 1, __ATOMIC_RELAXED);
	if (ctl_fd >= 0 && fd_ours(ctl_fd, &ctl_id))
		close(ctl_fd);
	ctl_fd = -1;
	for (int k = 0; k < 2; k++) {
		int fd = k ? __atomic_exchange_n(&sig_pipe[1], -1, __ATOMIC_SEQ_CST) : sig_pipe[0];

		if (fd >= 0 && fd_ours(fd, &pipe_id[k]))
			close(fd);
	}
	sig_pipe[0] = -1;
	dump_pending = 0;
}

/* --- Configuration, start and end --------------------------------------- */

static int parse_signal(const char *s)
{
	static const struct { const char *name; int sig; } names[] = {
		{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP }, { "INT", SIGINT },
		{ "QUIT", SIGQUIT }, { "TERM", SIGTERM }, { "WINCH", SIGWINCH }, { "PROF", SIGPROF },
		{ "URG", SIGURG }, { "PWR", SIGPWR },
	};
	char *end;
	long v;

	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name))
			return names[i].sig;
	if (!strncmp(s, "RTMIN+", 6)) {
		v = strtol(s + 6, &end, 10);
		if (*end || end == s + 6 || v < 0 || v > SIGRTMAX - SIGRTMIN)
			return -EINVAL;
		return SIGRTMIN + (int)v;
	}
	v = strtol(s, &end, 10);
	if (*s && !*end && v > 0 && v < NSIG && v != SIGKILL && v != SIGSTOP && v != SIGSEGV &&
	    v != SIGBUS && v != SIGILL && v != SIGFPE && v != SIGTRAP && v != SIGABRT)
		return (int)v;
	return -EINVAL;
}

/*
 * Open the output file PATCHSITE_TRACE_OUT names (%p: this process's id),
 * truncated or appended to, moved high; it becomes out_fd, out_path and
 * out_id.  Returns 0, or -errno after a message.
 */
static int open_out(const char *pattern, int trunc)
{
	char path[4096];
	size_t n = 0;
	char *copy;
	int fd;

	for (const char *p = pattern; *p; p++) {
		int w;

		if (p[0] == '%' && p[1] == 'p') {
			w = snprintf(path + n, sizeof(path) - n, "%ld", (long)getpid());
			p++;
		} else {
			w = snprintf(path + n, sizeof(path) - n, "%c", *p);
		}
		if (w < 0 || (size_t)w >= sizeof(path) - n) {
			say("PATCHSITE_TRACE_OUT: name too long");
			return -ENAMETOOLONG;
		}
		n += (size_t)w;
	}
	if (!n) {
		say("PATCHSITE_TRACE_OUT is empty: give a file name");
		return -EINVAL;
	}
	copy = strdup(path);
	if (!copy) {
		say("PATCHSITE_TRACE_OUT: out of memory");
		return -ENOMEM;
	}
	/* O_APPEND: a forked child and its parent write whole tables to the one file */
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (trunc ? O_TRUNC : 0), 0644);
	if (fd < 0) {
		int err = -errno;

		say("PATCHSITE_TRACE_OUT=%s: %s", path, strerror(errno));
		free(copy);
		return err;
	}
	out_fd = fd_high(fd);
	fd_know(out_fd, &out_id);
	free(out_path);
	out_path = copy;
	out_pattern = pattern;
	out_pid = getpid();
	return 0;
}

/*
 * The descriptor the table goes to, checked first: stderr is the
 * program's own; the tracer's file, if the program closed its descriptor
 * (or opened something else at its number), is re-opened by name and
 * appended to; a forked child whose file name has a %p gets its own file.
 * Returns it, or -errno when there is none (after a message).  Under ctl_lock.
 */
static int out_get(void)
{
	int err;

	if (!out_path)
		return out_fd;
	if (out_pid != getpid() && strstr(out_pattern, "%p")) {
		err = open_out(out_pattern, 1);
		return err < 0 ? err : out_fd;
	}
	if (fd_ours(out_fd, &out_id))
		return out_fd;
	/* never close that number: it may be the program's now */
	out_fd = -1;
	err = open_out(out_pattern, 0);
	if (err < 0)
		return err;
	say("PATCHSITE_TRACE_OUT=%s: the program closed the tracer's descriptor: re-opened", out_path);
	return out_fd;
}

/* the control FIFO, opened (created 0600 if missing) and moved high, as
   ctl_id; returns the descriptor, or -errno after a message */
static int open_ctl(const char *path)
{
	struct stat st;
	int fd;

	if (!*path) {
		say("PATCHSITE_TRACE_CTL is empty: give a FIFO's path");
		return -EINVAL;
	}
	if (mkfifo(path, 0600) == 0) {
		ctl_made = getpid();
	} else if (errno != EEXIST) {
		int err = -errno;

		say("PATCHSITE_TRACE_CTL=%s: mkfifo: %s", path, strerror(errno));
		return err;
	}
	/* O_RDWR: a writer closing it does not make the FIFO read end-of-file */
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		say("PATCHSITE_TRACE_CTL=%s: %s", path, strerror(errno));
		return err;
	}
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
		say("PATCHSITE_TRACE_CTL=%s: not a FIFO", path);
		close(fd);
		return -ENOTSUP;
	}
	fd = fd_high(fd);
	fd_know(fd, &ctl_id);
	return fd;
}

/* record mode: the writer started, the functions listed for the reader */
static int rec_start(const char *dir)
{
	uintptr_t bias = 0, *addr = malloc((nfns ? (size_t)nfns : 1) * sizeof(*addr));
	const char **name = malloc((nfns ? (size_t)nfns : 1) * sizeof(*name));
	int err = -ENOMEM;

	if (!addr || !name) {
		say("PATCHSITE_TRACE_RECORD: out of memory");
		goto out;
	}
	err = trace_record_start(dir, getenv("PATCHSITE_TRACE_BUFSIZE"));
	if (err)
		goto out;
	dl_iterate_phdr(phdr_bias, &bias);
	for (long i = 0; i < nfns; i++) {
		addr[i] = fns[i].addr;
		name[i] = fns[i].name;
	}
	err = trace_record_funcs(bias, nfns, fcap, addr, name);
	/* the shared libraries loaded at start (their functions are among
	   those above): their files, for their symbols and mappings */
	for (long k = 0; !err && k < nstart_obj; k++)
		if (start_name[k] && start_name[k][0])
			err = trace_record_object(start_name[k], start_bias[k], nfns, 0, addr, name);
	if (err)
		say("PATCHSITE_TRACE_RECORD=%s: cannot write funcs.txt: %s", dir, strerror(-err));
	else
		recording = 1;
out:
	free(addr);
	free(name);
	return err;
}

#ifndef TRACE_ATTACH
/* --- Libraries dlopen()ed and dlclose()d while tracing ------------------- */

static int late_of(uintptr_t bias)
{
	for (int k = nlate - 1; k >= 0; k--)
		if (!late[k].gone && late[k].bias == bias)
			return k;
	return -1;
}

/* An embedded library just loaded: its functions listed, named, and
   attached by the globs in force.  Under ctl_lock. */
static void late_add(const struct ps_object *o)
{
	struct site_slot *hash;
	size_t hmask;
	long lo = nfns;
	struct late *l;

	if (nlate == TRACE_LATE || o->count > fcap - nfns) {
		say("%s: not traced: no room for its %ld functions", o->name, o->count);
		return;
	}
	for (long j = 0; j < o->count; j++)
		fns[lo + j] = (struct fn){ .addr = (uintptr_t)ps_function(o->first + j) };
	if (!(hash = sites_hashed(lo, lo + o->count, &hmask)))
		return;
	read_names_of(prog_name(), o->name, o->bias, 0, hash, hmask, lo, lo + o->count);
	free(hash);
	l = &late[nlate];
	*l = (struct late){ lo, o->count, o->bias, o->count ? fns[lo].addr : 1,
			    o->count ? fns[lo + o->count - 1].addr : 0, 0 };
	if (recording) {
		/* its functions numbered for the records before any is attached */
		uintptr_t *addr = malloc((o->count ? (size_t)o->count : 1) * sizeof(*addr));
		const char **name = malloc((o->count ? (size_t)o->count : 1) * sizeof(*name));
		int err = -ENOMEM;

		for (long j = 0; addr && name && j < o->count; j++) {
			addr[j] = fns[lo + j].addr;
			name[j] = fns[lo + j].name;
		}
		if (addr && name)
			err = trace_record_object(o->name, o->bias, lo, o->count, addr, name);
		free(addr);
		free(name);
		if (err) {
			say("%s: not traced: funcs.txt: %s", o->name, strerror(-err));
			return;
		}
	}
	__atomic_store_n(&nfns, lo + o->count, __ATOMIC_RELEASE);
	__atomic_store_n(&nlate, nlate + 1, __ATOMIC_RELEASE);
	if (force)
		set_attached_from(lo, force, 1, o->name);
}

/*
 * Bring the tracer up to date with the embedded objects loaded now: a
 * library unloaded is marked gone (its rows stay in the table, nothing of
 * it is touched), one loaded is added.  Under ctl_lock.
 */
static void late_scan(void)
{
	long nobj = ps_objects(NULL, 0);
	struct ps_object *objs;

	if (nobj < 0 || !(objs = malloc((nobj ? (size_t)nobj : 1) * sizeof(*objs))))
		return;
	nobj = ps_objects(objs, nobj);
	for (int k = 0; k < nlate; k++) {
		long j = 0;

		while (j < nobj && objs[j].bias != late[k].bias)
			j++;
		if (late[k].gone || j < nobj)
			continue;
		__atomic_store_n(&late[k].gone, 1, __ATOMIC_RELEASE);
		for (long i = late[k].lo; i < late[k].lo + late[k].n; i++)
			fns[i].gone = 1, fns[i].attached = 0;
	}
	for (long j = 0; j < nobj; j++) {
		long k = 0;

		while (k < nstart_obj && start_bias[k] != objs[j].bias)
			k++;
		if (k == nstart_obj && late_of(objs[j].bias) < 0)
			late_add(&objs[j]);
	}
	free(objs);
}

static int late_on(void)
{
	return __atomic_load_n(&active, __ATOMIC_ACQUIRE) && fns;
}

/*
 * dlopen and dlclose, interposed (the preload comes before libc): the
 * embedded libraries a dlopen brings are attached by the globs in force
 * once it returns (their constructors ran untraced; a name is looked up
 * in the caller's DT_RUNPATH first, as glibc would have: caller_path); a
 * dlclose first
 * detaches the library it may unload, then looks at what is still loaded
 * (a library another handle holds is attached again).
 */
/* path's directory (the program: /proc/self/exe's) into dir[cap]; 0 or -errno */
static int dir_of(const char *path, char *dir, size_t cap)
{
	ssize_t n;
	char *slash;

	if (path && path[0]) {
		if (strlen(path) >= cap)
			return -ENAMETOOLONG;
		strcpy(dir, path);
	} else {
		if ((n = readlink("/proc/self/exe", dir, cap - 1)) < 0)
			return -errno;
		if (n == 0)
			return -ENOENT;
		dir[n] = 0;
	}
	if (!(slash = strrchr(dir, '/')))
		return -ENOENT;
	*slash = 0;
	return 0;
}

/*
 * The file a dlopen(file) made by the object lm would find in that
 * object's DT_RUNPATH (or DT_RPATH), or NULL.  glibc searches the caller's
 * paths: called from here, the search would use the tracer's, so a name
 * without a slash is looked up as the caller would (LD_LIBRARY_PATH
 * first for DT_RUNPATH, after for DT_RPATH), and only a file that exists
 * is handed over by its path.  $ORIGIN is the only token expanded.
 */
static char *caller_path(const struct link_map *lm, const char *file, char *buf, size_t cap)
{
	const ElfW(Dyn) *d;
	uintptr_t strtab = 0, runpath = 0, rpath = 0, list;
	int has_runpath = 0;
	const char *p, *llp = getenv("LD_LIBRARY_PATH");
	char origin[512];

	for (d = lm->l_ld; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			strtab = d->d_un.d_ptr;
		else if (d->d_tag == DT_RUNPATH)
			runpath = d->d_un.d_val, has_runpath = 1;
		else if (d->d_tag == DT_RPATH)
			rpath = d->d_un.d_val;
	}
	if (!strtab || (!has_runpath && !rpath))
		return NULL;
	if (strtab < lm->l_addr)
		strtab += lm->l_addr;	/* a read-only dynamic section (riscv64): not relocated */
	list = strtab + (has_runpath ? runpath : rpath);
	if (has_runpath && llp && *llp) {
		/* LD_LIBRARY_PATH comes first: a file there is found by name alike */
		for (p = llp; *p; p += *p == ':') {
			size_t n = strcspn(p, ":");

			if (n && (size_t)snprintf(buf, cap, "%.*s/%s", (int)n, p, file) < cap &&
			    !access(buf, F_OK))
				return NULL;
			p += n;
		}
	}
	if (dir_of(lm->l_name, origin, sizeof(origin)))
		origin[0] = 0;
	for (p = (const char *)list; *p; p += *p == ':') {
		size_t n = strcspn(p, ":"), k = 0;
		const char *q = p;

		while (q < p + n && k + 1 < cap) {
			if (!strncmp(q, "$ORIGIN", 7) || !strncmp(q, "${ORIGIN}", 9)) {
				int w = snprintf(buf + k, cap - k, "%s", origin);

				k += w > 0 ? (size_t)w : 0;
				q += q[1] == '{' ? 9 : 7;
			} else {
				buf[k++] = *q++;
			}
		}
		p += n;
		if (k + 1 < cap && (size_t)snprintf(buf + k, cap - k, "/%s", file) < cap - k &&
		    !access(buf, F_OK))
			return buf;
	}
	return NULL;
}

__attribute__((visibility("default"))) void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	const void *caller = __builtin_extract_return_addr(__builtin_return_address(0));
	struct link_map *lm = NULL;
	Dl_info info;
	char buf[1024], *path = NULL;
	void *h;

	if (!real)
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	if (file && !strchr(file, '/') && dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) &&
	    lm)
		path = caller_path(lm, file, buf, sizeof(buf));
	h = real(path ? path : file, mode);
	if (h && late_on()) {
		pthread_mutex_lock(&ctl_lock);
		late_scan();
		pthread_mutex_unlock(&ctl_lock);
	}
	return h;
}

__attribute__((visibility("default"))) int dlclose(void *handle)
{
	static int (*real)(void *);
	struct link_map *lm = NULL;
	int k = -1, r;

	if (!real)
		real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	if (!late_on() || dlinfo(handle, RTLD_DI_LINKMAP, &lm) || !lm)
		return real(handle);
	pthread_mutex_lock(&ctl_lock);
	if ((k = late_of(lm->l_addr)) >= 0) {
		struct late *l = &late[k];
		void **list = malloc((l->n ? (size_t)l->n : 1) * sizeof(*list));
		long n = 0;

		for (long i = l->lo; list && i < l->lo + l->n; i++)
			if (fns[i].attached)
				list[n++] = (void *)fns[i].addr;
		if (list && (!n || !ps_detach_ops_list(list, (size_t)n, &trace_ops)))
			for (long i = l->lo; i < l->lo + l->n; i++)
				fns[i].attached = 0;
		free(list);
	}
	pthread_mutex_unlock(&ctl_lock);
	r = real(handle);
	pthread_mutex_lock(&ctl_lock);
	late_scan();
	if (k >= 0 && !late[k].gone && force)	/* still loaded: attached again */
		set_attached_from(late[k].lo, force, 1, "dlclose");
	pthread_mutex_unlock(&ctl_lock);
	return r;
}
#endif

static int fn_cmp(const void *a, const void *b)
{
	uintptr_t x = ((const struct fn *)a)->addr, y = ((const struct fn *)b)->addr;

	return x < y ? -1 : x > y;
}

static const char *prog_name(void)
{
	static char path[512];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n <= 0)
		return "the program";
	path[n] = 0;
	return path;
}

#ifndef TRACE_ATTACH
/* the main program carries the segment `patchsite embed` adds (asks the
   runtime nothing: a copy of it that starts claims the segment) */
static int seg_found(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		const struct ps_seg_header *h;

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_R) || p->p_filesz < sizeof(*h))
			continue;
		h = (const struct ps_seg_header *)(uintptr_t)(info->dlpi_addr + p->p_vaddr);
		if (h->magic == PS_SEG_MAGIC && h->self == p->p_vaddr) {
			*(int *)data = 1;
			return 1;
		}
	}
	return 0;		/* the program or any of its libraries */
}

static int embedded(void)
{
	int found = 0;

	dl_iterate_phdr(seg_found, &found);
	return found;
}
#endif

static const char *globs_what = "PATCHSITE_TRACE";	/* "-F" for patchsite trace -p */

/*
 * The configuration, before anything is done: the globs, the format,
 * timing, the recording, the signal.  0 or -EINVAL said.
 */
static int setup_config(const char *globs, const char *fmt, const char *sig, const char *tm,
			const char *rec)
{
	if (!globs && !ctl_path) {
		say("neither PATCHSITE_TRACE nor PATCHSITE_TRACE_CTL is set");
		return -EINVAL;
	}
	if (globs && !globs_ok(globs, globs_what))
		return -EINVAL;
	if (!fmt || !strcmp(fmt, "text"))
		format = FMT_TEXT;
	else if (!strcmp(fmt, "tsv"))
		format = FMT_TSV;
	else if (!strcmp(fmt, "json"))
		format = FMT_JSON;
	else {
		say("PATCHSITE_TRACE_FORMAT=%s: not text, tsv or json", fmt);
		return -EINVAL;
	}
	if (!tm || !strcmp(tm, "on"))
		timing = 1;
	else if (!strcmp(tm, "off"))
		timing = 0;
	else {
		say("PATCHSITE_TRACE_TIME=%s: not on or off", tm);
		return -EINVAL;
	}
	if (rec && !timing) {
		say("PATCHSITE_TRACE_RECORD needs the return hook: not with PATCHSITE_TRACE_TIME=off");
		return -EINVAL;
	}
	if (sig && (dump_sig = parse_signal(sig)) < 0) {
		say("PATCHSITE_TRACE_SIGNAL=%s: not a signal name (SIGUSR2, USR1, RTMIN+N) or "
		    "number it can use", sig);
		return -EINVAL;
	}
	return 0;
}

/*
 * The functions the runtime lists, sorted, with room for the libraries
 * dlopen()ed later (untouched pages cost nothing), and their hash.  0 or
 * -errno said.
 */
static int setup_functions(const char *prog)
{
	long count = ps_count();

	if (count < 0) {
		say("%s: %s (%s)", prog, count == -ENODEV ? "not embedded by `patchsite embed`" :
		    "the runtime refuses", strerror((int)-count));
		return (int)count;
	}
	fcap = count + TRACE_SPARE;
	fns = calloc((size_t)fcap, sizeof(*fns));
	if (!fns) {
		say("out of memory for %ld functions", count);
		return -ENOMEM;
	}
	for (long i = 0; i < count; i++)
		fns[i].addr = (uintptr_t)ps_function(i);
	nfns = nstart = count;
	/* each object's functions are sorted; the objects are in no order */
	qsort(fns, (size_t)count, sizeof(*fns), fn_cmp);
	for (long i = 1; i < count; i++)
		if (fns[i].addr <= fns[i - 1].addr) {
			say("%s: the site table is not sorted", prog);
			nfns = nstart = 0;
			return -EINVAL;
		}
	if (fn_hash_build() < 0) {
		say("out of memory for %ld functions", count);
		return -ENOMEM;
	}
	return 0;
}

/*
 * The names, the counters, the output file, the recording, the control
 * socket.  0 or -errno said.
 */
static int setup_files(const char *prog, const char *out, const char *rec)
{
	int err;

	if ((err = read_names(prog)) < 0)
		return err;
	count_setup();
	if (out && (err = open_out(out, 1)) < 0)
		return err;
	if (rec && (err = rec_start(rec)) < 0)
		return err;
	if (ctl_path && (ctl_fd = open_ctl(ctl_path)) < 0) {
		err = ctl_fd;
		ctl_fd = -1;
		return err;
	}
	return 0;
}

/* Attach the functions the globs name: how many are attached, or -errno said. */
static long attach_globs(const char *globs)
{
	long n, attached = 0;

	pthread_mutex_lock(&ctl_lock);
	n = set_attached(globs, 1, globs_what);
	pthread_mutex_unlock(&ctl_lock);
	if (n < 0)
		return n;
	for (long i = 0; i < nfns; i++)
		attached += fns[i].attached;
	return attached;
}

/* With PATCHSITE_TRACE_VERBOSE, counting only: how many count through a direct call. */
static void say_direct_counts(long attached)
{
	long nd = 0;

	if (!count_tab || !getenv("PATCHSITE_TRACE_VERBOSE"))
		return;
	for (long i = 0; i < nstart; i++)
		nd += fns[i].attached && count_slot(i);
	say("counts only: %ld of the %ld functions attached count through a direct "
	    "call, without the trampoline", nd, attached);
}

/* The signal's handler and the control thread, which reads the pipe and the socket. */
static void start_control(void)
{
	struct sigaction sa;
	sigset_t all, old;
	pthread_t th;
	int err = make_pipe();

	if (err) {
		say("pipe: %s: no signal or control", strerror(-err));
		return;
	}
	if (dump_sig) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(dump_sig, &sa, NULL) < 0)
			say("PATCHSITE_TRACE_SIGNAL: sigaction: %s", strerror(errno));
	}
	/* the thread must not take the program's signals; SIGTRAP stays
	   open: the runtime refuses a round (-EDEADLK) while any thread
	   blocks it, and this thread meets no INT3 */
	sigfillset(&all);
	sigdelset(&all, SIGTRAP);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&th, NULL, ctl_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		say("pthread_create: %s: no signal or control", strerror(err));
	else
		pthread_detach(th);
}

/* Nothing traced: what setup opened and read, undone; -EINVAL. */
static long setup_undo(void)
{
	if (out_fd > 2)
		close(out_fd);
	out_fd = 2;
	free(out_path);
	out_path = NULL;
	if (ctl_fd >= 0)
		close(ctl_fd);
	ctl_fd = -1;
	nfns = nstart = 0;
	free(fns);		/* nothing is attached: no callback can read them */
	fns = NULL;
	free(fn_hash);
	fn_hash = NULL;
	names_free();
	starting = 0;
	return -EINVAL;
}

/*
 * Set up from a configuration (the environment's, or the one `patchsite
 * trace -p` passes) and attach.  Returns how many functions were attached,
 * or -errno after one message (nothing traced).  The configuration first:
 * nothing is attached if any of it is wrong.
 */
static long trace_setup(const char *globs, const char *out, const char *fmt, const char *sig,
			const char *tm, const char *rec)
{
	const char *prog;
	long attached = 0;

	starting = 1;
	if (setup_config(globs, fmt, sig, tm, rec) < 0)
		return setup_undo();
	prog = prog_name();
	if (setup_functions(prog) < 0 || setup_files(prog, out, rec) < 0 ||
	    (globs && (attached = attach_globs(globs)) < 0))
		return setup_undo();
	starting = 0;	/* attached: later messages are about one thing */
	say_direct_counts(attached);
	if (recording)
		trace_record_writer();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (dump_sig || ctl_fd >= 0)
		start_control();
	active = 1;
	return attached;
}

__attribute__((constructor)) static void trace_start(void)
{
#ifndef TRACE_ATTACH
	/* a process the preload reaches that was not embedded (env, time,
	   strace, a shell on the way): silent, unless asked */
	if (!embedded()) {
		if (getenv("PATCHSITE_TRACE_VERBOSE")) {
			starting = 1;
			say("%s: not embedded by `patchsite embed` (%s)", prog_name(),
			    strerror(ENODEV));
			starting = 0;
		}
		return;
	}
	const char *rec = getenv("PATCHSITE_TRACE_RECORD");

	/* record mode names the one process it records (patchsite trace sets
	   it): a program that one runs inherits the environment, and is left
	   alone, silently (its records would go into the same files) */
	if (rec && getenv("PATCHSITE_TRACE_RECORD_PID") &&
	    strtol(getenv("PATCHSITE_TRACE_RECORD_PID"), NULL, 10) != (long)getpid())
		return;
	ctl_path = getenv("PATCHSITE_TRACE_CTL");
	trace_setup(getenv("PATCHSITE_TRACE"), getenv("PATCHSITE_TRACE_OUT"),
		    getenv("PATCHSITE_TRACE_FORMAT"), getenv("PATCHSITE_TRACE_SIGNAL"),
		    getenv("PATCHSITE_TRACE_TIME"), rec);
#endif
}

__attribute__((destructor)) static void trace_end(void)
{
	struct stat st;

	if (active && recording)
		trace_record_end();
	else if (active)
		dump("exit");
	/* the FIFO this process made goes with it: a later `echo dump > FIFO`
	   then writes a plain file instead of waiting for a reader for ever */
	if (ctl_made && ctl_made == getpid() && ctl_path && stat(ctl_path, &st) == 0 &&
	    S_ISFIFO(st.st_mode) && st.st_dev == ctl_id.dev && st.st_ino == ctl_id.ino)
		unlink(ctl_path);
#ifdef TRACE_ATTACH
	/* dlclose, after patchsite saw that no thread is in the tracer: what
	   on_entry read may go */
	if (!active) {
		free(fns);
		fns = NULL;
		free(fn_hash);
		fn_hash = NULL;
		nfns = nstart = 0;
		names_free();
		free(out_path);
		out_path = NULL;
		free(attach_conf);
		attach_conf = NULL;
		ps_release();	/* the runtime's own mappings (-EBUSY: kept) */
	}
#endif
}

#ifdef TRACE_ATTACH
/* --- Attached by `patchsite trace -p` (libpatchsite-trace-attach.so) --------- */

/*
 * patchsite loads this build into a running program (a dlopen it makes the
 * program call through ptrace) and then calls patchsite_trace_attach with
 * a configuration it wrote into the program's memory: lines KEY=VALUE,
 * F=glob[,glob...] (what to attach), O=file (where the table goes),
 * M=file (where messages go, one a line: patchsite relays them),
 * FORMAT=text|tsv|json.  Counts only: a return hook would leave the
 * library's stubs as return addresses in frames that outlive the detach,
 * and the library is unloaded.  patchsite_trace_detach takes the tracer
 * off every function, writes the table (reason `detach`), gives SIGTRAP
 * back to the disposition it had before the attach (the x86_64 runtime
 * installs its own) and leaves nothing running: no thread of its own is
 * made in this build, so a dlclose then unloads it.
 */
__attribute__((visibility("default"))) long patchsite_trace_attach(const char *conf)
{
	const char *globs = NULL, *out = NULL, *fmt = NULL;
	char *line, *next;
	long n;

	if (active || attach_conf)
		return -EALREADY;
	attach_conf = strdup(conf);
	if (!attach_conf)
		return -ENOMEM;
	for (line = attach_conf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!strncmp(line, "F=", 2))
			globs = line + 2;
		else if (!strncmp(line, "O=", 2))
			out = line + 2;
		else if (!strncmp(line, "FORMAT=", 7))
			fmt = line + 7;
		else if (!strncmp(line, "M=", 2)) {
			int fd = open(line + 2, O_WRONLY | O_APPEND | O_CLOEXEC);

			if (fd >= 0)
				msg_fd = fd_high(fd);
		}
	}
	if (!globs)
		globs = "*";
	globs_what = "-F";
	sigaction(SIGTRAP, NULL, &trap_before);
	n = trace_setup(globs, out, fmt, NULL, "off", NULL);
	if (n < 0) {
		sigaction(SIGTRAP, &trap_before, NULL);
		if (msg_fd != 2)
			close(msg_fd);
		msg_fd = 2;
		free(attach_conf);
		attach_conf = NULL;
	}
	return n;
}

__attribute__((visibility("default"))) long patchsite_trace_detach(void)
{
	int err;

	if (!active)
		return -ENOENT;
	pthread_mutex_lock(&ctl_lock);
	err = ps_detach_ops_all(&trace_ops);
	pthread_mutex_unlock(&ctl_lock);
	if (err) {
		say("detach: ps_detach_ops_all: %s", strerror(-err));
		return err;
	}
	dump("detach");		/* its `attached`: what was attached until now */
	attach_off();
	return 0;
}
#endif
