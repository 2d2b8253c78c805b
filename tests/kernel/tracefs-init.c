// SPDX-License-Identifier: GPL-2.0-only
/*
 * tests/kernel/tracefs-init.c - /init of the arm64 and riscv64 test kernels'
 * initramfs (built -static with the cross compiler: no busybox for those
 * arches here).  It does what tests/kernel/lib.sh's busybox /init does on
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
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define T "/sys/kernel/tracing/"

static long lines(const char *path)
{
	char buf[65536];
	long n = 0;
	ssize_t r, i;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < r; i++)
			n += buf[i] == '\n';
	close(fd);
	return r < 0 ? -1 : n;
}

static int put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	return close(fd) == 0 && ok ? 0 : -1;
}

static char logbuf[1 << 20];

int main(void)
{
	int fd, n, bugs = 0;
	char *p, *nl;

	mkdir("/dev", 0755);
	mknod("/dev/console", S_IFCHR | 0600, makedev(5, 1));
	fd = open("/dev/console", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	if (mount("proc", "/proc", "proc", 0, NULL))
		printf("TRACEFS mount proc: %s\n", strerror(errno));
	if (mount("sysfs", "/sys", "sysfs", 0, NULL))
		printf("TRACEFS mount sysfs: %s\n", strerror(errno));
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL))
		printf("TRACEFS mount tracefs: %s\n", strerror(errno));
	printf("TRACEFS available_filter_functions=%ld\n", lines(T "available_filter_functions"));
	fflush(stdout);
	n = put(T "current_tracer", "function\n");
	printf("TRACEFS function tracer write=%s\n", n ? "failed" : "ok");
	fflush(stdout);
	printf("TRACEFS enabled_functions=%ld\n", lines(T "enabled_functions"));
	put(T "current_tracer", "nop\n");
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, logbuf, sizeof(logbuf) - 1);
	if (n > 0) {
		logbuf[n] = 0;
		for (p = logbuf; p && *p; p = nl) {
			nl = strchr(p, '\n');
			if (nl)
				*nl++ = 0;
			bugs += strstr(p, "ftrace bug") || strstr(p, "ftrace failed");
		}
	}
	printf("TRACEFS dmesg ftrace-bug=%d\n", n > 0 ? bugs : -1);
	printf("TRACEFS done\n");
	fflush(stdout);
	sync();
	reboot(RB_AUTOBOOT);
	return 0;
}
