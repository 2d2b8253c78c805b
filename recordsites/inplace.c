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
 * held its value in place, all do; a cleared table follows the
 * architecture's linker (ARCH_POLICY_RELATIVE_APPLIED).
 *
 * Every byte goes through elfio's rewrite (byte patches); if the image
 * already holds exactly this table, nothing is written (idempotent).
 *
 * In place (the image itself, the step a kernel build runs at every link)
 * only the changed slots and relocation entries are written, into the
 * image where it lies, under elfio's undo journal (journal.c): no copy of
 * the file.  The table is then read back from the edited file as record
 * reads it, every slot holding the value written and each value a site of
 * the input's scan, before the journal is removed; otherwise the old bytes
 * go back.  The text, symbols and other tables are not written, so the
 * input's sites are the output's.
 *
 * To another file (-o OUT) the input is copied (copy_file_range) with the
 * patches on top, beside OUT, and the copy scanned again whole before it is
 * renamed over OUT: its table must hold exactly the values written, each
 * one a site verified by decoding, and its sites must be the input's.
 *
 * The layout of the table's entries must come from evidence independent of
 * that table: an image without symbols and DWARF, whose layout only the
 * table itself shows, is refused (state it with --patchable=N,M).
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recordsites/recordsites.h"

struct covered {
	bool has;
	const struct elfio_section *sec;	/* the relocation section holding it */
	uint64_t file_off;	/* of its entry */
	struct elfio_rela cur;
};

/* Find the .rela.dyn entries that cover the table's slots. */
static int find_covering(struct record *r, const struct site_table *tb, struct covered *cov)
{
	struct elfio_section *s;

	for_each_section(r->e, s) {
		const struct elfio_rela *v;
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
				return -EINVAL;
			}
			struct covered *c = &cov[(v[i].offset - tb->start) / 8];
			c->has = true;
			c->sec = s;
			c->file_off = elfio_reloc_file_offset(s, i);
			c->cur = v[i];
		}
	}
	return 0;
}

struct readback {
	struct record *r;		/* the scan of the input */
	const struct site_table *tb;	/* the table written */
	const uint64_t *want;		/* what each slot should hold now */
	/* in place: where each slot and its relocation lie in the file */
	const uint64_t *slot_off;
	const struct covered *cov;
	bool applied;			/* values go in place too, not only in addends */
};

/*
 * In place, only the table's slots and their .rela.dyn entries were written
 * (no text, no symbol, no other table: the sites, found from those, are the
 * input's).  Read the table back from the edited file as record reads it
 * (a RELATIVE relocation's addend is the value): every slot must hold what
 * was written, and each value be a site.
 */
static int read_back_in_place(const char *path, void *ctx)
{
	const struct readback *rb = ctx;
	const struct site_table *tb = rb->tb;
	struct record *r = rb->r;
	/* two windows on the file: the slots, and their relocations */
	struct elfio_readback *slots = NULL, *relas = NULL;
	int ret = -EIO;

	slots = elfio_readback_open(path);
	relas = slots ? elfio_readback_open(path) : NULL;
	if (!slots || !relas) {
		ret = -errno;
		if (ret != -ENOMEM)
			elfio_error(path, "cannot read back the written table: %s", strerror(-ret));
		else
			elfio_error(path, "out of memory for reading back the written table; "
				    "rolled back");
		goto out;
	}
	for (size_t i = 0; i < tb->count; i++) {
		uint64_t v, content = rb->cov[i].has && !rb->applied ? 0 : rb->want[i];

		if (elfio_readback_read(slots, rb->slot_off[i], &v, 8))
			goto bad;
		v = le64toh(v);
		if (v != content)
			goto bad;
		if (rb->cov[i].has) {
			uint8_t eb[24];
			size_t es = rb->cov[i].sec->shdr.sh_entsize;

			if (es > sizeof(eb) || elfio_readback_read(relas, rb->cov[i].file_off, eb, es))
				goto bad;
			struct elfio_rela er = elfio_reloc_decode(rb->cov[i].sec, eb);
			if (er.offset != tb->start + 8 * i || er.sym != 0)
				goto bad;
			if (er.type == r->arch->relative_reloc)
				v = (uint64_t)er.addend;
			else if (er.type != 0 || er.addend)
				goto bad;
		}
		if (v != rb->want[i] || (v && record_find(r, v) < 0)) {
bad:
			elfio_err(r->e, "table '%s' read back from the edited file: slot %zu does not "
				  "hold 0x%" PRIx64 " as written; rolled back", tb->name, i,
				  rb->want[i]);
			ret = -EIO;
			goto out;
		}
	}
	ret = 0;
out:
	elfio_readback_close(slots);
	elfio_readback_close(relas);
	return ret;
}

/* Does out_path name the input's file (the same inode, whatever the path)? */
static bool same_file(struct elfio *e, const char *out_path)
{
	return elfio_same_file(out_path, elfio_path(e));
}

static int read_back(const char *tmp, void *ctx)
{
	const struct readback *rb = ctx;
	struct record *r = rb->r, *r2 = NULL;
	struct elfio *e = elfio_open(tmp, 0);
	int ret = -EIO;

	if (!e)
		return -EIO;
	if (record_scan(e, &r->opts, &r2))
		goto out;
	const struct site_table *t2 = record_table_under_test(r2);
	if (!t2 || t2->start != rb->tb->start || t2->count != rb->tb->count) {
		elfio_err(r->e, "the written file does not read back with table '%s' where it was "
			  "written; nothing replaced", rb->tb->name);
		goto out;
	}
	for (size_t i = 0; i < t2->count; i++) {
		uint64_t v = t2->entries[i].value;
		if (v != rb->want[i] || (v && record_find(r2, v) < 0)) {
			elfio_err(r->e, "table '%s' read back from the written file: slot %zu holds "
				  "0x%" PRIx64 ", expected 0x%" PRIx64 "%s; nothing replaced", t2->name, i,
				  v, rb->want[i], v == rb->want[i] ? " (not a site there)" : "");
			goto out;
		}
	}
	if (r2->nsites != r->nsites) {
		elfio_err(r->e, "the written file has %zu sites, the input %zu; nothing replaced",
			  r2->nsites, r->nsites);
		goto out;
	}
	for (size_t i = 0; i < r->nsites; i++) {
		if (r2->sites[i].addr != r->sites[i].addr) {
			elfio_err(r->e, "the written file's site %zu is 0x%" PRIx64 ", the input's "
				  "0x%" PRIx64 "; nothing replaced", i, r2->sites[i].addr,
				  r->sites[i].addr);
			goto out;
		}
	}
	ret = 0;
out:
	record_free(r2);
	elfio_close(e);
	return ret;
}

/*
 * The table an in-place write fills, or NULL with the one line that says
 * why this image has none to fill (*err: its -errno).
 */
static const struct site_table *writable_table(struct record *r, int *err)
{
	const struct site_table *tb;

	if (elfio_is_boot_image(r->e)) {
		elfio_err(r->e, "a boot image cannot be written in place: its kernel is compressed "
			  "inside it (write the vmlinux the build made, before it is packed)");
		*err = -ENOTSUP;
		return NULL;
	}
	if (elfio_is_rel(r->e)) {
		elfio_err(r->e, "a relocatable object has no final table to fill; use "
			  "--format=elf and link the table object with it");
		*err = -EINVAL;
		return NULL;
	}
	if (r->ev.source == EVIDENCE_UNDER_TEST) {
		elfio_err(r->e, "the patch-area layout shows only in the table to be written (the "
			  "image has no symbols to vote and no DWARF); state it with --patchable=N,M");
		*err = -EINVAL;
		return NULL;
	}
	tb = record_table_under_test(r);
	if (!tb) {
		elfio_err(r->e, "has no reserved table (no __start_mcount_loc/__stop_mcount_loc "
			  "region, no __mcount_loc or __patchable_function_entries section)");
		*err = -ENOENT;
	}
	return tb;
}

/* Whether the sites to be written fit the table's slots.  0, or -ENOSPC (said). */
static int check_room(struct record *r, const struct inplace_options *o,
		      const struct site_table *tb, struct inplace_report *rep)
{
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
	return 0;
}

/* An in-place write of one table: its edits and what is read back after them. */
struct plan {
	struct elfio_rw *w;	/* the byte patches */
	struct covered *cov;	/* per slot: the .rela.dyn entry that covers it */
	uint64_t *want;		/* per slot: the value it gets */
	uint64_t *slot_off;	/* per slot: its file offset */
	bool applied;		/* values go in place too, not only in addends */
};

static void plan_free(struct plan *pl)
{
	elfio_rw_free(pl->w);
	elfio_free(pl->cov);
	elfio_free(pl->want);
	elfio_free(pl->slot_off);
}

/* The plan's arrays, one entry a slot.  0, or -ENOMEM (said, unless the rewrite's). */
static int plan_new(struct record *r, const struct site_table *tb, struct plan *pl)
{
	memset(pl, 0, sizeof(*pl));
	pl->w = elfio_rw_new(r->e);
	if (!pl->w)
		return -ENOMEM;
	pl->cov = elfio_calloc(tb->count, sizeof(*pl->cov));
	pl->want = elfio_calloc(tb->count, sizeof(*pl->want));
	pl->slot_off = elfio_calloc(tb->count, sizeof(*pl->slot_off));
	if (!pl->cov || !pl->want || !pl->slot_off) {
		plan_free(pl);
		elfio_err(r->e, "out of memory for a table of %zu slots", tb->count);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Did the link apply the relocations in place?  Keep its convention: a
 * covered slot with a value in place says yes, one with zero in place
 * and the value only in its addend says no.  A table that shows
 * neither (cleared) gets the convention of the architecture's linker
 * where it has only one (arch.h ARCH_POLICY_RELATIVE_APPLIED).
 */
static bool relocs_applied(struct record *r, const struct site_table *tb,
			   const struct covered *cov)
{
	bool applied = false, addend_only = false;

	for (size_t i = 0; i < tb->count; i++) {
		if (!cov[i].has)
			continue;
		uint64_t cur;
		if (elfio_read_u64(r->e, tb->start + 8 * i, &cur) == 0 && cur)
			applied = true;
		else if (tb->entries[i].value)
			addend_only = true;
	}
	if (!applied && !addend_only && (r->arch->policy & ARCH_POLICY_RELATIVE_APPLIED))
		applied = true;
	return applied;
}

/*
 * The edits: each slot gets the next site (zero past the last), in place
 * and in the .rela.dyn entry that covers it, where it does not hold it
 * already.  0 or -errno (said).
 */
static int plan_slots(struct record *r, const struct inplace_options *o,
		      const struct site_table *tb, struct plan *pl, struct inplace_report *rep)
{
	const struct covered *cov = pl->cov;
	size_t si = 0;
	int ret;

	for (size_t i = 0; i < tb->count; i++) {
		uint64_t v = 0, off, cur = 0;
		uint8_t b[8];

		while (si < r->nsites && r->sites[si].misaligned && !o->keep_misaligned)
			si++;
		if (si < r->nsites) {
			v = r->sites[si++].addr;
			rep->used++;
		}
		pl->want[i] = v;
		uint64_t content = cov[i].has && !pl->applied ? 0 : v;
		struct elfio_section *s, *other;
		int own = elfio_addr_owner(r->e, tb->start + 8 * i, 8, &s, &other);
		if (own == -EEXIST) {
			elfio_err(r->e, "table '%s': slot 0x%" PRIx64 " is the bytes of both section "
				  "%zu '%s' and section %zu '%s'; nothing written", tb->name,
				  tb->start + 8 * i, s->index, s->name, other->index, other->name);
			return -EINVAL;
		}
		if (own) {
			elfio_err(r->e, "table '%s': slot 0x%" PRIx64 " has no bytes in the file",
				  tb->name, tb->start + 8 * i);
			return -EINVAL;
		}
		off = s->shdr.sh_offset + (tb->start + 8 * i - s->addr);
		pl->slot_off[i] = off;
		elfio_read_u64(r->e, tb->start + 8 * i, &cur);
		if (cur != content) {
			put_le64(b, content);
			if ((ret = elfio_rw_patch(pl->w, off, b, 8)))
				return ret;
		}
		if (cov[i].has) {
			struct elfio_rela nr = {
				.offset = cov[i].cur.offset,
				.type = v ? r->arch->relative_reloc : 0,
				.addend = (int64_t)v,
			};
			if (cov[i].cur.type != nr.type || cov[i].cur.sym != 0 ||
			    cov[i].cur.addend != nr.addend) {
				uint8_t rb[24];
				size_t len = elfio_reloc_encode(cov[i].sec, &nr, rb);

				if ((ret = elfio_rw_patch(pl->w, cov[i].file_off, rb, len)))
					return ret;
				rep->relocs++;
			}
		}
	}
	return 0;
}

/*
 * The edits to the file: where it lies, under the journal, or into a copy
 * at out_path; read back before they count.  0 or -errno (said).
 */
static int commit_plan(struct record *r, const struct inplace_options *o, const char *out_path,
		       const struct site_table *tb, struct plan *pl, bool here,
		       struct inplace_report *rep)
{
	struct readback rb = { r, tb, pl->want, pl->slot_off, pl->cov, pl->applied };
	int ret;

	if (!here) {
		struct elfio_write_check chk = { read_back, &rb };
		return elfio_rw_commit(pl->w, out_path, &chk);
	}
	struct elfio_write_check chk = { read_back_in_place, &rb };
	struct elfio_section *s;
	size_t written;

	/*
	 * The scan is over and the write reads the file through its own
	 * descriptor: the pages the scan mapped (text, symbols, the DWARF
	 * libdw read) leave this process first, so that the journal and
	 * the edits fit under the scan's peak instead of adding to it.
	 */
	for_each_section(r->e, s)
		elfio_section_release(r->e, s);
	ret = elfio_rw_commit_in_place(pl->w, o->fsync ? ELFIO_FSYNC : 0, &chk, &written);
	rep->changed = written != 0;
	return ret;
}

int record_write_in_place(struct record *r, const struct inplace_options *o, const char *out_path,
			  struct inplace_report *rep)
{
	const struct site_table *tb;
	struct plan pl;
	int ret = 0;

	memset(rep, 0, sizeof(*rep));
	if (!(tb = writable_table(r, &ret)))
		return ret;
	rep->table = tb->name;
	rep->slots = tb->count;
	if ((ret = check_room(r, o, tb, rep)) || (ret = plan_new(r, tb, &pl)))
		return ret;
	if ((ret = find_covering(r, tb, pl.cov)))
		goto out;
	pl.applied = relocs_applied(r, tb, pl.cov);
	if ((ret = plan_slots(r, o, tb, &pl, rep)))
		goto out;
	rep->changed = elfio_rw_changes(pl.w);
	bool here = same_file(r->e, out_path);
	if (!rep->changed && here)
		goto out;	/* already holds this table: leave the file alone */
	ret = commit_plan(r, o, out_path, tb, &pl, here, rep);
out:
	plan_free(&pl);
	return ret;
}
