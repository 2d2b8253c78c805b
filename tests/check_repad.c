// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_repad.c - the one DWARF reader (elfio/dwarf.c) as repad reads
 * with it, and repad's plan.
 *
 * Strategy: every DWARF byte is written here, from <dwarf.h>'s codes and
 * the DWARF standards' tables (not from patchsite), so each expected size,
 * offset and value is the standard's.  The cases are where repad's old
 * reader and elfio's disagreed (DW_FORM_ref_addr in DWARF 2, the GNU
 * alternate forms, DW_FORM_implicit_const, the DWARF 5 forms strx1-4,
 * addrx1-4, data16 and line_strp): each is read by the form table and the
 * DIE walk, and then by repad_dwarf_info() on a unit whose DW_AT_low_pc
 * and DW_AT_high_pc sit behind such a form, so that a misread size shows
 * as a length not corrected.  repad_dwarf_line() gets a line program
 * written here whose one row moves behind a point: the new advance in the
 * special opcode, or a DW_LNS_advance_pc inserted (and that insertion
 * point reported) when the opcode cannot hold it.  The plan cases write
 * small arm64 and riscv64 objects with tests/elfgen.c and read repad's
 * output back with libelf (gelf), not with patchsite: where the NOPs went,
 * by how much each symbol moved, which R_RISCV_ALIGNs a relaxed section
 * got, what was refused and with which one line.
 */
#include <check.h>
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check_suites.h"
#include "tests/elfgen.h"
#include "elfio/elfio.h"
#include "rewriter/repad_dwarf.h"
#include "rewriter/rewriter.h"

/* --- Bytes ------------------------------------------------------------------ */

struct buf {
	uint8_t b[512];
	size_t n;
};

static void u8(struct buf *b, uint64_t v) { b->b[b->n++] = (uint8_t)v; }

static void le(struct buf *b, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		u8(b, v >> 8 * i);
}

/* ULEB128 / SLEB128 as DWARF 5, 7.6 gives them, written out here */
static void uleb(struct buf *b, uint64_t v)
{
	do {
		uint8_t x = v & 0x7f;

		v >>= 7;
		u8(b, x | (v ? 0x80 : 0));
	} while (v);
}

static void sleb(struct buf *b, int64_t v)
{
	for (;;) {
		uint8_t x = v & 0x7f;

		v >>= 7;	/* arithmetic on gcc and clang */
		if ((v == 0 && !(x & 0x40)) || (v == -1 && (x & 0x40))) {
			u8(b, x);
			return;
		}
		u8(b, x | 0x80);
	}
}

/* --- The form table ------------------------------------------------------- */

START_TEST(form_ref_addr_dwarf2_is_address_sized)
{
	/* DWARF 2, 7.5.4: "the size of an address on the target machine" */
	struct elfio_dw_sizes v2 = { 2, 8, 4 }, v2_32 = { 2, 4, 4 };
	/* DWARF 3 and later: offset-sized */
	struct elfio_dw_sizes v3 = { 3, 8, 4 }, v4_64 = { 4, 8, 8 }, v5 = { 5, 4, 4 };

	ck_assert_int_eq(elfio_dw_form_size(&v2, DW_FORM_ref_addr), 8);
	ck_assert_int_eq(elfio_dw_form_size(&v2_32, DW_FORM_ref_addr), 4);
	ck_assert_int_eq(elfio_dw_form_size(&v3, DW_FORM_ref_addr), 4);
	ck_assert_int_eq(elfio_dw_form_size(&v4_64, DW_FORM_ref_addr), 8);
	ck_assert_int_eq(elfio_dw_form_size(&v5, DW_FORM_ref_addr), 4);
}
END_TEST

START_TEST(form_gnu_alternates_are_offset_sized)
{
	/* the dwz forms (DWARF 5 proposal "supplementary object files") */
	struct elfio_dw_sizes s32 = { 4, 8, 4 }, s64 = { 4, 8, 8 };

	ck_assert_int_eq(elfio_dw_form_size(&s32, DW_FORM_GNU_ref_alt), 4);
	ck_assert_int_eq(elfio_dw_form_size(&s32, DW_FORM_GNU_strp_alt), 4);
	ck_assert_int_eq(elfio_dw_form_size(&s64, DW_FORM_GNU_ref_alt), 8);
	ck_assert_int_eq(elfio_dw_form_size(&s64, DW_FORM_GNU_strp_alt), 8);
	ck_assert_int_eq(elfio_dw_form_size(&s32, DW_FORM_GNU_addr_index), -1);	/* a ULEB */
}
END_TEST

START_TEST(form_dwarf5_sizes)
{
	struct elfio_dw_sizes s = { 5, 8, 4 }, s64 = { 5, 8, 8 };
	static const struct { unsigned int form; int size; } t[] = {
		{ DW_FORM_strx1, 1 }, { DW_FORM_strx2, 2 }, { DW_FORM_strx3, 3 },
		{ DW_FORM_strx4, 4 }, { DW_FORM_addrx1, 1 }, { DW_FORM_addrx2, 2 },
		{ DW_FORM_addrx3, 3 }, { DW_FORM_addrx4, 4 }, { DW_FORM_data16, 16 },
		{ DW_FORM_line_strp, 4 }, { DW_FORM_implicit_const, 0 },
		{ DW_FORM_flag_present, 0 }, { DW_FORM_ref_sig8, 8 }, { DW_FORM_ref_sup4, 4 },
		{ DW_FORM_ref_sup8, 8 }, { DW_FORM_strp_sup, 4 }, { DW_FORM_addr, 8 },
		{ DW_FORM_strx, -1 }, { DW_FORM_addrx, -1 }, { DW_FORM_loclistx, -1 },
		{ DW_FORM_rnglistx, -1 }, { DW_FORM_indirect, -1 }, { 0x7f, -1 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(elfio_dw_form_size(&s, t[i].form) == t[i].size,
			      "form %#x: %d bytes, want %d", t[i].form,
			      elfio_dw_form_size(&s, t[i].form), t[i].size);
	ck_assert_int_eq(elfio_dw_form_size(&s64, DW_FORM_line_strp), 8);
}
END_TEST

/* Each variable-length form stepped over exactly. */
START_TEST(form_skip_variable)
{
	struct elfio_dw_sizes s = { 5, 8, 4 };
	struct buf b = { 0 };
	struct elfio_dw_cur c;
	size_t at[6];

	uleb(&b, 300);				/* DW_FORM_strx */
	at[0] = b.n;
	u8(&b, 'a'); u8(&b, 'b'); u8(&b, 0);	/* DW_FORM_string */
	at[1] = b.n;
	uleb(&b, 3); u8(&b, 1); u8(&b, 2); u8(&b, 3);	/* DW_FORM_exprloc */
	at[2] = b.n;
	le(&b, 2, 2); u8(&b, 9); u8(&b, 9);	/* DW_FORM_block2 */
	at[3] = b.n;
	sleb(&b, -200);				/* DW_FORM_sdata */
	at[4] = b.n;
	u8(&b, 5);				/* DW_FORM_block1, runs past the end */
	at[5] = b.n;
	c = (struct elfio_dw_cur){ b.b, b.b + b.n, false };
	ck_assert(elfio_dw_skip_form(&s, DW_FORM_strx, &c));
	ck_assert_uint_eq((size_t)(c.p - b.b), at[0]);
	ck_assert(elfio_dw_skip_form(&s, DW_FORM_string, &c));
	ck_assert_uint_eq((size_t)(c.p - b.b), at[1]);
	ck_assert(elfio_dw_skip_form(&s, DW_FORM_exprloc, &c));
	ck_assert_uint_eq((size_t)(c.p - b.b), at[2]);
	ck_assert(elfio_dw_skip_form(&s, DW_FORM_block2, &c));
	ck_assert_uint_eq((size_t)(c.p - b.b), at[3]);
	ck_assert(elfio_dw_skip_form(&s, DW_FORM_sdata, &c));
	ck_assert_uint_eq((size_t)(c.p - b.b), at[4]);
	ck_assert(!elfio_dw_skip_form(&s, DW_FORM_block1, &c));
	ck_assert(c.bad);
	(void)at[5];
}
END_TEST

/* --- LEB128 ------------------------------------------------------------------- */

START_TEST(leb_bounds)
{
	uint8_t ten[10], eleven[11], t[16];
	struct elfio_dw_cur c;

	/* UINT64_MAX: nine bytes of 0xff and a last 0x01 */
	memset(ten, 0xff, 9);
	ten[9] = 0x01;
	c = (struct elfio_dw_cur){ ten, ten + 10, false };
	ck_assert_uint_eq(elfio_dw_uleb(&c), UINT64_MAX);
	ck_assert(!c.bad && c.p == ten + 10);
	/* an 11th byte: more than a 64-bit value needs, malformed, p after 10 */
	memset(eleven, 0x80, 10);
	eleven[10] = 0;
	c = (struct elfio_dw_cur){ eleven, eleven + 11, false };
	ck_assert_uint_eq(elfio_dw_uleb(&c), 0);
	ck_assert(c.bad && c.p == eleven + 10);
	/* running off the end: p at the end */
	c = (struct elfio_dw_cur){ ten, ten + 4, false };
	elfio_dw_uleb(&c);
	ck_assert(c.bad && c.p == ten + 4);
	/* SLEB128 -2 is 0x7e (DWARF 5, table 7.8) */
	t[0] = 0x7e;
	c = (struct elfio_dw_cur){ t, t + 1, false };
	ck_assert_int_eq(elfio_dw_sleb(&c), -2);
	/* 127 in 3 bytes: ff 80 00 (redundant continuation bytes) */
	ck_assert_uint_eq(elfio_dw_uleb_encode(t, 127, 3), 3);
	ck_assert_uint_eq(t[0], 0xff);
	ck_assert_uint_eq(t[1], 0x80);
	ck_assert_uint_eq(t[2], 0x00);
	c = (struct elfio_dw_cur){ t, t + 3, false };
	ck_assert_uint_eq(elfio_dw_uleb(&c), 127);
	/* 624485 is e5 8e 26 (DWARF 5, 7.6's example) */
	ck_assert_uint_eq(elfio_dw_uleb_encode(t, 624485, 1), 3);
	ck_assert(t[0] == 0xe5 && t[1] == 0x8e && t[2] == 0x26);
}
END_TEST

/* --- The abbreviation walk and the DIE iterator --------------------------------- */

START_TEST(abbrev_implicit_const_is_signed)
{
	struct buf ab = { 0 }, die = { 0 };
	struct elfio_dw_sizes s = { 5, 8, 4 };
	struct elfio_dw_cur a, c;
	struct elfio_dw_attr at;
	uint64_t tag = 0;

	/* code 1 before the entry we want: its implicit constant is 3 bytes */
	uleb(&ab, 1); uleb(&ab, DW_TAG_base_type); u8(&ab, DW_CHILDREN_no);
	uleb(&ab, DW_AT_byte_size); uleb(&ab, DW_FORM_implicit_const); sleb(&ab, -100000);
	uleb(&ab, 0); uleb(&ab, 0);
	uleb(&ab, 2); uleb(&ab, DW_TAG_variable); u8(&ab, DW_CHILDREN_no);
	uleb(&ab, DW_AT_decl_line); uleb(&ab, DW_FORM_implicit_const); sleb(&ab, -5);
	uleb(&ab, DW_AT_name); uleb(&ab, DW_FORM_strx1);
	uleb(&ab, 0); uleb(&ab, 0);
	u8(&ab, 0);
	u8(&die, 0x42);		/* the strx1 */

	ck_assert(elfio_dw_abbrev_find(ab.b, ab.n, 0, 2, &a, &tag));
	ck_assert_uint_eq(tag, DW_TAG_variable);
	c = (struct elfio_dw_cur){ die.b, die.b + die.n, false };
	ck_assert_int_eq(elfio_dw_die_attr(&s, &a, &c, &at), 1);
	ck_assert_uint_eq(at.name, DW_AT_decl_line);
	ck_assert_uint_eq(at.form, DW_FORM_implicit_const);
	ck_assert_int_eq(at.implicit, -5);
	ck_assert(at.val == die.b && c.p == die.b);	/* no bytes in the DIE */
	ck_assert_int_eq(elfio_dw_die_attr(&s, &a, &c, &at), 1);
	ck_assert_uint_eq(at.name, DW_AT_name);
	ck_assert(at.val == die.b && c.p == die.b + 1);
	ck_assert_int_eq(elfio_dw_die_attr(&s, &a, &c, &at), 0);
	/* the first entry, and no entry 3 */
	ck_assert(elfio_dw_abbrev_find(ab.b, ab.n, 0, 1, &a, &tag));
	ck_assert_uint_eq(tag, DW_TAG_base_type);
	ck_assert_int_eq(elfio_dw_die_attr(&s, &a, &c, &at), 1);
	ck_assert_int_eq(at.implicit, -100000);
	ck_assert(!elfio_dw_abbrev_find(ab.b, ab.n, 0, 3, &a, NULL));
	ck_assert(!elfio_dw_abbrev_find(ab.b, ab.n, ab.n, 1, &a, NULL));
}
END_TEST

/* --- Unit headers ------------------------------------------------------------------- */

/* DWARF 4 (7.5.1.1) and DWARF 5 (7.5.1) order the header's fields differently. */
START_TEST(cu_header_versions)
{
	struct buf b = { 0 };
	struct elfio_dw_cur c;
	struct elfio_dw_cu h;

	le(&b, 4, 2); le(&b, 0x1234, 4); u8(&b, 8);		/* v4: abbrev, addr size */
	u8(&b, 0xaa);						/* the first DIE */
	c = (struct elfio_dw_cur){ b.b, b.b + b.n, false };
	ck_assert(elfio_dw_cu_header(&c, 4, &h));
	ck_assert(!c.bad && c.p == b.b + 7 && *c.p == 0xaa);
	ck_assert_uint_eq(h.version, 4);
	ck_assert_uint_eq(h.unit_type, DW_UT_compile);
	ck_assert_uint_eq(h.addr_size, 8);
	ck_assert_uint_eq(h.abbrev, 0x1234);
	ck_assert(h.abbrev_at == b.b + 2);

	b.n = 0;						/* v5 compile, 64-bit */
	le(&b, 5, 2); u8(&b, DW_UT_compile); u8(&b, 4); le(&b, 0x56789abcdeULL, 8);
	u8(&b, 0xaa);
	c = (struct elfio_dw_cur){ b.b, b.b + b.n, false };
	ck_assert(elfio_dw_cu_header(&c, 8, &h));
	ck_assert(!c.bad && *c.p == 0xaa);
	ck_assert_uint_eq(h.addr_size, 4);
	ck_assert_uint_eq(h.abbrev, 0x56789abcdeULL);
	ck_assert(h.abbrev_at == b.b + 4);

	b.n = 0;				/* v5 type unit: signature and type offset */
	le(&b, 5, 2); u8(&b, DW_UT_type); u8(&b, 8); le(&b, 0, 4); le(&b, 0, 8); le(&b, 0, 4);
	u8(&b, 0xaa);
	c = (struct elfio_dw_cur){ b.b, b.b + b.n, false };
	ck_assert(elfio_dw_cu_header(&c, 4, &h));
	ck_assert_uint_eq(h.unit_type, DW_UT_type);
	ck_assert(!c.bad && *c.p == 0xaa);

	b.n = 0;				/* v5 skeleton: dwo_id, cut short */
	le(&b, 5, 2); u8(&b, DW_UT_skeleton); u8(&b, 8); le(&b, 0, 4); le(&b, 0, 4);
	c = (struct elfio_dw_cur){ b.b, b.b + b.n, false };
	ck_assert(elfio_dw_cu_header(&c, 4, &h));
	ck_assert(c.bad);

	b.n = 0;
	le(&b, 6, 2); le(&b, 0, 8);		/* a version not known */
	c = (struct elfio_dw_cur){ b.b, b.b + b.n, false };
	ck_assert(!elfio_dw_cu_header(&c, 4, &h));
}
END_TEST

/* --- repad_dwarf_info() behind each form ----------------------------------------- */

/*
 * repad's view of one object: .text (section 1) grows by 4 bytes at
 * offset 0x20; .debug_info's DW_AT_low_pc is relocated to .text + 0x10.
 */
#define PT_AT	0x20
#define FORM_UNKNOWN	0x7f	/* no DW_FORM_* (DWARF 5, table 7.6, ends at 0x2c) */
#define PT_PAD	4

static int64_t map_fn(const void *ctx, size_t sec, int64_t x, bool end)
{
	(void)ctx;
	if (sec != 1 || x < PT_AT || (x == PT_AT && end))
		return x;
	return x + PT_PAD;
}

static bool grows_fn(const void *ctx, size_t sec)
{
	(void)ctx;
	return sec == 1;
}

/*
 * A .debug_info unit (version, 32-bit, address size 8) whose first DIE is
 * `lead` (attribute, form, value bytes) then DW_AT_low_pc (DW_FORM_addr 0,
 * relocated to .text + 0x10) and DW_AT_high_pc (DW_FORM_data4 0x30, a
 * length): after repad_dwarf_info, the length (0x10 + 0x30 = 0x40 lies
 * behind the 4-byte point at 0x20) must read 0x34.
 */
struct lead {
	unsigned int name, form;
	int64_t implicit;
	uint8_t val[16];
	size_t nval;
};

static uint32_t high_pc_after(unsigned int version, const struct lead *l, size_t nl,
			      size_t *fixed)
{
	struct buf info = { 0 }, ab = { 0 };
	struct repad_dw_rel rel;
	struct repad_dw dw = { .path = "test.o", .name = ".debug_info", .map = map_fn,
			       .grows = grows_fn };
	size_t hi_at;
	int ret;

	uleb(&ab, 1); uleb(&ab, DW_TAG_compile_unit); u8(&ab, DW_CHILDREN_no);
	for (size_t i = 0; i < nl; i++) {
		uleb(&ab, l[i].name);
		uleb(&ab, l[i].form);
		if (l[i].form == DW_FORM_implicit_const)
			sleb(&ab, l[i].implicit);
	}
	uleb(&ab, DW_AT_low_pc); uleb(&ab, DW_FORM_addr);
	uleb(&ab, DW_AT_high_pc); uleb(&ab, DW_FORM_data4);
	uleb(&ab, 0); uleb(&ab, 0);
	u8(&ab, 0);

	le(&info, 0, 4);		/* unit_length, below */
	le(&info, version, 2);
	if (version >= 5) {
		u8(&info, DW_UT_compile);
		u8(&info, 8);
		le(&info, 0, 4);	/* debug_abbrev_offset */
	} else {
		le(&info, 0, 4);
		u8(&info, 8);
	}
	uleb(&info, 1);
	for (size_t i = 0; i < nl; i++)
		for (size_t k = 0; k < l[i].nval; k++)
			u8(&info, l[i].val[k]);
	rel = (struct repad_dw_rel){ .offset = info.n, .sec = 1, .old = 0x10, .new = 0x10 };
	le(&info, 0, 8);
	hi_at = info.n;
	le(&info, 0x30, 4);
	u8(&info, 0);			/* a null entry: the end of the unit's DIEs */
	for (unsigned int i = 0; i < 4; i++)
		info.b[i] = (uint8_t)((info.n - 4) >> 8 * i);
	dw.rel = &rel;
	dw.nrel = 1;
	ret = repad_dwarf_info(&dw, info.b, info.n, ab.b, ab.n, 2);
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(dw.units, 1);
	/* DW_AT_low_pc's relocation found, unless a form before it is not known */
	ck_assert_uint_eq(dw.cu_low.offset, (l[0].form == FORM_UNKNOWN ? 0 : rel.offset));
	*fixed = dw.fixed;
	return (uint32_t)get_le(info.b + hi_at, 4);
}

START_TEST(info_behind_ref_addr_dwarf2)
{
	/* DWARF 2: DW_FORM_ref_addr takes the address's 8 bytes, not 4 */
	struct lead l = { DW_AT_sibling, DW_FORM_ref_addr, 0, { 0x11, 0, 0, 0, 0, 0, 0, 0 }, 8 };
	size_t fixed;

	ck_assert_uint_eq(high_pc_after(2, &l, 1, &fixed), 0x34);
	ck_assert_uint_eq(fixed, 1);
	/* DWARF 3: 4 bytes */
	l.nval = 4;
	ck_assert_uint_eq(high_pc_after(3, &l, 1, &fixed), 0x34);
	ck_assert_uint_eq(fixed, 1);
}
END_TEST

START_TEST(info_behind_gnu_alternates)
{
	struct lead l[] = {
		{ DW_AT_name, DW_FORM_GNU_strp_alt, 0, { 1, 2, 3, 4 }, 4 },
		{ DW_AT_type, DW_FORM_GNU_ref_alt, 0, { 5, 6, 7, 8 }, 4 },
	};
	size_t fixed;

	ck_assert_uint_eq(high_pc_after(4, l, 2, &fixed), 0x34);
	ck_assert_uint_eq(fixed, 1);
}
END_TEST

START_TEST(info_behind_implicit_const)
{
	struct lead l[] = {
		{ DW_AT_language, DW_FORM_implicit_const, -100000, { 0 }, 0 },
		{ DW_AT_decl_line, DW_FORM_data1, 0, { 7 }, 1 },
	};
	size_t fixed;

	ck_assert_uint_eq(high_pc_after(5, l, 2, &fixed), 0x34);
	ck_assert_uint_eq(fixed, 1);
}
END_TEST

START_TEST(info_behind_dwarf5_forms)
{
	struct lead l[] = {
		{ DW_AT_name, DW_FORM_strx1, 0, { 1 }, 1 },
		{ DW_AT_producer, DW_FORM_strx3, 0, { 1, 2, 3 }, 3 },
		{ DW_AT_comp_dir, DW_FORM_line_strp, 0, { 1, 2, 3, 4 }, 4 },
		{ DW_AT_entry_pc, DW_FORM_addrx4, 0, { 1, 2, 3, 4 }, 4 },
		{ DW_AT_const_value, DW_FORM_data16, 0,
		  { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 }, 16 },
		{ DW_AT_str_offsets_base, DW_FORM_strx2, 0, { 1, 2 }, 2 },
		{ DW_AT_addr_base, DW_FORM_addrx1, 0, { 1 }, 1 },
		{ DW_AT_decl_file, DW_FORM_strx, 0, { 0x80, 0x01 }, 2 },
	};
	size_t fixed;

	ck_assert_uint_eq(high_pc_after(5, l, sizeof(l) / sizeof(l[0]), &fixed), 0x34);
	ck_assert_uint_eq(fixed, 1);
}
END_TEST

/* A form nobody knows before DW_AT_low_pc: the unit is left as it is. */
START_TEST(info_unknown_form_left_alone)
{
	struct lead l = { DW_AT_name, FORM_UNKNOWN, 0, { 0 }, 0 };
	size_t fixed;

	ck_assert_uint_eq(high_pc_after(5, &l, 1, &fixed), 0x30);
	ck_assert_uint_eq(fixed, 0);
}
END_TEST

/* --- repad_dwarf_line(): where a line program grows ---------------------------- */

/*
 * A DWARF 4 line program (DWARF 4, 6.2.4; min_inst 4, line_base -5,
 * line_range 14, opcode_base 13) for .text: DW_LNE_set_address .text + 0
 * (relocated), DW_LNS_copy (a row at 0), the special opcode for an advance
 * of `units` instructions and no line change, DW_LNE_end_sequence.  *row:
 * the special opcode's offset.
 */
static size_t line_unit(struct buf *b, unsigned int units, struct repad_dw_rel *rel, size_t *row)
{
	static const uint8_t std_len[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	size_t hl_at, hl_end;

	memset(b, 0, sizeof(*b));
	le(b, 0, 4);			/* unit_length, below */
	le(b, 4, 2);
	hl_at = b->n;
	le(b, 0, 4);			/* header_length, below */
	u8(b, 4);			/* minimum_instruction_length */
	u8(b, 1);			/* maximum_operations_per_instruction */
	u8(b, 1);			/* default_is_stmt */
	u8(b, (uint8_t)-5);		/* line_base */
	u8(b, 14);			/* line_range */
	u8(b, 13);			/* opcode_base */
	for (int i = 0; i < 12; i++)
		u8(b, std_len[i]);
	u8(b, 0);			/* no include_directories */
	u8(b, 'a'); u8(b, '.'); u8(b, 'c'); u8(b, 0); uleb(b, 0); uleb(b, 0); uleb(b, 0);
	u8(b, 0);			/* end of file_names */
	hl_end = b->n;
	for (unsigned int i = 0; i < 4; i++)
		b->b[hl_at + i] = (uint8_t)((hl_end - hl_at - 4) >> 8 * i);
	u8(b, 0); uleb(b, 9); u8(b, DW_LNE_set_address);
	*rel = (struct repad_dw_rel){ .offset = b->n, .sec = 1, .old = 0, .new = 0 };
	le(b, 0, 8);
	u8(b, DW_LNS_copy);
	*row = b->n;
	/* special opcode: (line advance - line_base) + line_range * units + opcode_base */
	u8(b, (uint8_t)((0 + 5) + 14 * units + 13));
	u8(b, 0); uleb(b, 1); u8(b, DW_LNE_end_sequence);
	for (unsigned int i = 0; i < 4; i++)
		b->b[i] = (uint8_t)((b->n - 4) >> 8 * i);
	return b->n;
}

/* A row 9 instructions (0x24) in, behind the point at 0x20: 10 now, in the same opcode. */
START_TEST(line_advance_in_special_opcode)
{
	struct buf b;
	struct repad_dw_rel rel;
	struct repad_dw dw = { .path = "test.o", .name = ".debug_line", .map = map_fn,
			       .grows = grows_fn };
	struct repad_dw_out out = { 0 };
	size_t row, n = line_unit(&b, 9, &rel, &row);

	dw.rel = &rel;
	dw.nrel = 1;
	ck_assert_int_eq(repad_dwarf_line(&dw, b.b, n, &out), 0);
	ck_assert_ptr_nonnull(out.buf);
	ck_assert_uint_eq(out.size, n);
	ck_assert_uint_eq(out.n, 0);
	ck_assert_uint_eq(out.buf[row], 5 + 14 * 10 + 13);
	b.b[row] = 5 + 14 * 10 + 13;
	ck_assert_int_eq(memcmp(out.buf, b.b, n), 0);	/* nothing else changed */
	ck_assert_uint_eq(dw.fixed, 1);
	repad_dw_out_free(&out);
}
END_TEST

/*
 * 16 instructions (0x40) is the largest advance a special opcode with no
 * line change holds here (5 + 14 * 16 + 13 = 242; 17 would be 256): the
 * 17th goes in a DW_LNS_advance_pc 1 inserted in front of the row, 2
 * bytes at the row's offset, and the unit_length grows by 2.
 */
START_TEST(line_advance_inserted)
{
	struct buf b;
	struct repad_dw_rel rel;
	struct repad_dw dw = { .path = "test.o", .name = ".debug_line", .map = map_fn,
			       .grows = grows_fn };
	struct repad_dw_out out = { 0 };
	size_t row, n = line_unit(&b, 16, &rel, &row);

	dw.rel = &rel;
	dw.nrel = 1;
	ck_assert_int_eq(repad_dwarf_line(&dw, b.b, n, &out), 0);
	ck_assert_ptr_nonnull(out.buf);
	ck_assert_uint_eq(out.size, n + 2);
	ck_assert_uint_eq(out.n, 1);
	ck_assert_uint_eq(out.points[0], row);
	ck_assert_uint_eq(out.pads[0], 2);
	ck_assert_uint_eq(get_le(out.buf, 4), n - 4 + 2);
	ck_assert_int_eq(memcmp(out.buf + 4, b.b + 4, row - 4), 0);
	ck_assert_uint_eq(out.buf[row], DW_LNS_advance_pc);
	ck_assert_uint_eq(out.buf[row + 1], 1);
	ck_assert_int_eq(memcmp(out.buf + row + 2, b.b + row, n - row), 0);
	ck_assert_uint_eq(dw.fixed, 1);
	repad_dw_out_free(&out);
}
END_TEST

/* A unit longer than its section: refused (exit 2 for the command). */
START_TEST(line_unit_past_the_end_refused)
{
	struct buf b;
	struct repad_dw_rel rel;
	struct repad_dw dw = { .path = "test.o", .name = ".debug_line", .map = map_fn,
			       .grows = grows_fn };
	struct repad_dw_out out = { 0 };
	size_t row, n = line_unit(&b, 9, &rel, &row);

	dw.rel = &rel;
	dw.nrel = 1;
	b.b[0]++;
	ck_assert_int_eq(repad_dwarf_line(&dw, b.b, n, &out), -EINVAL);
	ck_assert_ptr_null(out.buf);
	repad_dw_out_free(&out);
}
END_TEST

/* --- repad's plan, on arm64 objects written here -------------------------------- */

#define A64_NOP	0xd503201fu
#define A64_RET	0xd65f03c0u
#define A64_B	0x14000000u	/* B imm26: (target - pc) / 4 */

/*
 * .text (4-aligned):  0x00 h: B f2
 *                     0x04 the literal of f1 (2 NOPs)   0x0c f1: NOP NOP RET
 *                     0x18 the literal of f2 (2 NOPs)   0x20 f2: NOP NOP RET
 * and __patchable_function_entries naming .text + 0x04 and .text + 0x18, as
 * GCC's -fpatchable-function-entry=4,2 writes it.  aligned: one RET more
 * in h and in f1, so that both literals (0x08, 0x20) are 8-aligned.
 */
struct a64obj {
	uint32_t text[16];
	size_t nwords;
	uint64_t lit[2], fn[2], end;
};

static void a64_layout(struct a64obj *o, bool aligned)
{
	size_t w = 0;

	memset(o, 0, sizeof(*o));
	o->text[w++] = 0;		/* h's B, below */
	if (aligned)
		o->text[w++] = A64_RET;	/* a second word in h: the literal at 0x08 */
	for (int k = 0; k < 2; k++) {
		o->lit[k] = 4 * w;
		o->text[w++] = A64_NOP;
		o->text[w++] = A64_NOP;
		o->fn[k] = 4 * w;
		o->text[w++] = A64_NOP;
		o->text[w++] = A64_NOP;
		o->text[w++] = A64_RET;
		if (aligned && k == 0)
			o->text[w++] = A64_RET;	/* keeps the next literal 8-aligned */
	}
	o->nwords = w;
	o->end = 4 * w;
	o->text[0] = A64_B | (uint32_t)(o->fn[1] / 4);
}

static char *a64_write(const struct a64obj *o, uint16_t type, uint64_t text_align)
{
	char *p = eg_tmpname("repad");
	uint8_t pfe[16] = { 0 };
	Elf64_Rela r[2];
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0, text_align, o->text,
		  o->end },
		{ "__patchable_function_entries", SHT_PROGBITS,
		  SHF_WRITE | SHF_ALLOC | SHF_LINK_ORDER, 0, 8, pfe, sizeof(pfe), 1 },
		{ ".rela__patchable_function_entries", SHT_RELA, SHF_INFO_LINK, 0, 8, r,
		  sizeof(r), EG_SYMTAB, 2, sizeof(Elf64_Rela) },
	};
	struct eg_sym syms[] = {
		{ "", 0, 0, 1, STT_SECTION, STB_LOCAL },	/* symbol 1: .text */
		{ "h", 0, o->lit[0], 1, STT_FUNC, STB_GLOBAL },
		{ "f1", o->fn[0], 12, 1, STT_FUNC, STB_GLOBAL },
		{ "f2", o->fn[1], 12, 1, STT_FUNC, STB_GLOBAL },
	};

	for (int k = 0; k < 2; k++)
		r[k] = (Elf64_Rela){ 8 * (uint64_t)k, ELF64_R_INFO(1, R_AARCH64_ABS64),
				     (int64_t)o->lit[k] };
	ck_assert_int_eq(eg_write(p, type, EM_AARCH64, secs, 3, syms, 4), 0);
	return p;
}

/* What libelf (not patchsite) reads back from an object. */
struct readback {
	uint8_t text[128];
	uint64_t text_size, text_align;
	uint64_t sym[4];		/* [1..3]: h, f1, f2 */
	uint64_t label[2];		/* .LPFE1, .LPFE2 (riscv64) */
	int64_t addend[2];
};

static void read_back(const char *path, struct readback *rb)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstr;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	e = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(elf_getshdrstrndx(e, &shstr), 0);
	memset(rb, 0, sizeof(*rb));
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name;

		ck_assert_ptr_nonnull(gelf_getshdr(scn, &sh));
		name = elf_strptr(e, shstr, sh.sh_name);
		d = elf_getdata(scn, NULL);
		if (!strcmp(name, ".text")) {
			rb->text_size = sh.sh_size;
			rb->text_align = sh.sh_addralign;
			ck_assert_uint_le(d->d_size, sizeof(rb->text));
			memcpy(rb->text, d->d_buf, d->d_size);
		} else if (!strcmp(name, ".rela__patchable_function_entries")) {
			for (int k = 0; k < 2; k++) {
				GElf_Rela ra;

				ck_assert_ptr_nonnull(gelf_getrela(d, k, &ra));
				rb->addend[k] = ra.r_addend;
			}
		} else if (sh.sh_type == SHT_SYMTAB) {
			for (size_t k = 1; k * sizeof(Elf64_Sym) < d->d_size; k++) {
				GElf_Sym y;
				const char *n;

				ck_assert_ptr_nonnull(gelf_getsym(d, (int)k, &y));
				n = elf_strptr(e, sh.sh_link, y.st_name);
				if (!strcmp(n, "h"))
					rb->sym[1] = y.st_value;
				else if (!strcmp(n, "f1"))
					rb->sym[2] = y.st_value;
				else if (!strcmp(n, "f2"))
					rb->sym[3] = y.st_value;
				else if (!strcmp(n, ".LPFE1"))
					rb->label[0] = y.st_value;
				else if (!strcmp(n, ".LPFE2"))
					rb->label[1] = y.st_value;
			}
		}
	}
	elf_end(e);
	close(fd);
}

static uint32_t word(const struct readback *rb, uint64_t off)
{
	return (uint32_t)get_le(rb->text + off, 4);
}

/*
 * The literals at 0x04 and 0x18: 4 mod 8, and 0 mod 8 until the first NOP
 * in front of the first one moves it to 4 mod 8: one NOP (4 bytes) in
 * front of each, 8 bytes in all.
 */
START_TEST(plan_pads_each_misaligned_literal)
{
	struct a64obj o;
	struct repad_report rep;
	struct readback rb;
	char *in, *out = eg_tmpname("repad-out");

	a64_layout(&o, false);
	ck_assert_uint_eq(o.lit[0], 0x04);
	ck_assert_uint_eq(o.lit[1], 0x18);
	in = a64_write(&o, ET_REL, 4);
	ck_assert_int_eq(repad_object(in, out, &rep), 0);
	read_back(out, &rb);
	ck_assert_uint_eq(rb.text_size, 0x2c + 8);
	ck_assert_uint_eq(rb.text_align, 8);
	/* the literals, at 0x08 and 0x20: 8-aligned, named so by the table */
	ck_assert_int_eq(rb.addend[0], 0x08);
	ck_assert_int_eq(rb.addend[1], 0x20);
	/* functions behind a point moved by the padding before them */
	ck_assert_uint_eq(rb.sym[1], 0);
	ck_assert_uint_eq(rb.sym[2], 0x0c + 4);
	ck_assert_uint_eq(rb.sym[3], 0x20 + 8);
	/* h's resolved B to f2 re-encoded: 0x28 / 4 */
	ck_assert_uint_eq(word(&rb, 0), A64_B | 0x28 / 4);
	/* every word after it a NOP but the two RETs, at f1 + 8 and f2 + 8 */
	for (uint64_t off = 4; off < rb.text_size; off += 4)
		ck_assert_uint_eq(word(&rb, off),
				  off == 0x10 + 8 || off == 0x28 + 8 ? A64_RET : A64_NOP);
	ck_assert_uint_eq(rep.sections, 1);
	ck_assert_uint_eq(rep.functions, 2);
	ck_assert_uint_eq(rep.bytes, 8);
	ck_assert_uint_eq(rep.branches, 1);
	unlink(in);
	unlink(out);
	free(in);
	free(out);
}
END_TEST

/* Literals already 8-aligned in an 8-aligned section: -o writes the input's bytes. */
START_TEST(plan_aligned_changes_nothing)
{
	struct a64obj o;
	struct repad_report rep;
	char *in, *out = eg_tmpname("repad-out");
	uint8_t *a, *b;
	long na, nb;

	a64_layout(&o, true);
	ck_assert_uint_eq(o.lit[0] % 8, 0);
	ck_assert_uint_eq(o.lit[1] % 8, 0);
	in = a64_write(&o, ET_REL, 8);
	ck_assert_int_eq(repad_object(in, out, &rep), 0);
	na = eg_slurp(in, &a);
	nb = eg_slurp(out, &b);
	ck_assert_int_gt(na, 0);
	ck_assert_int_eq(na, nb);
	ck_assert_int_eq(memcmp(a, b, (size_t)na), 0);
	ck_assert_uint_eq(rep.functions + rep.bytes + rep.sections + rep.branches, 0);
	free(a);
	free(b);
	unlink(in);
	unlink(out);
	free(in);
	free(out);
}
END_TEST

/* Aligned literals in a 4-aligned section: only sh_addralign changes, to 8. */
START_TEST(plan_realigns_section_only)
{
	struct a64obj o;
	struct repad_report rep;
	struct readback rb, orig;
	char *in, *out = eg_tmpname("repad-out");

	a64_layout(&o, true);
	in = a64_write(&o, ET_REL, 4);
	read_back(in, &orig);
	ck_assert_int_eq(repad_object(in, out, &rep), 0);
	read_back(out, &rb);
	ck_assert_uint_eq(rb.text_align, 8);
	ck_assert_uint_eq(rb.text_size, o.end);
	ck_assert_int_eq(memcmp(rb.text, orig.text, o.end), 0);
	ck_assert_uint_eq(rep.sections, 1);
	ck_assert_uint_eq(rep.bytes, 0);
	unlink(in);
	unlink(out);
	free(in);
	free(out);
}
END_TEST

/*
 * riscv64 with RVC, a section the linker relaxes (an R_RISCV_RELAX at
 * f1's call): -fpatchable-function-entry=8,4, four c.nop before and four
 * at each function.
 *   0x00 h: c.ret        0x02 literal of f1     0x0a f1: 4 c.nop, auipc t1 / jr t1 (call g)
 *   0x1a literal of f2   0x22 f2: 4 c.nop, c.ret                               end 0x2c
 * In a relaxed section every literal gets what GNU as emits for .balign 8
 * with RVC: 8 - 2 = 6 bytes of NOP at the literal and an R_RISCV_ALIGN
 * (symbol 0, addend 6) on them, which the linker shrinks to what the
 * alignment needs; 12 bytes in all.
 */
#define RV_CNOP		0x0001u
#define RV_CRET		0x8082u
#define RV_NOP		0x00000013u
#define RV_AUIPC_T1	0x00000317u
#define RV_JR_T1	0x00030067u

static char *rv_write(bool by_section)
{
	char *p = eg_tmpname("repad-rv");
	uint8_t text[0x2c], pfe[16] = { 0 };
	size_t n = 0;
	Elf64_Rela rt[2], rp[2];
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0, 2, text, sizeof(text) },
		{ ".rela.text", SHT_RELA, SHF_INFO_LINK, 0, 8, rt, sizeof(rt), EG_SYMTAB, 1,
		  sizeof(Elf64_Rela) },
		{ "__patchable_function_entries", SHT_PROGBITS,
		  SHF_WRITE | SHF_ALLOC | SHF_LINK_ORDER, 0, 8, pfe, sizeof(pfe), 1 },
		{ ".rela__patchable_function_entries", SHT_RELA, SHF_INFO_LINK, 0, 8, rp,
		  sizeof(rp), EG_SYMTAB, 3, sizeof(Elf64_Rela) },
	};
	/* GCC names each literal by a local label, not as .text + N */
	struct eg_sym syms[] = {
		{ "", 0, 0, 1, STT_SECTION, STB_LOCAL },	/* 1: .text */
		{ ".LPFE1", 0x02, 0, 1, STT_NOTYPE, STB_LOCAL },	/* 2 */
		{ ".LPFE2", 0x1a, 0, 1, STT_NOTYPE, STB_LOCAL },	/* 3 */
		{ "h", 0, 2, 1, STT_FUNC, STB_GLOBAL },
		{ "f1", 0x0a, 0x10, 1, STT_FUNC, STB_GLOBAL },
		{ "f2", 0x22, 0x0a, 1, STT_FUNC, STB_GLOBAL },
		{ "g", 0, 0, 0, STT_NOTYPE, STB_GLOBAL },	/* 7 */
	};

#define H(v) (text[n] = (uint8_t)(v), text[n + 1] = (uint8_t)((v) >> 8), n += 2)
#define W(v) (H((v) & 0xffff), H((v) >> 16))
	H(RV_CRET);
	for (int k = 0; k < 8; k++)
		H(RV_CNOP);
	W(RV_AUIPC_T1);
	W(RV_JR_T1);
	for (int k = 0; k < 8; k++)
		H(RV_CNOP);
	H(RV_CRET);
#undef W
#undef H
	ck_assert_uint_eq(n, sizeof(text));
	rt[0] = (Elf64_Rela){ 0x12, ELF64_R_INFO(7, R_RISCV_CALL_PLT), 0 };
	rt[1] = (Elf64_Rela){ 0x12, ELF64_R_INFO(0, R_RISCV_RELAX), 0 };
	rp[0] = (Elf64_Rela){ 0, ELF64_R_INFO(2, R_RISCV_64), 0 };
	rp[1] = (Elf64_Rela){ 8, ELF64_R_INFO(3, R_RISCV_64), 0 };
	if (by_section) {	/* .text + 0x02, .text + 0x1a */
		rp[0] = (Elf64_Rela){ 0, ELF64_R_INFO(1, R_RISCV_64), 0x02 };
		rp[1] = (Elf64_Rela){ 8, ELF64_R_INFO(1, R_RISCV_64), 0x1a };
	}
	ck_assert_int_eq(eg_write(p, ET_REL, EM_RISCV, secs, 4, syms, 7), 0);
	/* e_flags: RVC, double-float ABI, as GCC's -march=rv64gc writes them */
	{
		int fd = open(p, O_RDWR);
		Elf64_Ehdr eh;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(pread(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
		eh.e_flags = EF_RISCV_RVC | EF_RISCV_FLOAT_ABI_DOUBLE;
		ck_assert_int_eq(pwrite(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
		close(fd);
	}
	return p;
}

/* NOPs only in [from, to) of t: c.nop or nop. */
static bool rv_nops(const uint8_t *t, uint64_t from, uint64_t to)
{
	while (from < to) {
		if (get_le(t + from, 2) == RV_CNOP)
			from += 2;
		else if (to - from >= 4 && get_le(t + from, 4) == RV_NOP)
			from += 4;
		else
			return false;
	}
	return from == to;
}

START_TEST(plan_riscv_relaxed_align_relocs)
{
	struct repad_report rep;
	struct readback rb;
	char *in = rv_write(false), *out = eg_tmpname("repad-out");
	GElf_Rela ra[4];
	size_t nra = 0;
	int fd;
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstr;

	ck_assert_int_eq(repad_object(in, out, &rep), 0);
	read_back(out, &rb);
	ck_assert_uint_eq(rb.text_size, 0x2c + 12);
	ck_assert_uint_eq(rb.text_align, 8);
	/* the literals' labels at 0x02 + 6 and 0x1a + 12: 8-aligned in the object */
	ck_assert_int_eq(rb.addend[0], 0);
	ck_assert_int_eq(rb.addend[1], 0);
	ck_assert_uint_eq(rb.label[0], 0x08);
	ck_assert_uint_eq(rb.label[1], 0x26);
	ck_assert_uint_eq(rb.sym[1], 0);
	ck_assert_uint_eq(rb.sym[2], 0x0a + 6);
	ck_assert_uint_eq(rb.sym[3], 0x22 + 12);
	/* the 6 bytes in front of each literal are NOPs, the code is as it was */
	ck_assert_uint_eq(get_le(rb.text, 2), RV_CRET);
	ck_assert(rv_nops(rb.text, 0x02, 0x08));
	ck_assert(rv_nops(rb.text, 0x08, 0x18));
	ck_assert_uint_eq(get_le(rb.text + 0x18, 4), RV_AUIPC_T1);
	ck_assert_uint_eq(get_le(rb.text + 0x1c, 4), RV_JR_T1);
	ck_assert(rv_nops(rb.text, 0x20, 0x26));
	ck_assert(rv_nops(rb.text, 0x26, 0x36));
	ck_assert_uint_eq(get_le(rb.text + 0x36, 2), RV_CRET);
	/* .rela.text: an R_RISCV_ALIGN (symbol 0, addend 6) at each point, the call moved */
	fd = open(out, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(elf_getshdrstrndx(e, &shstr), 0);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		ck_assert_ptr_nonnull(gelf_getshdr(scn, &sh));
		if (strcmp(elf_strptr(e, shstr, sh.sh_name), ".rela.text"))
			continue;
		d = elf_getdata(scn, NULL);
		nra = d->d_size / sizeof(Elf64_Rela);
		ck_assert_uint_eq(nra, 4);
		for (size_t k = 0; k < nra; k++)
			ck_assert_ptr_nonnull(gelf_getrela(d, (int)k, &ra[k]));
	}
	elf_end(e);
	close(fd);
	ck_assert_uint_eq(nra, 4);
	ck_assert_uint_eq(ra[0].r_offset, 0x02);
	ck_assert_uint_eq(GELF_R_TYPE(ra[0].r_info), R_RISCV_ALIGN);
	ck_assert_uint_eq(GELF_R_SYM(ra[0].r_info), 0);
	ck_assert_int_eq(ra[0].r_addend, 6);
	ck_assert_uint_eq(ra[1].r_offset, 0x18);
	ck_assert_uint_eq(GELF_R_TYPE(ra[1].r_info), R_RISCV_CALL_PLT);
	ck_assert_uint_eq(ra[2].r_offset, 0x18);
	ck_assert_uint_eq(GELF_R_TYPE(ra[2].r_info), R_RISCV_RELAX);
	ck_assert_uint_eq(ra[3].r_offset, 0x1a + 6);
	ck_assert_uint_eq(GELF_R_TYPE(ra[3].r_info), R_RISCV_ALIGN);
	ck_assert_int_eq(ra[3].r_addend, 6);
	ck_assert_uint_eq(rep.functions, 2);
	ck_assert_uint_eq(rep.bytes, 12);
	unlink(in);
	unlink(out);
	free(in);
	free(out);
}
END_TEST

/*
 * repad_object(in, out) must fail with want and say why in one line,
 * `patchsite: IN: ...why...` (SPEC.md's bad input), writing nothing.
 */
static void refused(const char *in, const char *out, int want, const char *why)
{
	struct repad_report rep;
	char *log = eg_tmpname("repad-err"), line[512], first[512];
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600), saved = dup(2), ret;
	FILE *f;
	size_t lines = 0;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(saved, 0);
	fflush(stderr);
	ck_assert_int_eq(dup2(fd, 2), 2);
	ret = repad_object(in, out, &rep);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	ck_assert_int_eq(ret, want);
	ck_assert_int_ne(access(out, F_OK), 0);
	f = fopen(log, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (!lines++)
			memcpy(first, line, sizeof(first));
	fclose(f);
	ck_assert_uint_eq(lines, 1);
	snprintf(line, sizeof(line), "patchsite: %s: ", in);
	ck_assert_msg(!strncmp(first, line, strlen(line)) && strstr(first, why),
		      "got '%s', want '%s...%s'", first, line, why);
	unlink(log);
	free(log);
}

/* What repad refuses, before writing anything. */
START_TEST(plan_refuses)
{
	struct a64obj o;
	char *in, *out = eg_tmpname("repad-out");

	a64_layout(&o, false);
	/* a linked program: repad runs before the final link */
	in = a64_write(&o, ET_EXEC, 4);
	refused(in, out, -EINVAL, "not a relocatable object");
	unlink(in);
	free(in);
	/* a section alignment that is no power of two */
	in = a64_write(&o, ET_REL, 12);
	refused(in, out, -EINVAL, "has alignment 0xc");
	unlink(in);
	free(in);
	/*
	 * riscv64, relaxed: `.text + 0x02` and `.text + 0x1a` name the literals
	 * across padding that the linker may shrink (it moves symbols, not
	 * addends)
	 */
	in = rv_write(true);
	refused(in, out, -ENOTSUP, "crosses alignment padding that linker relaxation may shrink");
	unlink(in);
	free(in);
	free(out);
}
END_TEST

/* --- The suite ----------------------------------------------------------------- */

Suite *repad_suite(void)
{
	Suite *s = suite_create("repad");
	TCase *tc = tcase_create("dwarf reader");

	tcase_add_test(tc, form_ref_addr_dwarf2_is_address_sized);
	tcase_add_test(tc, form_gnu_alternates_are_offset_sized);
	tcase_add_test(tc, form_dwarf5_sizes);
	tcase_add_test(tc, form_skip_variable);
	tcase_add_test(tc, leb_bounds);
	tcase_add_test(tc, abbrev_implicit_const_is_signed);
	tcase_add_test(tc, cu_header_versions);
	tcase_add_test(tc, info_behind_ref_addr_dwarf2);
	tcase_add_test(tc, info_behind_gnu_alternates);
	tcase_add_test(tc, info_behind_implicit_const);
	tcase_add_test(tc, info_behind_dwarf5_forms);
	tcase_add_test(tc, info_unknown_form_left_alone);
	suite_add_tcase(s, tc);
	tc = tcase_create("plan");
	tcase_add_test(tc, plan_pads_each_misaligned_literal);
	tcase_add_test(tc, plan_aligned_changes_nothing);
	tcase_add_test(tc, plan_realigns_section_only);
	tcase_add_test(tc, plan_riscv_relaxed_align_relocs);
	tcase_add_test(tc, plan_refuses);
	tcase_add_test(tc, line_advance_in_special_opcode);
	tcase_add_test(tc, line_advance_inserted);
	tcase_add_test(tc, line_unit_past_the_end_refused);
	suite_add_tcase(s, tc);
	return s;
}
