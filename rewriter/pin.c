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

static int pin_one(const char *path, const struct pin_options *o, struct pin_report *rep,
		   bool *named_seen)
{
	struct elfio *e = elfio_open(path, 0);
	const struct arch_ops *a;
	const struct elfio_symtab *st;
	struct point *pts = NULL;
	size_t npts = 0, cap = 0;
	struct elfio_rw *w = NULL;
	struct elfio_section *s;
	int ret = -EINVAL;

	if (!e)
		return -EINVAL;
	w = elfio_rw_new(e);
	if (!w) {
		elfio_close(e);
		return -ENOMEM;
	}
	rep->objects++;
	char why[256];
	a = arch_for(elfio_ehdr(e)->e_machine, elfio_machine_name(elfio_ehdr(e)->e_machine),
		     ARCH_CAP_PIN, why, sizeof(why));
	if (!a) {
		elfio_err(e, "%s", why);
		goto out;
	}
	if (!elfio_is_rel(e)) {
		elfio_err(e, "pin works on relocatable objects, before the final link");
		goto out;
	}
	if ((ret = elfio_symbols(e, &st)))
		goto out;

	/* The labels of the patch points. */
	for (size_t i = 1; st && i < st->count; i++) {
		const struct elfio_symbol *y = &st->syms[i];
		if (y->shndx == SHN_UNDEF || y->shndx >= elfio_nsections(e) ||
		    y->type == STT_SECTION || !is_named(a, o, y->name))
			continue;
		if (elfio_grow(&pts, &cap, npts + 1, sizeof(*pts))) {
			elfio_err(e, "out of memory for %zu patch points", npts + 1);
			ret = -ENOMEM;
			goto out;
		}
		pts[npts++] = (struct point){ .name = y->name, .addr = y->addr };
	}

	for_each_section(e, s) {
		struct elfio_section *text;
		const struct elfio_symtab *rst;
		const struct elfio_rela *v;
		size_t n;

		if (s->shdr.sh_type != SHT_RELA || s->shdr.sh_info == 0 ||
		    s->shdr.sh_info >= elfio_nsections(e))
			continue;
		text = elfio_section(e, s->shdr.sh_info);
		if (!is_text_section(text))
			continue;
		if ((ret = elfio_symtab_by_index(e, s->shdr.sh_link, &rst)))
			goto out;
		if ((ret = elfio_relas(e, s, &v, &n)))
			goto out;
		if ((ret = elfio_section_data(e, text))) {
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			/* v[i].sym < rst->count: elfio checked it against the linked table */
			if (a->call_reloc_back(v[i].type) != 0 || v[i].offset >= text->size)
				continue;
			uint64_t at = text->addr + v[i].offset;
			const char *target = rst->syms[v[i].sym].name;
			struct point *pt = NULL;
			for (size_t k = 0; k < npts; k++)
				if (pts[k].addr == at)
					pt = &pts[k];
			bool mcount = o->pin_mcount && arch_is_mcount_name(target);
			if (!pt && !mcount)
				continue;

			struct arch_insn in;
			if (a->decode(text->data + v[i].offset, text->size - v[i].offset, at, &in) ||
			    in.kind != INSN_CALL || in.len != a->patch_point_len) {
				elfio_err(e, "%s at %s+0x%" PRIx64 " is not a %u-byte call "
					  "(auipc+jalr) that can be pinned", pt ? pt->name : target,
					  text->name, v[i].offset, a->patch_point_len);
				ret = -EINVAL;
				goto out;
			}
			if (pt)
				pt->found_call = true;

			/* Its RELAX companion: the next relocation(s) at the same offset. */
			bool relaxable = false;
			for (size_t j = i + 1; j < n && v[j].offset == v[i].offset; j++) {
				if (v[j].type != a->relax_reloc)
					continue;
				struct elfio_rela nr = { .offset = v[j].offset,
							 .type = a->none_reloc };
				uint8_t b[24];
				size_t len = elfio_reloc_encode(s, &nr, b);

				if ((ret = elfio_rw_patch(w, elfio_reloc_file_offset(s, j), b, len)))
					goto out;
				relaxable = true;
			}
			if (pt) {
				relaxable ? rep->points++ : rep->points_already++;
				if (o->verbose || o->dry_run)
					printf("%s: %s at %s+0x%" PRIx64 ": %s\n", path, pt->name,
					       text->name, v[i].offset, !relaxable ? "already fixed-size" :
					       o->dry_run ? "would pin" : "pinned");
			} else {
				relaxable ? rep->mcount++ : rep->mcount_already++;
			}
		}
	}

	for (size_t k = 0; k < npts; k++) {
		if (!pts[k].found_call) {
			char where[128];
			elfio_format_addr(e, pts[k].addr, where, sizeof(where));
			elfio_err(e, "patch point '%s' at %s is not a call with a relocation; "
				  "cannot pin it", pts[k].name, where);
			ret = -EINVAL;
			goto out;
		}
		for (const char **p = o->extra_points; p && *p; p++)
			if (!strcmp(*p, pts[k].name))
				named_seen[p - o->extra_points] = true;
	}

	ret = 0;
	if (elfio_rw_changes(w) && !o->dry_run) {
		ret = elfio_rw_commit(w, path, NULL);
		if (!ret)
			rep->written++;
	}
out:
	elfio_free(pts);
	elfio_rw_free(w);
	elfio_close(e);
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
