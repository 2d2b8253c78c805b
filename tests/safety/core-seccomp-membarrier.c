// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-seccomp-membarrier.c - membarrier denied after the runtime has
 * registered for it (a seccomp filter installed once the program runs).
 * A round whose syncs fail must not be reported done: the call returns
 * the error and every site keeps its old bytes (idle stays idle,
 * attached stays attached).
 *
 * Strategy: attach and detach once (the runtime registers); attach g;
 * install a filter that makes membarrier(PRIVATE_EXPEDITED_SYNC_CORE)
 * fail with EPERM; then ps_attach(f) must return -EPERM with f's slot
 * still the NOP and its ops never called, and ps_detach(g) -EPERM with g
 * still counted; the runtime's own count of successful syncs is 0 for
 * both.
 */
#include <linux/filter.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "core.h"

CORE_FN(f, 1)
CORE_FN(g, 2)

static unsigned long fhits, ghits;
static struct ps_ops fops = { core_count, &fhits, NULL };
static struct ps_ops gops = { core_count, &ghits, NULL };

NOTRACE static void deny_sync_core(void)
{
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_membarrier, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { sizeof(prog) / sizeof(prog[0]), prog };

	EXPECT(!prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs: %s", strerror(errno));
	EXPECT(!prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp), "seccomp: %s", strerror(errno));
}

NOTRACE int main(void)
{
	struct ps_arch_stats a, b;
	int r;

	core_name = "core-seccomp-membarrier";
	EXPECT(ps_count() > 0, "not embedded: %ld", ps_count());
	EXPECT(ps_attach((void *)f, &fops) == 0 && ps_detach((void *)f) == 0, "first round");
	EXPECT(ps_attach((void *)g, &gops) == 0, "attach g");
	g(1);
	EXPECT(ghits == 1, "g counted %lu", ghits);
	deny_sync_core();
	EXPECT(syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == -1 &&
	       errno == EPERM, "the filter denies SYNC_CORE");

	ps_arch_stats(&a);
	r = ps_attach((void *)f, &fops);
	ps_arch_stats(&b);
	EXPECT(r == -EPERM, "attach with membarrier denied returned %d (%lu syncs done), want -EPERM",
	       r, (unsigned long)(b.syncs - a.syncs));
	EXPECT(core_slot0((void *)f) == 0x0f, "f's slot holds %#x, want the NOP's 0x0f",
	       core_slot0((void *)f));
	f(1);
	EXPECT(fhits == 0, "f's ops called %lu times after a refused attach", fhits);

	r = ps_detach((void *)g);
	EXPECT(r == -EPERM, "detach with membarrier denied returned %d, want -EPERM", r);
	EXPECT(core_slot0((void *)g) == 0xe8, "g's slot holds %#x, want its CALL (0xe8)",
	       core_slot0((void *)g));
	g(1);
	EXPECT(ghits == 2, "g counted %lu after a refused detach, want 2", ghits);
	core_ok();
	return 0;
}
