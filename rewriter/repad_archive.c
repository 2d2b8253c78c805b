// SPDX-License-Identifier: GPL-2.0-only
/*
 * repad_archive.c - repad the objects of an archive, for builds that cannot
 * hook every object as it is made.
 *
 * Strategy: a thin archive (the kernel's vmlinux.a, built-in.a, lib.a)
 * names its members as files: each is repadded in place, recursing into
 * nested thin archives, as pin does.  A regular archive carries its members
 * inline: elfio reads it whole (elfio_ar_*), each ELF member is opened from
 * memory and repadded into memory (repad_member(): its errors name it
 * "ARCHIVE(MEMBER)"), the members that changed are replaced, and elfio
 * writes the archive again atomically with its symbol index pointing at the
 * members' new offsets.  An archive in which nothing changed is not written
 * (with --in-place).  This file opens, reads and writes nothing itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elfio/elfio.h"
#include "rewriter/rewriter.h"

static void add_report(struct repad_report *to, const struct repad_report *r)
{
	to->sections += r->sections;
	to->functions += r->functions;
	to->bytes += r->bytes;
	to->branches += r->branches;
	to->relocs += r->relocs;
	to->symbols += r->symbols;
}

/* Member i of ar, if it is an ELF object, through repad; replaced when it changed. */
static int repad_one_member(struct elfio_ar *ar, size_t i, struct repad_report *rep,
			    bool *changed)
{
	struct elfio *e = NULL;
	const uint8_t *data;
	uint8_t *nb = NULL;
	size_t size, nlen = 0;
	struct repad_report r = { 0 };
	int ret;

	ret = elfio_ar_open_member(ar, i, 0, &e);
	if (ret || !e)
		return ret;
	ret = repad_member(e, &nb, &nlen, &r);
	elfio_close(e);
	if (ret)
		goto out;
	elfio_ar_is_object(ar, i, &data, &size);
	if (nb && (nlen != size || memcmp(nb, data, size))) {
		ret = elfio_ar_replace(ar, i, nb, nlen);
		if (ret)
			goto out;
		nb = NULL;
		*changed = true;
	}
	add_report(rep, &r);
out:
	free(nb);		/* malloc'd: repad_member's (elfio_rw_commit_memory's) contract */
	return ret;
}

static int repad_regular(const char *in, const char *out, struct repad_report *rep)
{
	struct elfio_ar *ar = NULL;
	bool changed = false;
	int ret;

	ret = elfio_ar_read(in, &ar);
	if (ret)
		return ret;
	for (size_t i = 0; i < elfio_ar_count(ar) && !ret; i++)
		ret = repad_one_member(ar, i, rep, &changed);
	if (!ret && (changed || strcmp(in, out)))
		ret = elfio_ar_write(ar, out);
	elfio_ar_free(ar);
	return ret;
}

static int repad_path(const char *in, const char *out, struct repad_report *rep, int depth)
{
	enum elfio_ar_kind kind = elfio_archive_kind(in);

	if (kind == ELFIO_AR_NONE)
		return repad_object(in, out, rep);
	if (kind == ELFIO_AR_REGULAR)
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
		elfio_free(m[k]);
	elfio_free(m);
	return ret;
}

int repad_file(const char *in, const char *out, struct repad_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	return repad_path(in, out, rep, 0);
}
