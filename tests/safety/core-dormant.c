// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-dormant.c - a tracer attached its ops before a worker started
 * blocking every signal; the worker calls the traced functions in a loop;
 * the tracer takes its ops off.  No INT3 can be placed (the worker would
 * die at it), yet a detach of every site of an ops must succeed: x86_64
 * stores NULL in the ops' slot cell (the sites still call the slot, which
 * returns at once: "dormant"), and a later round, once no thread blocks
 * SIGTRAP, puts the NOPs back.
 *
 * Strategy: ops A on work and work2 (detached by ps_detach_ops_all), ops B
 * on other and work3 (a partial detach first, then ps_detach_list of both
 * functions); the worker counts its own loop.  Checked: each whole detach
 * returns 0 while the worker blocks SIGTRAP (on the runtime before dormant
 * slots: -EDEADLK), the ops' count stops growing while the worker's loop
 * goes on, the sites still hold a CALL; a partial detach and an attach
 * are refused (-EDEADLK), bytes unchanged; a round with nothing of its own
 * to change leaves the dormant sites alone; a fork child (one thread)
 * cleans them in its first round; once the worker unblocks, a round puts
 * back the bytes the file holds at every site (read from /proc/self/exe)
 * and the counters say so; then attach counts exactly again.  On arm64
 * and riscv64 (not built there) no round is ever refused.
 */
#include <elf.h>
#include <fcntl.h>
#include <sys/wait.h>

#include "core.h"

CORE_FN(work, 1)
CORE_FN(work2, 2)
CORE_FN(other, 3)
CORE_FN(work3, 4)
CORE_FN(spare, 5)

static volatile int stop, blocked, unblock, unblocked;
static volatile unsigned long iters;
static unsigned long hits_a, hits_b, hits_s;
static struct ps_ops ops_a = { core_count, &hits_a, NULL };
static struct ps_ops ops_b = { core_count, &hits_b, NULL };
static struct ps_ops ops_s = { core_count, &hits_s, NULL };

NOTRACE static void *worker(void *arg)
{
	(void)arg;
	core_mask_all(SIG_BLOCK);
	blocked = 1;
	while (!unblock) {
		work(1), work2(2), other(3), work3(4);
		iters++;
	}
	core_mask_all(SIG_UNBLOCK);
	unblocked = 1;
	while (!stop) {
		work(1), work2(2), other(3), work3(4);
		iters++;
	}
	return NULL;
}

/* The 5 bytes at a function's call slot (after ENDBR64 if any), in memory. */
NOTRACE static const unsigned char *slot_of(void *f)
{
	const unsigned char *p = f;

	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		p += 4;
	return p;
}

/* The same 5 bytes as the file holds them (a -no-pie program: vaddr = address). */
NOTRACE static void file_bytes(void *f, unsigned char out[5])
{
	uint64_t a = (uint64_t)(uintptr_t)slot_of(f);
	Elf64_Ehdr eh;
	int fd = open("/proc/self/exe", O_RDONLY);

	EXPECT(fd >= 0 && pread(fd, &eh, sizeof(eh), 0) == sizeof(eh), "read /proc/self/exe");
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		EXPECT(pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) ==
		       sizeof(ph), "read a program header");
		if (ph.p_type == PT_LOAD && a >= ph.p_vaddr && a + 5 <= ph.p_vaddr + ph.p_filesz) {
			EXPECT(pread(fd, out, 5, (off_t)(ph.p_offset + (a - ph.p_vaddr))) == 5,
			       "read the site from the file");
			close(fd);
			return;
		}
	}
	FAIL("no PT_LOAD holds %#llx", (unsigned long long)a);
}

/* Every site of fs holds what the file holds (the NOP embed left): 0 or 1 per mismatch. */
NOTRACE static int as_in_file(const char *when, void *const *fs, int n)
{
	int bad = 0;

	for (int i = 0; i < n; i++) {
		unsigned char want[5];
		const unsigned char *p = slot_of(fs[i]);

		file_bytes(fs[i], want);
		if (want[0] != 0x0f || memcmp(p, want, 5)) {
			fprintf(stderr, "%s: site %d holds %02x %02x %02x %02x %02x, "
				"the file %02x %02x %02x %02x %02x\n",
				when, i, p[0], p[1], p[2], p[3], p[4],
				want[0], want[1], want[2], want[3], want[4]);
			bad++;
		}
	}
	return bad;
}

NOTRACE static struct ps_arch_stats st(void)
{
	struct ps_arch_stats s;

	ps_arch_stats(&s);
	return s;
}

/*
 * Does the ops' count stay still while the worker's loop runs on?  A call
 * already inside the ops when the detach returned may finish (the
 * contract): the worker is the only caller, so once its loop has gone
 * round twice after the detach, that call is over, however long the
 * machine kept the worker off its core (a fixed 20 ms grace failed once
 * at load 11).
 */
NOTRACE static void still(const char *what, unsigned long *hits)
{
	struct timespec t = { 0, 20000000 }, ms = { 0, 1000000 };
	unsigned long h, i = iters;

	for (int k = 0; k < 10000 && iters - i < 2; k++)
		nanosleep(&ms, NULL);
	EXPECT(iters - i >= 2, "%s: the worker's loop did not go on (%lu)", what, iters - i);
	h = __atomic_load_n(hits, __ATOMIC_RELAXED);
	i = iters;
	for (int k = 0; k < 10 && iters - i < 2000; k++)
		nanosleep(&t, NULL);
	EXPECT(iters - i >= 1000, "%s: the worker's loop did not go on (%lu)", what, iters - i);
	EXPECT(__atomic_load_n(hits, __ATOMIC_RELAXED) == h,
	       "%s: the ops was called %lu times after its detach returned",
	       what, __atomic_load_n(hits, __ATOMIC_RELAXED) - h);
}

NOTRACE int main(void)
{
	void *all[] = { (void *)work, (void *)work2, (void *)other, (void *)work3 };
	void *fa[] = { (void *)work, (void *)work2 }, *fb[] = { (void *)other, (void *)work3 };
	struct ps_arch_stats s0, s;
	pthread_t t;
	pid_t pid;
	int status, r;

	core_name = "core-dormant";
	EXPECT(ps_count() > 0, "not embedded: %ld", ps_count());
	EXPECT(as_in_file("before any attach", all, 4) == 0, "the sites are not the file's NOPs");
	s0 = st();
	EXPECT(ps_attach_list(fa, 2, &ops_a) == 0, "attach A");
	EXPECT(ps_attach_list(fb, 2, &ops_b) == 0, "attach B");
	pthread_create(&t, NULL, worker, NULL);
	while (!blocked || iters < 1000)
		usleep(1000);
	EXPECT(hits_a > 0 && hits_b > 0, "the worker's calls are not counted");

	/* a whole ops off (ps_detach_ops_all) while the worker blocks SIGTRAP */
	r = ps_detach_ops_all(&ops_a);
	EXPECT(r == 0, "detach of every site of A returned %d (%s)", r, strerror(-r));
	s = st();
	EXPECT(s.dormant_detaches - s0.dormant_detaches == 1, "dormant detaches: %llu",
	       (unsigned long long)(s.dormant_detaches - s0.dormant_detaches));
	EXPECT(s.slots_dormant == 1, "dormant slots: %llu", (unsigned long long)s.slots_dormant);
	EXPECT(core_slot0((void *)work) == 0xe8 && core_slot0((void *)work2) == 0xe8,
	       "a dormant site no longer holds its CALL (%#x %#x)",
	       core_slot0((void *)work), core_slot0((void *)work2));
	still("A detached", &hits_a);

	/* partial: still refused, nothing changed, B still counted */
	r = ps_detach_ops((void *)other, &ops_b);
	EXPECT(r == -EDEADLK, "a partial detach of B returned %d", r);
	EXPECT(core_slot0((void *)other) == 0xe8, "refused, yet other's site changed");
	{
		unsigned long h = hits_b;

		while (hits_b - h < 100)
			usleep(1000);
	}
	/* a re-attach needs a round: refused, the site still calls the dormant slot */
	{
		unsigned char before[5];

		memcpy(before, slot_of((void *)work), 5);
		r = ps_attach((void *)work, &ops_a);
		EXPECT(r == -EDEADLK, "attach on a dormant site returned %d", r);
		EXPECT(!memcmp(before, slot_of((void *)work), 5), "refused, yet work's site changed");
	}
	/* the whole of B by ps_detach_list (every ops leaves those sites) */
	r = ps_detach_list(fb, 2);
	EXPECT(r == 0, "detach of every site of B returned %d (%s)", r, strerror(-r));
	s = st();
	EXPECT(s.dormant_detaches - s0.dormant_detaches == 2 && s.slots_dormant == 2,
	       "dormant detaches %llu, dormant slots %llu",
	       (unsigned long long)(s.dormant_detaches - s0.dormant_detaches),
	       (unsigned long long)s.slots_dormant);
	still("B detached", &hits_b);
	/* a call with nothing of its own to change: no round, the dormant sites stay */
	EXPECT(ps_detach((void *)spare) == 0, "detach of an idle function");
	EXPECT(core_slot0((void *)work) == 0xe8 && core_slot0((void *)other) == 0xe8,
	       "dormant sites changed while the worker blocks SIGTRAP");
	EXPECT(st().dormant_cleanups == s0.dormant_cleanups, "a cleanup while the worker blocks");

	/* fork while dormant: the child (one thread) cleans up in its first round */
	fflush(NULL);
	if (!(pid = fork())) {
		unsigned long ha = hits_a, hb = hits_b;

		for (int i = 0; i < 1000; i++)
			work(i), other(i);
		EXPECT(hits_a == ha && hits_b == hb, "child: a dormant site called its ops");
		r = ps_attach((void *)spare, &ops_s);
		EXPECT(r == 0, "child: attach returned %d", r);
		s = st();
		EXPECT(s.dormant_cleanups - s0.dormant_cleanups == 2 && s.slots_dormant == 0,
		       "child: cleanups %llu, dormant slots %llu",
		       (unsigned long long)(s.dormant_cleanups - s0.dormant_cleanups),
		       (unsigned long long)s.slots_dormant);
		EXPECT(as_in_file("child", all, 4) == 0, "child: sites not back to the file's bytes");
		hits_s = 0;
		for (int i = 0; i < 1000; i++)
			spare(i);
		EXPECT(hits_s == 1000, "child: %lu calls counted, want 1000", hits_s);
		EXPECT(ps_detach((void *)spare) == 0, "child: detach");
		_exit(0);
	}
	EXPECT(pid > 0, "fork");
	EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "the fork child failed (status %#x)", status);
	EXPECT(core_slot0((void *)work) == 0xe8, "the child's cleanup reached the parent");

	/* the worker unblocks: the next round puts the NOPs back */
	unblock = 1;
	while (!unblocked)
		usleep(1000);
	EXPECT(ps_detach((void *)spare) == 0, "the round once the worker unblocked");
	s = st();
	EXPECT(s.dormant_cleanups - s0.dormant_cleanups == 2 && s.slots_dormant == 0,
	       "cleanups %llu, dormant slots %llu",
	       (unsigned long long)(s.dormant_cleanups - s0.dormant_cleanups),
	       (unsigned long long)s.slots_dormant);
	EXPECT(as_in_file("after the cleanup", all, 4) == 0, "sites not back to the file's bytes");

	/* attach works again and counts exactly */
	stop = 1;
	pthread_join(t, NULL);
	hits_a = 0;
	EXPECT(ps_attach_list(fa, 2, &ops_a) == 0, "attach A again");
	for (int i = 0; i < 1000; i++)
		work(i), work2(i);
	EXPECT(hits_a == 2000, "%lu calls counted, want 2000", hits_a);
	EXPECT(ps_detach_ops_all(&ops_a) == 0, "detach A");
	EXPECT(as_in_file("at the end", all, 4) == 0, "sites not back to the file's bytes");
	core_ok();
	return 0;
}
