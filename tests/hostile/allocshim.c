// SPDX-License-Identifier: GPL-2.0-only
/*
 * allocshim.c - LD_PRELOAD shim that makes the Nth memory allocation of a
 * patchsite run fail, as a machine out of memory would.
 *
 *   cc -shared -fPIC -O2 -o allocshim.so allocshim.c
 *   ALLOCSHIM_NTH=17 LD_PRELOAD=./allocshim.so ./patchsite record IMAGE
 *
 * Environment:
 *   ALLOCSHIM_NTH    fail the Nth allocation made after main() starts
 *                    (1-based); 0 or unset: fail none, only count.  Later
 *                    allocations succeed (a library may retry).
 *   ALLOCSHIM_COUNT  file to append to, at exit (exit or _exit, so forked
 *                    workers too), how many allocations the run has made
 *                    so far after main() started, one number a line: the
 *                    largest is the N past which nothing fails
 *   ALLOCSHIM_LOG    file to append "CALL SIZE" to when the failure is
 *                    injected, so a test can prove it happened
 *   ALLOCSHIM_TRACE  file to append the failed call's backtrace to
 *                    (development: addr2line -e patchsite finds the caller)
 *
 * The count is one for the process and the workers it forks (a shared
 * page), so that exactly one allocation of the whole run fails.
 *
 * Counted and failed: malloc, calloc, realloc (a growth, not a free),
 * reallocarray, memalign, posix_memalign, aligned_alloc, valloc, pvalloc,
 * and anonymous mmap/mremap (the big arrays of elfio/mem.c are mapped, not
 * malloc'd).  strdup, strndup, asprintf, fopen and libelf/libdw/zlib call
 * malloc through its PLT entry, so they fail with it: glibc supports
 * replacing malloc for exactly this reason.
 *
 * Armed from main(): __libc_start_main is wrapped, so what the dynamic
 * loader and library constructors allocate before main() is neither
 * counted nor failed.  The real allocator is reached through glibc's
 * __libc_* entry points, not dlsym (which allocates).  Build it without
 * sanitizers and use it with the plain build: ASan replaces malloc itself.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static int armed;
static unsigned long nth, *seen;	/* seen: shared with forked workers */
static const char *log_path, *count_path, *trace_path;

/* The shim's own output: raw syscalls, no stdio (which allocates) */
static void put_line(const char *path, const char *line)
{
	int fd;

	if (!path)
		return;
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	(void)!write(fd, line, strlen(line));
	syscall(SYS_close, fd);
}

/* Should this allocation fail?  Counts it when armed. */
static int fail(const char *call, size_t size)
{
	char line[96];

	if (!armed)
		return 0;
	if (__atomic_add_fetch(seen, 1, __ATOMIC_SEQ_CST) != nth)
		return 0;
	snprintf(line, sizeof(line), "%s %zu\n", call, size);
	put_line(log_path, line);
	if (trace_path) {
		void *pc[24];
		int n = backtrace(pc, 24);
		int fd = (int)syscall(SYS_openat, AT_FDCWD, trace_path,
				      O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0) {
			backtrace_symbols_fd(pc, n, fd);
			syscall(SYS_close, fd);
		}
	}
	errno = ENOMEM;
	return 1;
}

void *malloc(size_t n)
{
	return fail("malloc", n) ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return fail("calloc", n * size) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	if (p && !n)
		return __libc_realloc(p, n);	/* a free */
	return fail("realloc", n) ? NULL : __libc_realloc(p, n);
}

void *reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n * size);
}

void *memalign(size_t align, size_t n)
{
	return fail("memalign", n) ? NULL : __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

void *valloc(size_t n)
{
	return memalign((size_t)sysconf(_SC_PAGESIZE), n);
}

void *pvalloc(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return memalign(pg, (n + pg - 1) & ~(pg - 1));
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (fail("posix_memalign", n))
		return ENOMEM;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if ((flags & MAP_ANONYMOUS) && !(flags & MAP_FIXED) && fail("mmap", len))
		return MAP_FAILED;
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (new_len > old_len && fail("mremap", new_len))
		return MAP_FAILED;
	return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

static void report_count(void)
{
	char line[32];

	armed = 0;
	snprintf(line, sizeof(line), "%lu\n", *seen);
	put_line(count_path, line);
}

void _exit(int status)
{
	if (armed && count_path)
		report_count();
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

void _Exit(int status) __attribute__((alias("_exit")));

static int (*real_main)(int, char **, char **);

static int armed_main(int argc, char **argv, char **envp)
{
	const char *n = getenv("ALLOCSHIM_NTH");

	nth = n ? strtoul(n, NULL, 10) : 0;
	log_path = getenv("ALLOCSHIM_LOG");
	count_path = getenv("ALLOCSHIM_COUNT");
	trace_path = getenv("ALLOCSHIM_TRACE");
	if (trace_path) {
		void *pc[2];
		backtrace(pc, 2);	/* loads libgcc_s now, not when failing */
	}
	seen = (unsigned long *)syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (seen == MAP_FAILED)
		abort();
	if (count_path)
		atexit(report_count);	/* before arming: registering may allocate */
	armed = 1;
	return real_main(argc, argv, envp);
}

int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
		      void (*init)(void), void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	int (*real)(int (*)(int, char **, char **), int, char **, void (*)(void), void (*)(void),
		    void (*)(void), void *);

	real = (int (*)(int (*)(int, char **, char **), int, char **, void (*)(void), void (*)(void),
			void (*)(void), void *))dlsym(RTLD_NEXT, "__libc_start_main");
	real_main = main;
	return real(armed_main, argc, argv, init, fini, rtld_fini, stack_end);
}
