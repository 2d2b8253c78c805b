/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace/inject.c - `patchsite trace -p PID`: attach the tracer to an
 * embedded program that is already running, and take it out again.
 *
 * Strategy: nothing is touched before the program is known to be one we
 * can serve: /proc/PID/exe is read first (x86_64, not qemu-user, carrying
 * the segment `patchsite embed` adds).  Then one thread of the program, the
 * leader, is stopped with PTRACE_SEIZE + PTRACE_INTERRUPT (no signal is
 * sent, so the program's handlers never see us) at a moment it is in a
 * system call or in the program's own code (never inside libc or the
 * loader, whose locks it may hold: it is let run a little and stopped
 * again until then).  Its registers (general, and the whole XSAVE area)
 * are saved, and calls are made on it as the ABI makes them: arguments in
 * rdi and rsi, a 16-byte aligned stack well below the red zone, strings
 * written there with process_vm_writev, and a return address of 0, so
 * that the return stops the thread with SIGSEGV at rip 0, which we take
 * (any other signal is delivered to the program as it would have been).
 * dlopen is libc's own (glibc >= 2.34 exports it from libc.so.6): its
 * address is the target's libc base (/proc/PID/maps) plus its .dynsym
 * value, read by elfio_dynsym_lookup (elfio/dynsym.c).  The calls are
 * dlopen(libpatchsite-trace-attach.so) and patchsite_trace_attach(CONF): CONF, a few KEY=VALUE
 * lines written into the target's memory (the globs, the file the table
 * goes to, the file messages go to, both in a private directory), is the
 * whole channel; nothing goes through the environment.  Every register is
 * restored and the thread let go (PTRACE_DETACH): while it is attached,
 * the program runs untraced by us.
 *
 * Detaching (SIGINT, SIGTERM, --duration, or the program's end) stops the leader
 * the same way and calls patchsite_trace_detach() (every site back to its
 * own bytes, the table written, SIGTRAP's disposition given back).  Before
 * the library is unloaded, every thread is stopped at once and its rip
 * checked: none may be in the tracer, the runtime or the trampoline room
 * (a thread that entered a trampoline just before its site was restored);
 * one that is is let run and checked again.  Nothing can enter them
 * afterwards (no site calls them any more), so the threads are let go and
 * dlclose runs.  The runtime's claim on the segment (segment.h's reserved
 * word, the address of the copy that claimed it) is cleared through
 * /proc/PID/mem when that copy is gone, so that a later attach may claim
 * it again.  Last, the program's executable mappings are read back
 * (process_vm_readv) against its file: a byte that differs, outside the
 * segment embed added, is an error.  The tracer counts only (no return hook): a return stub of
 * the library left as the return address of a frame that outlives the
 * detach could not be taken back.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elfio/elfio.h"
#include "runtime/segment.h"
#include "trace/inject.h"

#define EXIT_BAD 2
#define ATTACH_LIB "libpatchsite-trace-attach.so"

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

struct map {
	uint64_t lo, hi, off;
	char perms[8];
	char path[PATH_MAX];
};

struct target {
	pid_t pid;
	char name[32];		/* "pid N", the subject of messages */
	char exe[PATH_MAX];	/* /proc/PID/exe's link */
	uint64_t bias;		/* the program's load bias */
	uint64_t seg_vaddr;	/* the segment header's link-time address */
	uint64_t seg_memsz;	/* and its size (the runtime writes in it) */
	uint64_t tramp, tramp_size;	/* the trampoline room (link-time) */
	uint64_t dlopen, dlclose, dlerror, munmap;	/* in the target */
	uint64_t attach_fn, detach_fn;	/* in the target, once the library is loaded */
	uint64_t lib_lo[16], lib_hi[16];	/* the tracer's and runtime's mappings */
	int nlib;
	int seized;		/* the leader is seized */
	struct user_regs_struct regs;	/* the leader's, as they were */
	unsigned char xstate[16384];
	struct iovec xiov;
};

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* the state letter of /proc/PID/stat (0 when there is no such process) */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static int gone(const struct target *t)
{
	char s = proc_state(t->pid);

	return !s || s == 'Z' || s == 'X';
}

static int exited_msg(const struct target *t)
{
	elfio_error(t->name, "the process exited during attach");
	return EXIT_BAD;
}

static int refused_msg(const struct target *t, int err)
{
	elfio_error(t->name, "ptrace refused (%s): another user's process, a process that is not "
		    "dumpable (prctl PR_SET_DUMPABLE), or kernel.yama.ptrace_scope forbids it "
		    "(run as its user with ptrace_scope 0, or with CAP_SYS_PTRACE)", strerror(err));
	return EXIT_BAD;
}

/* --- What runs there: /proc/PID/exe and /proc/PID/maps ------------------- */

static int read_maps(pid_t pid, struct map **out, size_t *n)
{
	char path[64], line[PATH_MAX + 128];
	struct map *m = NULL;
	size_t cap = 0;
	FILE *f;

	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct map e = { 0 };
		int pos = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &e.lo, &e.hi,
			   e.perms, &e.off, &pos) < 4)
			continue;
		if (pos > 0) {
			snprintf(e.path, sizeof(e.path), "%s", line + pos);
			e.path[strcspn(e.path, "\n")] = 0;
		}
		if (elfio_grow(&m, &cap, *n + 1, sizeof(*m))) {
			elfio_free(m);
			fclose(f);
			return -ENOMEM;
		}
		m[(*n)++] = e;
	}
	fclose(f);
	*out = m;
	return 0;
}


/* where the object at path (its file-offset-0 mapping) is loaded, and its bias */
static int map_bias(const struct map *m, size_t n, const char *path, uint64_t first_load,
		    uint64_t *bias)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].off == 0 && !strcmp(m[i].path, path)) {
			*bias = m[i].lo - first_load;
			return 0;
		}
	return -ENOENT;
}

/*
 * The program: x86_64, run natively, embedded.  Returns 0, or EXIT_BAD
 * after its message (the program untouched).
 */
static int check_program(struct target *t)
{
	char link[64];
	Elf64_Ehdr eh;
	int fd;
	ssize_t len;
	const char *base;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)t->pid);
	len = readlink(link, t->exe, sizeof(t->exe) - 1);
	if (len < 0) {
		if (errno == ENOENT && !gone(t))
			return exited_msg(t);
		if (errno == ENOENT || errno == ESRCH) {
			elfio_error(t->name, "no such process");
			return EXIT_BAD;
		}
		return refused_msg(t, errno);
	}
	t->exe[len] = 0;
	if (gone(t)) {
		elfio_error(t->name, "no such process (it has exited)");
		return EXIT_BAD;
	}
	base = strrchr(t->exe, '/') ? strrchr(t->exe, '/') + 1 : t->exe;
	if (!strncmp(base, "qemu-", 5)) {
		elfio_error(t->name, "%s: a program under qemu-user: -p attaches to x86_64 programs "
			    "run natively (qemu-user's guest cannot be ptraced as a native one)",
			    t->exe);
		return EXIT_BAD;
	}
	fd = open(link, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == EACCES || errno == EPERM ? refused_msg(t, errno) : exited_msg(t);
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr)) {
		elfio_error(t->name, "%s: not an ELF64 program", t->exe);
		close(fd);
		return EXIT_BAD;
	}
	if (eh.e_machine != EM_X86_64) {
		elfio_error(t->name, "%s: -p attaches to x86_64 programs only (this one is machine %u)",
			    t->exe, eh.e_machine);
		close(fd);
		return EXIT_BAD;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		struct ps_seg_header h;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || ph.p_filesz < sizeof(h) ||
		    pread(fd, &h, sizeof(h), (off_t)ph.p_offset) != (ssize_t)sizeof(h))
			continue;
		if (h.magic == PS_SEG_MAGIC && h.self == ph.p_vaddr) {
			t->seg_vaddr = h.self;
			t->seg_memsz = ph.p_memsz;
			t->tramp = h.tramp;
			t->tramp_size = h.tramp_size;
			close(fd);
			return 0;
		}
	}
	close(fd);
	elfio_error(t->name, "%s: not embedded by `patchsite embed`: nothing to attach to", t->exe);
	return EXIT_BAD;
}

/* dlopen, dlclose and dlerror in the target's libc; the program's bias */
static int find_libc(struct target *t)
{
	static const char *const names[] = { "dlopen", "dlclose", "dlerror", "munmap" };
	uint64_t vals[4], first, bias = 0;
	struct map *m = NULL;
	size_t n;
	int err = read_maps(t->pid, &m, &n);

	if (err) {
		elfio_free(m);
		return gone(t) ? exited_msg(t) : refused_msg(t, -err);
	}
	if (elfio_dynsym_lookup(t->exe, NULL, NULL, 0, &first) || map_bias(m, n, t->exe, first, &t->bias)) {
		elfio_error(t->name, "%s: not found in /proc/%d/maps", t->exe, (int)t->pid);
		elfio_free(m);
		return EXIT_BAD;
	}
	for (size_t i = 0; i < n; i++) {
		const char *b = strrchr(m[i].path, '/');

		if (m[i].off || !b || strncmp(b + 1, "libc.so.6", 9))
			continue;
		err = elfio_dynsym_lookup(m[i].path, names, vals, 4, &first);
		if (err) {
			elfio_error(t->name, "%s: no dlopen, dlclose or dlerror in its .dynsym (glibc "
				    "2.34 or later exports them from libc)", m[i].path);
			elfio_free(m);
			return EXIT_BAD;
		}
		map_bias(m, n, m[i].path, first, &bias);
		t->dlopen = bias + vals[0];
		t->dlclose = bias + vals[1];
		t->dlerror = bias + vals[2];
		t->munmap = bias + vals[3];
		elfio_free(m);
		return 0;
	}
	elfio_free(m);
	elfio_error(t->name, "%s: no libc.so.6 in its maps (a static program cannot load the "
		    "tracer)", t->exe);
	return EXIT_BAD;
}

/* --- ptrace ----------------------------------------------------------------- */

/* wait for the thread's next stop; 0, or -ESRCH when it (the process) is gone */
static int wait_stop(pid_t tid, int *status)
{
	for (;;) {
		pid_t r = waitpid(tid, status, __WALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (WIFEXITED(*status) || WIFSIGNALED(*status))
			return -ESRCH;
		return 0;
	}
}

static int is_event_stop(int status)
{
	return WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_STOP;
}

/* stop a seized thread (PTRACE_INTERRUPT): a signal that arrives first is
   delivered on, the program's as before */
static int interrupt(pid_t tid)
{
	int status, err;

	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
		return -errno;
	for (;;) {
		err = wait_stop(tid, &status);
		if (err)
			return err;
		if (is_event_stop(status))
			return 0;
		if (ptrace(PTRACE_CONT, tid, 0, WSTOPSIG(status)) < 0)
			return -errno;
		if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
			return -errno;
	}
}

static int in_lib(const struct target *t, uint64_t ip)
{
	for (int i = 0; i < t->nlib; i++)
		if (ip >= t->lib_lo[i] && ip < t->lib_hi[i])
			return 1;
	return t->tramp_size && ip >= t->bias + t->tramp && ip < t->bias + t->tramp + t->tramp_size;
}

/*
 * Stop the leader at a moment it holds no lock of libc or the loader: in
 * a system call, or running the program's own code, and never in the
 * tracer (before its unloading).  Up to 2 s of tries, then it is taken
 * where it is.
 */
static int stop_leader(struct target *t, const struct map *exe_maps, size_t nexe)
{
	double end = now_ms() + 2000;
	int err;

	for (;;) {
		int ok = 0;

		err = interrupt(t->pid);
		if (err)
			return err;
		if (ptrace(PTRACE_GETREGS, t->pid, 0, &t->regs) < 0)
			return -errno;
		if ((int64_t)t->regs.orig_rax >= 0)
			ok = 1;
		for (size_t i = 0; i < nexe; i++)
			if (t->regs.rip >= exe_maps[i].lo && t->regs.rip < exe_maps[i].hi)
				ok = 1;
		if (in_lib(t, t->regs.rip))
			ok = 0;
		if (ok || now_ms() > end)
			break;
		if (ptrace(PTRACE_CONT, t->pid, 0, 0) < 0)
			return -errno;
		usleep(200);
	}
	t->xiov.iov_base = t->xstate;
	t->xiov.iov_len = sizeof(t->xstate);
	if (ptrace(PTRACE_GETREGSET, t->pid, NT_X86_XSTATE, &t->xiov) < 0)
		return -errno;
	return 0;
}

static int restore_leader(struct target *t)
{
	if (ptrace(PTRACE_SETREGSET, t->pid, NT_X86_XSTATE, &t->xiov) < 0 ||
	    ptrace(PTRACE_SETREGS, t->pid, 0, &t->regs) < 0)
		return -errno;
	return 0;
}

static int write_mem(pid_t pid, uint64_t addr, const void *p, size_t len)
{
	struct iovec local = { (void *)p, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -errno;
}

/*
 * Call fn(a0, a1) on the stopped leader, strings s0 and s1 (if not NULL)
 * written on its stack and passed instead of a0/a1.  The return address is
 * 0: the return stops the thread with SIGSEGV at rip 0.  *ret is rax.
 */
static int call(struct target *t, uint64_t fn, const char *s0, uint64_t a0, const char *s1,
		uint64_t a1, uint64_t *ret)
{
	struct user_regs_struct r = t->regs;
	uint64_t sp = (t->regs.rsp - 4096) & ~(uint64_t)15, zero = 0;
	int status, err;

	if (s0) {
		size_t l = strlen(s0) + 1;

		sp = (sp - l) & ~(uint64_t)15;
		if ((err = write_mem(t->pid, sp, s0, l)))
			return err;
		a0 = sp;
	}
	if (s1) {
		size_t l = strlen(s1) + 1;

		sp = (sp - l) & ~(uint64_t)15;
		if ((err = write_mem(t->pid, sp, s1, l)))
			return err;
		a1 = sp;
	}
	sp -= 8;		/* as after a call: rsp + 8 is 16-byte aligned */
	if ((err = write_mem(t->pid, sp, &zero, 8)))
		return err;
	r.rsp = sp;
	r.rip = fn;
	r.rdi = a0;
	r.rsi = a1;
	r.rax = 0;
	r.orig_rax = (uint64_t)-1;	/* no system call to restart */
	r.eflags &= ~(uint64_t)0x400;	/* DF clear, as the ABI has it at a call */
	if (ptrace(PTRACE_SETREGS, t->pid, 0, &r) < 0 || ptrace(PTRACE_CONT, t->pid, 0, 0) < 0)
		return -errno;
	for (;;) {
		int sig;

		if ((err = wait_stop(t->pid, &status)))
			return err;
		sig = is_event_stop(status) ? 0 : WSTOPSIG(status);
		if (sig == SIGSEGV) {
			if (ptrace(PTRACE_GETREGS, t->pid, 0, &r) < 0)
				return -errno;
			if (r.rip == 0) {
				*ret = r.rax;
				return 0;
			}
		}
		if (ptrace(PTRACE_CONT, t->pid, 0, sig) < 0)
			return -errno;
	}
}

/* a string of the target's (dlerror's), at most len - 1 bytes */
static void read_str(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	struct iovec local = { buf, len - 1 }, remote = { (void *)(uintptr_t)addr, len - 1 };
	ssize_t n = addr ? process_vm_readv(pid, &local, 1, &remote, 1, 0) : -1;

	buf[n > 0 ? n : 0] = 0;
	buf[len - 1] = 0;
}

/* the messages the tracer wrote (its M= file), relayed on stderr as ours:
   `patchsite: pid N: ...` */
static void relay(const struct target *t, const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int fd;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *m = line;

		line[strcspn(line, "\n")] = 0;
		if (!strncmp(m, "patchsite-trace: ", 17))
			m += 17;
		elfio_error(t->name, "%s", m);
	}
	fclose(f);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);	/* relayed once */
	if (fd >= 0)
		close(fd);
}

/* the tracer's and the runtime's mappings in the target (after dlopen) */
static void find_libs(struct target *t, const char *lib)
{
	struct map *m = NULL;
	size_t n;
	uint64_t first;
	static const char *const names[] = { "patchsite_trace_attach", "patchsite_trace_detach" };
	uint64_t vals[2] = { 0, 0 }, bias = 0;

	t->nlib = 0;
	if (read_maps(t->pid, &m, &n))
		return;
	for (size_t i = 0; i < n && t->nlib < 16; i++) {
		const char *b = strrchr(m[i].path, '/');
		int ours = b && (!strcmp(b + 1, ATTACH_LIB) || !strcmp(b + 1, "libpatchsite-callops.so"));

		/* and the anonymous mapping right after one: its .bss */
		if (ours || (!m[i].path[0] && t->nlib && t->lib_hi[t->nlib - 1] == m[i].lo)) {
			t->lib_lo[t->nlib] = m[i].lo;
			t->lib_hi[t->nlib++] = m[i].hi;
		}
	}
	if (!elfio_dynsym_lookup(lib, names, vals, 2, &first) && !map_bias(m, n, lib, first, &bias)) {
		t->attach_fn = bias + vals[0];
		t->detach_fn = bias + vals[1];
	}
	elfio_free(m);
}

/*
 * Where the tracer library we loaded is mapped in pid (its lowest mapping),
 * or 0.  An exec by the program replaces every mapping, and nothing but
 * our dlopen maps that library: an address that no longer holds it means
 * the image is a new one, whose code and memory we must not touch.
 */
static uint64_t attach_lib_at(pid_t pid)
{
	struct map *m = NULL;
	size_t n;
	uint64_t at = 0;

	if (read_maps(pid, &m, &n))
		return 0;
	for (size_t i = 0; i < n && !at; i++) {
		const char *b = strrchr(m[i].path, '/');

		if (b && !strcmp(b + 1, ATTACH_LIB))
			at = m[i].lo;
	}
	elfio_free(m);
	return at;
}

/* the mappings of the program's own file (its code: a safe place to stop) */
static int exe_maps(const struct target *t, struct map **m, size_t *n)
{
	struct map *all = NULL;
	size_t k = 0, na;
	int err = read_maps(t->pid, &all, &na);

	if (err)
		return err;
	for (size_t i = 0; i < na; i++)
		if (!strcmp(all[i].path, t->exe))
			all[k++] = all[i];
	*m = all;
	*n = k;
	return 0;
}

/* --- Every thread stopped: none in the tracer ------------------------------- */

static int thread_list(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	size_t cap = 0;

	*tids = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0 || tid == pid)
			continue;
		if (elfio_grow(tids, &cap, *n + 1, sizeof(**tids)))
			break;
		(*tids)[(*n)++] = tid;
	}
	closedir(d);
	return 0;
}

/*
 * Stop every thread but the leader (stopped already), check that none is
 * in the tracer, the runtime or the trampoline room, and let them go.  A
 * thread that is, is let run 1 ms and the whole check made again (10 s at
 * most).  Returns 0 when a check found none.
 */
static int quiesce(struct target *t)
{
	double end = now_ms() + 10000;

	for (;;) {
		pid_t *tids;
		size_t n;
		int busy = 0;

		if (thread_list(t->pid, &tids, &n))
			return -ESRCH;
		for (size_t i = 0; i < n; i++) {
			struct user_regs_struct r;

			if (ptrace(PTRACE_SEIZE, tids[i], 0, 0) < 0) {
				tids[i] = 0;	/* gone since the listing */
				continue;
			}
			if (interrupt(tids[i]) || ptrace(PTRACE_GETREGS, tids[i], 0, &r) < 0)
				continue;
			if (in_lib(t, r.rip))
				busy = 1;
		}
		for (size_t i = 0; i < n; i++)
			if (tids[i])
				ptrace(PTRACE_DETACH, tids[i], 0, 0);
		elfio_free(tids);
		if (!busy)
			return 0;
		if (now_ms() > end)
			return -EBUSY;
		usleep(1000);
	}
}

/* the runtime's claim: segment.h's reserved word, the address of the copy
   of the runtime that claimed the segment (0: none), read and written
   through /proc/PID/mem (the page may be read-only to the program) */
static int claim_rw(const struct target *t, uint64_t *w, int write)
{
	char path[64];
	uint64_t addr = t->bias + t->seg_vaddr + offsetof(struct ps_seg_header, reserved);
	int fd, ok;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)t->pid);
	fd = open(path, write ? O_RDWR | O_CLOEXEC : O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ok = write ? pwrite(fd, w, 8, (off_t)addr) == 8 : pread(fd, w, 8, (off_t)addr) == 8;
	close(fd);
	return ok ? 0 : -EIO;
}

/*
 * The claim cleared once the copy that made it is unloaded: only a claim
 * made since the attach (none before it, one now) and only when no copy
 * of the runtime is mapped any more, so that a later attach, whose copy
 * may load elsewhere, can claim the segment again.
 */
static void release_claim(struct target *t, uint64_t before)
{
	uint64_t w = 0;

	if (before || claim_rw(t, &w, 0) || !w)
		return;
	w = 0;
	if (claim_rw(t, &w, 1))
		elfio_error(t->name, "the runtime's claim could not be cleared");
}

/*
 * The runtime's x86_64 patcher maps its batch of sites (struct x86_batch
 * of runtime/patcher/x86_64.c: cap, n, then n entries of 24 bytes whose
 * first word is a site's address) and never unmaps it, for a SIGTRAP
 * handler that may read it late; that handler is gone with the library.
 * A private anonymous mapping that was not there before the attach, starts
 * with such a batch, and is just its size, is unmapped (by a munmap the
 * program calls).
 */
static void unmap_leftovers(struct target *t, const struct map *m0, size_t n0,
			    const struct map *em, size_t nem)
{
	struct map *m = NULL;
	size_t n;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read_maps(t->pid, &m, &n)) {
		if (fd >= 0)
			close(fd);
		elfio_free(m);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t h[5], size, ret;
		int old = 0, site = 0;

		if (m[i].path[0] || strcmp(m[i].perms, "rw-p"))
			continue;
		for (size_t k = 0; k < n0; k++)
			old |= m0[k].lo == m[i].lo;
		if (old || pread(fd, h, sizeof(h), (off_t)m[i].lo) != (ssize_t)sizeof(h))
			continue;
		size = (16 + h[0] * 24 + 4095) & ~(uint64_t)4095;
		if (!h[0] || h[0] > (1u << 24) || h[1] > h[0] || size > m[i].hi - m[i].lo)
			continue;
		for (size_t k = 0; k < nem; k++)
			site |= h[2] >= em[k].lo && h[2] < em[k].hi;
		if (h[1] && !site)
			continue;
		if (!h[1] && size != m[i].hi - m[i].lo)
			continue;	/* an empty one: only when it is the whole mapping */
		call(t, t->munmap, NULL, m[i].lo, NULL, size, &ret);
	}
	close(fd);
	elfio_free(m);
}

/*
 * After the detach, the program's code is its file's again: every
 * executable mapping of the program read from its memory
 * (process_vm_readv) against the file's bytes at that offset, but for the
 * segment embed added, where the runtime carved its trampolines.  Returns
 * how many bytes differ (0), or -errno.
 */
static long verify_code(const struct target *t)
{
	struct map *m = NULL;
	size_t n;
	long diff = 0;
	int fd = open(t->exe, O_RDONLY | O_CLOEXEC), err;
	unsigned char a[65536], b[65536];
	uint64_t slo = t->bias + t->seg_vaddr, shi = slo + t->seg_memsz;

	if (fd < 0)
		return -errno;
	if ((err = read_maps(t->pid, &m, &n))) {
		close(fd);
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(m[i].path, t->exe) || m[i].perms[2] != 'x')
			continue;
		for (uint64_t at = m[i].lo; at < m[i].hi; at += sizeof(a)) {
			size_t len = m[i].hi - at < sizeof(a) ? (size_t)(m[i].hi - at) : sizeof(a);
			struct iovec l = { a, len }, r = { (void *)(uintptr_t)at, len };
			ssize_t got = process_vm_readv(t->pid, &l, 1, &r, 1, 0);
			ssize_t want = pread(fd, b, len, (off_t)(m[i].off + (at - m[i].lo)));

			if (got != (ssize_t)len) {
				diff = -EIO;
				goto out;
			}
			for (size_t k = 0; k < len; k++)
				if ((ssize_t)k < want && a[k] != b[k] && !(at + k >= slo && at + k < shi))
					diff++;
		}
	}
out:
	elfio_free(m);
	close(fd);
	return diff;
}

/* the program had the runtime (libpatchsite-callops.so) before the attach:
   it links it, or preloads the tracer; the tracer shares that copy, which
   stays after the detach with its claim and its batch */
static int had_runtime(const struct map *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *b = strrchr(m[i].path, '/');

		if (b && !strcmp(b + 1, "libpatchsite-callops.so"))
			return 1;
	}
	return 0;
}

/* --- The command -------------------------------------------------------------- */

/* libpatchsite-trace-attach.so: --tracer, else installed beside the
   binary's prefix, else the build tree */
static int find_tracer(const char *given, char *out)
{
	static const char *const rel[] = { "../lib/patchsite/x86_64/", "build/runtime/x86_64/",
					   "../build/runtime/x86_64/" };
	char self[PATH_MAX], cand[PATH_MAX * 2];
	ssize_t n;

	if (given)
		return realpath(given, out) ? 0 : -errno;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -ENOENT;
	self[n] = 0;
	*strrchr(self, '/') = 0;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(cand, sizeof(cand), "%s/%s%s", self, rel[i], ATTACH_LIB);
		if (realpath(cand, out))
			return 0;
	}
	return -ENOENT;
}

static int fail_detach(struct target *t, int err)
{
	if (t->seized) {
		restore_leader(t);
		ptrace(PTRACE_DETACH, t->pid, 0, 0);
		t->seized = 0;
	}
	if (err == -ESRCH || gone(t))
		return exited_msg(t);
	if (err)
		elfio_error(t->name, "ptrace: %s", strerror(-err));
	return EXIT_BAD;
}

/* One attach: the program, the tracer, the files it writes, what it found before. */
struct attach {
	struct target *t;
	char lib[PATH_MAX];		/* the tracer library */
	char dir[32];			/* our temporary directory */
	bool dir_made;
	char out[PATH_MAX + 64];	/* the table file (summary.txt) */
	char msg[PATH_MAX + 64];	/* the tracer's messages */
	char conf[8192];		/* what attach_fn is given */
	struct map *em, *m0;		/* the executable's mappings; all, before */
	size_t nem, n0;
	uint64_t handle, claim0;	/* the dlopen handle; the segment claimed before */
	uint64_t lib_at;		/* where the tracer library is mapped (its first mapping) */
	double t0;			/* when the command began (ms) */
	sigset_t block, prev;		/* SIGINT and SIGTERM; the mask before */
};

/*
 * The tracer library and the files it writes: a directory of ours (the
 * program's owner's), the table file (in --outdir, else there), the
 * messages, and the configuration that names them.  0, or -errno (said).
 */
static int prepare_files(struct attach *a, const struct trace_attach_opts *o)
{
	int fd;

	if (find_tracer(o->tracer, a->lib)) {
		elfio_error(o->tracer ? o->tracer : ATTACH_LIB, "not found (give --tracer=PATH; "
			    "`make runtime` builds it into build/runtime/x86_64/)");
		return -ENOENT;
	}
	snprintf(a->dir, sizeof(a->dir), "/tmp/patchsite-attach.XXXXXX");
	if (!mkdtemp(a->dir)) {
		int err = -errno;

		elfio_error(a->dir, "mkdtemp: %s", strerror(-err));
		return err;
	}
	a->dir_made = true;
	/* the program writes there: its owner's, when we are root */
	if (geteuid() == 0) {
		struct stat st;
		char p[64];

		snprintf(p, sizeof(p), "/proc/%d", (int)a->t->pid);
		if (stat(p, &st) == 0 && chown(a->dir, st.st_uid, st.st_gid) < 0)
			elfio_error(a->dir, "chown: %s", strerror(errno));
	}
	if (o->outdir) {
		if (mkdir(o->outdir, 0755) < 0 && errno != EEXIST) {
			int err = -errno;

			elfio_error(o->outdir, "mkdir: %s", strerror(-err));
			return err;
		}
		bool found = realpath(o->outdir, a->out) != NULL;

		if (!found || strlen(a->out) > PATH_MAX - 16) {
			int err = !found ? -errno : -ENAMETOOLONG;

			elfio_error(o->outdir, "%s", strerror(-err));
			return err;
		}
		strcat(a->out, "/summary.txt");
	} else {
		snprintf(a->out, sizeof(a->out), "%s/summary.txt", a->dir);
	}
	snprintf(a->msg, sizeof(a->msg), "%s/messages", a->dir);
	/* the table file too: made here (the program may not write in DIR) */
	const char *const files[2] = { a->msg, a->out };
	for (int i = 0; i < 2; i++) {
		fd = open(files[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0 || fchmod(fd, 0666) < 0) {
			int err = -errno;

			elfio_error(files[i], "%s", strerror(-err));
			if (fd >= 0)
				close(fd);
			return err;
		}
		close(fd);
	}
	if ((size_t)snprintf(a->conf, sizeof(a->conf), "F=%s\nO=%s\nM=%s\nFORMAT=%s\n",
			     o->globs ? o->globs : "*", a->out, a->msg,
			     o->format ? o->format : "text") >= sizeof(a->conf)) {
		elfio_error(a->t->name, "-F globs too long (8 KiB in all)");
		return -E2BIG;
	}
	return 0;
}

/* SIGINT/SIGTERM from now on end the trace, never an injection half-way. */
static void catch_stop(struct attach *a)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&a->block);
	sigaddset(&a->block, SIGINT);
	sigaddset(&a->block, SIGTERM);
}

/*
 * Into the program, SIGINT and SIGTERM blocked meanwhile: seize it, load
 * the tracer, attach it, and out again.  0: traced; else the exit status
 * (said), with the program as it was.
 */
static int inject(struct attach *a)
{
	struct target *t = a->t;
	uint64_t ret = 0;
	char err_s[512];
	int err, rc = EXIT_BAD;

	if (ptrace(PTRACE_SEIZE, t->pid, 0, 0) < 0) {
		err = errno;
		return err == ESRCH || gone(t) ? exited_msg(t) : refused_msg(t, err);
	}
	t->seized = 1;
	sigprocmask(SIG_BLOCK, &a->block, &a->prev);
	if ((err = exe_maps(t, &a->em, &a->nem)) || (err = stop_leader(t, a->em, a->nem))) {
		rc = fail_detach(t, err);
		goto unblock;
	}
	if (claim_rw(t, &a->claim0, 0) || read_maps(t->pid, &a->m0, &a->n0)) {
		rc = fail_detach(t, -ESRCH);
		goto unblock;
	}
	if ((err = call(t, t->dlopen, a->lib, 0, NULL, 2 /* RTLD_NOW */, &a->handle))) {
		rc = fail_detach(t, err);
		goto unblock;
	}
	if (!a->handle) {
		if (!call(t, t->dlerror, NULL, 0, NULL, 0, &ret))
			read_str(t->pid, ret, err_s, sizeof(err_s));
		else
			snprintf(err_s, sizeof(err_s), "(no dlerror)");
		fail_detach(t, 0);
		elfio_error(t->name, "dlopen %s: %s", a->lib, err_s);
		goto unblock;
	}
	find_libs(t, a->lib);
	a->lib_at = attach_lib_at(t->pid);
	if (!t->attach_fn || !t->detach_fn) {
		call(t, t->dlclose, NULL, a->handle, NULL, 0, &ret);
		fail_detach(t, 0);
		elfio_error(a->lib, "no patchsite_trace_attach in it (not the -p build of the tracer)");
		goto unblock;
	}
	err = call(t, t->attach_fn, a->conf, 0, NULL, 0, &ret);
	if (err) {
		rc = fail_detach(t, err);
		goto unblock;
	}
	if ((int64_t)ret < 0) {
		/* nothing attached: out again, the tracer said why (its runtime
		   may have claimed the segment on the way) */
		call(t, t->dlclose, NULL, a->handle, NULL, 0, &ret);
		find_libs(t, a->lib);
		if (!t->nlib)
			release_claim(t, a->claim0);
		fail_detach(t, 0);
		relay(t, a->msg);
		goto unblock;
	}
	if ((err = restore_leader(t)) || ptrace(PTRACE_DETACH, t->pid, 0, 0) < 0) {
		rc = fail_detach(t, err ? err : -errno);
		goto unblock;
	}
	t->seized = 0;
	sigprocmask(SIG_SETMASK, &a->prev, NULL);
	relay(t, a->msg);
	fprintf(stderr, "patchsite: %s: attached %" PRIu64 " functions in %.1f ms\n", t->name,
		ret, now_ms() - a->t0);
	return 0;
unblock:
	sigprocmask(SIG_SETMASK, &a->prev, NULL);
	return rc;
}

/* the program ran exec since the attach (see attach_lib_at) */
static int execd(const struct attach *a)
{
	return a->lib_at && !gone(a->t) && attach_lib_at(a->t->pid) != a->lib_at;
}

/*
 * Traced: until a signal, the duration, the program's end or its exec (its
 * maps read every 200 ms); then SIGINT/SIGTERM blocked.
 */
static void wait_traced(struct attach *a, const struct trace_attach_opts *o)
{
	double deadline = o->duration > 0 ? now_ms() + o->duration * 1e3 : 0;

	for (unsigned k = 1; !stop_asked && !gone(a->t) && (!deadline || now_ms() < deadline); k++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		if (k % 10 == 0 && execd(a))
			break;
		nanosleep(&ts, NULL);
	}
	sigprocmask(SIG_BLOCK, &a->block, &a->prev);
}

/* The program ran exec while traced: the new image is left as it is. */
static int execd_msg(const struct target *t)
{
	elfio_error(t->name, "the program ran exec while traced: its new image is left untouched, "
		    "and what the old one counted is lost (-p does not follow exec)");
	return EXIT_BAD;
}

/*
 * Detach: the tracer off every function, then out of the program, which
 * is left with the code and the mappings it had.  The exit status (said).
 */
static int detach(struct attach *a)
{
	struct target *t = a->t;
	uint64_t ret = 0;
	int err;

	if (gone(t)) {
		relay(t, a->msg);
		fprintf(stderr, "patchsite: %s: the program exited while traced\n", t->name);
		return 0;
	}
	if (execd(a))
		return execd_msg(t);
	if (ptrace(PTRACE_SEIZE, t->pid, 0, 0) < 0)
		return gone(t) ? 0 : refused_msg(t, errno);
	t->seized = 1;
	if ((err = stop_leader(t, a->em, a->nem)))
		return fail_detach(t, err);
	/* stopped: an exec from here on is impossible, one before is seen now */
	if (execd(a)) {
		fail_detach(t, 0);
		return execd_msg(t);
	}
	if ((err = call(t, t->detach_fn, NULL, 0, NULL, 0, &ret)))
		return fail_detach(t, err);
	relay(t, a->msg);
	if ((int64_t)ret < 0) {
		fail_detach(t, 0);
		elfio_error(t->name, "the tracer could not detach (%s): it stays loaded",
			    strerror((int)-(int64_t)ret));
		return EXIT_BAD;
	}
	if ((err = quiesce(t))) {
		fail_detach(t, 0);
		elfio_error(t->name, "a thread stays in the tracer: detached, but not unloaded");
		return 0;
	}
	if ((err = call(t, t->dlclose, NULL, a->handle, NULL, 0, &ret)))
		return fail_detach(t, err);
	find_libs(t, a->lib);
	if (!t->nlib) {	/* (an anonymous mapping is taken only after one of theirs) */
		release_claim(t, a->claim0);
		unmap_leftovers(t, a->m0, a->n0, a->em, a->nem);
	} else if (!had_runtime(a->m0, a->n0)) {
		elfio_error(t->name, "dlclose left the tracer or the runtime mapped");
	}	/* else the program's own runtime, which the tracer shared, stays */
	if ((err = restore_leader(t)) || ptrace(PTRACE_DETACH, t->pid, 0, 0) < 0)
		return fail_detach(t, err ? err : -errno);
	t->seized = 0;
	/* (a runtime the program had before may keep sites of its own) */
	if (!had_runtime(a->m0, a->n0)) {
		long d = verify_code(t);

		if (d) {
			elfio_error(t->name, "after the detach, %ld bytes of the program's code differ "
				    "from %s", d < 0 ? 0 : d, t->exe);
			return EXIT_BAD;
		}
	}
	fprintf(stderr, "patchsite: %s: detached\n", t->name);
	return 0;
}

/* The table file on stdout, where no --outdir keeps it. */
static void print_table(const struct attach *a, const struct trace_attach_opts *o)
{
	if (o->outdir)
		return;
	FILE *f = fopen(a->out, "r");
	char line[4096];

	while (f && fgets(line, sizeof(line), f))
		fputs(line, stdout);
	if (f)
		fclose(f);
	fflush(stdout);
}

/* Our files go, and the directory (the table file stays in --outdir). */
static void remove_files(const struct attach *a, const struct trace_attach_opts *o)
{
	if (!a->dir_made)
		return;
	if (!o->outdir)
		unlink(a->out);
	unlink(a->msg);
	rmdir(a->dir);
}

int trace_attach_pid(pid_t pid, const struct trace_attach_opts *o)
{
	struct target *t = elfio_calloc(1, sizeof(*t));
	struct attach a = { .t = t, .t0 = now_ms() };
	int rc = EXIT_BAD;

	if (!t) {
		elfio_error("trace", "out of memory");
		return EXIT_BAD;
	}
	t->pid = pid;
	snprintf(t->name, sizeof(t->name), "pid %d", (int)pid);
	if ((rc = check_program(t)) || (rc = find_libc(t)))
		goto out;
	rc = EXIT_BAD;
	if (prepare_files(&a, o))
		goto out;
	catch_stop(&a);
	if ((rc = inject(&a)))
		goto out;
	wait_traced(&a, o);
	rc = detach(&a);
	print_table(&a, o);
	sigprocmask(SIG_SETMASK, &a.prev, NULL);
out:
	remove_files(&a, o);
	elfio_free(a.em);
	elfio_free(a.m0);
	elfio_free(t);
	return rc;
}

static int attach_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "patchsite: trace: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return EXIT_BAD;
}

int trace_attach_cmd(int argc, char **argv)
{
	enum { OPT_TRACER = 256, OPT_FORMAT, OPT_DURATION };
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "filter", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "output", required_argument, NULL, 'o' },
		{ "tracer", required_argument, NULL, OPT_TRACER },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ NULL, 0, NULL, 0 },
	};
	struct trace_attach_opts o = { 0 };
	char *globs = NULL, *end;
	size_t globs_cap = 0;
	long pid = 0;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:F:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || pid <= 0 || pid > INT_MAX) {
				elfio_free(globs);
				return attach_usage("-p takes a process id, not '%s'", optarg);
			}
			break;
		case 'F': {
			size_t l = globs ? strlen(globs) : 0;

			if (elfio_grow(&globs, &globs_cap, l + strlen(optarg) + 2, 1)) {
				elfio_free(globs);
				return attach_usage("%s", "out of memory");
			}
			if (l)
				globs[l++] = ',';
			strcpy(globs + l, optarg);
			break;
		}
		case OPT_DURATION:
			o.duration = strtod(optarg, &end);
			if (end == optarg || *end || !(o.duration > 0)) {
				elfio_free(globs);
				return attach_usage("--duration takes seconds, not '%s'", optarg);
			}
			break;
		case 'o':
			o.outdir = optarg;
			break;
		case OPT_TRACER:
			o.tracer = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "tsv") && strcmp(optarg, "json")) {
				elfio_free(globs);
				return attach_usage("--format takes text, tsv or json, not '%s'", optarg);
			}
			o.format = optarg;
			break;
		default:
			elfio_free(globs);
			return attach_usage("bad option '%s' (unknown, or without its argument)",
					    argv[optind - 1]);
		}
	}
	if (!pid || optind != argc) {
		elfio_free(globs);
		return attach_usage("%s", "-p PID attaches to a running program and takes no PROG");
	}
	o.globs = globs;
	rc = trace_attach_pid((pid_t)pid, &o);
	elfio_free(globs);
	return rc;
}
