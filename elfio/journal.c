// SPDX-License-Identifier: GPL-2.0-only
/*
 * journal.c - edit an image where it lies, safe against SIGKILL, with an
 * undo journal beside it.
 *
 * Strategy: the post-link step changes a few hundred kilobytes of a file of
 * hundreds of megabytes (a table's slots, their .rela.dyn entries), so it
 * writes those ranges into the image itself, as the kernel's own
 * scripts/sorttable does, instead of copying the file.  Before the first
 * byte of the image changes, a journal IMAGE.patchsite-journal is written
 * whole, in one write(): a header (magic, length, the image's device, inode
 * and size), each range's offset, length, old bytes and new bytes, and a
 * CRC-32 of all that in the trailer.  Then the ranges are pwrite()n, the
 * caller reads them back, and the journal is unlinked: that unlink is the
 * commit.  The writer holds flock(LOCK_EX) on the image throughout.
 *
 * Every command that opens an image first looks for its journal
 * (elfio_journal_recover, from elfio_open).  It takes the image's lock
 * (so a live writer finishes first: the lock dies with its holder), then:
 *  - a journal that does not check (short, bad magic, bad CRC) is torn: it
 *    was being written when the writer died, and the image was not touched
 *    yet.  It is removed.
 *  - a complete journal whose image is another file (inode or size differ;
 *    the device is written down but not compared) or holds, in some range, a byte that is neither the old nor
 *    the new one, describes an image since replaced (a relink): it is
 *    removed and the image left alone.
 *  - otherwise the writer died between its first write to the image and
 *    the commit: the old bytes are written back (roll back, always: the
 *    new bytes were never read back and verified), then the journal is
 *    removed.
 * Each range therefore holds its old bytes, its new ones, or (a pwrite
 * torn by the kill) a mix that the roll back repairs; nothing else.
 *
 * Without ELFIO_FSYNC nothing is forced to disk: a kill is survived (the
 * page cache holds every completed write, in order), a power cut is not.
 * With it, the journal and its directory entry are fsync'd before the image
 * changes, the image before the journal goes, and the directory after;
 * recovery of such a journal fsyncs the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "elfio/elfio.h"
#include "elfio/elfio_priv.h"

#define JOURNAL_MAGIC	"PSJRNL01"
#define JOURNAL_SUFFIX	".patchsite-journal"
#define JOURNAL_HDR	48	/* magic, length, dev, ino, size, flags + nranges */
#define JOURNAL_RANGE	16	/* offset, length (+ old and new bytes) */
#define JOURNAL_TRAILER	8	/* CRC-32 of everything before it, and a magic */
#define JOURNAL_MAX	(1ull << 30)	/* far beyond two tables' worth */
#define JF_FSYNC	0x1

struct range {
	uint64_t off;
	size_t len;
	uint8_t *old, *new;	/* in the journal's buffer */
};

char *elfio_journal_path(const char *path)
{
	char *j = NULL;

	if (asprintf(&j, "%s%s", path, JOURNAL_SUFFIX) < 0)
		return NULL;
	return j;
}

static int pwrite_all(int fd, const uint8_t *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

static int pread_all(int fd, uint8_t *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;	/* past the end: the file shrank */
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* fsync the directory holding path: a new or removed name becomes durable */
static int sync_dir_of(const char *path)
{
	char *copy = elfio_strdup(path);
	int ret = 0, dfd;

	if (!copy)
		return -ENOMEM;
	dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) < 0)
		ret = -errno;
	if (dfd >= 0)
		close(dfd);
	elfio_free(copy);
	return ret;
}

/* --- Recovery ---------------------------------------------------------------- */

struct jview {
	const uint8_t *buf;
	size_t len;
	uint64_t dev, ino, size;
	uint32_t flags, nranges;
};

/* Does the journal check whole?  false: torn (or not ours). */
static bool journal_parse(const uint8_t *b, size_t len, struct jview *v)
{
	if (len < JOURNAL_HDR + JOURNAL_TRAILER || memcmp(b, JOURNAL_MAGIC, 8) ||
	    get_le64(b + 8) != len || memcmp(b + len - 4, "PSJE", 4))
		return false;
	uint32_t crc = (uint32_t)crc32(0L, b, (uInt)(len - JOURNAL_TRAILER));
	if ((uint32_t)get_le64(b + len - 8) != crc)
		return false;
	v->buf = b;
	v->len = len;
	v->dev = get_le64(b + 16);
	v->ino = get_le64(b + 24);
	v->size = get_le64(b + 32);
	v->flags = (uint32_t)get_le64(b + 40);
	v->nranges = (uint32_t)(get_le64(b + 40) >> 32);
	/* the ranges must fill the journal exactly, each inside the image */
	size_t at = JOURNAL_HDR;
	for (uint32_t i = 0; i < v->nranges; i++) {
		if (len - JOURNAL_TRAILER - at < JOURNAL_RANGE)
			return false;
		uint64_t off = get_le64(b + at), rl = get_le64(b + at + 8);
		at += JOURNAL_RANGE;
		if (off > v->size || rl > v->size - off || rl > (len - JOURNAL_TRAILER - at) / 2)
			return false;
		at += 2 * rl;
	}
	return at == len - JOURNAL_TRAILER;
}

/* Every byte of every range the old or the new one?  Else the image was replaced. */
static int journal_matches(const struct jview *v, int fd, bool *match)
{
	size_t at = JOURNAL_HDR, cap = 0;
	uint8_t *cur = NULL;
	int ret = 0;

	*match = true;
	for (uint32_t i = 0; i < v->nranges && *match; i++) {
		uint64_t off = get_le64(v->buf + at), rl = get_le64(v->buf + at + 8);
		const uint8_t *old = v->buf + at + JOURNAL_RANGE, *new = old + rl;

		if (elfio_grow(&cur, &cap, rl ? rl : 1, 1)) {
			ret = -ENOMEM;
			break;
		}
		ret = pread_all(fd, cur, rl, off);
		if (ret)
			break;
		for (uint64_t k = 0; k < rl; k++) {
			if (cur[k] != old[k] && cur[k] != new[k]) {
				*match = false;
				break;
			}
		}
		at += JOURNAL_RANGE + 2 * rl;
	}
	elfio_free(cur);
	return ret;
}

static int journal_roll_back(const struct jview *v, int fd)
{
	size_t at = JOURNAL_HDR;

	for (uint32_t i = 0; i < v->nranges; i++) {
		uint64_t off = get_le64(v->buf + at), rl = get_le64(v->buf + at + 8);
		int ret = pwrite_all(fd, v->buf + at + JOURNAL_RANGE, rl, off);
		if (ret)
			return ret;
		at += JOURNAL_RANGE + 2 * rl;
	}
	if ((v->flags & JF_FSYNC) && fsync(fd) < 0)
		return -errno;
	return 0;
}

int elfio_journal_recover(const char *path, bool quiet)
{
	char *jpath = elfio_journal_path(path);
	uint8_t *buf = NULL;
	int jfd = -1, ifd = -1, ret = 0;
	struct stat jst, ist;
	const char *what = NULL;

	if (!jpath) {
		ret = -ENOMEM;
		what = "the name of the journal";
		goto out;
	}
	if (access(jpath, F_OK) < 0) {
		if (errno != ENOENT) {
			ret = -errno;
			what = "cannot look for the journal of an interrupted write";
		}
		goto out;
	}
	ifd = open(path, O_RDWR | O_CLOEXEC);
	if (ifd < 0) {
		if (errno == ENOENT) {	/* the image is gone: so is what the journal undoes */
			if (unlink(jpath) < 0 && errno != ENOENT) {
				ret = -errno;
				what = "cannot remove a stale journal";
			}
			goto out;
		}
		ret = -errno;
		what = "an interrupted write left a journal, and the image cannot be opened to "
		       "roll it back";
		goto out;
	}
	/* a live writer holds this lock until it has removed its journal */
	while (flock(ifd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			ret = -errno;
			what = "cannot lock the image to roll back its journal";
			goto out;
		}
	}
	jfd = open(jpath, O_RDONLY | O_CLOEXEC);
	if (jfd < 0) {
		if (errno != ENOENT) {
			ret = -errno;
			what = "cannot open the journal of an interrupted write";
		}
		goto out;	/* the writer finished meanwhile */
	}
	if (fstat(jfd, &jst) < 0 || fstat(ifd, &ist) < 0) {
		ret = -errno;
		what = "cannot read the journal of an interrupted write";
		goto out;
	}
	struct jview v = { 0 };
	bool whole = false;
	if ((uint64_t)jst.st_size <= JOURNAL_MAX) {
		size_t len = (size_t)jst.st_size;
		buf = elfio_calloc(len ? len : 1, 1);
		if (!buf) {
			ret = -ENOMEM;
			what = "the journal of an interrupted write";
			goto out;
		}
		ret = pread_all(jfd, buf, len, 0);
		if (ret == -EIO)
			ret = 0;	/* shorter than fstat said: torn */
		else if (ret) {
			what = "cannot read the journal of an interrupted write";
			goto out;
		} else {
			whole = journal_parse(buf, len, &v);
		}
	}
	/*
	 * Not the device: btrfs and NFS can give the same file another st_dev
	 * after a reboot, which is when a --fsync journal matters most.
	 */
	if (whole && v.ino == (uint64_t)ist.st_ino && v.size == (uint64_t)ist.st_size) {
		bool match;
		ret = journal_matches(&v, ifd, &match);
		if (ret) {
			what = ret == -ENOMEM ?
			       "the image's bytes under an interrupted write's journal" :
			       "cannot read the image to roll back its journal";
			goto out;
		}
		if (match) {
			ret = journal_roll_back(&v, ifd);
			if (ret) {
				what = "cannot roll back an interrupted write";
				goto out;
			}
		}
	}
	/* rolled back, torn (the image untouched), or stale (the image replaced) */
	if (unlink(jpath) < 0 && errno != ENOENT) {
		ret = -errno;
		what = "cannot remove the journal of an interrupted write";
		goto out;
	}
	if (whole && (v.flags & JF_FSYNC))
		sync_dir_of(jpath);	/* best effort: the image is already whole */
out:
	if (what && !quiet && ret == -ENOMEM)
		elfio_error(path, "out of memory for %s", what);
	else if (what && !quiet)
		elfio_error(path, "%s (%s): %s", what, jpath ? jpath : "journal", strerror(-ret));
	elfio_free(buf);
	if (jfd >= 0)
		close(jfd);
	if (ifd >= 0)
		close(ifd);	/* drops the lock */
	free(jpath);		/* asprintf's */
	return ret;
}

/* --- Writing in place --------------------------------------------------------- */

static int cmp_edit(const void *a, const void *b)
{
	const struct elfio_edit *const *x = a, *const *y = b;

	if ((*x)->off != (*y)->off)
		return (*x)->off < (*y)->off ? -1 : 1;
	return *x < *y ? -1 : *x > *y;	/* stable: list order */
}

/*
 * The journal, built in place: the edits as disjoint ranges sorted by
 * offset, each holding the bytes the file has now (read under the lock)
 * and the new ones (later edits win), with the ranges' old and new bytes
 * living in the journal's own buffer (no second copy of a table).  Ranges
 * whose new bytes equal the old ones are dropped.  *rv point into *jbuf.
 */
static int build_journal(int fd, const struct stat *st, unsigned int flags,
			 const struct elfio_edits *ed, struct range **out, size_t *nout,
			 uint8_t **jbuf, size_t *jlen)
{
	const struct elfio_edit **by = NULL;
	uint64_t size = (uint64_t)st->st_size, total = JOURNAL_HDR + JOURNAL_TRAILER;
	struct range *rv = NULL;
	uint8_t *b = NULL, *p;
	size_t n = 0;
	int ret = 0;

	*out = NULL;
	*nout = 0;
	*jbuf = NULL;
	*jlen = 0;
	if (!ed->n)
		return 0;
	by = elfio_calloc(ed->n, sizeof(*by));
	rv = elfio_calloc(ed->n, sizeof(*rv));
	if (!by || !rv) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ed->n; i++) {
		if (ed->v[i].off > size || ed->v[i].len > size - ed->v[i].off) {
			ret = -ERANGE;	/* an edit past the end: a bug, never extend the image */
			goto out;
		}
		by[i] = &ed->v[i];
	}
	qsort(by, ed->n, sizeof(*by), cmp_edit);
	/* the union of the edits: contiguous or overlapping edits make one range */
	for (size_t i = 0; i < ed->n; i++) {
		uint64_t end = by[i]->off + by[i]->len;
		if (!by[i]->len)
			continue;
		if (n && by[i]->off <= rv[n - 1].off + rv[n - 1].len) {
			if (end > rv[n - 1].off + rv[n - 1].len)
				rv[n - 1].len = (size_t)(end - rv[n - 1].off);
			continue;
		}
		rv[n].off = by[i]->off;
		rv[n].len = by[i]->len;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		if (rv[i].len > (JOURNAL_MAX - total) / 2 - JOURNAL_RANGE) {
			ret = -EFBIG;
			goto out;
		}
		total += JOURNAL_RANGE + 2 * rv[i].len;
	}
	b = elfio_calloc(total, 1);
	if (!b) {
		ret = -ENOMEM;
		goto out;
	}
	p = b + JOURNAL_HDR;
	for (size_t i = 0; i < n; i++) {
		rv[i].old = p + JOURNAL_RANGE;
		rv[i].new = rv[i].old + rv[i].len;
		ret = pread_all(fd, rv[i].old, rv[i].len, rv[i].off);
		if (ret)
			goto out;
		memcpy(rv[i].new, rv[i].old, rv[i].len);
		p += JOURNAL_RANGE + 2 * rv[i].len;
	}
	/* in list order, so that later edits of the same bytes win */
	for (size_t i = 0; i < ed->n; i++) {
		const struct elfio_edit *x = &ed->v[i];

		if (!x->len)
			continue;
		/* the last range starting at or before x */
		size_t lo = BOUND(rv, n, off, x->off, true);
		struct range *r = &rv[lo - 1];
		memcpy(r->new + (x->off - r->off), x->bytes, x->len);
	}
	/* drop what does not change, moving the rest down; then headers and CRC */
	size_t k = 0;
	p = b + JOURNAL_HDR;
	for (size_t i = 0; i < n; i++) {
		if (!memcmp(rv[i].old, rv[i].new, rv[i].len))
			continue;
		memmove(p + JOURNAL_RANGE, rv[i].old, 2 * rv[i].len);
		put_le64(p, rv[i].off);
		put_le64(p + 8, rv[i].len);
		rv[k] = rv[i];
		rv[k].old = p + JOURNAL_RANGE;
		rv[k].new = rv[k].old + rv[k].len;
		p += JOURNAL_RANGE + 2 * rv[i].len;
		k++;
	}
	n = k;
	total = (uint64_t)(p - b) + JOURNAL_TRAILER;
	memcpy(b, JOURNAL_MAGIC, 8);
	put_le64(b + 8, total);
	put_le64(b + 16, (uint64_t)st->st_dev);
	put_le64(b + 24, (uint64_t)st->st_ino);
	put_le64(b + 32, size);
	put_le64(b + 40, ((flags & ELFIO_FSYNC) ? JF_FSYNC : 0) | (uint64_t)n << 32);
	put_le64(p, crc32(0L, b, (uInt)(total - JOURNAL_TRAILER)));
	memcpy(p + 4, "PSJE", 4);	/* over the CRC's upper half, which is zero */
out:
	elfio_free(by);
	if (ret || !n) {
		elfio_free(rv);
		elfio_free(b);
		return ret;
	}
	*out = rv;
	*nout = n;
	*jbuf = b;
	*jlen = (size_t)total;
	return 0;
}

static int write_ranges(int fd, const struct range *rv, size_t n, bool new)
{
	for (size_t i = 0; i < n; i++) {
		int ret = pwrite_all(fd, new ? rv[i].new : rv[i].old, rv[i].len, rv[i].off);
		if (ret)
			return ret;
	}
	return 0;
}

/* Do the ranges read back as written?  (The caller's check then reads them as ELF.) */
static int ranges_read_back(int fd, const struct range *rv, size_t n)
{
	uint8_t b[1 << 16];	/* on the stack: no allocation between write and commit */
	size_t cap = sizeof(b);
	int ret = 0;

	for (size_t i = 0; !ret && i < n; i++) {
		for (size_t at = 0; !ret && at < rv[i].len; at += cap) {
			size_t len = rv[i].len - at < cap ? rv[i].len - at : cap;
			ret = pread_all(fd, b, len, rv[i].off + at);
			if (!ret && memcmp(b, rv[i].new + at, len))
				ret = -EIO;
		}
	}
	return ret;
}

/* One write in place: the files, the journal's ranges, and how far it got. */
struct in_place {
	struct elfio *e;
	const char *path;		/* the image */
	char *jpath;			/* its journal (asprintf's) */
	unsigned int flags;		/* ELFIO_FSYNC */
	int fd, jfd;
	struct range *rv;		/* the ranges written, with their old bytes */
	size_t n;
	uint8_t *jbuf;			/* the journal's bytes */
	size_t jlen;
	bool image_touched;		/* the image may differ from what was read */
	bool journal_made;		/* the journal file exists */
	bool bad;			/* what failed said so itself */
	const char *what;		/* else the words of the failure */
};

/*
 * Open the image to write, locked, and check that it is still the file that
 * was read (*st: its stat).  0; 1: it changed (said: nothing is written); else -errno
 * (ip->what says what failed).
 */
static int open_image(struct in_place *ip, struct stat *st)
{
	struct stat est;

	ip->fd = open(ip->path, O_RDWR | O_CLOEXEC);
	if (ip->fd < 0) {
		ip->what = "cannot open for writing";
		return -errno;
	}
	while (flock(ip->fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			ip->what = "cannot lock";
			return -errno;
		}
	}
	/* the file that was read, still the same size: else nothing is written */
	if (fstat(ip->fd, st) < 0 || fstat(elfio_fd(ip->e), &est) < 0)
		return -errno;
	if (st->st_dev != est.st_dev || st->st_ino != est.st_ino ||
	    (uint64_t)st->st_size != elfio_file_size(ip->e)) {
		elfio_err(ip->e, "file changed while it was being read; nothing written");
		return 1;
	}
	return 0;
}

/* 1. the journal, whole (and durable with ELFIO_FSYNC), before the image changes.  0 or -errno. */
static int write_journal(struct in_place *ip)
{
	int ret = 0;

	ip->jfd = open(ip->jpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (ip->jfd < 0) {
		ip->what = errno == EEXIST ? "a journal of another write is in the way (run "
					     "`patchsite audit` on the image to recover it)"
					   : "cannot create the journal";
		return -errno;
	}
	ip->journal_made = true;
	ip->what = "cannot write the journal";
	for (size_t done = 0; done < ip->jlen;) {
		ssize_t w = write(ip->jfd, ip->jbuf + done, ip->jlen - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		done += (size_t)w;
	}
	if ((ip->flags & ELFIO_FSYNC) && (fsync(ip->jfd) < 0 || (ret = sync_dir_of(ip->jpath))))
		return ret ? ret : -errno;
	ip->what = "cannot write";
	return 0;
}

/*
 * 2. the ranges, then (3) read back, as bytes and by the caller's check.
 * 0 or -errno.
 */
static int write_image(struct in_place *ip, const struct elfio_write_check *chk)
{
	int ret;

	ip->image_touched = true;
	ret = write_ranges(ip->fd, ip->rv, ip->n, true);
	if (!ret && (ip->flags & ELFIO_FSYNC) && fsync(ip->fd) < 0)
		ret = -errno;
	if (ret)
		return ret;
	ret = ranges_read_back(ip->fd, ip->rv, ip->n);
	if (ret) {
		elfio_err(ip->e, "the written bytes do not read back as written; rolled back");
		ip->bad = true;
		return ret;
	}
	if (chk && (ret = chk->check(ip->path, chk->ctx)))
		ip->bad = true;	/* the check printed why */
	return ret;
}

/* 4. commit: the journal goes.  0 or -errno. */
static int commit_journal(struct in_place *ip)
{
	if (unlink(ip->jpath) < 0) {
		ip->what = "cannot remove the journal";
		return -errno;
	}
	ip->journal_made = false;
	if (ip->flags & ELFIO_FSYNC)
		sync_dir_of(ip->jpath);	/* the image is durable already; this makes it final */
	return 0;
}

/*
 * Roll back; if that fails too, the journal stays for the next command.
 * Then the one line, unless what failed said it (ret: its -errno).
 */
static void roll_back(struct in_place *ip, int ret)
{
	bool kept = false;

	if (ip->image_touched && (write_ranges(ip->fd, ip->rv, ip->n, false) ||
				  ((ip->flags & ELFIO_FSYNC) && fsync(ip->fd) < 0)))
		kept = true;
	if (ip->journal_made && !kept && unlink(ip->jpath) < 0 && errno != ENOENT)
		kept = true;
	const char *tail = kept ? "; the next patchsite command on it rolls it back" :
			   ip->image_touched ? "; rolled back" : "; nothing written";
	if (!ip->bad && ret == -ENOMEM)	/* what says it */
		elfio_error(ip->path, "%s%s", ip->what, tail);
	else if (!ip->bad)
		elfio_error(ip->path, "%s: %s%s", ip->what, strerror(-ret), tail);
}

int elfio_write_in_place(struct elfio *e, const struct elfio_edits *ed, unsigned int flags,
			 const struct elfio_write_check *chk, size_t *written)
{
	struct in_place ip = { .e = e, .path = elfio_path(e), .flags = flags, .fd = -1, .jfd = -1,
			       .what = "cannot write" };
	struct stat st;
	int ret;

	*written = 0;
	if (elfio_was_compressed(e)) {
		elfio_err(e, "cannot rewrite a compressed file; decompress it first");
		return -ENOTSUP;
	}
	ip.jpath = elfio_journal_path(ip.path);
	if (!ip.jpath) {
		elfio_err(e, "out of memory for the name of the journal");
		return -ENOMEM;
	}
	ret = open_image(&ip, &st);
	if (ret == 1) {
		ret = -EAGAIN;
		goto out;
	}
	if (ret)
		goto fail;
	ret = build_journal(ip.fd, &st, flags, ed, &ip.rv, &ip.n, &ip.jbuf, &ip.jlen);
	if (ret) {
		ip.what = ret == -ENOMEM ? "out of memory for the journal" :
			  "cannot build the journal";
		goto fail;
	}
	if (!ip.n)
		goto out;	/* every edit already there */
	if ((ret = write_journal(&ip)) || (ret = write_image(&ip, chk)) ||
	    (ret = commit_journal(&ip)))
		goto fail;
	for (size_t i = 0; i < ip.n; i++)
		*written += ip.rv[i].len;
	goto out;
fail:
	roll_back(&ip, ret);
out:
	if (ip.jfd >= 0)
		close(ip.jfd);
	if (ip.fd >= 0)
		close(ip.fd);
	elfio_free(ip.jbuf);
	elfio_free(ip.rv);
	free(ip.jpath);		/* asprintf's */
	return ret;
}
