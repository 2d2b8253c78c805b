// SPDX-License-Identifier: GPL-2.0-only
/*
 * tests/kernel/tracefs-init.c - /init of the arm64, riscv64 and ppc64le test
 * kernels' initramfs: no busybox for those arches here, so this, built with
 * the cross compiler.  It does what tests/kernel/lib.sh's busybox /init does on
 * x86_64, and prints the same lines:
 *
 *   mounts proc, sysfs and tracefs (/sys/kernel/tracing);
 *   TRACEFS available_filter_functions=N
 *   echo function > current_tracer (every function traced)
 *   TRACEFS function tracer write=ok|failed
 *   TRACEFS enabled_functions=N
 *   TRACEFS dmesg ftrace-bug=N      (lines of the kernel log that say
 *                                     "ftrace bug" or "ftrace failed")
 *   TRACEFS done
 *
 * then reboots (qemu -no-reboot exits).
 *
 * Freestanding (-nostdlib, its own _start and system calls): a static glibc
 * saves the FP registers in setjmp before main, and the riscv64 tinyconfig
 * kernel has no FPU support (SIGILL).  arm64 and riscv64 share the generic
 * system call numbers; ppc64le has its own (arch/powerpc/kernel/syscalls/
 * syscall.tbl); built -fno-pie, its _start loads the TOC pointer (r2) as
 * an absolute address, so it needs nothing from the kernel's entry state.
 */
#if defined(__powerpc64__)
#define NR_dup3 316
#define NR_mknodat 288
#define NR_mkdirat 287
#define NR_mount 21
#define NR_openat 286
#define NR_close 6
#define NR_read 3
#define NR_write 4
#define NR_exit 1
#define NR_syslog 103
#define NR_reboot 88
#else
#define NR_dup3 24
#define NR_mknodat 33
#define NR_mkdirat 34
#define NR_mount 40
#define NR_openat 56
#define NR_close 57
#define NR_read 63
#define NR_write 64
#define NR_exit 93
#define NR_syslog 116
#define NR_reboot 142
#endif
#define AT_FDCWD (-100)
#define O_RDONLY 0
#define O_WRONLY 1
#define O_RDWR 2
#define O_TRUNC 01000
#define S_IFCHR 0020000

static long sys(long n, long a, long b, long c, long d, long e)
{
#if defined(__aarch64__)
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
	return x0;
#elif defined(__riscv)
	register long a7 __asm__("a7") = n;
	register long a0 __asm__("a0") = a;
	register long a1 __asm__("a1") = b;
	register long a2 __asm__("a2") = c;
	register long a3 __asm__("a3") = d;
	register long a4 __asm__("a4") = e;
	__asm__ volatile("ecall" : "+r"(a0) : "r"(a7), "r"(a1), "r"(a2), "r"(a3), "r"(a4) : "memory");
	return a0;
#elif defined(__powerpc64__)
	/* sc: the number in r0, arguments from r3, the result in r3 with
	 * cr0.SO set on an error (then r3 is the positive errno); the kernel
	 * may change r0, r4-r12, ctr, xer and cr0 */
	register long r0 __asm__("r0") = n;
	register long r3 __asm__("r3") = a;
	register long r4 __asm__("r4") = b;
	register long r5 __asm__("r5") = c;
	register long r6 __asm__("r6") = d;
	register long r7 __asm__("r7") = e;
	__asm__ volatile("sc\n\tbns+ 1f\n\tneg %1, %1\n1:"
			 : "+r"(r0), "+r"(r3), "+r"(r4), "+r"(r5), "+r"(r6), "+r"(r7)
			 :
			 : "r8", "r9", "r10", "r11", "r12", "cr0", "ctr", "xer", "memory");
	return r3;
#else
#error "arm64, riscv64 or ppc64le only"
#endif
}

static unsigned long len(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

static void out(const char *s)
{
	sys(NR_write, 1, (long)s, len(s), 0, 0);
}

static void num(long v)
{
	char b[24];
	int i = sizeof(b) - 1;
	int neg = v < 0;

	b[i] = 0;
	if (neg)
		v = -v;
	do {
		b[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	if (neg)
		b[--i] = '-';
	out(b + i);
}

static void line(const char *what, long v)
{
	out("TRACEFS ");
	out(what);
	out("=");
	num(v);
	out("\n");
}

static char buf[1 << 20];

static long lines(const char *path)
{
	long n = 0, r, i;
	long fd = sys(NR_openat, AT_FDCWD, (long)path, O_RDONLY, 0, 0);

	if (fd < 0)
		return -1;
	while ((r = sys(NR_read, fd, (long)buf, sizeof(buf), 0, 0)) > 0)
		for (i = 0; i < r; i++)
			n += buf[i] == '\n';
	sys(NR_close, fd, 0, 0, 0, 0);
	return r < 0 ? -1 : n;
}

static int put(const char *path, const char *s)
{
	long fd = sys(NR_openat, AT_FDCWD, (long)path, O_WRONLY | O_TRUNC, 0, 0);
	long w;

	if (fd < 0)
		return -1;
	w = sys(NR_write, fd, (long)s, len(s), 0, 0);
	if (sys(NR_close, fd, 0, 0, 0, 0) < 0 || w != (long)len(s))
		return -1;
	return 0;
}

static int has(const char *p, const char *end, const char *w)
{
	unsigned long n = len(w), i;

	for (; p + n <= end; p++) {
		for (i = 0; i < n && p[i] == w[i]; i++)
			;
		if (i == n)
			return 1;
	}
	return 0;
}

static void mnt(const char *src, const char *dir, const char *type)
{
	if (sys(NR_mount, (long)src, (long)dir, (long)type, 0, 0) < 0) {
		out("TRACEFS mount ");
		out(dir);
		out(" failed\n");
	}
}

#define T "/sys/kernel/tracing/"

void _start(void)
{
	long fd, n, bugs = 0;
	char *p, *e, *nl;

	sys(NR_mkdirat, AT_FDCWD, (long)"/dev", 0755, 0, 0);
	sys(NR_mknodat, AT_FDCWD, (long)"/dev/console", S_IFCHR | 0600, (5 << 8) | 1, 0);
	fd = sys(NR_openat, AT_FDCWD, (long)"/dev/console", O_RDWR, 0, 0);
	if (fd >= 0) {
		sys(NR_dup3, fd, 0, 0, 0, 0);
		sys(NR_dup3, fd, 1, 0, 0, 0);
		sys(NR_dup3, fd, 2, 0, 0, 0);
	}
	sys(NR_mkdirat, AT_FDCWD, (long)"/proc", 0755, 0, 0);
	sys(NR_mkdirat, AT_FDCWD, (long)"/sys", 0755, 0, 0);
	mnt("proc", "/proc", "proc");
	mnt("sysfs", "/sys", "sysfs");
	mnt("tracefs", "/sys/kernel/tracing", "tracefs");
	line("available_filter_functions", lines(T "available_filter_functions"));
	n = put(T "current_tracer", "function\n");
	out(n ? "TRACEFS function tracer write=failed\n" : "TRACEFS function tracer write=ok\n");
	line("enabled_functions", lines(T "enabled_functions"));
	put(T "current_tracer", "nop\n");
	n = sys(NR_syslog, 3 /* SYSLOG_ACTION_READ_ALL */, (long)buf, sizeof(buf), 0, 0);
	if (n > 0) {
		e = buf + n;
		for (p = buf; p < e; p = nl + 1) {
			for (nl = p; nl < e && *nl != '\n'; nl++)
				;
			bugs += has(p, nl, "ftrace bug") || has(p, nl, "ftrace failed");
		}
	}
	line("dmesg ftrace-bug", n > 0 ? bugs : -1);
	out("TRACEFS done\n");
	sys(NR_reboot, 0xfee1dead, 672274793, 0x01234567 /* RESTART */, 0, 0);
	sys(NR_exit, 0, 0, 0, 0, 0);
	for (;;)
		;
}
