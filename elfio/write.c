// SPDX-License-Identifier: GPL-2.0-only
/*
 * write.c - crash-safe output for every command that writes a file.
 *
 * Strategy: never write into the target.  Output goes to mkstemp() in the
 * target's directory (so rename() is atomic, same filesystem), gets the
 * target's mode, is fsync'd, and only then renamed over the target; the
 * directory is fsync'd after the rename.  On any failure the temporary is
 * unlinked and the target, which may be the input itself, is untouched.
 *
 * Edits to an existing image are a list of (file offset, bytes): the input
 * is copied (FICLONE where the filesystem can share extents, else
 * copy_file_range, so a 350 MB vmlinux costs a kernel-side copy; a
 * pread/pwrite loop only where the kernel refuses both, e.g. across
 * filesystems on older kernels) and the edits are pwrite()n on top.  An
 * edit of the image itself, where it lies, is journal.c's.  A read-back
 * check reads what was written through elfio_readback (windows of 64 KiB).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfio/elfio.h"
#include "elfio/elfio_priv.h"

void elfio_edits_init(struct elfio_edits *ed)
{
	memset(ed, 0, sizeof(*ed));
}

void elfio_edits_free(struct elfio_edits *ed)
{
	if (!ed)
		return;
	for (size_t i = 0; i < ed->n; i++)
		elfio_free(ed->v[i].bytes);
	elfio_free(ed->v);
	memset(ed, 0, sizeof(*ed));
}

int elfio_edits_add(struct elfio_edits *ed, uint64_t off, const void *bytes, size_t len)
{
	struct elfio_edit *last = ed->n ? &ed->v[ed->n - 1] : NULL;

	if (last && len && off == last->off + last->len && last->len <= SIZE_MAX / 2 - len) {
		if (elfio_grow(&last->bytes, &last->cap, last->len + len, 1))
			return -ENOMEM;
		memcpy(last->bytes + last->len, bytes, len);
		last->len += len;
		return 0;
	}
	if (elfio_grow(&ed->v, &ed->cap, ed->n + 1, sizeof(*ed->v)))
		return -ENOMEM;
	uint8_t *b = NULL;
	size_t bcap = 0;
	if (elfio_grow(&b, &bcap, len ? len : 1, 1))
		return -ENOMEM;
	memcpy(b, bytes, len);
	ed->v[ed->n].off = off;
	ed->v[ed->n].len = len;
	ed->v[ed->n].bytes = b;
	ed->v[ed->n].cap = bcap;
	ed->n++;
	return 0;
}

static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* open_temp() failed: say why, in the one line */
static void temp_error(const char *out_path, int err)
{
	if (err == -ENOMEM)
		elfio_error(out_path, "out of memory for the name of a temporary file");
	else
		elfio_error(out_path, "cannot create a temporary file: %s", strerror(-err));
}

/*
 * Open a temporary file beside out_path; *tmp receives its name, asprintf's
 * (malloc'd by the library: freed with free(), not elfio_free).
 */
static int open_temp(const char *out_path, char **tmp)
{
	char *copy = elfio_strdup(out_path);
	char *name = NULL;
	int fd;

	if (!copy)
		return -ENOMEM;
	const char *dir = dirname(copy);
	if (asprintf(&name, "%s/.patchsite.XXXXXX", dir) < 0) {
		elfio_free(copy);
		return -ENOMEM;
	}
	elfio_free(copy);
	fd = mkostemp(name, O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;
		free(name);
		return err;
	}
	*tmp = name;
	return fd;
}

static void sync_dir(const char *path)
{
	char *copy = elfio_strdup(path);
	if (!copy)
		return;
	int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);	/* best effort: the rename itself is already atomic */
		close(dfd);
	}
	elfio_free(copy);
}

/* mode for the output: the target's if it exists, else `mode` less the umask */
static mode_t output_mode(const char *out_path, mode_t mode)
{
	struct stat st;

	if (stat(out_path, &st) == 0)
		return st.st_mode & 07777;
	mode_t um = umask(0);
	umask(um);
	return mode & ~um;
}

static int finish(int fd, char *tmp, const char *out_path, mode_t mode,
		  const struct elfio_write_check *chk)
{
	int ret = 0, bad = 0;

	if (fchmod(fd, mode) < 0)
		ret = -errno;
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	/* the caller reads what was written back, before it replaces anything */
	if (!ret && chk && (bad = chk->check(tmp, chk->ctx)))
		ret = bad;
	if (!ret && rename(tmp, out_path) < 0)
		ret = -errno;
	if (ret) {
		unlink(tmp);
		if (!bad)	/* the check printed its own reason */
			elfio_error(out_path, "cannot write: %s", strerror(-ret));
	} else {
		sync_dir(out_path);
	}
	free(tmp);
	return ret;
}

int elfio_write_file_atomic(const char *out_path, const void *buf, size_t len, mode_t mode)
{
	return elfio_write_file_atomic_check(out_path, buf, len, mode, NULL);
}

int elfio_write_file_atomic_check(const char *out_path, const void *buf, size_t len, mode_t mode,
				  const struct elfio_write_check *chk)
{
	char *tmp = NULL;
	int fd = open_temp(out_path, &tmp);
	int ret;

	if (fd < 0) {
		temp_error(out_path, fd);
		return fd;
	}
	ret = write_all(fd, buf, len, 0);
	if (ret) {
		elfio_error(out_path, "cannot write: %s", strerror(-ret));
		close(fd);
		unlink(tmp);
		free(tmp);
		return ret;
	}
	return finish(fd, tmp, out_path, output_mode(out_path, mode), chk);
}

static int copy_fd(int in, int out, uint64_t size)
{
	uint64_t done = 0;
	loff_t ioff = 0, ooff = 0;

	/* a reflink where the filesystem shares extents (btrfs, XFS): no data moves */
	if (ioctl(out, FICLONE, in) == 0)
		return 0;

	while (done < size) {
		size_t chunk = size - done > (1u << 30) ? (1u << 30) : (size_t)(size - done);
		ssize_t n = copy_file_range(in, &ioff, out, &ooff, chunk, 0);
		if (n < 0 && (errno == ENOSYS || errno == EXDEV || errno == EINVAL ||
			      errno == EOPNOTSUPP))
			goto fallback;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;	/* the input shrank under us */
		done += (uint64_t)n;
	}
	return 0;

fallback:
	for (;;) {
		char buf[1 << 16];
		ssize_t n = pread(in, buf, sizeof(buf), (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		int ret = write_all(out, buf, (size_t)n, done);
		if (ret)
			return ret;
		done += (uint64_t)n;
	}
	return done == size ? 0 : -EIO;
}

int elfio_write_edited(struct elfio *e, const struct elfio_edits *ed, const char *out_path)
{
	return elfio_write_edited_check(e, ed, out_path, NULL);
}

int elfio_write_edited_check(struct elfio *e, const struct elfio_edits *ed, const char *out_path,
			     const struct elfio_write_check *chk)
{
	char *tmp = NULL;
	struct stat st;
	int ret, in = -1;

	if (elfio_was_compressed(e)) {
		elfio_err(e, "cannot rewrite a compressed file; decompress it first");
		return -ENOTSUP;
	}
	/* the file elfio has open, never the path opened again: what was read is copied */
	in = dup(elfio_fd(e));
	if (in < 0 || fstat(in, &st) < 0) {
		ret = -errno;
		elfio_err(e, "%s", strerror(errno));
		if (in >= 0)
			close(in);
		return ret;
	}
	if ((uint64_t)st.st_size != elfio_file_size(e)) {
		elfio_err(e, "file changed while it was being read");
		close(in);
		return -EAGAIN;
	}
	int fd = open_temp(out_path, &tmp);
	if (fd < 0) {
		temp_error(out_path, fd);
		close(in);
		return fd;
	}
	ret = copy_fd(in, fd, (uint64_t)st.st_size);
	for (size_t i = 0; !ret && i < ed->n; i++) {
		if (ed->v[i].off > (uint64_t)st.st_size ||
		    ed->v[i].len > (uint64_t)st.st_size - ed->v[i].off) {
			ret = -ERANGE;	/* an edit past the end: a bug, never extend silently */
			break;
		}
		ret = write_all(fd, ed->v[i].bytes, ed->v[i].len, ed->v[i].off);
	}
	close(in);
	if (ret) {
		elfio_error(out_path, "cannot write: %s", strerror(-ret));
		close(fd);
		unlink(tmp);
		free(tmp);
		return ret;
	}
	/* in place: keep the input's mode; to a new file: the input's mode too */
	struct stat ost;
	mode_t mode = stat(out_path, &ost) == 0 ? (ost.st_mode & 07777) : (st.st_mode & 07777);
	return finish(fd, tmp, out_path, mode, chk);
}

/* --- Reading a written file back -------------------------------------------- */

struct elfio_readback {
	int fd;
	uint64_t off, len;	/* what buf holds */
	uint8_t buf[1 << 16];
};

struct elfio_readback *elfio_readback_open(const char *path)
{
	struct elfio_readback *rb = elfio_calloc(1, sizeof(*rb));

	if (!rb) {
		errno = ENOMEM;
		return NULL;
	}
	rb->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (rb->fd < 0) {
		int err = errno;
		elfio_free(rb);
		errno = err;
		return NULL;
	}
	rb->off = rb->len = 0;
	return rb;
}

int elfio_readback_read(struct elfio_readback *rb, uint64_t off, void *out, size_t len)
{
	if (len > sizeof(rb->buf))
		return -EINVAL;
	if (off < rb->off || off + len > rb->off + rb->len) {
		ssize_t n;

		do
			n = pread(rb->fd, rb->buf, sizeof(rb->buf), (off_t)off);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		rb->off = off;
		rb->len = (uint64_t)n;
		if ((uint64_t)n < len)
			return -EIO;
	}
	memcpy(out, rb->buf + (off - rb->off), len);
	return 0;
}

void elfio_readback_close(struct elfio_readback *rb)
{
	if (!rb)
		return;
	if (rb->fd >= 0)
		close(rb->fd);
	elfio_free(rb);
}
