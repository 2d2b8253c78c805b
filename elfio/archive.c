// SPDX-License-Identifier: GPL-2.0-only
/*
 * archive.c - archives, the only way a command reads or writes one.
 *
 * Strategy: a thin archive ("!<thin>\n") stores member headers but not the
 * members: each name is a path relative to the archive's directory, long
 * names live in the "//" table as "name/\n" and headers refer to them as
 * "/OFFSET".  libelf does not read thin archives, and a rewriting command
 * needs the member files themselves, so the headers are walked here, each
 * field bounds-checked.  Regular archives carry their members inline and
 * are read whole further down (elfio_ar_*): a member is opened as an image
 * from memory (elfio_open_memory, named "ARCHIVE(MEMBER)"), so that repad
 * rewrites it with no temporary file, and the archive is written again
 * through write.c's atomic writer.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "elfio/elfio_priv.h"

#define AR_HDR 60

static int parse_size(const char *f, size_t *out)
{
	size_t v = 0;
	int i;

	for (i = 0; i < 10 && f[i] >= '0' && f[i] <= '9'; i++)
		v = v * 10 + (size_t)(f[i] - '0');
	if (i == 0)
		return -EINVAL;
	for (; i < 10; i++)
		if (f[i] != ' ')
			return -EINVAL;
	*out = v;
	return 0;
}

/* What elfio_thin_archive_members's steps share: the archive, its name table, the names. */
struct thin {
	const char *path;
	FILE *f;
	char *longnames;	/* the "//" member's text, or NULL */
	size_t longlen;
	char *copy;		/* path's copy, which dirname() cut to dir */
	const char *dir;
	char **names;		/* the members' paths */
	size_t n, cap;
};

/*
 * "!<thin>\n", not a regular archive (whose members are inline); the
 * archive's directory, where its members' relative names start.  0 or
 * -errno (said, but for -ENOMEM).
 */
static int thin_magic(struct thin *t)
{
	char magic[8];

	if (fread(magic, 1, 8, t->f) != 8 || (memcmp(magic, "!<thin>\n", 8) &&
					       memcmp(magic, "!<arch>\n", 8))) {
		elfio_error(t->path, "not an archive");
		return -EINVAL;
	}
	if (!memcmp(magic, "!<arch>\n", 8)) {
		elfio_error(t->path, "a regular archive holds its members inline; pin the objects "
			    "before archiving them, or use a thin archive");
		return -EINVAL;
	}
	t->copy = elfio_strdup(t->path);
	if (!t->copy)
		return -ENOMEM;
	t->dir = dirname(t->copy);
	return 0;
}

/* The "//" member: the long names, read (size bytes, padded to even). 0 or -errno. */
static int thin_longnames(struct thin *t, size_t size)
{
	elfio_free(t->longnames);
	t->longnames = elfio_calloc(size + 1, 1);
	if (!t->longnames)
		return -ENOMEM;
	if (fread(t->longnames, 1, size, t->f) != size) {
		elfio_error(t->path, "truncated archive name table");
		return -EINVAL;
	}
	t->longnames[size] = 0;
	t->longlen = size;
	if (size & 1)
		fgetc(t->f);
	return 0;
}

/*
 * A member's name from its header h: "/OFFSET" into the long names (each
 * "name/\n"), or "name/" in the header itself.  0 or -EINVAL said.
 */
static int thin_name(const struct thin *t, const char *h, char *name, size_t len)
{
	if (h[0] == '/' && h[1] >= '0' && h[1] <= '9') {
		size_t off = 0;
		for (int i = 1; i < 16 && h[i] >= '0' && h[i] <= '9'; i++)
			off = off * 10 + (size_t)(h[i] - '0');
		if (!t->longnames || off >= t->longlen) {
			elfio_error(t->path, "archive member name points outside the name table");
			return -EINVAL;
		}
		size_t k = off;
		while (k < t->longlen && t->longnames[k] != '\n')
			k++;
		if (k == off || k - off >= len || t->longnames[k - 1] != '/') {
			elfio_error(t->path, "malformed long member name");
			return -EINVAL;
		}
		memcpy(name, t->longnames + off, k - off - 1);
		name[k - off - 1] = 0;
	} else {
		int k = 0;
		while (k < 16 && h[k] != '/')
			k++;
		if (k == 16 || k == 0) {
			elfio_error(t->path, "malformed member name");
			return -EINVAL;
		}
		memcpy(name, h, (size_t)k);
		name[k] = 0;
	}
	return 0;
}

/* A member's path: as named when absolute, else in the archive's directory. 0 or -ENOMEM. */
static int thin_add(struct thin *t, const char *name)
{
	if (elfio_grow(&t->names, &t->cap, t->n + 1, sizeof(*t->names)))
		return -ENOMEM;
	if (name[0] == '/') {
		t->names[t->n] = elfio_strdup(name);
	} else {
		size_t len = strlen(t->dir) + 1 + strlen(name) + 1;
		if ((t->names[t->n] = elfio_calloc(len, 1)))
			snprintf(t->names[t->n], len, "%s/%s", t->dir, name);
	}
	if (!t->names[t->n])
		return -ENOMEM;
	t->n++;
	return 0;
}

/*
 * The next member header: the symbol table (stored inline even in thin
 * archives) skipped, the name table read, a member's name added.  1 at
 * the end, 0, or -errno.
 */
static int thin_member(struct thin *t)
{
	char h[AR_HDR], name[4096];
	size_t got = fread(h, 1, AR_HDR, t->f), size;
	int ret;

	if (got == 0)
		return 1;
	if (got != AR_HDR || h[58] != '`' || h[59] != '\n' || parse_size(h + 48, &size)) {
		elfio_error(t->path, "malformed archive member header");
		return -EINVAL;
	}
	if (!memcmp(h, "/ ", 2) || !memcmp(h, "/SYM64/ ", 8)) {
		if (fseek(t->f, (long)(size + (size & 1)), SEEK_CUR)) {
			elfio_error(t->path, "truncated archive symbol table");
			return -EINVAL;
		}
		return 0;
	}
	if (!memcmp(h, "// ", 3))
		return thin_longnames(t, size);
	/* A member: its data is not here. */
	if ((ret = thin_name(t, h, name, sizeof(name))))
		return ret;
	return thin_add(t, name);
}

int elfio_thin_archive_members(const char *path, char ***out, size_t *count)
{
	struct thin t = { .path = path, .f = fopen(path, "rb") };
	int ret;

	*out = NULL;
	*count = 0;
	if (!t.f) {
		ret = -errno;
		elfio_error(path, "%s", strerror(errno));
		return ret;
	}
	ret = thin_magic(&t);
	while (!ret)
		ret = thin_member(&t);
	if (ret == 1) {
		*out = t.names;
		*count = t.n;
		t.names = NULL;
		t.n = 0;
		ret = 0;
	}
	for (size_t i = 0; i < t.n; i++)
		elfio_free(t.names[i]);
	elfio_free(t.names);
	elfio_free(t.longnames);
	elfio_free(t.copy);
	fclose(t.f);
	return ret;
}

enum elfio_ar_kind elfio_archive_kind(const char *path)
{
	FILE *f = fopen(path, "rb");
	char magic[8];
	enum elfio_ar_kind k = ELFIO_AR_NONE;

	if (!f)
		return ELFIO_AR_NONE;
	if (fread(magic, 1, 8, f) == 8) {
		if (!memcmp(magic, "!<thin>\n", 8))
			k = ELFIO_AR_THIN;
		else if (!memcmp(magic, "!<arch>\n", 8))
			k = ELFIO_AR_REGULAR;
	}
	fclose(f);
	return k;
}

bool elfio_is_archive(const char *path)
{
	return elfio_archive_kind(path) != ELFIO_AR_NONE;
}

/* --- Regular archives: read whole, members replaced, written atomically --- */

/*
 * A regular archive ("!<arch>\n") in memory: every member's 60-byte header
 * and its bytes.  The symbol index ("/" with 32-bit offsets, "/SYM64/" with
 * 64-bit ones) maps symbol names to the offsets of member headers; when a
 * member changes size, those offsets are rewritten for the new layout (the
 * names stay: replacing a member's bytes keeps its symbols).  The long-name
 * table ("//") is a member like the others.
 */
struct elfio_ar_member {
	char hdr[AR_HDR];
	uint8_t *data;		/* ours */
	size_t size;
	uint64_t old_off;	/* of the header, in the input */
	bool is_index, is_index64, is_names;
};

struct elfio_ar {
	char *path;
	mode_t mode;		/* the input's permission bits */
	struct elfio_ar_member *m;
	size_t n;
};

void elfio_ar_free(struct elfio_ar *ar)
{
	if (!ar)
		return;
	for (size_t i = 0; i < ar->n; i++)
		free(ar->m[i].data);	/* malloc'd: see elfio_ar_replace */
	elfio_free(ar->m);
	elfio_free(ar->path);
	elfio_free(ar);
}

int elfio_ar_read(const char *path, struct elfio_ar **out)
{
	FILE *f = fopen(path, "rb");
	struct elfio_ar *ar = elfio_calloc(1, sizeof(*ar));
	struct stat st;
	char magic[8];
	size_t cap = 0;
	int ret = -EINVAL;

	*out = NULL;
	if (!f || !ar) {
		ret = f ? -ENOMEM : -errno;
		elfio_error(path, "%s", f ? "out of memory" : strerror(errno));
		goto out;
	}
	if (fstat(fileno(f), &st) < 0) {
		ret = -errno;
		elfio_error(path, "%s", strerror(errno));
		goto out;
	}
	ar->mode = st.st_mode & 07777;
	ar->path = elfio_strdup(path);
	if (!ar->path || fread(magic, 1, 8, f) != 8 || memcmp(magic, "!<arch>\n", 8)) {
		elfio_error(path, "not a regular archive");
		goto out;
	}
	for (;;) {
		struct elfio_ar_member mb = { 0 };
		long at = ftell(f);
		size_t got = fread(mb.hdr, 1, AR_HDR, f);

		if (got == 0)
			break;
		if (got != AR_HDR || mb.hdr[58] != '`' || mb.hdr[59] != '\n' ||
		    parse_size(mb.hdr + 48, &mb.size)) {
			elfio_error(path, "malformed archive member header at offset %ld", at);
			goto out;
		}
		mb.old_off = (uint64_t)at;
		mb.is_index = !memcmp(mb.hdr, "/ ", 2);
		mb.is_index64 = !memcmp(mb.hdr, "/SYM64/ ", 8);
		mb.is_names = !memcmp(mb.hdr, "// ", 3);
		/* malloc'd: elfio_ar_replace's contract (its data is the caller's malloc) */
		mb.data = malloc(mb.size ? mb.size : 1);
		if (!mb.data) {
			ret = -ENOMEM;
			elfio_error(path, "out of memory for a %zu-byte member", mb.size);
			goto out;
		}
		if (fread(mb.data, 1, mb.size, f) != mb.size) {
			free(mb.data);
			elfio_error(path, "archive member at offset %ld is truncated", at);
			goto out;
		}
		if (mb.size & 1)
			fgetc(f);
		if (elfio_grow(&ar->m, &cap, ar->n + 1, sizeof(*ar->m))) {
			free(mb.data);
			ret = -ENOMEM;
			elfio_error(path, "out of memory for %zu archive members", ar->n + 1);
			goto out;
		}
		ar->m[ar->n++] = mb;
	}
	*out = ar;
	ar = NULL;
	ret = 0;
out:
	elfio_ar_free(ar);
	if (f)
		fclose(f);
	return ret;
}

size_t elfio_ar_count(const struct elfio_ar *ar)
{
	return ar->n;
}

bool elfio_ar_is_object(const struct elfio_ar *ar, size_t i, const uint8_t **data, size_t *size)
{
	const struct elfio_ar_member *m = &ar->m[i];

	*data = m->data;
	*size = m->size;
	return !m->is_index && !m->is_index64 && !m->is_names && m->size >= 4 &&
	       !memcmp(m->data, "\177ELF", 4);
}

/*
 * Member i's name for messages: the header's ("name/", or "/OFFSET" into
 * the "//" table, GNU's form), or its number when the header says none.
 */
static void member_name(const struct elfio_ar *ar, size_t i, char *buf, size_t len)
{
	const char *h = ar->m[i].hdr;
	size_t k = 0;

	if (h[0] == '/' && h[1] >= '0' && h[1] <= '9') {
		const struct elfio_ar_member *names = NULL;
		size_t off = 0;

		for (int d = 1; d < 16 && h[d] >= '0' && h[d] <= '9'; d++)
			off = off * 10 + (size_t)(h[d] - '0');
		for (size_t j = 0; j < ar->n && !names; j++)
			if (ar->m[j].is_names)
				names = &ar->m[j];
		if (names && off < names->size) {
			const char *p = (const char *)names->data + off;
			size_t max = names->size - off;

			while (k < max && p[k] != '\n' && p[k] != '/')
				k++;
			if (k && k < max) {
				snprintf(buf, len, "%.*s", (int)k, p);
				return;
			}
		}
	} else {
		while (k < 16 && h[k] != '/' && h[k] != ' ')
			k++;
		if (k) {
			snprintf(buf, len, "%.*s", (int)k, h);
			return;
		}
	}
	snprintf(buf, len, "member %zu", i);
}

int elfio_ar_open_member(struct elfio_ar *ar, size_t i, unsigned int flags, struct elfio **out)
{
	const uint8_t *data;
	size_t size;
	char name[256], *full = NULL;
	int ret;

	*out = NULL;
	if (!elfio_ar_is_object(ar, i, &data, &size))
		return 0;
	member_name(ar, i, name, sizeof(name));
	if (asprintf(&full, "%s(%s)", ar->path, name) < 0) {
		elfio_error(ar->path, "out of memory");
		return -ENOMEM;
	}
	*out = elfio_open_memory(full, data, size, flags);
	ret = *out ? 0 : -errno;
	free(full);		/* asprintf's */
	return ret;
}

int elfio_ar_replace(struct elfio_ar *ar, size_t i, uint8_t *data, size_t size)
{
	if (i >= ar->n || size >= 10000000000ull) {
		elfio_error(ar->path, "member %zu cannot take %zu bytes", i, size);
		return -EINVAL;
	}
	free(ar->m[i].data);
	ar->m[i].data = data;
	ar->m[i].size = size;
	char f[11];
	snprintf(f, sizeof(f), "%-10zu", size);
	memcpy(ar->m[i].hdr + 48, f, 10);
	return 0;
}

static uint64_t be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

int elfio_ar_write(struct elfio_ar *ar, const char *out_path)
{
	uint64_t *new_off = elfio_calloc(ar->n ? ar->n : 1, sizeof(*new_off));
	uint64_t off = 8;
	uint8_t *buf = NULL;
	int ret = -EINVAL;

	if (!new_off) {
		elfio_error(ar->path, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < ar->n; i++) {
		new_off[i] = off;
		off += AR_HDR + ar->m[i].size + (ar->m[i].size & 1);
	}
	/* the symbol index: every member offset mapped to the member's new one */
	for (size_t i = 0; i < ar->n; i++) {
		struct elfio_ar_member *m = &ar->m[i];
		int w = m->is_index64 ? 8 : 4;

		if (!m->is_index && !m->is_index64)
			continue;
		if (m->size < (size_t)w || be(m->data, w) > (m->size - w) / w) {
			elfio_error(ar->path, "malformed archive symbol index");
			goto out;
		}
		uint64_t count = be(m->data, w);
		for (uint64_t k = 0; k < count; k++) {
			uint8_t *p = m->data + w + k * w;
			uint64_t o = be(p, w);
			size_t j = 0;
			while (j < ar->n && ar->m[j].old_off != o)
				j++;
			if (j == ar->n) {
				elfio_error(ar->path, "archive symbol index names offset %" PRIu64 ", which "
					    "is no member", o);
				goto out;
			}
			if (w == 4 && new_off[j] > UINT32_MAX) {
				elfio_error(ar->path, "archive grew past 4 GiB: its 32-bit symbol index "
					    "cannot say where its members are");
				goto out;
			}
			put_be(p, new_off[j], w);
		}
	}
	buf = elfio_calloc(off, 1);
	if (!buf) {
		ret = -ENOMEM;
		elfio_error(ar->path, "out of memory for a %" PRIu64 "-byte archive", off);
		goto out;
	}
	memcpy(buf, "!<arch>\n", 8);
	for (size_t i = 0; i < ar->n; i++) {
		uint8_t *p = buf + new_off[i];
		memcpy(p, ar->m[i].hdr, AR_HDR);
		memcpy(p + AR_HDR, ar->m[i].data, ar->m[i].size);
		if (ar->m[i].size & 1)
			p[AR_HDR + ar->m[i].size] = '\n';
	}
	ret = elfio_write_file_atomic(out_path, buf, off, ar->mode);
out:
	elfio_free(buf);
	elfio_free(new_off);
	return ret;
}
