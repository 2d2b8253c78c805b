// SPDX-License-Identifier: GPL-2.0-only
/*
 * inplace.c - the post-link step: write the sorted table into the image's
 * own reserved table.
 *
 * Strategy: the table is chosen as a kernel build reserves it: the region
 * between __start_mcount_loc and __stop_mcount_loc, else a __mcount_loc
 * section, else __patchable_function_entries.  Slots get the verified
 * sites in ascending order (the kernel binary-searches the table and does
 * not sort it again), unused slots get zero (the kernel skips zeros).
 *
 * A relocatable image may keep the values only as R_*_RELATIVE addends in
 * .rela.dyn (arm64 vmlinux linked with --no-apply-dynamic-relocs has zeros
 * in place).  Every RELATIVE (or NONE) entry whose r_offset is a slot is
 * rewritten with the slot's new value; an unused slot's entry becomes
 * R_*_NONE so that boot-time relocation leaves its zero alone.  Whether
 * values also go in place follows what the image did: if any covered slot
 * held its value in place, all do.
 *
 * Every byte goes through the edit list and the atomic writer; if the image
 * already holds exactly this table, nothing is written (idempotent).
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recordsites.h"

struct covered {
	bool has;
	uint64_t file_off;	/* of the Elf64_Rela */
	struct elfio_rela cur;
};

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Find the .rela.dyn entries that cover the table's slots. */
static int find_covering(struct record *r, const struct site_table *tb, struct covered *cov)
{
	struct elfio_section *s;

	for_each_section(r->e, s) {
		struct elfio_rela *v;
		size_t n;

		if (s->shdr.sh_type != SHT_RELA || !(s->shdr.sh_flags & SHF_ALLOC))
			continue;
		int ret = elfio_relas(r->e, s, &v, &n);
		if (ret)
			return ret;
		for (size_t i = 0; i < n; i++) {
			if (v[i].offset < tb->start || v[i].offset >= tb->end)
				continue;
			if ((v[i].offset - tb->start) % 8 ||
			    (v[i].type != r->arch->relative_reloc && v[i].type != 0)) {
				elfio_err(r->e, "table '%s': slot 0x%" PRIx64 " is covered by a "
					  "relocation of type %u in '%s'; cannot rewrite it", tb->name,
					  v[i].offset, v[i].type, s->name);
				free(v);
				return -EINVAL;
			}
			struct covered *c = &cov[(v[i].offset - tb->start) / 8];
			c->has = true;
			c->file_off = s->shdr.sh_offset + i * sizeof(Elf64_Rela);
			c->cur = v[i];
		}
		free(v);
	}
	return 0;
}

int record_write_in_place(struct record *r, const struct inplace_options *o, const char *out_path,
			  struct inplace_report *rep)
{
	const struct site_table *tb;
	struct covered *cov = NULL;
	struct elfio_edits ed;
	int ret;

	memset(rep, 0, sizeof(*rep));
	elfio_edits_init(&ed);
	if (elfio_is_rel(r->e)) {
		elfio_err(r->e, "a relocatable object has no final table to fill; use "
			  "--format=elf and link the table object with it");
		return -EINVAL;
	}
	tb = record_table_under_test(r);
	if (!tb) {
		elfio_err(r->e, "has no reserved table (no __start_mcount_loc/__stop_mcount_loc "
			  "region, no __mcount_loc or __patchable_function_entries section)");
		return -ENOENT;
	}
	rep->table = tb->name;
	rep->slots = tb->count;

	size_t need = 0;
	for (size_t i = 0; i < r->nsites; i++) {
		if (r->sites[i].misaligned && !o->keep_misaligned)
			rep->left_out++;
		else
			need++;
	}
	if (need > tb->count) {
		elfio_err(r->e, "table '%s' is too small: %zu sites need %zu slots, it has %zu",
			  tb->name, need, need, tb->count);
		return -ENOSPC;
	}

	cov = calloc(tb->count ? tb->count : 1, sizeof(*cov));
	if (!cov)
		return -ENOMEM;
	ret = find_covering(r, tb, cov);
	if (ret)
		goto out;

	/* Did the link apply the relocations in place?  Keep its convention. */
	bool applied = false;
	for (size_t i = 0; i < tb->count; i++) {
		if (!cov[i].has)
			continue;
		uint64_t cur;
		if (elfio_read_u64(r->e, tb->start + 8 * i, &cur) == 0 && cur)
			applied = true;
	}

	size_t si = 0;
	for (size_t i = 0; i < tb->count; i++) {
		uint64_t v = 0, off, cur = 0;
		uint8_t b[8];

		while (si < r->nsites && r->sites[si].misaligned && !o->keep_misaligned)
			si++;
		if (si < r->nsites) {
			v = r->sites[si++].addr;
			rep->used++;
		}
		uint64_t content = cov[i].has && !applied ? 0 : v;
		if (elfio_addr_to_offset(r->e, tb->start + 8 * i, &off)) {
			elfio_err(r->e, "table '%s': slot 0x%" PRIx64 " has no bytes in the file",
				  tb->name, tb->start + 8 * i);
			ret = -EINVAL;
			goto out;
		}
		elfio_read_u64(r->e, tb->start + 8 * i, &cur);
		if (cur != content) {
			le64(b, content);
			if ((ret = elfio_edits_add(&ed, off, b, 8)))
				goto out;
		}
		if (cov[i].has) {
			Elf64_Rela nr = {
				.r_offset = cov[i].cur.offset,
				.r_info = v ? ELF64_R_INFO(0, r->arch->relative_reloc) : ELF64_R_INFO(0, 0),
				.r_addend = (Elf64_Sxword)v,
			};
			uint32_t ntype = v ? r->arch->relative_reloc : 0;
			if (cov[i].cur.type != ntype || cov[i].cur.sym != 0 ||
			    cov[i].cur.addend != (int64_t)v) {
				uint8_t rb[sizeof(nr)];
				le64(rb, nr.r_offset);
				le64(rb + 8, nr.r_info);
				le64(rb + 16, (uint64_t)nr.r_addend);
				if ((ret = elfio_edits_add(&ed, cov[i].file_off, rb, sizeof(rb))))
					goto out;
				rep->relocs++;
			}
		}
	}
	rep->changed = ed.n > 0;
	if (!rep->changed && !strcmp(out_path, elfio_path(r->e)))
		goto out;	/* already holds this table: leave the file alone */
	ret = elfio_write_edited(r->e, &ed, out_path);
out:
	elfio_edits_free(&ed);
	free(cov);
	return ret;
}
