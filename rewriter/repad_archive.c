// SPDX-License-Identifier: GPL-2.0-only
/*
 * repad_archive.c - repad the objects of an archive, for builds that cannot
 * hook every object as it is made.
 *
 * Strategy: a thin archive (the kernel's vmlinux.a, built-in.a, lib.a)
 * names its members as files: each is repadded in place, recursing into
 * nested thin archives, as pin does.  A regular archive carries its members
 * inline: it is read whole (elfio_ar_*), each ELF member is repadded
 * through a private temporary file (repad works on files), the members that
 * changed are replaced, and the archive is written again atomically with
 * its symbol index pointing at the members' new offsets.  An archive in
 * which nothing changed is not written (with --in-place).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfio.h"
#include "rewriter.h"

static void add_report(struct repad_report *to, const struct repad_report *r)
{
	to->sections += r->sections;
	to->functions += r->functions;
	to->bytes += r->bytes;
	to->branches += r->branches;
	to->relocs += r->relocs;
	to->symbols += r->symbols;
}

static int slurp(const char *path, uint8_t **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	*buf = NULL;
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	*len = (size_t)st.st_size;
	*buf = malloc(*len ? *len : 1);
	if (!*buf) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t got = 0; got < *len;) {
		ssize_t n = pread(fd, *buf + got, *len - got, (off_t)got);
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			goto out;
		}
		got += (size_t)n;
	}
out:
	if (ret) {
		free(*buf);
		*buf = NULL;
		elfio_error(path, "cannot read: %s", strerror(-ret));
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

static int write_all(int fd, const uint8_t *b, size_t len)
{
	while (len) {
		ssize_t n = write(fd, b, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Member i of ar (an ELF object) through repad; replaced when it changed. */
static int repad_member(struct elfio_ar *ar, size_t i, const char *tmpdir, const char *arpath,
			struct repad_report *rep, bool *changed)
{
	const uint8_t *data;
	uint8_t *nb = NULL;
	size_t size, nlen = 0;
	char path[4096];
	struct repad_report r = { 0 };
	int fd, ret;

	if (!elfio_ar_is_object(ar, i, &data, &size))
		return 0;
	snprintf(path, sizeof(path), "%s/member-%zu.o", tmpdir, i);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		elfio_error(path, "cannot create: %s", strerror(errno));
		return -errno;
	}
	ret = write_all(fd, data, size);
	if (close(fd) && !ret)
		ret = -errno;
	if (ret) {
		elfio_error(path, "cannot write: %s", strerror(-ret));
		goto out;
	}
	ret = repad_object(path, path, &r);
	if (ret) {
		elfio_error(arpath, "member %zu could not be repadded (the line above says why)", i);
		goto out;
	}
	ret = slurp(path, &nb, &nlen);
	if (ret)
		goto out;
	if (nlen != size || memcmp(nb, data, size)) {
		ret = elfio_ar_replace(ar, i, nb, nlen);
		if (ret)
			goto out;
		nb = NULL;
		*changed = true;
	}
	add_report(rep, &r);
out:
	free(nb);
	unlink(path);
	return ret;
}

static int repad_regular(const char *in, const char *out, struct repad_report *rep)
{
	struct elfio_ar *ar = NULL;
	struct stat st;
	char tmpl[] = "/tmp/patchsite-repad.XXXXXX";
	const char *base = getenv("TMPDIR");
	char *tmpdir = NULL;
	bool changed = false;
	int ret;

	if (stat(in, &st) < 0) {
		elfio_error(in, "%s", strerror(errno));
		return -errno;
	}
	ret = elfio_ar_read(in, &ar);
	if (ret)
		return ret;
	if (base && *base) {
		if (asprintf(&tmpdir, "%s/patchsite-repad.XXXXXX", base) < 0)
			tmpdir = NULL;
	} else {
		tmpdir = strdup(tmpl);
	}
	if (!tmpdir || !mkdtemp(tmpdir)) {
		ret = -errno ? -errno : -ENOMEM;
		elfio_error(in, "cannot make a temporary directory: %s", strerror(-ret));
		goto out;
	}
	for (size_t i = 0; i < elfio_ar_count(ar) && !ret; i++)
		ret = repad_member(ar, i, tmpdir, in, rep, &changed);
	rmdir(tmpdir);
	if (!ret && (changed || strcmp(in, out)))
		ret = elfio_ar_write(ar, out, st.st_mode & 07777);
out:
	free(tmpdir);
	elfio_ar_free(ar);
	return ret;
}

static int repad_path(const char *in, const char *out, struct repad_report *rep, int depth)
{
	char magic[8] = { 0 };
	FILE *f;

	if (!elfio_is_archive(in))
		return repad_object(in, out, rep);
	f = fopen(in, "rb");
	if (!f || fread(magic, 1, 8, f) != 8) {
		if (f)
			fclose(f);
		elfio_error(in, "cannot read the archive header");
		return -EIO;
	}
	fclose(f);
	if (!memcmp(magic, "!<arch>\n", 8))
		return repad_regular(in, out, rep);
	/* a thin archive: its members are files of their own */
	if (strcmp(in, out)) {
		elfio_error(in, "a thin archive's members are files of their own: repad it with "
			    "--in-place");
		return -EINVAL;
	}
	if (depth > 8) {
		elfio_error(in, "thin archives nested too deep");
		return -ELOOP;
	}
	char **m;
	size_t nm;
	int ret = elfio_thin_archive_members(in, &m, &nm);
	for (size_t k = 0; !ret && k < nm; k++) {
		/* repad_object() starts its report from zero: one per member */
		struct repad_report r = { 0 };

		ret = repad_path(m[k], m[k], &r, depth + 1);
		add_report(rep, &r);
	}
	for (size_t k = 0; k < nm; k++)
		free(m[k]);
	elfio_free(m);
	return ret;
}

int repad_file(const char *in, const char *out, struct repad_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	return repad_path(in, out, rep, 0);
}
