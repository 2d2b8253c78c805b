// SPDX-License-Identifier: GPL-2.0-only
/*
 * pin.c - keep linker relaxation from shrinking ftrace's patch points.
 *
 * Strategy: on riscv64 a `call` is `auipc+jalr` (8 bytes) with an
 * R_RISCV_CALL(_PLT) relocation and, beside it at the same offset, an
 * R_RISCV_RELAX that allows the linker to turn it into a 4-byte `jal`.
 * ftrace rewrites some calls with a fixed 8-byte sequence: the trampoline's
 * `ftrace_call`/`ftrace_graph_call`/`ftrace_regs_call` (arch table), any
 * point named on the command line, and with -pg every call to _mcount.
 * A relaxed one is 4 bytes and the 8-byte write destroys the next
 * instruction (the boot hangs in the ftrace self tests).  Turning just that
 * R_RISCV_RELAX into R_RISCV_NONE (same size, no symbol) keeps the call at
 * 8 bytes while relaxation stays on everywhere else.
 *
 * Every named point must decode as an 8-byte call carrying a call
 * relocation, or we refuse with what we found there.  Idempotent: a call
 * with no RELAX beside it is reported as already pinned.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "elfio/elfio.h"
#include "rewriter/rewriter.h"

struct point {
	const char *name;
	uint64_t addr;		/* flat (synthetic) address of the label */
	bool found_call;	/* a call relocation sits there */
	bool is_mcount;
};

static bool is_named(const struct arch_ops *a, const struct pin_options *o, const char *name)
{
	if (arch_is_patch_point(a, name))
		return true;
	for (const char **p = o->extra_points; p && *p; p++)
		if (!strcmp(*p, name))
			return true;
	return false;
}

/* The labels of the patch points, into *pts (*npts).  0 or -errno (said). */
static int find_points(struct elfio *e, const struct arch_ops *a, const struct pin_options *o,
		       struct point **pts, size_t *npts)
{
	const struct elfio_symtab *st;
	size_t cap = 0;
	int ret;

	if ((ret = elfio_symbols(e, &st)))
		return ret;
	for (size_t i = 1; st && i < st->count; i++) {
		const struct elfio_symbol *y = &st->syms[i];
		if (y->shndx == SHN_UNDEF || y->shndx >= elfio_nsections(e) ||
		    y->type == STT_SECTION || !is_named(a, o, y->name))
			continue;
		if (elfio_grow(pts, &cap, *npts + 1, sizeof(**pts))) {
			elfio_err(e, "out of memory for %zu patch points", *npts + 1);
			return -ENOMEM;
		}
		(*pts)[(*npts)++] = (struct point){ .name = y->name, .addr = y->addr };
	}
	return 0;
}

/* What pin_one works with: the object, its architecture, the points, the edits. */
struct pin_job {
	const char *path;
	const struct pin_options *o;
	struct pin_report *rep;
	struct elfio *e;
	const struct arch_ops *a;
	struct point *pts;
	size_t npts;
	struct elfio_rw *w;
};

/*
 * The call relocation v[i] of the relocation section s (for text), a
 * patch point's or an _mcount call's: it must be a patch_point_len call;
 * its RELAX companions (the next relocations at the same offset) become
 * NONE.  0 or -errno (said).
 */
static int pin_call(struct pin_job *j, struct elfio_section *s, struct elfio_section *text,
		    const struct elfio_symtab *rst, const struct elfio_rela *v, size_t n, size_t i)
{
	const struct arch_ops *a = j->a;
	uint64_t at = text->addr + v[i].offset;
	const char *target = rst->syms[v[i].sym].name;
	struct point *pt = NULL;
	int ret;

	for (size_t k = 0; k < j->npts; k++)
		if (j->pts[k].addr == at)
			pt = &j->pts[k];
	bool mcount = j->o->pin_mcount && arch_is_mcount_name(target);
	if (!pt && !mcount)
		return 0;

	struct arch_insn in;
	if (a->decode(text->data + v[i].offset, text->size - v[i].offset, at, &in) ||
	    in.kind != INSN_CALL || in.len != a->patch_point_len) {
		elfio_err(j->e, "%s at %s+0x%" PRIx64 " is not a %u-byte call "
			  "(auipc+jalr) that can be pinned", pt ? pt->name : target,
			  text->name, v[i].offset, a->patch_point_len);
		return -EINVAL;
	}
	if (pt)
		pt->found_call = true;

	/* Its RELAX companion: the next relocation(s) at the same offset. */
	bool relaxable = false;
	for (size_t k = i + 1; k < n && v[k].offset == v[i].offset; k++) {
		if (v[k].type != a->relax_reloc)
			continue;
		struct elfio_rela nr = { .offset = v[k].offset, .type = a->none_reloc };
		uint8_t b[24];
		size_t len = elfio_reloc_encode(s, &nr, b);

		if ((ret = elfio_rw_patch(j->w, elfio_reloc_file_offset(s, k), b, len)))
			return ret;
		relaxable = true;
	}
	if (pt) {
		relaxable ? j->rep->points++ : j->rep->points_already++;
		if (j->o->verbose || j->o->dry_run)
			printf("%s: %s at %s+0x%" PRIx64 ": %s\n", j->path, pt->name,
			       text->name, v[i].offset, !relaxable ? "already fixed-size" :
			       j->o->dry_run ? "would pin" : "pinned");
	} else {
		relaxable ? j->rep->mcount++ : j->rep->mcount_already++;
	}
	return 0;
}

/* Every call relocation of the relocation section s, where it applies to code.  0 or -errno. */
static int pin_section(struct pin_job *j, struct elfio_section *s)
{
	struct elfio *e = j->e;
	struct elfio_section *text;
	const struct elfio_symtab *rst;
	const struct elfio_rela *v;
	size_t n;
	int ret;

	if (s->shdr.sh_type != SHT_RELA || s->shdr.sh_info == 0 ||
	    s->shdr.sh_info >= elfio_nsections(e))
		return 0;
	text = elfio_section(e, s->shdr.sh_info);
	if (!is_text_section(text))
		return 0;
	if ((ret = elfio_symtab_by_index(e, s->shdr.sh_link, &rst)) ||
	    (ret = elfio_relas(e, s, &v, &n)) || (ret = elfio_section_data(e, text)))
		return ret;
	for (size_t i = 0; i < n; i++) {
		/* v[i].sym < rst->count: elfio checked it against the linked table */
		if (j->a->call_reloc_back(v[i].type) != 0 || v[i].offset >= text->size)
			continue;
		if ((ret = pin_call(j, s, text, rst, v, n, i)))
			return ret;
	}
	return 0;
}

/* Every named point was a call; which of -P's names were seen.  0 or -EINVAL (said). */
static int check_points(struct pin_job *j, bool *named_seen)
{
	const struct pin_options *o = j->o;

	for (size_t k = 0; k < j->npts; k++) {
		if (!j->pts[k].found_call) {
			char where[128];
			elfio_format_addr(j->e, j->pts[k].addr, where, sizeof(where));
			elfio_err(j->e, "patch point '%s' at %s is not a call with a relocation; "
				  "cannot pin it", j->pts[k].name, where);
			return -EINVAL;
		}
		for (const char **p = o->extra_points; p && *p; p++)
			if (!strcmp(*p, j->pts[k].name))
				named_seen[p - o->extra_points] = true;
	}
	return 0;
}

static int pin_one(const char *path, const struct pin_options *o, struct pin_report *rep,
		   bool *named_seen)
{
	struct pin_job j = { .path = path, .o = o, .rep = rep, .e = elfio_open(path, 0) };
	struct elfio_section *s;
	char why[256];
	int ret = -EINVAL;

	if (!j.e)
		return -EINVAL;
	j.w = elfio_rw_new(j.e);
	if (!j.w) {
		elfio_close(j.e);
		return -ENOMEM;
	}
	rep->objects++;
	j.a = arch_for(elfio_ehdr(j.e)->e_machine, elfio_machine_name(elfio_ehdr(j.e)->e_machine),
		       ARCH_CAP_PIN, why, sizeof(why));
	if (!j.a) {
		elfio_err(j.e, "%s", why);
		goto out;
	}
	if (!elfio_is_rel(j.e)) {
		elfio_err(j.e, "pin works on relocatable objects, before the final link");
		goto out;
	}
	if ((ret = find_points(j.e, j.a, o, &j.pts, &j.npts)))
		goto out;
	for_each_section(j.e, s)
		if ((ret = pin_section(&j, s)))
			goto out;
	if ((ret = check_points(&j, named_seen)))
		goto out;
	if (elfio_rw_changes(j.w) && !o->dry_run) {
		ret = elfio_rw_commit(j.w, path, NULL);
		if (!ret)
			rep->written++;
	}
out:
	elfio_free(j.pts);
	elfio_rw_free(j.w);
	elfio_close(j.e);
	return ret;
}

/* An object, or a thin archive whose members may be thin archives too. */
static int pin_path(const char *path, const struct pin_options *o, struct pin_report *rep,
		    bool *seen, int depth)
{
	char **m;
	size_t nm;
	int ret;

	if (!elfio_is_archive(path))
		return pin_one(path, o, rep, seen);
	if (depth > 8) {
		elfio_error(path, "thin archives nested too deep");
		return -ELOOP;
	}
	ret = elfio_thin_archive_members(path, &m, &nm);
	for (size_t k = 0; !ret && k < nm; k++)
		ret = pin_path(m[k], o, rep, seen, depth + 1);
	for (size_t k = 0; k < nm; k++)
		elfio_free(m[k]);
	elfio_free(m);
	return ret;
}

int pin_objects(const char *const *paths, size_t n, const struct pin_options *o,
		struct pin_report *rep)
{
	size_t nextra = 0;
	bool *seen;
	int ret = 0;

	memset(rep, 0, sizeof(*rep));
	for (const char **p = o->extra_points; p && *p; p++)
		nextra++;
	seen = elfio_calloc(nextra + 1, sizeof(*seen));
	if (!seen) {
		elfio_error(n ? paths[0] : "patchsite", "out of memory for the list of patch points");
		return -ENOMEM;
	}

	for (size_t i = 0; i < n && !ret; i++)
		ret = pin_path(paths[i], o, rep, seen, 0);
	for (size_t k = 0; !ret && k < nextra; k++) {
		if (!seen[k]) {
			elfio_error(o->extra_points[k], "patch point not found in any object");
			ret = -ENOENT;
		}
	}
	elfio_free(seen);
	return ret;
}
