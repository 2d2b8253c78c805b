// SPDX-License-Identifier: GPL-2.0-only
/*
 * failshim.c - LD_PRELOAD shim that makes patchsite's writes fail.
 *
 *   cc -shared -fPIC -O2 -o failshim.so failshim.c -ldl
 *   FAILSHIM_CALL=fsync LD_PRELOAD=./failshim.so ./patchsite record -o t.txt IMAGE
 *
 * Environment:
 *   FAILSHIM_CALL   which call fails: write, pwrite, fsync, rename,
 *                   copy_file_range, fchmod, mkostemp, close
 *   FAILSHIM_NTH    fail the Nth matching call (1-based, default 1); later
 *                   calls go through unless FAILSHIM_STICKY=1
 *   FAILSHIM_ERRNO  the errno: EIO (default), ENOSPC, EDQUOT, EXDEV, EINTR,
 *                   EPERM, EROFS, ENOSYS, EINVAL
 *   FAILSHIM_SHORT  with write/pwrite/copy_file_range: first write half of
 *                   the request (a short write), fail on the next call, as a
 *                   filling disk does
 *   FAILSHIM_LOG    file to append "CALL errno" to each time a failure is
 *                   injected, so a test can prove the failure happened
 *   FAILSHIM_FORCE  CALL=ERRNO: that call always fails so, besides the one
 *                   above (copy_file_range=EXDEV forces the read/write
 *                   fallback, whose pwrite can then be failed)
 *
 * Only calls on patchsite's own output are failed: an fd whose file name
 * contains "/.patchsite." (the temporary beside the target), or rename()
 * from such a name; writes to stdout/stderr and the input are left alone.
 * Build it without sanitizers and use it with the plain build: ASan's own
 * interceptors for write() and friends do not mix with this interposition.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static int matched;		/* matching calls seen */
static int short_done;

static const char *want(void)
{
	const char *c = getenv("FAILSHIM_CALL");
	return c ? c : "";
}

static int err_by_name(const char *e)
{
	static const struct { const char *name; int value; } names[] = {
		{ "EIO", EIO }, { "ENOSPC", ENOSPC }, { "EDQUOT", EDQUOT }, { "EXDEV", EXDEV },
		{ "EINTR", EINTR }, { "EPERM", EPERM }, { "EROFS", EROFS }, { "ENOSYS", ENOSYS },
		{ "EINVAL", EINVAL }, { "EACCES", EACCES },
	};
	for (size_t i = 0; e && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(e, names[i].name))
			return names[i].value;
	return EIO;
}

static int err_value(void)
{
	return err_by_name(getenv("FAILSHIM_ERRNO"));
}

/* FAILSHIM_FORCE=CALL=ERRNO: the errno if call is forced to fail, else 0 */
static int forced(const char *call, int relevant)
{
	const char *f = getenv("FAILSHIM_FORCE");
	size_t n = strlen(call);

	if (!relevant || !f || strncmp(f, call, n) || f[n] != '=')
		return 0;
	return err_by_name(f + n + 1);
}

static void log_failure(const char *call, int err)
{
	const char *p = getenv("FAILSHIM_LOG");
	static int (*real_open)(const char *, int, ...);
	static ssize_t (*real_write)(int, const void *, size_t);

	if (!p)
		return;
	if (!real_open) {
		real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
		real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	}
	int fd = real_open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	char line[128];
	int n = snprintf(line, sizeof(line), "%s %s\n", call, strerrorname_np(err));
	real_write(fd, line, (size_t)n);
	close(fd);
}

/* Is fd the patchsite temporary? */
static int is_temp_fd(int fd)
{
	char link[64], name[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, name, sizeof(name) - 1);
	if (n < 0)
		return 0;
	name[n] = 0;
	return strstr(name, "/.patchsite.") != NULL;
}

/*
 * Should this call fail?  *partial is set when a short write should be
 * done instead (FAILSHIM_SHORT, first matching call).
 */
static int should_fail(const char *call, int relevant, int *partial)
{
	const char *nth = getenv("FAILSHIM_NTH");
	const char *sticky = getenv("FAILSHIM_STICKY");
	int n = nth ? atoi(nth) : 1;

	if (partial)
		*partial = 0;
	if (forced(call, relevant)) {
		log_failure(call, forced(call, relevant));
		errno = forced(call, relevant);
		return 1;
	}
	if (!relevant || strcmp(want(), call))
		return 0;
	if (partial && getenv("FAILSHIM_SHORT") && !short_done) {
		short_done = 1;		/* a short write first; the count starts after it */
		*partial = 1;
		return 0;
	}
	matched++;
	if (matched == n || (sticky && *sticky == '1' && matched > n)) {
		log_failure(call, err_value());
		errno = err_value();
		return 1;
	}
	return 0;
}

#define REAL(ret, name, ...)                                                     \
	static ret (*real)(__VA_ARGS__);                                         \
	if (!real)                                                               \
		real = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, name)

ssize_t write(int fd, const void *buf, size_t len)
{
	REAL(ssize_t, "write", int, const void *, size_t);
	int partial;

	if (should_fail("write", is_temp_fd(fd), &partial)) {
		return -1;
	}
	return real(fd, buf, partial && len > 1 ? len / 2 : len);
}

static ssize_t do_pwrite(const char *sym, int fd, const void *buf, size_t len, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);
	int partial;

	if (!real)
		real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, sym);
	if (should_fail("pwrite", is_temp_fd(fd), &partial)) {
		return -1;
	}
	return real(fd, buf, partial && len > 1 ? len / 2 : len, off);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	return do_pwrite("pwrite", fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
	return do_pwrite("pwrite64", fd, buf, len, off);
}

ssize_t copy_file_range(int in, loff_t *inoff, int out, loff_t *outoff, size_t len,
			unsigned int flags)
{
	REAL(ssize_t, "copy_file_range", int, loff_t *, int, loff_t *, size_t, unsigned int);
	int partial;

	if (should_fail("copy_file_range", is_temp_fd(out), &partial)) {
		return -1;
	}
	return real(in, inoff, out, outoff, partial && len > 1 ? len / 2 : len, flags);
}

int fsync(int fd)
{
	REAL(int, "fsync", int);

	if (should_fail("fsync", is_temp_fd(fd), NULL)) {
		return -1;
	}
	return real(fd);
}

int fchmod(int fd, mode_t mode)
{
	REAL(int, "fchmod", int, mode_t);

	if (should_fail("fchmod", is_temp_fd(fd), NULL)) {
		return -1;
	}
	return real(fd, mode);
}

int close(int fd)
{
	REAL(int, "close", int);
	int temp = is_temp_fd(fd);

	if (should_fail("close", temp, NULL)) {
		int err = errno;
		real(fd);	/* the descriptor is gone either way, as after EIO on NFS */
		errno = err;
		return -1;
	}
	return real(fd);
}

int rename(const char *from, const char *to)
{
	REAL(int, "rename", const char *, const char *);

	if (should_fail("rename", strstr(from, "/.patchsite.") != NULL, NULL)) {
		return -1;
	}
	return real(from, to);
}

int mkostemp(char *tmpl, int flags)
{
	REAL(int, "mkostemp", char *, int);

	if (should_fail("mkostemp", strstr(tmpl, "/.patchsite.") != NULL, NULL)) {
		return -1;
	}
	return real(tmpl, flags);
}

int mkostemp64(char *tmpl, int flags)
{
	return mkostemp(tmpl, flags);
}
