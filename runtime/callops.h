/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * callops.h - attach a function to any traced function of a program that
 * `patchsite embed` has prepared: the runtime's public API, the same on
 * every architecture it supports.
 *
 * embed adds a loadable segment (struct ps_seg_header, the site table, the
 * trampoline and a default no-op ops, segment.h) and leaves every traced
 * function with an idle call slot.  Link this runtime into the program
 * (libpatchsite-callops.a), or preload it (libpatchsite-callops.so,
 * LD_PRELOAD); it finds the segment through the main program's program
 * headers.  ps_attach() makes a function's call slot call your ops:
 * ops->func, or ops->direct_call when that is set.  How a site looks, what
 * the trampoline saves (struct ps_regs) and the direct-call convention are
 * the architecture's: arch/<arch>.h, included below for the target
 * (arch/arm64.h: build with -fpatchable-function-entry=4,2
 * -falign-functions=8; arch/riscv64.h: =8,4 with the C extension, =4,2
 * without).
 *
 * ops->func is called with ip = the traced function's address, parent_ip =
 * the return address of the traced call, and regs = the saved argument
 * registers (struct ps_regs).  It must not itself be traced (mark it
 * PS_NOTRACE) and, after ps_detach(), may still be running on another
 * thread for a short while: keep the ops alive.
 */
#ifndef PATCHSITE_CALLOPS_H
#define PATCHSITE_CALLOPS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Keep a function out of the patch-site layout (for ops callbacks): no
 * patchable entry, and no __fentry__/mcount call in a -pg build (else
 * an ops attached to every function would be attached to itself).
 */
#define PS_NOTRACE __attribute__((patchable_function_entry(0, 0), no_instrument_function))

struct ps_ops;
typedef void (*ps_func_t)(unsigned long ip, unsigned long parent_ip, struct ps_ops *ops,
			  void *regs);

struct ps_ops {
	ps_func_t func;		/* offset 0: the trampoline loads it */
	void *priv;
	void *direct_call;	/* offset 16: if not NULL, entered instead (arch/<arch>.h) */
};

/*
 * All return 0 or a negative errno (-ENOENT: not a traced function, -ENODEV:
 * the program was not embedded, -EINVAL: no ops or no ops->func, -ENOMEM;
 * and where a change cannot be made safely, nothing changed: -EBUSY,
 * another copy of the runtime owns this process's sites; x86_64:
 * -EDEADLK, a thread blocks SIGTRAP (a detach of every site of an ops is
 * made anyway, by a data store: "dormant" slots); the errno of a membarrier call that
 * failed, e.g. -EPERM under a seccomp filter.  runtime/README.md "Safety").
 *
 * A function may have several ops attached (seed 001): with one, its site
 * calls that ops' own trampoline (or ops->direct_call); with more, the list
 * trampoline, which calls each of its ops once (in the order of the slots
 * they took: a slot freed by a detached ops is taken by the next one).
 * ps_attach() adds ops to the function (attaching an ops that is already
 * there changes nothing); ps_detach() takes every ops off it;
 * ps_detach_ops() takes one ops off it (-ENOENT if it is not there).  An ops
 * with direct_call set cannot share a function with another ops (-EBUSY),
 * as in the kernel.
 */
int ps_attach(void *function, struct ps_ops *ops);
int ps_detach(void *function);
int ps_detach_ops(void *function, struct ps_ops *ops);
int ps_attach_all(struct ps_ops *ops);
int ps_detach_all(void);
/* Take ops off every function it is attached to (0 if it is on none). */
int ps_detach_ops_all(struct ps_ops *ops);
/*
 * Batched: attach one ops to n functions (or detach them) in one call.
 * Every function is looked up first; if one is not traced, nothing is
 * changed and -ENOENT is returned.  The touched pages are made writable
 * once per contiguous range and the whole batch is published in one round
 * of the architecture's protocol (arm64: all literals, a barrier, all
 * calls, one cache maintenance pass per range).
 */
int ps_attach_list(void *const *functions, size_t n, struct ps_ops *ops);
int ps_detach_list(void *const *functions, size_t n);
/* Take ops off n functions; a function it is not attached to is left as it is. */
int ps_detach_ops_list(void *const *functions, size_t n, struct ps_ops *ops);
/*
 * Number of traced functions (negative errno if not embedded); their
 * addresses.  Every embedded object loaded at the time of the call counts:
 * the program and its shared libraries, linked or dlopen()ed, in the order
 * they were first seen (the program first), so an index is only good
 * until the next dlopen or dlclose.  ps_count looks for objects loaded or
 * unloaded since the last call; ps_function does not (it is cheap, for a
 * loop after ps_count).
 */
long ps_count(void);
void *ps_function(long i);

/*
 * The embedded objects loaded now.  Every call looks for objects loaded
 * or unloaded since the last one (dl_iterate_phdr's dlpi_adds and
 * dlpi_subs) and forgets those that are gone, without touching their
 * memory.  An object is known by its load bias (dlpi_addr: unique among
 * the objects loaded at one time).
 */
struct ps_object {
	const char *name;	/* dlpi_name: "" for the program; valid for the process's life */
	uintptr_t bias;		/* load bias (dlpi_addr; 0 for an ET_EXEC program) */
	long first;		/* index of its first function for ps_function() */
	long count;		/* its traced functions */
};
/* Fill out[0..max) (out may be NULL); return how many objects there are. */
long ps_objects(struct ps_object *out, long max);
/*
 * Attach ops to every function of the object whose bias is `bias`, or take
 * every ops off them (-ENOENT: no such object).  Call ps_detach_object()
 * before dlclose() unloads a library whose functions have ops: nothing may
 * call an ops of an object that is being unmapped.
 */
int ps_attach_object(uintptr_t bias, struct ps_ops *ops);
int ps_detach_object(uintptr_t bias);
/*
 * For a tracer about to be unloaded by dlclose() (patchsite trace -p),
 * once no thread runs in the runtime or its trampolines: unmap what the
 * runtime mapped for itself (x86_64: the slots' cells).  0, or -EBUSY
 * when a site still calls a trampoline (attached, or a dormant slot):
 * then it is kept, and the runtime stays usable either way.
 */
int ps_release(void);

/* --- The architecture's part: struct ps_regs, the site and direct_call ---- */

#if defined(__aarch64__) && defined(__AARCH64EL__)
#include "patcher/arm64.h"
#elif defined(__x86_64__) && !defined(__ILP32__)
#include "patcher/x86_64.h"
#elif defined(__riscv) && __riscv_xlen == 64
#include "patcher/riscv64.h"
#else
#error "patchsite runtime: no patcher for this target architecture (runtime/patcher/ has arm64, riscv64 and x86_64)"
#endif

/* --- The segment that `patchsite embed` adds (layout shared with it) ------- */

#include "segment.h"

#endif /* PATCHSITE_CALLOPS_H */
