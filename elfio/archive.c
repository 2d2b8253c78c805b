// SPDX-License-Identifier: GPL-2.0-only
/*
 * archive.c - the member list of a thin archive (vmlinux.a, built-in.a).
 *
 * Strategy: a thin archive ("!<thin>\n") stores member headers but not the
 * members: each name is a path relative to the archive's directory, long
 * names live in the "//" table as "name/\n" and headers refer to them as
 * "/OFFSET".  libelf does not read thin archives, and a rewriting command
 * needs the member files themselves, so the headers are walked here, each
 * field bounds-checked.  Regular archives carry their members inline and
 * are refused: rewrite the objects before archiving them.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfio.h"

#define AR_HDR 60

static int parse_size(const char *f, size_t *out)
{
	size_t v = 0;
	int i;

	for (i = 0; i < 10 && f[i] >= '0' && f[i] <= '9'; i++)
		v = v * 10 + (size_t)(f[i] - '0');
	if (i == 0)
		return -1;
	for (; i < 10; i++)
		if (f[i] != ' ')
			return -1;
	*out = v;
	return 0;
}

int elfio_thin_archive_members(const char *path, char ***out, size_t *count)
{
	FILE *f = fopen(path, "rb");
	char magic[8];
	char **names = NULL;
	size_t n = 0;
	char *longnames = NULL;
	size_t longlen = 0;
	char *dir = NULL, *copy = NULL;
	int ret = -EINVAL;

	*out = NULL;
	*count = 0;
	if (!f) {
		ret = -errno;
		elfio_error(path, "%s", strerror(errno));
		return ret;
	}
	if (fread(magic, 1, 8, f) != 8 || (memcmp(magic, "!<thin>\n", 8) &&
					    memcmp(magic, "!<arch>\n", 8))) {
		elfio_error(path, "not an archive");
		goto out;
	}
	if (!memcmp(magic, "!<arch>\n", 8)) {
		elfio_error(path, "a regular archive holds its members inline; pin the objects "
			    "before archiving them, or use a thin archive");
		goto out;
	}
	copy = strdup(path);
	if (!copy) {
		ret = -ENOMEM;
		goto out;
	}
	dir = dirname(copy);

	for (;;) {
		char h[AR_HDR];
		size_t got = fread(h, 1, AR_HDR, f);
		size_t size;

		if (got == 0)
			break;
		if (got != AR_HDR || h[58] != '`' || h[59] != '\n' || parse_size(h + 48, &size)) {
			elfio_error(path, "malformed archive member header");
			goto out;
		}
		if (!memcmp(h, "/ ", 2) || !memcmp(h, "/SYM64/ ", 8)) {
			/* symbol table: stored inline even in thin archives */
			if (fseek(f, (long)(size + (size & 1)), SEEK_CUR)) {
				elfio_error(path, "truncated archive symbol table");
				goto out;
			}
			continue;
		}
		if (!memcmp(h, "// ", 3)) {
			free(longnames);
			longnames = malloc(size + 1);
			if (!longnames) {
				ret = -ENOMEM;
				goto out;
			}
			if (fread(longnames, 1, size, f) != size) {
				elfio_error(path, "truncated archive name table");
				goto out;
			}
			longnames[size] = 0;
			longlen = size;
			if (size & 1)
				fgetc(f);
			continue;
		}
		/* A member: its data is not here. */
		char name[4096];
		if (h[0] == '/' && h[1] >= '0' && h[1] <= '9') {
			size_t off = 0;
			for (int i = 1; i < 16 && h[i] >= '0' && h[i] <= '9'; i++)
				off = off * 10 + (size_t)(h[i] - '0');
			if (!longnames || off >= longlen) {
				elfio_error(path, "archive member name points outside the name table");
				goto out;
			}
			size_t k = off;
			while (k < longlen && longnames[k] != '\n')
				k++;
			if (k == off || k - off >= sizeof(name) || longnames[k - 1] != '/') {
				elfio_error(path, "malformed long member name");
				goto out;
			}
			memcpy(name, longnames + off, k - off - 1);
			name[k - off - 1] = 0;
		} else {
			int k = 0;
			while (k < 16 && h[k] != '/')
				k++;
			if (k == 16 || k == 0) {
				elfio_error(path, "malformed member name");
				goto out;
			}
			memcpy(name, h, (size_t)k);
			name[k] = 0;
		}
		char **nv = realloc(names, (n + 1) * sizeof(*nv));
		if (!nv) {
			ret = -ENOMEM;
			goto out;
		}
		names = nv;
		if (name[0] == '/')
			names[n] = strdup(name);
		else if (asprintf(&names[n], "%s/%s", dir, name) < 0)
			names[n] = NULL;
		if (!names[n]) {
			ret = -ENOMEM;
			goto out;
		}
		n++;
	}
	*out = names;
	*count = n;
	names = NULL;
	n = 0;
	ret = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(longnames);
	free(copy);
	fclose(f);
	return ret;
}

bool elfio_is_archive(const char *path)
{
	FILE *f = fopen(path, "rb");
	char magic[8];
	bool yes;

	if (!f)
		return false;
	yes = fread(magic, 1, 8, f) == 8 &&
	      (!memcmp(magic, "!<thin>\n", 8) || !memcmp(magic, "!<arch>\n", 8));
	fclose(f);
	return yes;
}
