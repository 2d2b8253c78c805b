// SPDX-License-Identifier: GPL-2.0-only
/*
 * failshim.c - LD_PRELOAD shim that makes patchsite's writes fail.
 *
 *   cc -shared -fPIC -O2 -o failshim.so failshim.c -ldl
 *   FAILSHIM_CALL=fsync LD_PRELOAD=./failshim.so ./patchsite record -o t.txt IMAGE
 *
 * Environment:
 *   FAILSHIM_CALL   which call fails: write, pwrite, fsync, rename, unlink,
 *                   copy_file_range, fchmod, mkostemp, close; `*`: any of them
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
 *   FAILSHIM_KILL   `before`: the Nth matching call is not made, the process
 *                   kills itself with SIGKILL instead; `half`: a write, pwrite
 *                   or copy_file_range writes half its bytes first (a write
 *                   torn by the kill), other calls die before they are made
 *   FAILSHIM_COUNT  file to append "CALL PATH" to for every matching call
 *                   (made or not): with FAILSHIM_CALL=* and FAILSHIM_NTH=0,
 *                   how many writes a run makes, to kill at each
 *   FAILSHIM_TARGET the image edited in place: its calls match too
 *   FAILSHIM_PAUSE  milliseconds: the Nth matching call waits that long,
 *                   then is made (another command can run meanwhile)
 *   FAILSHIM_CORRUPT with pwrite: the Nth matching call writes its bytes with
 *                   the first one inverted and reports success (a write that
 *                   does not land as asked: the read-back must catch it)
 *
 * Only calls on patchsite's own output are failed: an fd whose file name
 * contains "/.patchsite." (the temporary beside the target) or ends in
 * ".patchsite-journal" (the undo journal of an in-place edit), the file
 * FAILSHIM_TARGET names, or rename()/unlink() of such a name; writes to
 * stdout/stderr and the input are left alone.
 * Build it without sanitizers and use it with the plain build: ASan's own
 * interceptors for write() and friends do not mix with this interposition.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

static char last_name[PATH_MAX + 16];	/* of the last relevant call, for FAILSHIM_COUNT */

/* A temporary, a journal, or the in-place target?  (name: absolute) */
static int is_ours(const char *name)
{
	static char target[PATH_MAX];
	static int have_target = -1;
	const char *j = strstr(name, ".patchsite-journal");

	if (have_target < 0) {
		const char *t = getenv("FAILSHIM_TARGET");
		have_target = t && realpath(t, target) ? 1 : 0;
	}
	if (strstr(name, "/.patchsite.") || (j && (!j[18] || !strcmp(j + 18, " (deleted)"))) ||
	    (have_target && !strcmp(name, target))) {
		snprintf(last_name, sizeof(last_name), "%s", name);
		return 1;
	}
	return 0;
}

/* Is fd the patchsite temporary (or journal, or target)? */
static int is_temp_fd(int fd)
{
	char link[64], name[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, name, sizeof(name) - 1);
	if (n < 0)
		return 0;
	name[n] = 0;
	return is_ours(name);
}

static int is_our_path(const char *path)
{
	char abs[2 * PATH_MAX + 2], dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	/* the file may be gone (unlink): resolve its directory */
	if (!slash) {
		if (!getcwd(dir, sizeof(dir)))
			return 0;
		snprintf(abs, sizeof(abs), "%s/%s", dir, path);
	} else {
		char d[PATH_MAX];
		snprintf(d, sizeof(d), "%.*s", (int)(slash - path), path);
		if (!realpath(*d ? d : "/", dir))
			return 0;
		snprintf(abs, sizeof(abs), "%s%s", dir, slash);
	}
	return is_ours(abs);
}

static void count_call(const char *call)
{
	const char *p = getenv("FAILSHIM_COUNT");
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
	char line[PATH_MAX + 64];
	int n = snprintf(line, sizeof(line), "%s %s\n", call, last_name);
	real_write(fd, line, (size_t)n);
	close(fd);
}

/* `*`: every call that writes, renames or removes (what a kill test walks) */
static int calls_match(const char *call)
{
	static const char *const writes[] = { "write", "pwrite", "fsync", "rename", "unlink",
					      "copy_file_range" };

	if (!strcmp(want(), "*")) {
		for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++)
			if (!strcmp(call, writes[i]))
				return 1;
		return 0;
	}
	return !strcmp(want(), call);
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
	if (!relevant || !calls_match(call))
		return 0;
	count_call(call);
	if (partial && getenv("FAILSHIM_SHORT") && !short_done) {
		short_done = 1;		/* a short write first; the count starts after it */
		*partial = 1;
		return 0;
	}
	matched++;
	const char *pause = getenv("FAILSHIM_PAUSE");
	if (pause && matched == n) {
		usleep((useconds_t)atoi(pause) * 1000);
		return 0;
	}
	const char *k = getenv("FAILSHIM_KILL");
	if (k && matched == n) {
		if (partial && !strcmp(k, "half")) {
			*partial = 2;	/* the caller writes half, then dies */
			return 0;
		}
		raise(SIGKILL);
	}
	if (k)
		return 0;
	if (partial && matched == n && getenv("FAILSHIM_CORRUPT")) {
		*partial = 3;	/* the caller writes wrong bytes */
		return 0;
	}
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
	if (partial == 2) {
		real(fd, buf, len / 2);
		raise(SIGKILL);
	}
	return real(fd, buf, partial == 1 && len > 1 ? len / 2 : len);
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
	if (partial == 2) {
		real(fd, buf, len / 2, off);
		raise(SIGKILL);
	}
	if (partial == 3 && len) {
		unsigned char *bad = malloc(len);
		ssize_t w;

		if (!bad)
			return -1;
		memcpy(bad, buf, len);
		bad[0] ^= 0xff;
		w = real(fd, bad, len, off);
		free(bad);
		return w;
	}
	return real(fd, buf, partial == 1 && len > 1 ? len / 2 : len, off);
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
	if (partial == 2) {
		real(in, inoff, out, outoff, len / 2, flags);
		raise(SIGKILL);
	}
	return real(in, inoff, out, outoff, partial == 1 && len > 1 ? len / 2 : len, flags);
}

/*
 * FICLONE, which the writer tries before copy_file_range: refused on our
 * temporary when copy_file_range is the call under test, so that a
 * reflink-capable filesystem (btrfs, XFS) still reaches it.
 */
int ioctl(int fd, unsigned long req, ...)
{
	REAL(int, "ioctl", int, unsigned long, void *);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == FICLONE && !strcmp(want(), "copy_file_range") && is_temp_fd(fd)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return real(fd, req, arg);
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

	if (should_fail("rename", is_our_path(from), NULL)) {
		return -1;
	}
	return real(from, to);
}

int unlink(const char *path)
{
	REAL(int, "unlink", const char *);

	if (should_fail("unlink", is_our_path(path), NULL)) {
		return -1;
	}
	return real(path);
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
