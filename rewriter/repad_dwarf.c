// SPDX-License-Identifier: GPL-2.0-only
/*
 * repad_dwarf.c - the DWARF quantities that the assembler resolved inside an
 * object without a relocation, corrected after repad's padding.
 *
 * Strategy: repad.c resolves the relocations of a debug section (target
 * section, old and new offset) and hands them over with a mapping function;
 * everything here is driven by those.
 *  - .debug_line: gas emits one sequence per text section; only its
 *    DW_LNE_set_address is relocated, every later row is reached by
 *    resolved advances.  Each program is copied opcode by opcode, tracking
 *    the old address; before each row (special opcode, DW_LNS_copy,
 *    DW_LNE_end_sequence) the distance to the row's mapped address (as the
 *    end of the preceding range: a row exactly at an insertion point
 *    belongs to the function before the padding) is compared to
 *    what the copied advances give, and the shortfall is added: into the
 *    special opcode itself when it still fits in one byte, else as a
 *    DW_LNS_advance_pc in front of the row.  Rows, files, lines, columns,
 *    views and flags are untouched; a program whose sequences do not move
 *    comes out byte for byte.  The section can only grow, at row opcodes,
 *    which repad.c treats like its text insertion points (relocations in
 *    .debug_line and DW_AT_stmt_list addends move with them).
 *    A unit we do not understand (version other than 2-5, VLIW
 *    maximum_operations_per_instruction, non-standard lengths of the
 *    standard opcodes, relocations inside the program other than on
 *    DW_LNE_set_address, which riscv64 relaxation uses for its advances)
 *    is left as it is and counted in dw->untouched; a unit whose lengths
 *    do not fit the section is refused.
 *  - .debug_info: the DW_AT_high_pc of a unit DIE is a length
 *    (`.Letext0 - .Ltext0`) in DW_FORM_data*; it is rewritten in place as
 *    map_end(low + len) - new low.  Only the first DIE of each unit is
 *    decoded, with its abbreviation from .debug_abbrev (whose offset, in
 *    an object, is a relocation).
 *  - .debug_aranges: each (address, length) tuple whose address is
 *    relocated into a growing section gets the same treatment.
 *  - .debug_rnglists (DWARF 5): DW_RLE_offset_pair entries are offsets from
 *    a base: the unit's DW_AT_low_pc or the last relocated base_address
 *    entry; those from a base in a growing section are mapped (start and
 *    end as ends, like line rows), and so are the lengths of start_length
 *    entries; the contribution is walked list after list.  A ULEB that needs more bytes grows
 *    the section at that ULEB, as for .debug_line; a shorter one keeps its
 *    size with redundant continuation bytes.  Only in an object with one
 *    unit (which unit a contribution belongs to is otherwise not recorded
 *    without DW_AT_rnglists_base): `ld -r` objects keep their lists.
 *  - .debug_loclists (DWARF 5): the same for DW_LLE_offset_pair and
 *    DW_LLE_start_length.  GCC puts its location view lists
 *    (DW_AT_GNU_locviews: bare ULEB pairs, no entry kind) between the
 *    location lists, so the contribution is not walked in order: the
 *    lists are those that the DIEs name (every DW_FORM_sec_offset
 *    attribute relocated into .debug_loclists, but DW_AT_GNU_locviews),
 *    found by walking all DIEs of the unit.
 * Not handled: DWARF 4 .debug_loc/.debug_ranges (GCC relocates their
 * addresses), .debug_addr forms (LLVM's DW_RLE_startx_length, split
 * DWARF: that contribution is left as it is), objects with several units.
 * Reading is elfio's (elfio.h, "DWARF bytes in memory"): its cursor and
 * LEB128, its form sizes, its abbreviation walk and DIE attributes, with
 * <dwarf.h>'s names; what is here is what repad rewrites.
 */
#include <dwarf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "elfio/elfio.h"
#include "rewriter/repad_dwarf.h"

static const struct repad_dw_rel *find_rel(const struct repad_dw *dw, uint64_t off)
{
	size_t lo = BOUND(dw->rel, dw->nrel, offset, off, false);

	return lo < dw->nrel && dw->rel[lo].offset == off ? &dw->rel[lo] : NULL;
}

/* Number of relocations with offset in [a, b). */
static size_t rels_in(const struct repad_dw *dw, uint64_t a, uint64_t b)
{
	size_t n = 0;

	for (size_t i = BOUND(dw->rel, dw->nrel, offset, a, false); i < dw->nrel &&
	     dw->rel[i].offset < b; i++)
		n++;
	return n;
}

/* A growing byte vector. */
struct bytes {
	uint8_t *v;
	size_t n, cap;
};

static int put(struct bytes *b, const void *p, size_t n)
{
	if (n > SIZE_MAX - b->n || elfio_grow(&b->v, &b->cap, b->n + n, 1))
		return -ENOMEM;
	if (n)
		memcpy(b->v + b->n, p, n);
	b->n += n;
	return 0;
}

/* A ULEB128 of v, in at least min bytes (see elfio_dw_uleb_encode()). */
static int put_uleb(struct bytes *b, uint64_t v, size_t min)
{
	uint8_t t[16];

	return put(b, t, elfio_dw_uleb_encode(t, v, min));
}

static int push_point(struct repad_dw_out *o, uint64_t off, uint64_t pad)
{
	if (elfio_grow(&o->points, &o->cap, o->n + 1, sizeof(*o->points)) ||
	    elfio_grow(&o->pads, &o->pads_cap, o->n + 1, sizeof(*o->pads)))
		return -ENOMEM;
	o->points[o->n] = off;
	o->pads[o->n++] = pad;
	return 0;
}

void repad_dw_out_free(struct repad_dw_out *o)
{
	elfio_free(o->buf);
	elfio_free(o->points);
	elfio_free(o->pads);
	memset(o, 0, sizeof(*o));
}

/* Patch the n-byte little-endian value at p. */
static void poke(uint8_t *p, unsigned int n, uint64_t v)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

/*
 * A unit whose contents moved: its insertion points `pts` (those of this
 * unit only) join `out` unless they are already there (pts == out), and
 * its unit_length, written at `at` in o as the input had it (offsz 4 or
 * 8), grows by their padding.  The unit starts at `off` in the section.
 */
static int grow_unit(struct repad_dw *dw, struct repad_dw_out *out,
		     const struct repad_dw_out *pts, struct bytes *o, size_t at,
		     unsigned int offsz, uint64_t len, uint64_t off)
{
	uint64_t grown = 0;

	for (size_t k = 0; k < pts->n; k++) {
		grown += pts->pads[k];
		if (pts != out) {
			int ret = push_point(out, pts->points[k], pts->pads[k]);

			if (ret)
				return ret;
		}
	}
	if (offsz == 4 && len + grown >= 0xfffffff0) {
		elfio_error(dw->path, "%s: unit at %#" PRIx64 " would outgrow 32-bit DWARF",
			    dw->name, off);
		return -EFBIG;
	}
	/* the new unit_length, same size */
	poke(o->v + at + (offsz == 8 ? 4 : 0), offsz, len + grown);
	return 0;
}

/* Line program header fields that the copy needs. */
struct lnhdr {
	unsigned int version, min_inst, max_ops, opcode_base, line_range;
	const uint8_t *std_len;		/* opcode_base - 1 of them */
	uint64_t prog;			/* section offset of the first opcode */
};

/* Standard opcodes 1..12 and their operand counts (DWARF 5, 6.2.5.2). */
static const uint8_t std_len_std[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };

/*
 * Parse the header of the unit [start, end) of d.  1: understood, 0: a
 * version or layout we do not touch, negative: malformed.
 */
static int line_header(struct repad_dw *dw, const uint8_t *d, uint64_t start, uint64_t body,
		       uint64_t end, unsigned int offsz, struct lnhdr *h)
{
	struct elfio_dw_cur c = { d + body, d + end, false };
	uint64_t hlen;

	h->version = (unsigned int)elfio_dw_fixed(&c, 2);
	if (c.bad)
		goto bad;
	if (h->version < 2 || h->version > 5)
		return 0;
	if (h->version >= 5)
		elfio_dw_skip(&c, 2);	/* address_size, segment_selector_size */
	hlen = elfio_dw_fixed(&c, offsz);
	if (c.bad || hlen > (uint64_t)(c.end - c.p))
		goto bad;
	h->prog = (uint64_t)(c.p - d) + hlen;
	h->min_inst = (unsigned int)elfio_dw_fixed(&c, 1);
	h->max_ops = h->version >= 4 ? (unsigned int)elfio_dw_fixed(&c, 1) : 1;
	elfio_dw_skip(&c, 2);		/* default_is_stmt, line_base */
	h->line_range = (unsigned int)elfio_dw_fixed(&c, 1);
	h->opcode_base = (unsigned int)elfio_dw_fixed(&c, 1);
	h->std_len = c.p;
	if (h->opcode_base)
		elfio_dw_skip(&c, h->opcode_base - 1);
	if (c.bad || (uint64_t)(c.p - d) > h->prog)
		goto bad;
	if (!h->min_inst || h->max_ops != 1 || !h->line_range || !h->opcode_base)
		return 0;
	for (unsigned int k = 1; k < h->opcode_base && k <= 12; k++)
		if (h->std_len[k - 1] != std_len_std[k - 1])
			return 0;
	return 1;
bad:
	elfio_error(dw->path, "%s: line program header at %#" PRIx64 " is truncated", dw->name,
		    start);
	return -EINVAL;
}

/*
 * A row (opcode at section offset `at`; special, or 0 for another row
 * opcode) that needs `units` more instructions of advance: into the
 * special opcode itself when it still fits in one byte (1: the row is
 * written), else a DW_LNS_advance_pc in front of it, an insertion point
 * in pts (0: the caller copies the row's opcode), or -ENOMEM.
 */
static int advance_row(const struct lnhdr *h, uint8_t special, uint64_t units, uint64_t at,
		       struct bytes *o, struct repad_dw_out *pts)
{
	size_t before = o->n;
	unsigned int adj = special - h->opcode_base;
	uint8_t b;
	int ret;

	if (special && units <= 255 &&
	    adj % h->line_range + h->line_range * (adj / h->line_range + units) +
	    h->opcode_base <= 255) {
		b = (uint8_t)(adj % h->line_range + h->line_range * (adj / h->line_range + units) +
			      h->opcode_base);
		ret = put(o, &b, 1);
		return ret ? ret : 1;
	}
	b = DW_LNS_advance_pc;
	ret = put(o, &b, 1);
	if (!ret)
		ret = put_uleb(o, units, 1);
	if (!ret)
		ret = push_point(pts, at, o->n - before);
	return ret;
}

/*
 * Copy the program of one unit into `o`, adding address advances where the
 * mapped rows need them; inserted bytes are recorded in `pts`.  1: done,
 * 0: leave the unit as it is, negative: malformed.
 */
static int line_program(struct repad_dw *dw, const uint8_t *d, const struct lnhdr *h,
			uint64_t end, struct bytes *o, struct repad_dw_out *pts, size_t *rows)
{
	struct elfio_dw_cur c = { d + h->prog, d + end, false };
	size_t sec = 0, set_rels = 0;
	uint64_t old = 0, cur = 0;	/* old address; new address the copy has reached */
	int ret;

	while (c.p < c.end) {
		const uint8_t *op = c.p;
		uint64_t at = (uint64_t)(op - d);
		unsigned int code = (unsigned int)elfio_dw_fixed(&c, 1);
		uint64_t adv = 0, target, extra;
		bool row = false, end_seq = false;
		uint8_t special = 0;

		if (code >= h->opcode_base) {
			unsigned int adj = code - h->opcode_base;

			adv = (uint64_t)(adj / h->line_range) * h->min_inst;
			row = true;
			special = (uint8_t)code;
		} else if (code == 0) {
			uint64_t len = elfio_dw_uleb(&c);
			const uint8_t *sub = c.p;

			elfio_dw_skip(&c, len);
			if (c.bad || !len)
				goto bad;
			if (*sub == DW_LNE_end_sequence) {
				row = end_seq = true;
			} else if (*sub == DW_LNE_set_address) {
				const struct repad_dw_rel *r = find_rel(dw, (uint64_t)(sub + 1 - d));

				if (len - 1 != 4 && len - 1 != 8)
					goto bad;
				sec = 0;
				old = cur = 0;
				if (r) {
					set_rels++;
					if (r->sec && dw->grows(dw->ctx, r->sec)) {
						sec = r->sec;
						old = (uint64_t)r->old;
						cur = (uint64_t)r->new;
					}
				}
			}
		} else if (code == DW_LNS_copy) {
			row = true;
		} else if (code == DW_LNS_advance_pc) {
			adv = elfio_dw_uleb(&c) * h->min_inst;
		} else if (code == DW_LNS_const_add_pc) {
			adv = (uint64_t)((255 - h->opcode_base) / h->line_range) * h->min_inst;
		} else if (code == DW_LNS_fixed_advance_pc) {
			adv = elfio_dw_fixed(&c, 2);
		} else {
			for (unsigned int k = 0; k < h->std_len[code - 1]; k++)
				elfio_dw_uleb(&c);
		}
		if (c.bad)
			goto bad;
		old += adv;
		cur += adv;
		extra = 0;
		if (row && sec) {
			if (old > INT64_MAX / 4) {
				elfio_error(dw->path, "%s+%#" PRIx64 ": line program address %#" PRIx64
					    " is out of range", dw->name, at, old);
				return -EINVAL;
			}
			/*
			 * A row at an insertion point is the tail of the function
			 * before it (gas puts the next function's first row at its
			 * entry, behind the literal): it keeps the padding.
			 */
			target = (uint64_t)dw->map(dw->ctx, sec, (int64_t)old, true);
			if (target < cur) {
				/* a row at an insertion point, then the end at the same address */
				if (!end_seq)
					return 0;
				target = cur;
			}
			extra = target - cur;
			if (extra % h->min_inst)
				return 0;
			cur = target;
		}
		if (extra) {
			(*rows)++;
			ret = advance_row(h, special, extra / h->min_inst, at, o, pts);
			if (ret < 0)
				return ret;
			if (ret)
				continue;	/* the special opcode, rewritten */
		}
		ret = put(o, op, (size_t)(c.p - op));
		if (ret)
			return ret;
		if (end_seq) {
			sec = 0;
			old = cur = 0;
		}
	}
	/* relocated advances (riscv64 linker relaxation): the linker does it */
	if (rels_in(dw, h->prog, end) != set_rels)
		return 0;
	return 1;
bad:
	elfio_error(dw->path, "%s: line program opcode past the end of its unit at %#" PRIx64,
		    dw->name, (uint64_t)(c.p - d));
	return -EINVAL;
}

int repad_dwarf_line(struct repad_dw *dw, const uint8_t *d, size_t size,
		     struct repad_dw_out *out)
{
	struct bytes o = { 0 };
	struct repad_dw_out pts = { 0 };
	uint64_t off = 0;
	bool changed = false;
	int ret = 0;

	while (off < size) {
		struct elfio_dw_cur c = { d + off, d + size, false };
		unsigned int offsz;
		uint64_t len = elfio_dw_initial_length(&c, &offsz), body, end;
		size_t base = o.n, rows = 0;
		struct lnhdr h;
		int st, understood;

		if (offsz == 4 && len >= 0xfffffff0) {
			elfio_error(dw->path, "%s: unit at %#" PRIx64 " has reserved length %#" PRIx64,
				    dw->name, off, len);
			ret = -EINVAL;
			goto out;
		}
		body = (uint64_t)(c.p - d);
		if (c.bad || len > size - body) {
			elfio_error(dw->path, "%s: unit at %#" PRIx64 " runs past the end of the section",
				    dw->name, off);
			ret = -EINVAL;
			goto out;
		}
		end = body + len;
		ret = put(&o, d + off, (size_t)(body - off));
		if (ret)
			goto out;
		st = line_header(dw, d, off, body, end, offsz, &h);
		if (st < 0) {
			ret = st;
			goto out;
		}
		understood = st;
		if (st) {
			ret = put(&o, d + body, (size_t)(h.prog - body));
			if (ret)
				goto out;
			st = line_program(dw, d, &h, end, &o, &pts, &rows);
			if (st < 0) {
				ret = st;
				goto out;
			}
		}
		if (st && rows) {
			ret = grow_unit(dw, out, &pts, &o, base, offsz, len, off);
			if (ret)
				goto out;
			changed = true;
			dw->fixed += rows;
		} else {
			/* not understood, or nothing moves: the unit as it was */
			if (!understood || (!st && rows))
				dw->untouched++;
			o.n = base;
			ret = put(&o, d + off, (size_t)(end - off));
			if (ret)
				goto out;
		}
		pts.n = 0;
		ret = 0;
		off = end;
	}
	if (changed) {
		out->buf = o.v;
		out->size = o.n;
		o.v = NULL;
	} else {
		out->n = 0;
	}
out:
	elfio_free(o.v);
	elfio_free(pts.points);
	elfio_free(pts.pads);
	return ret;
}

/*
 * The new length of the range [old, old + len) of section sec that
 * starts, after repad, at new.  false if it does not fit in n bytes.
 */
static bool new_length(struct repad_dw *dw, size_t sec, int64_t old, int64_t new, uint64_t len,
		       unsigned int n, uint64_t *out)
{
	int64_t e;

	if (len > INT64_MAX / 4 || old < 0 || old > INT64_MAX / 4)
		return false;
	e = dw->map(dw->ctx, sec, old + (int64_t)len, true);
	if (e < new)
		return false;
	*out = (uint64_t)(e - new);
	return n >= 8 || *out < 1ULL << 8 * n;
}

int repad_dwarf_aranges(struct repad_dw *dw, uint8_t *d, size_t size)
{
	uint64_t off = 0;

	while (off < size) {
		struct elfio_dw_cur c = { d + off, d + size, false };
		unsigned int offsz, asz, version;
		uint64_t len = elfio_dw_initial_length(&c, &offsz), end;

		if (c.bad || len > (uint64_t)(c.end - c.p)) {
			elfio_error(dw->path, "%s: set at %#" PRIx64 " runs past the end of the section",
				    dw->name, off);
			return -EINVAL;
		}
		end = (uint64_t)(c.p - d) + len;
		c.end = d + end;
		version = (unsigned int)elfio_dw_fixed(&c, 2);
		elfio_dw_skip(&c, offsz);
		asz = (unsigned int)elfio_dw_fixed(&c, 1);
		if (version != 2 || (asz != 4 && asz != 8) || elfio_dw_fixed(&c, 1)) {
			dw->untouched++;
			off = end;
			continue;
		}
		/* tuples start at a multiple of twice the address size from the set */
		elfio_dw_skip(&c, (2 * asz - (uint64_t)(c.p - (d + off)) % (2 * asz)) % (2 * asz));
		while (!c.bad && (size_t)(c.end - c.p) >= 2 * asz) {
			uint64_t at = (uint64_t)(c.p - d);
			const struct repad_dw_rel *r = find_rel(dw, at);
			uint64_t addr = elfio_dw_fixed(&c, asz), l = elfio_dw_fixed(&c, asz), nl;

			if (!r && !addr && !l)
				break;
			if (!r || !r->sec || !dw->grows(dw->ctx, r->sec) || find_rel(dw, at + asz))
				continue;
			if (!new_length(dw, r->sec, r->old, r->new, l, asz, &nl)) {
				elfio_error(dw->path, "%s+%#" PRIx64 ": range length %#" PRIx64
					    " cannot be moved", dw->name, at + asz, l);
				return -EINVAL;
			}
			if (nl != l) {
				poke(d + at + asz, asz, nl);
				dw->fixed++;
			}
		}
		off = end;
	}
	return 0;
}

static int push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (elfio_grow(v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = x;
	return 0;
}

/*
 * The rest of a unit's DIEs, from c: every DW_FORM_sec_offset attribute
 * (but DW_AT_GNU_locviews, which names GCC's view lists) whose relocation
 * points into .debug_loclists names a location list.  Anything not
 * understood sets dw->loc_bad: the lists are then left alone.
 */
static int walk_dies(struct repad_dw *dw, struct elfio_dw_cur *c, const uint8_t *d,
		     const uint8_t *abbrev, size_t abbrev_size, uint64_t aoff,
		     const struct elfio_dw_sizes *sz)
{
	while (c->p < c->end) {
		uint64_t code = elfio_dw_uleb(c);
		struct elfio_dw_cur a;
		struct elfio_dw_attr at;
		int st;

		if (c->bad)
			goto bad;
		if (!code)
			continue;
		if (!elfio_dw_abbrev_find(abbrev, abbrev_size, aoff, code, &a, NULL))
			goto bad;
		while ((st = elfio_dw_die_attr(sz, &a, c, &at)) > 0) {
			const struct repad_dw_rel *r;

			if (at.form == DW_FORM_loclistx)
				goto bad;
			if (at.form != DW_FORM_sec_offset || at.name == DW_AT_GNU_locviews)
				continue;
			r = find_rel(dw, (uint64_t)(at.val - d));
			if (r && r->sec == dw->loc_sec && r->old >= 0 &&
			    push_u64(&dw->loc_starts, &dw->nloc_starts, &dw->caploc_starts,
				     (uint64_t)r->old))
				return -ENOMEM;
		}
		if (st < 0)
			goto bad;
	}
	return 0;
bad:
	dw->loc_bad = true;
	return 0;
}

/* What a unit's first DIE says about its address range. */
struct unit_die {
	bool ok;				/* all its attributes were read */
	const struct repad_dw_rel *low;		/* DW_AT_low_pc's relocation (DW_FORM_addr) */
	uint64_t hi_at;				/* DW_AT_high_pc: its offset, */
	uint64_t hi_len;			/* its value (a length), */
	unsigned int hi_size;			/* and its size (DW_FORM_data*; 0: another form) */
};

/* Bytes of a DW_FORM_data* value (a length, not an address), 0 for another form. */
static unsigned int length_size(const struct elfio_dw_sizes *sz, uint64_t form)
{
	switch (form) {
	case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4: case DW_FORM_data8:
		return (unsigned int)elfio_dw_form_size(sz, (unsigned int)form);
	default:
		return 0;
	}
}

/*
 * Read the first DIE of a unit at c (its attribute list in a), up to the
 * first attribute that cannot be read; c is left after it.
 */
static void unit_die(struct repad_dw *dw, const uint8_t *d, const struct elfio_dw_sizes *sz,
		     struct elfio_dw_cur *a, struct elfio_dw_cur *c, struct unit_die *u)
{
	struct elfio_dw_attr at;
	int st;

	while ((st = elfio_dw_die_attr(sz, a, c, &at)) > 0) {
		uint64_t off = (uint64_t)(at.val - d);

		if (at.name == DW_AT_low_pc && at.form == DW_FORM_addr)
			u->low = find_rel(dw, off);
		if (at.name == DW_AT_high_pc) {
			u->hi_size = length_size(sz, at.form);
			u->hi_at = off;
			if (u->hi_size)
				u->hi_len = get_le(at.val, u->hi_size);
		}
	}
	u->ok = st == 0;
}

int repad_dwarf_info(struct repad_dw *dw, uint8_t *d, size_t size, const uint8_t *abbrev,
		     size_t abbrev_size, size_t abbrev_sec)
{
	uint64_t off = 0;
	size_t nunits = 0;

	/* location lists are only followed in an object with one unit */
	for (uint64_t o = 0; o < size && nunits < 2; nunits++) {
		struct elfio_dw_cur c = { d + o, d + size, false };
		unsigned int offsz;
		uint64_t len = elfio_dw_initial_length(&c, &offsz);

		if (c.bad || len > (uint64_t)(c.end - c.p))
			break;
		o = (uint64_t)(c.p - d) + len;
	}
	if (nunits != 1)
		dw->loc_bad = true;
	while (off < size) {
		struct elfio_dw_cur c = { d + off, d + size, false }, a;
		unsigned int offsz, asz;
		uint64_t len = elfio_dw_initial_length(&c, &offsz), end, aoff, code;
		struct unit_die u = { 0 };
		struct elfio_dw_sizes sz;
		struct elfio_dw_cu cu;
		const struct repad_dw_rel *r;

		if (c.bad || len > (uint64_t)(c.end - c.p)) {
			elfio_error(dw->path, "%s: unit at %#" PRIx64 " runs past the end of the section",
				    dw->name, off);
			return -EINVAL;
		}
		end = (uint64_t)(c.p - d) + len;
		c.end = d + end;
		dw->units++;
		dw->cu_low = (struct repad_dw_rel){ 0 };
		if (!elfio_dw_cu_header(&c, offsz, &cu)) {
			dw->untouched++;
			dw->loc_bad = true;
			off = end;
			continue;
		}
		if (cu.unit_type != DW_UT_compile && cu.unit_type != DW_UT_partial) {
			dw->loc_bad = true;
			off = end;
			continue;
		}
		aoff = cu.abbrev;
		asz = cu.addr_size;
		/* in an object the abbreviation offset is a relocation */
		r = find_rel(dw, (uint64_t)(cu.abbrev_at - d));
		if (r) {
			if (r->sec != abbrev_sec || r->old < 0) {
				dw->loc_bad = true;
				off = end;
				continue;
			}
			aoff = (uint64_t)r->old;
		}
		code = elfio_dw_uleb(&c);
		if (c.bad || !code || (asz != 4 && asz != 8) ||
		    !elfio_dw_abbrev_find(abbrev, abbrev_size, aoff, code, &a, NULL)) {
			dw->untouched++;
			dw->loc_bad = true;
			off = end;
			continue;
		}
		sz = (struct elfio_dw_sizes){ cu.version, asz, offsz };
		unit_die(dw, d, &sz, &a, &c, &u);
		/* riscv64 relaxation: a length made of R_RISCV_ADD/SUB is the linker's */
		dw->cu_low = u.low ? *u.low : (struct repad_dw_rel){ 0 };
		if (u.low && u.hi_size && u.low->sec && dw->grows(dw->ctx, u.low->sec) &&
		    !find_rel(dw, u.hi_at)) {
			uint64_t nl;

			if (!new_length(dw, u.low->sec, u.low->old, u.low->new, u.hi_len, u.hi_size,
					&nl)) {
				elfio_error(dw->path, "%s+%#" PRIx64 ": DW_AT_high_pc %#" PRIx64
					    " does not fit its form once padded", dw->name, u.hi_at,
					    u.hi_len);
				return -EINVAL;
			}
			if (nl != u.hi_len) {
				poke(d + u.hi_at, u.hi_size, nl);
				dw->fixed++;
			}
		}
		if (dw->loc_sec && !dw->loc_bad) {
			int ret;

			if (!u.ok)
				dw->loc_bad = true;
			else if ((ret = walk_dies(dw, &c, d, abbrev, abbrev_size, aoff, &sz)))
				return ret;
		}
		off = end;
	}
	return 0;
}

static int cmp_u64_dw(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One entry's ULEB at [p, c->p) rewritten as v: copy what lies before it,
 * then v in at least as many bytes; growth recorded as a point at p.
 */
static int redo_uleb(struct bytes *o, const uint8_t *d, const uint8_t **copied, const uint8_t *p,
		     const uint8_t *q, uint64_t v, struct repad_dw_out *pts)
{
	size_t before;
	int ret = put(o, *copied, (size_t)(p - *copied));

	if (ret)
		return ret;
	before = o->n;
	ret = put_uleb(o, v, (size_t)(q - p));
	if (ret)
		return ret;
	*copied = q;
	if (o->n - before > (size_t)(q - p))
		return push_point(pts, (uint64_t)(p - d), o->n - before - (size_t)(q - p));
	return 0;
}

/*
 * The list entries .debug_rnglists and .debug_loclists share, by their
 * kind codes in each table (DWARF 5, 7.25 and 7.29).
 */
struct list_kinds {
	unsigned int offset_pair, base_address, start_end, start_length;
};

static const struct list_kinds rle_kinds = {
	DW_RLE_offset_pair, DW_RLE_base_address, DW_RLE_start_end, DW_RLE_start_length
};
static const struct list_kinds lle_kinds = {
	DW_LLE_offset_pair, DW_LLE_base_address, DW_LLE_start_end, DW_LLE_start_length
};

enum list_entry_result {
	ENTRY_DONE,		/* read (and fixed where needed) */
	ENTRY_BASE,		/* a base address: *base changed, nothing follows it */
	ENTRY_SKIP,		/* cannot be fixed safely: leave the unit as it is */
	ENTRY_BAD,		/* runs past the end */
	ENTRY_OTHER,		/* a kind not shared by both tables: the caller's */
	ENTRY_ERROR,		/* *err set */
};

/*
 * Read one entry of kind `kind` (its kind byte already read) at c; for an
 * offset pair against the unit's base, or a start/length whose start is
 * relocated against a grown section, re-encode the ULEB128s in o with the
 * mapped values (new insertion points in pts).
 */
static enum list_entry_result list_entry(struct repad_dw *dw, const struct list_kinds *k,
					 unsigned int kind, struct elfio_dw_cur *c,
					 const uint8_t *d, unsigned int asz, struct repad_dw_rel *base,
					 struct bytes *o, const uint8_t **copied,
					 struct repad_dw_out *pts, size_t *fixed, int *err)
{
	const uint8_t *pa, *qa, *pb, *qb;
	const struct repad_dw_rel *r;
	uint64_t a, b;

	if (kind == k->offset_pair) {
		pa = c->p;
		a = elfio_dw_uleb(c);
		qa = c->p;
		pb = c->p;
		b = elfio_dw_uleb(c);
		qb = c->p;
		if (c->bad)
			return ENTRY_BAD;
		if (base->sec && dw->grows(dw->ctx, base->sec)) {
			int64_t na, nb;

			if (a > INT64_MAX / 4 || b > INT64_MAX / 4 || base->old < 0 ||
			    base->old > INT64_MAX / 4)
				return ENTRY_SKIP;
			na = dw->map(dw->ctx, base->sec, base->old + (int64_t)a, true) - base->new;
			nb = dw->map(dw->ctx, base->sec, base->old + (int64_t)b, true) - base->new;
			if (na < 0 || nb < na)
				return ENTRY_SKIP;
			if ((uint64_t)na != a || (uint64_t)nb != b) {
				*err = redo_uleb(o, d, copied, pa, qa, (uint64_t)na, pts);
				if (!*err)
					*err = redo_uleb(o, d, copied, pb, qb, (uint64_t)nb, pts);
				if (*err)
					return ENTRY_ERROR;
				(*fixed)++;
			}
		}
		return ENTRY_DONE;
	}
	if (kind == k->base_address) {
		r = find_rel(dw, (uint64_t)(c->p - d));
		elfio_dw_skip(c, asz);
		*base = r ? *r : (struct repad_dw_rel){ 0 };
		return c->bad ? ENTRY_BAD : ENTRY_BASE;
	}
	if (kind == k->start_end) {
		elfio_dw_skip(c, 2 * asz);
		return c->bad ? ENTRY_BAD : ENTRY_DONE;
	}
	if (kind == k->start_length) {
		uint64_t nl;

		r = find_rel(dw, (uint64_t)(c->p - d));
		elfio_dw_skip(c, asz);
		pa = c->p;
		a = elfio_dw_uleb(c);
		qa = c->p;
		if (c->bad)
			return ENTRY_BAD;
		if (r && r->sec && dw->grows(dw->ctx, r->sec)) {
			if (!new_length(dw, r->sec, r->old, r->new, a, 8, &nl))
				return ENTRY_SKIP;
			if (nl != a) {
				*err = redo_uleb(o, d, copied, pa, qa, nl, pts);
				if (*err)
					return ENTRY_ERROR;
				(*fixed)++;
			}
		}
		return ENTRY_DONE;
	}
	return ENTRY_OTHER;
}

int repad_dwarf_rnglists(struct repad_dw *dw, const uint8_t *d, size_t size,
			 struct repad_dw_out *out)
{
	struct bytes o = { 0 };
	struct repad_dw_out pts = { 0 };
	uint64_t off = 0;
	bool changed = false;
	int ret = 0;

	while (off < size) {
		struct elfio_dw_cur c = { d + off, d + size, false };
		unsigned int offsz, version, asz, seg, count;
		uint64_t len = elfio_dw_initial_length(&c, &offsz), end;
		size_t base_n = o.n, fixed = 0;
		const uint8_t *copied = d + off;
		struct repad_dw_rel base = dw->cu_low;
		bool skip_unit = false;

		if (offsz == 4 && len >= 0xfffffff0)
			c.bad = true;
		if (c.bad || len > (uint64_t)(c.end - c.p)) {
			elfio_error(dw->path, "%s: unit at %#" PRIx64 " runs past the end of the section",
				    dw->name, off);
			ret = -EINVAL;
			goto out;
		}
		end = (uint64_t)(c.p - d) + len;
		c.end = d + end;
		version = (unsigned int)elfio_dw_fixed(&c, 2);
		asz = (unsigned int)elfio_dw_fixed(&c, 1);
		seg = (unsigned int)elfio_dw_fixed(&c, 1);
		count = (unsigned int)elfio_dw_fixed(&c, 4);
		/* one unit in the object: its DW_AT_low_pc is the lists' base */
		skip_unit = c.bad || version != 5 || (asz != 4 && asz != 8) || seg || count ||
			    dw->units != 1;
		while (!skip_unit && c.p < c.end) {
			unsigned int kind = (unsigned int)elfio_dw_fixed(&c, 1);
			enum list_entry_result e;

			if (kind == DW_RLE_end_of_list) {
				base = dw->cu_low;
				continue;
			}
			e = list_entry(dw, &rle_kinds, kind, &c, d, asz, &base, &o, &copied, &pts,
				       &fixed, &ret);
			if (e == ENTRY_ERROR)
				goto out;
			if (e == ENTRY_BAD || c.bad)
				break;
			/* other kinds (base_addressx, startx_*) go through .debug_addr */
			if (e == ENTRY_SKIP || e == ENTRY_OTHER)
				skip_unit = true;
		}
		if (c.bad && !skip_unit) {
			elfio_error(dw->path, "%s: list entry past the end of its unit at %#" PRIx64,
				    dw->name, off);
			ret = -EINVAL;
			goto out;
		}
		if (!skip_unit && fixed) {
			ret = put(&o, copied, (size_t)(d + end - copied));
			if (!ret)
				ret = grow_unit(dw, out, &pts, &o, base_n, offsz, len, off);
			if (ret)
				goto out;
			changed = true;
			dw->fixed += fixed;
		} else {
			if (skip_unit && dw->units)
				dw->untouched++;
			o.n = base_n;
			ret = put(&o, d + off, (size_t)(end - off));
			if (ret)
				goto out;
		}
		pts.n = 0;
		off = end;
	}
	if (changed) {
		out->buf = o.v;
		out->size = o.n;
		o.v = NULL;
	} else {
		out->n = 0;
	}
out:
	elfio_free(o.v);
	elfio_free(pts.points);
	elfio_free(pts.pads);
	return ret;
}

int repad_dwarf_loclists(struct repad_dw *dw, const uint8_t *d, size_t size,
			 struct repad_dw_out *out)
{
	struct bytes o = { 0 };
	struct elfio_dw_cur c = { d, d + size, false };
	uint64_t len, end, done;
	unsigned int offsz, version, asz, seg, count;
	const uint8_t *copied = d;
	size_t fixed = 0;
	int ret = 0;

	if (dw->loc_bad || dw->units != 1 || !dw->nloc_starts) {
		if (dw->nloc_starts || dw->loc_bad)
			dw->untouched++;
		return 0;
	}
	len = elfio_dw_initial_length(&c, &offsz);
	if (offsz == 4 && len >= 0xfffffff0)
		c.bad = true;
	if (c.bad || len > (uint64_t)(c.end - c.p)) {
		elfio_error(dw->path, "%s: unit at 0 runs past the end of the section", dw->name);
		return -EINVAL;
	}
	end = (uint64_t)(c.p - d) + len;
	c.end = d + end;
	version = (unsigned int)elfio_dw_fixed(&c, 2);
	asz = (unsigned int)elfio_dw_fixed(&c, 1);
	seg = (unsigned int)elfio_dw_fixed(&c, 1);
	count = (unsigned int)elfio_dw_fixed(&c, 4);
	/* one contribution, no offset table */
	if (c.bad || version != 5 || (asz != 4 && asz != 8) || seg || count || end != size) {
		dw->untouched++;
		return 0;
	}
	qsort(dw->loc_starts, dw->nloc_starts, sizeof(uint64_t), cmp_u64_dw);
	done = (uint64_t)(c.p - d);
	for (size_t k = 0; k < dw->nloc_starts; k++) {
		struct repad_dw_rel base = dw->cu_low;
		uint64_t start = dw->loc_starts[k];

		if (k && start == dw->loc_starts[k - 1])
			continue;
		if (start < done || start >= end)
			goto skip;	/* overlapping lists, or not in the contribution */
		c.p = d + start;
		for (;;) {
			unsigned int kind = (unsigned int)elfio_dw_fixed(&c, 1);
			enum list_entry_result e;

			if (c.bad)
				goto bad;
			if (kind == DW_LLE_end_of_list)
				break;
			e = list_entry(dw, &lle_kinds, kind, &c, d, asz, &base, &o, &copied, &out[0],
				       &fixed, &ret);
			if (e == ENTRY_ERROR)
				goto out;
			if (e == ENTRY_BAD)
				goto bad;
			if (e == ENTRY_SKIP)
				goto skip;
			if (e == ENTRY_BASE)
				continue;
			/* not DW_LLE_default_location: the .debug_addr forms */
			if (e == ENTRY_OTHER && kind != DW_LLE_default_location)
				goto skip;
			/* the counted location description */
			elfio_dw_skip(&c, elfio_dw_uleb(&c));
			if (c.bad)
				goto bad;
		}
		done = (uint64_t)(c.p - d);
	}
	if (!fixed)
		goto out;
	ret = put(&o, copied, (size_t)(d + size - copied));
	if (!ret)	/* the one contribution, at 0; its points are already in out */
		ret = grow_unit(dw, out, out, &o, 0, offsz, len, 0);
	if (ret)
		goto out;
	dw->fixed += fixed;
	out->buf = o.v;
	out->size = o.n;
	o.v = NULL;
	goto out;
bad:
	elfio_error(dw->path, "%s: location list entry past the end of the section", dw->name);
	ret = -EINVAL;
	goto out;
skip:
	dw->untouched++;
	out->n = 0;
out:
	if (ret || !out->buf)
		out->n = 0;
	elfio_free(o.v);
	return ret;
}
