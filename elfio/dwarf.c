// SPDX-License-Identifier: GPL-2.0-only
/*
 * dwarf.c - which compilation units an image has, built with which flags,
 * over which addresses: DW_AT_name, DW_AT_producer and the ranges of each
 * unit's first DIE, and the unit that holds an address.
 *
 * Strategy: read what the question needs and nothing else.  A vmlinux
 * carries hundreds of MB of DWARF; the questions need the unit headers,
 * each unit's first DIE and its abbreviation, a few strings and the range
 * lists of the units asked about, a few MB in all.  libdw's dwarf_begin_elf
 * hands every .debug_* section to its reader and walks the abbreviation
 * tables with a hash insertion per entry; through the file mapping each
 * unit header costs a page fault, and the kernel maps 64 KiB around each
 * one (fault-around), so a walk of 2,400 unit headers left 150 MB resident.
 * So:
 *
 *  - .debug_info is read with one pread() of 192 bytes per unit: a
 *    unit's header and first DIE, nothing mapped, nothing left resident
 *    (2,000 units cost ~2 ms of page-cache reads; the DIEs between are
 *    never touched);
 *  - the sections read in order and in part (abbreviation tables, range
 *    lists, strings, .debug_aranges) are read where the file is mapped,
 *    without a copy, and their pages are handed back every MiB;
 *  - a compressed section, or an image decompressed into memory, is read
 *    where libelf inflated it (that cost is the format's);
 *  - a unit's first DIE is found from its abbreviation code without
 *    parsing the table before it: in a well-formed table an entry starts
 *    right after the two zero bytes that end the previous one, and no other
 *    pair of zero bytes is followed by a non-zero byte (a tag never ends in
 *    a zero byte, an attribute or form is never zero, an implicit constant
 *    of zero is followed by the terminator's zeros).  So the first "00 00
 *    uleb(code)" at or after the table's start is the entry (GCC numbers
 *    the unit's entry near the end of its table of ~150);
 *  - range lists are read only for the units asked about, in unit order,
 *    which is the order the compilers write them.
 *
 * What the answers are is libdw's (elfutils 0.188), which this replaces:
 * dwarf_nextcu's unit walk and its checks of each header, dwarf_attr's
 * first matching attribute, dwarf_formstring, dwarf_ranges on the unit DIE
 * (DW_AT_low_pc/high_pc, else DW_AT_ranges in .debug_ranges or
 * .debug_rnglists, with the unit's base address and DW_FORM_rnglistx,
 * DW_FORM_addrx, DW_FORM_strx through the unit's bases), and
 * dwarf_addrdie's lookup in .debug_aranges (and only there: without that
 * section an address has no unit, as with libdw).  Malformed DWARF stops
 * the walk or drops the unit, as libdw does; it never stops the command.
 * Two kinds of corruption are read differently: an abbreviation table cut
 * short before the unit's entry (libdw's parse stops at the cut, the
 * search finds the entry after it), and a DWARF 5 header of an unknown
 * unit type (libdw reads a DIE out of the header's bytes; here the unit
 * has none).  In a relocatable object nothing is relocated (libdw does not
 * either), so an object with a single unit attributes everything to it.
 *
 * The same rules serve DWARF bytes already in memory (repad's sections of
 * an object, read whole and rewritten): a bounded cursor over the bytes,
 * the one LEB128 decoder (at most 10 bytes there, a 64-bit value's), the
 * one table of form sizes (DW_FORM_ref_addr address-sized in DWARF 2, the
 * GNU alternate forms offset-sized), and an abbreviation table walked entry
 * by entry from its start: repad asks for every DIE of a unit, not for the
 * first one of many units, so the search above would save nothing there.
 */
#include <dwarf.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfio/elfio.h"
#include "elfio/elfio_priv.h"

enum dsec_id {
	S_INFO, S_ABBREV, S_STR, S_LINE_STR, S_STR_OFFSETS, S_ADDR, S_RANGES, S_RNGLISTS,
	S_ARANGES, S_COUNT
};

static const char *const dsec_names[S_COUNT] = {
	[S_INFO] = ".debug_info",
	[S_ABBREV] = ".debug_abbrev",
	[S_STR] = ".debug_str",
	[S_LINE_STR] = ".debug_line_str",
	[S_STR_OFFSETS] = ".debug_str_offsets",
	[S_ADDR] = ".debug_addr",
	[S_RANGES] = ".debug_ranges",
	[S_RNGLISTS] = ".debug_rnglists",
	[S_ARANGES] = ".debug_aranges",
};

/* How much of a section one pread() brings in: a unit's header and first
   DIE; a stretch of abbreviation tables or range lists read in order. */
static const size_t dsec_window[S_COUNT] = {
	[S_INFO] = 192,
	[S_ABBREV] = 256 << 10,
	[S_STR] = 4096,
	[S_LINE_STR] = 4096,
	[S_STR_OFFSETS] = 4096,
	[S_ADDR] = 4096,
	[S_RANGES] = 64 << 10,
	[S_RNGLISTS] = 64 << 10,
	[S_ARANGES] = 256 << 10,
};

/* One .debug_* section, and the window of it that was read last. */
struct dsec {
	bool present;
	const uint8_t *mem;	/* all of it in memory (libelf's), or NULL: pread() */
	struct elfio_section *sec;
	bool mapped;		/* mem is the file's mapping: hand its pages back as we go */
	uint64_t released;	/* the offset at the last hand-back */
	uint64_t foff;		/* file offset, for pread() */
	uint64_t size;
	uint8_t *buf;		/* pread() window (ours) */
	size_t cap;
	uint64_t lo;		/* buf holds [lo, lo + len) */
	size_t len;
};

/* The unit DIE's attributes these questions use, as libdw's dwarf_attr finds them. */
struct attrval {
	bool present;
	unsigned int form;
	uint64_t val;		/* the value, or for DW_FORM_string its offset in .debug_info */
};

enum cu_attr { A_NAME, A_PRODUCER, A_LOW_PC, A_HIGH_PC, A_RANGES, A_ENTRY_PC, A_STR_OFF_BASE,
	       A_ADDR_BASE, A_RNGLISTS_BASE, A_GNU_ADDR_BASE, A_GNU_RANGES_BASE, A_COUNT };

struct unit {
	uint64_t off, end;	/* [off, end) in .debug_info */
	uint64_t next;		/* the next unit's header, NO_NEXT after a bogus length */
	uint64_t die;		/* offset of the first DIE */
	uint64_t abbrev;	/* its abbreviation table in .debug_abbrev */
	unsigned int version, addr_size, offset_size, unit_type;
	bool die_ok;		/* the first DIE and its abbreviation were read */
	struct attrval a[A_COUNT];
};

struct arange {
	uint64_t addr, len;
	uint64_t unit;		/* offset of the unit header */
	size_t seq;		/* position in the section */
};

/* What elfio_dwarf_cu() gave for a unit (strings ours). */
struct cu_cache {
	uint64_t unit;
	char *name, *producer;
};

struct elfio_dwarf {
	struct elfio *e;
	int fd;
	struct dsec s[S_COUNT];
	uint64_t next;		/* the next unit header, UINT64_MAX at the end */
	struct unit u;		/* the unit elfio_dwarf_next_unit() gave last */
	char *prev;		/* the last producer seen */
	size_t prev_cap;
	bool have_prev;
	unsigned int prev_form;
	uint64_t prev_val;
	/* audit: .debug_aranges, read on the first elfio_dwarf_cu() */
	int ar_state;		/* 0 not read, 1 read, -1 unusable */
	struct arange *ar;
	size_t nar;
	struct cu_cache *cache;
	size_t ncache, cache_cap;
	/* ET_REL: the one unit of an object, when it has exactly one */
	int single;		/* -1 not known yet, 0 no, 1 yes */
	struct cu_cache single_cu;
};

#define NO_NEXT UINT64_MAX
/* What a mapped section may leave resident before its pages are handed back. */
#define RELEASE_STEP	(1u << 20)

/* --- Reading the sections --------------------------------------------------- */

/*
 * A section's bytes in memory, without an error line: libdw ignores a
 * debug section it cannot inflate, and so does this.
 */
static int section_in_memory(struct elfio_section *s, bool gnu_compressed)
{
	Elf_Data *d;

	if (s->loaded)
		return 0;
	if (gnu_compressed) {
		/* .zdebug_*: libdw inflates it and ignores a failure (then the
		   bytes are the raw ones, as here) */
		GElf_Shdr sh;
		if (elf_compress_gnu(s->scn, 0, 0) >= 0 && gelf_getshdr(s->scn, &sh))
			s->shdr = sh;
		d = elf_getdata(s->scn, NULL);
	} else if (s->shdr.sh_flags & SHF_COMPRESSED) {
		GElf_Shdr sh;
		if (elf_compress(s->scn, 0, 0) < 0 || !gelf_getshdr(s->scn, &sh))
			return -EINVAL;
		s->shdr = sh;
		d = elf_getdata(s->scn, NULL);
	} else {
		d = elf_rawdata(s->scn, NULL);
	}
	if (!d || (d->d_size && !d->d_buf))
		return -EINVAL;
	s->data = d->d_buf;
	s->size = d->d_size;
	s->loaded = true;
	return 0;
}

static void dsec_bytes(struct elfio_dwarf *d, enum dsec_id id, struct elfio_section *s,
		       bool gnu);

/*
 * The section libdw's check_section would take for id: the first, in
 * section order, named .debug_X or .zdebug_X (GNU-compressed), neither
 * SHT_NOBITS nor in a section group, that has bytes.
 */
static void dsec_init(struct elfio_dwarf *d, enum dsec_id id)
{
	struct dsec *ds = &d->s[id];
	struct elfio_section *s;
	bool gnu = false;

	for (size_t i = 1; i < elfio_nsections(d->e); i++) {
		s = elfio_section(d->e, i);
		if (s->shdr.sh_type == SHT_NOBITS || (s->shdr.sh_flags & SHF_GROUP))
			continue;
		gnu = s->name[0] == '.' && s->name[1] == 'z' &&
		      !strcmp(s->name + 2, dsec_names[id] + 1);
		if (!gnu && strcmp(s->name, dsec_names[id]))
			continue;
		ds->sec = s;
		dsec_bytes(d, id, s, gnu);
		if (ds->present)
			return;
		memset(ds, 0, sizeof(*ds));	/* empty: libdw looks further */
	}
}

static void dsec_bytes(struct elfio_dwarf *d, enum dsec_id id, struct elfio_section *s, bool gnu)
{
	struct dsec *ds = &d->s[id];

	if (d->fd >= 0 && !gnu && !(s->shdr.sh_flags & SHF_COMPRESSED) && id != S_INFO) {
		/*
		 * Read in order, and only in part (abbreviation tables, range
		 * lists, a few strings): where the file is mapped, read there,
		 * with no copy, and give the pages back every RELEASE_STEP
		 * (dsec_at).  elfio_open checked that it lies inside the file.
		 */
		size_t len;
		const uint8_t *raw = elfio_raw(d->e, &len);
		if (raw && s->shdr.sh_offset <= len && s->shdr.sh_size <= len - s->shdr.sh_offset) {
			ds->mem = raw + s->shdr.sh_offset;
			ds->size = s->shdr.sh_size;
			ds->mapped = true;
		}
	}
	if (ds->mapped) {
		/* done above */
	} else if (d->fd >= 0 && !gnu && !(s->shdr.sh_flags & SHF_COMPRESSED)) {
		/*
		 * .debug_info: a unit header every 80-160 KB.  Through the
		 * mapping each costs a page fault that maps 64 KiB around it
		 * (fault-around); one pread() of its first bytes costs less and
		 * leaves nothing resident.
		 */
		ds->foff = s->shdr.sh_offset;
		ds->size = s->shdr.sh_size;
	} else {
		if (section_in_memory(s, gnu))
			return;
		ds->mem = s->data;
		ds->size = s->size;
	}
	ds->present = ds->size > 0;	/* libdw ignores an empty section */
}

/*
 * The bytes of section id at offset at: a pointer to *avail >= 1 of them,
 * at least min(want, what is left of the section) unless a read fails, or
 * NULL when at is past the end.  -ENOMEM in *err if the window cannot grow.
 */
static const uint8_t *dsec_at(struct elfio_dwarf *d, enum dsec_id id, uint64_t at, size_t want,
			      size_t *avail, int *err)
{
	struct dsec *ds = &d->s[id];
	size_t left;

	*avail = 0;
	if (!ds->present || at >= ds->size)
		return NULL;
	left = ds->size - at < SIZE_MAX ? (size_t)(ds->size - at) : SIZE_MAX;
	if (want > left)
		want = left;
	if (ds->mem) {
		if (ds->mapped && (at > ds->released + RELEASE_STEP ||
				   at + RELEASE_STEP < ds->released)) {
			elfio_section_release(d->e, ds->sec);
			ds->released = at;
		}
		*avail = left;
		return ds->mem + at;
	}
	if (at >= ds->lo && at - ds->lo < ds->len && ds->len - (at - ds->lo) >= want) {
		*avail = ds->len - (size_t)(at - ds->lo);
		return ds->buf + (at - ds->lo);
	}
	size_t n = want > dsec_window[id] ? want : dsec_window[id];
	if (n > left)
		n = left;
	if (elfio_grow(&ds->buf, &ds->cap, n, 1)) {
		elfio_err(d->e, "out of memory for a window of %zu bytes on '%s'", n,
			  dsec_names[id]);
		*err = -ENOMEM;
		return NULL;
	}
	ds->len = 0;
	ssize_t got = pread(d->fd, ds->buf, n, (off_t)(ds->foff + at));
	if (got <= 0)
		return NULL;	/* unreadable: the DWARF says nothing */
	ds->lo = at;
	ds->len = (size_t)got;
	*avail = ds->len;
	return ds->buf;
}

/* A NUL-terminated string at offset at of a string section, or NULL. */
static const char *dsec_string(struct elfio_dwarf *d, enum dsec_id id, uint64_t at, int *err)
{
	size_t want = 256, avail;

	for (;;) {
		const uint8_t *p = dsec_at(d, id, at, want, &avail, err);
		if (!p)
			return NULL;
		if (memchr(p, 0, avail))
			return (const char *)p;
		if (avail < want || at + avail >= d->s[id].size)
			return NULL;	/* runs off the section */
		want = avail * 2;
	}
}

/*
 * LEB128 in [*p, end), sign-extended when is_signed; false if it runs off
 * the end.  One loop for both: ULEB128 and SLEB128 differ only in the
 * sign bit of the last byte.
 */
static bool get_leb(const uint8_t **p, const uint8_t *end, bool is_signed, uint64_t *v)
{
	uint64_t r = 0;
	unsigned int shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (is_signed && shift < 64 && (b & 0x40))
				r |= ~(uint64_t)0 << shift;
			*v = r;
			return true;
		}
	}
	return false;
}

/*
 * The same, but a LEB128 longer than max bytes (0: no bound) is malformed
 * too; *p is then after the max bytes read.
 */
static bool get_leb_max(const uint8_t **p, const uint8_t *end, bool is_signed, size_t max,
			uint64_t *v)
{
	if (max && (size_t)(end - *p) > max)
		end = *p + max;
	return get_leb(p, end, is_signed, v);
}

static bool get_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	return get_leb(p, end, false, v);
}

static bool get_sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t u;

	if (!get_leb(p, end, true, &u))
		return false;
	*v = (int64_t)u;
	return true;
}

/* --- Units ------------------------------------------------------------------ */

/*
 * The header of the unit at off, as libdw's __libdw_next_unit checks it.
 * 1 and *u filled, 2 for a unit of a version or type libdw cannot read
 * (only u->off, u->end and u->next are), 0 at the end or at a header libdw
 * would stop at, or -ENOMEM.
 */
static int read_header(struct elfio_dwarf *d, uint64_t off, struct unit *u)
{
	const uint64_t size = d->s[S_INFO].size;
	const uint8_t *p, *q, *end;
	size_t avail;
	int err = 0;

	if (off == NO_NEXT || !d->s[S_INFO].present || off + 4 >= size)
		return 0;
	p = dsec_at(d, S_INFO, off, 64, &avail, &err);
	if (!p)
		return err;
	q = p;
	end = p + avail;
	if (end - q < 4)
		return 0;
	memset(u, 0, sizeof(*u));
	u->off = off;
	uint64_t len = get_le(q, 4);
	q += 4;
	u->offset_size = 4;
	if (len == 0xffffffff) {
		if (end - q < 8)
			return 0;
		len = get_le(q, 8);
		q += 8;
		u->offset_size = 8;
	} else if (len >= 0xfffffff0) {
		return 0;
	}
	if (end - q < 2)
		return 0;
	u->version = (unsigned int)get_le(q, 2);
	q += 2;
	if (u->version >= 5) {
		if (end - q < 1)
			return 0;
		u->unit_type = *q++;
	}
	if (u->version < 2 || u->version > 5 ||
	    (u->version == 5 && !(u->unit_type == DW_UT_compile || u->unit_type == DW_UT_partial ||
				  u->unit_type == DW_UT_skeleton ||
				  u->unit_type == DW_UT_split_compile ||
				  u->unit_type == DW_UT_type || u->unit_type == DW_UT_split_type))) {
		/* libdw's walk goes on past a header it cannot read; its unit has no DIE */
		u->next = off + 2 * u->offset_size - 4 + len;
		if (u->next <= off)
			u->next = NO_NEXT;
		u->end = u->next < size ? u->next : size;
		return 2;
	}
	if (u->version < 5)
		u->unit_type = DW_UT_compile;
	/* the fixed part of the header must fit in the section */
	size_t fixed = (size_t)(q - p) + 1 + u->offset_size;
	if (u->unit_type == DW_UT_skeleton || u->unit_type == DW_UT_split_compile)
		fixed += 8;
	else if (u->unit_type == DW_UT_type || u->unit_type == DW_UT_split_type)
		fixed += 8 + u->offset_size;
	if (fixed > avail)
		return 0;
	if (u->version >= 5)
		u->addr_size = *q++;
	u->abbrev = get_le(q, u->offset_size);
	q += u->offset_size;
	if (!d->s[S_ABBREV].present || u->abbrev > d->s[S_ABBREV].size)
		return 0;
	if (u->version < 5)
		u->addr_size = *q++;
	if (u->addr_size != 4 && u->addr_size != 8)
		u->addr_size = 8;	/* as libdw assumes */
	if (u->unit_type == DW_UT_skeleton || u->unit_type == DW_UT_split_compile) {
		q += 8;
	} else if (u->unit_type == DW_UT_type || u->unit_type == DW_UT_split_type) {
		q += 8;
		uint64_t type_off = get_le(q, u->offset_size);
		q += u->offset_size;
		if (type_off < (uint64_t)(q - p))
			return 0;
	}
	u->die = off + (uint64_t)(q - p);
	if (u->die >= size)
		return 0;
	u->next = off + 2 * u->offset_size - 4 + len;
	if (u->next <= off)
		u->next = NO_NEXT;	/* a bogus length: this unit, then no more */
	u->end = u->next < size ? u->next : size;
	return 1;
}

/* --- Forms: one table of their sizes -------------------------------------------- */

int elfio_dw_form_size(const struct elfio_dw_sizes *s, unsigned int form)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_addr:
		return (int)s->addr_size;
	case DW_FORM_ref_addr:
		/* DWARF 2 (7.5.4): the size of an address; 3 and later: an offset */
		return (int)(s->version == 2 ? s->addr_size : s->offset_size);
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		return (int)s->offset_size;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3: case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_ref_sup4: case DW_FORM_strx4:
	case DW_FORM_addrx4:
		return 4;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	default:
		return -1;
	}
}

/*
 * Step *p over a value of form in [*p, end); false if the form is unknown
 * or the value runs past end.  A LEB128 longer than max_leb bytes (0: any
 * length, as libdw reads them) is malformed.
 */
static bool form_skip(const struct elfio_dw_sizes *s, unsigned int form, const uint8_t **p,
		      const uint8_t *end, size_t max_leb)
{
	int fixed = elfio_dw_form_size(s, form);
	uint64_t n;

	if (fixed >= 0) {
		if ((size_t)fixed > (size_t)(end - *p))
			return false;
		*p += fixed;
		return true;
	}
	switch (form) {
	case DW_FORM_sdata: case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx:
	case DW_FORM_addrx: case DW_FORM_loclistx: case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index:
		return get_leb_max(p, end, false, max_leb, &n);
	case DW_FORM_string: {
		const uint8_t *z = memchr(*p, 0, (size_t)(end - *p));
		if (!z)
			return false;
		*p = z + 1;
		return true;
	}
	case DW_FORM_block1:
		if (end - *p < 1)
			return false;
		n = **p;
		*p += 1;
		goto block;
	case DW_FORM_block2:
		if (end - *p < 2)
			return false;
		n = get_le(*p, 2);
		*p += 2;
		goto block;
	case DW_FORM_block4:
		if (end - *p < 4)
			return false;
		n = get_le(*p, 4);
		*p += 4;
		goto block;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		if (!get_leb_max(p, end, false, max_leb, &n))
			return false;
block:
		if (n > (uint64_t)(end - *p))
			return false;
		*p += n;
		return true;
	default:
		return false;
	}
}

static bool skip_form(const struct unit *u, unsigned int form, const uint8_t **p,
		      const uint8_t *end)
{
	const struct elfio_dw_sizes s = { u->version, u->addr_size, u->offset_size };

	return form_skip(&s, form, p, end, 0);
}

/* The value of a form at p as the integer the questions use (see struct attrval). */
static bool read_value(const struct unit *u, unsigned int form, const uint8_t *p,
		       const uint8_t *end, uint64_t *v)
{
	switch (form) {
	case DW_FORM_addr:
		if (u->addr_size != 4 && u->addr_size != 8)
			return false;
		*v = get_le(p, u->addr_size == 4 ? 4 : 8);
		return true;
	case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset:
	case DW_FORM_strp_sup: case DW_FORM_GNU_strp_alt:
		*v = get_le(p, u->offset_size);
		return true;
	case DW_FORM_data1: case DW_FORM_strx1: case DW_FORM_addrx1: case DW_FORM_flag:
		*v = p[0];
		return true;
	case DW_FORM_data2: case DW_FORM_strx2: case DW_FORM_addrx2:
		*v = get_le(p, 2);
		return true;
	case DW_FORM_strx3: case DW_FORM_addrx3:
		*v = get_le(p, 3);
		return true;
	case DW_FORM_data4: case DW_FORM_strx4: case DW_FORM_addrx4:
		*v = get_le(p, 4);
		return true;
	case DW_FORM_data8:
		*v = get_le(p, 8);
		return true;
	case DW_FORM_udata: case DW_FORM_strx: case DW_FORM_addrx: case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index:
		return get_uleb(&p, end, v);
	case DW_FORM_sdata: {
		int64_t s;
		if (!get_sleb(&p, end, &s))
			return false;
		*v = (uint64_t)s;
		return true;
	}
	default:
		*v = 0;		/* DW_FORM_string: the caller sets the offset */
		return true;
	}
}

static int attr_slot(unsigned int at)
{
	switch (at) {
	case DW_AT_name: return A_NAME;
	case DW_AT_producer: return A_PRODUCER;
	case DW_AT_low_pc: return A_LOW_PC;
	case DW_AT_high_pc: return A_HIGH_PC;
	case DW_AT_ranges: return A_RANGES;
	case DW_AT_entry_pc: return A_ENTRY_PC;
	case DW_AT_str_offsets_base: return A_STR_OFF_BASE;
	case DW_AT_addr_base: return A_ADDR_BASE;
	case DW_AT_rnglists_base: return A_RNGLISTS_BASE;
	case DW_AT_GNU_addr_base: return A_GNU_ADDR_BASE;
	case DW_AT_GNU_ranges_base: return A_GNU_RANGES_BASE;
	default: return -1;
	}
}

/* The high bit of each byte of w that is zero, and no other bit. */
static inline uint64_t zero_bytes(uint64_t w)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;

	return ~(((w & low7) + low7) | w | low7);
}

/*
 * The first "00 00 needle[2..nl)" in [p, end), or NULL: memmem's work, but
 * the abbreviation tables are mostly zero bytes and small numbers, where
 * memmem's general search spends 5 instructions a byte.  A byte >= 0x80 (a
 * code of two bytes or more) is rare there: memchr finds it.  Otherwise eight
 * positions at a time: a zero at q and q + 1 and the byte at q + 2.
 */
static const uint8_t *find_entry_start(const uint8_t *p, const uint8_t *end,
				       const uint8_t *needle, size_t nl)
{
	const uint8_t b = needle[2];
	const uint8_t *q = p;

	if ((size_t)(end - p) < nl)
		return NULL;
	if (b & 0x80) {
		for (q = p + 2; q < end && (q = memchr(q, b, (size_t)(end - q))); q++)
			if (q[-1] == 0 && q[-2] == 0 && (size_t)(end - q) >= nl - 2 &&
			    !memcmp(q + 1, needle + 3, nl - 3))
				return q - 2;
		return NULL;
	}
	const uint64_t bb = 0x0101010101010101ull * b;
	for (; end - q >= 10; q += 8) {
		uint64_t w0, w1, w2;
		memcpy(&w0, q, 8);
		memcpy(&w1, q + 1, 8);
		memcpy(&w2, q + 2, 8);
		uint64_t m = zero_bytes(w0) & zero_bytes(w1) & zero_bytes(w2 ^ bb);
		while (m) {
			const uint8_t *c = q + (__builtin_ctzll(m) >> 3);
			if ((size_t)(end - c) >= nl && !memcmp(c + 3, needle + 3, nl - 3))
				return c;
			m &= m - 1;
		}
	}
	return memmem(q, (size_t)(end - q), needle, nl);
}

/*
 * Where, in .debug_abbrev, the entry for code begins, searching the table
 * at tab (see the Strategy above): 1 and *at, 0 if there is none, -ENOMEM.
 */
static int find_abbrev(struct elfio_dwarf *d, uint64_t tab, uint64_t code, uint64_t *at)
{
	uint8_t needle[2 + 10];
	size_t nl = 2, avail;
	const uint8_t *p, *end;
	uint64_t c, pos;
	int err = 0;

	p = dsec_at(d, S_ABBREV, tab, 16, &avail, &err);
	if (!p)
		return err;
	end = p + avail;
	if (!get_uleb(&p, end, &c) || c == 0)
		return 0;	/* an empty table */
	if (c == code) {
		*at = tab;
		return 1;
	}
	needle[0] = needle[1] = 0;
	for (c = code; nl < sizeof(needle);) {
		uint8_t b = c & 0x7f;
		c >>= 7;
		needle[nl++] = b | (c ? 0x80 : 0);
		if (!c)
			break;
	}
	for (pos = tab;;) {
		p = dsec_at(d, S_ABBREV, pos, 4096, &avail, &err);
		if (!p)
			return err;
		const uint8_t *hit = find_entry_start(p, p + avail, needle, nl);
		if (hit) {
			*at = pos + (uint64_t)(hit - p) + 2;
			return 1;
		}
		if (pos + avail >= d->s[S_ABBREV].size || avail < nl)
			return 0;
		pos += avail - (nl - 1);	/* the needle may straddle the window */
	}
}

/*
 * The attributes of the DIE in [die, end) (die at offset die_off) whose
 * abbreviation entry starts at at_off: 0 done (a form that cannot be sized,
 * or the unit's end, stops it, as dwarf_attr stops), 1 the DIE runs past
 * the bytes read, 2 the abbreviation runs past the section, or -ENOMEM.
 */
static int read_attrs(struct elfio_dwarf *d, struct unit *u, const uint8_t *die, const uint8_t *end,
		      uint64_t die_off, uint64_t at_off)
{
	size_t aw = 512, aavail;
	int err = 0;

	for (;;) {
		const uint8_t *a = dsec_at(d, S_ABBREV, at_off, aw, &aavail, &err), *aend;
		const uint8_t *q = die;
		uint64_t skip;
		bool more = false;

		if (!a)
			return err ? err : 2;
		aend = a + aavail;
		memset(u->a, 0, sizeof(u->a));
		/* the code, the tag, DW_CHILDREN_*, then (attribute, form) pairs */
		if (!get_uleb(&a, aend, &skip) || !get_uleb(&a, aend, &skip) || a++ >= aend)
			more = true;
		while (!more) {
			uint64_t name, form;
			int64_t implicit = 0;
			if (!get_uleb(&a, aend, &name) || !get_uleb(&a, aend, &form) ||
			    (form == DW_FORM_implicit_const && !get_sleb(&a, aend, &implicit))) {
				more = true;
				break;
			}
			if (!name && !form)
				return 0;
			if (form == DW_FORM_indirect) {
				if (!get_uleb(&q, end, &form))
					return 1;
				if (form == DW_FORM_indirect)
					return 0;
			}
			const uint8_t *val = q;
			if (!skip_form(u, (unsigned int)form, &q, end))
				return 1;
			int k = attr_slot((unsigned int)name);
			if (k < 0 || u->a[k].present)
				continue;
			struct attrval *v = &u->a[k];
			v->present = true;
			v->form = (unsigned int)form;
			if (form == DW_FORM_implicit_const)
				v->val = (uint64_t)implicit;
			else if (form == DW_FORM_string)
				v->val = die_off + (uint64_t)(val - die);
			else if (!read_value(u, v->form, val, q, &v->val))
				v->present = false;
		}
		if (at_off + aavail >= d->s[S_ABBREV].size)
			return 2;
		aw = aavail * 2;
	}
}

/*
 * The unit's first DIE: its abbreviation, and the values of the attributes
 * the questions use (the first of each, as dwarf_attr finds it).  0, or
 * -ENOMEM; a DIE that cannot be read leaves u->die_ok false.
 */
static int read_die(struct elfio_dwarf *d, struct unit *u)
{
	uint64_t code, at_off = 0;
	size_t want = 192, avail;
	bool found = false;
	int err = 0, ret;

	memset(u->a, 0, sizeof(u->a));
	u->die_ok = false;
	for (;;) {
		const uint8_t *die = dsec_at(d, S_INFO, u->die, want, &avail, &err), *p = die;
		bool whole;

		if (!die)
			return err;
		if (avail >= u->end - u->die)
			avail = (size_t)(u->end - u->die);
		whole = u->die + avail >= u->end;
		if (!get_uleb(&p, die + avail, &code)) {
			if (whole)
				return 0;
			want = avail * 2;
			continue;
		}
		if (code == 0)
			return 0;	/* a null entry: no attributes */
		if (!found) {
			ret = find_abbrev(d, u->abbrev, code, &at_off);
			if (ret <= 0)
				return ret;
			found = true;
		}
		ret = read_attrs(d, u, p, die + avail, u->die + (uint64_t)(p - die), at_off);
		if (ret < 0)
			return ret;
		if (ret == 2) {
			memset(u->a, 0, sizeof(u->a));	/* no such abbreviation */
			return 0;
		}
		if (ret == 1 && !whole) {
			want = avail * 2;
			continue;
		}
		u->die_ok = true;
		return 0;
	}
}

/* --- Attribute values, as libdw reads them ------------------------------------ */

/* An offset into section id given by a DW_FORM_sec_offset-like value (libdw's formudata). */
static bool udata(const struct elfio_dwarf *d, const struct attrval *v, enum dsec_id checked,
		  uint64_t *out)
{
	if (!v->present)
		return false;
	switch (v->form) {
	case DW_FORM_sec_offset:
		if (checked != S_COUNT && (!d->s[checked].present || v->val >= d->s[checked].size))
			return false;
		/* fall through */
	case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4: case DW_FORM_data8:
	case DW_FORM_sdata: case DW_FORM_udata: case DW_FORM_implicit_const:
		*out = v->val;
		return true;
	default:
		return false;
	}
}

static uint64_t addr_base(const struct elfio_dwarf *d, const struct unit *u)
{
	uint64_t b = 0;

	if (u->a[A_GNU_ADDR_BASE].present) {
		if (!udata(d, &u->a[A_GNU_ADDR_BASE], S_ADDR, &b))
			b = 0;
	} else if (u->a[A_ADDR_BASE].present && !udata(d, &u->a[A_ADDR_BASE], S_ADDR, &b)) {
		b = 0;
	}
	return b;
}

/* Entry idx of .debug_addr for the unit (DW_FORM_addrx and friends). */
static bool addrx(struct elfio_dwarf *d, const struct unit *u, uint64_t idx, uint64_t *out,
		  int *err)
{
	uint64_t base = addr_base(d, u), sz = d->s[S_ADDR].size;
	size_t avail;

	if (!d->s[S_ADDR].present || (u->addr_size != 4 && u->addr_size != 8) || base > sz ||
	    idx > (sz - base) / u->addr_size || sz - base - idx * u->addr_size < u->addr_size)
		return false;
	const uint8_t *p = dsec_at(d, S_ADDR, base + idx * u->addr_size, u->addr_size, &avail, err);
	if (!p || avail < u->addr_size)
		return false;
	*out = get_le(p, u->addr_size);
	return true;
}

/* dwarf_formaddr */
static bool formaddr(struct elfio_dwarf *d, const struct unit *u, const struct attrval *v,
		     uint64_t *out, int *err)
{
	if (!v->present)
		return false;
	switch (v->form) {
	case DW_FORM_addr:
		*out = v->val;
		return true;
	case DW_FORM_addrx: case DW_FORM_addrx1: case DW_FORM_addrx2: case DW_FORM_addrx3:
	case DW_FORM_addrx4: case DW_FORM_GNU_addr_index:
		return addrx(d, u, v->val, out, err);
	default:
		return false;
	}
}

/* The base of the unit's entries in .debug_str_offsets (libdw's str_offsets_base_off). */
static uint64_t str_offsets_base(struct elfio_dwarf *d, const struct unit *u, int *err)
{
	uint64_t b;
	size_t avail;

	if (u->a[A_STR_OFF_BASE].present && udata(d, &u->a[A_STR_OFF_BASE], S_STR_OFFSETS, &b))
		return b;
	if (u->version < 5)
		return 0;
	/* no attribute: after the section's header, if it has one */
	const uint8_t *p = dsec_at(d, S_STR_OFFSETS, 0, 16, &avail, err);
	if (!p || avail < 4)
		return 0;
	const uint8_t *q = p + 4, *end = p + avail;
	uint64_t len = get_le(p, 4);
	if (len == 0xffffffff) {
		if (end - q < 8)
			return 0;
		len = get_le(q, 8);
		q += 8;
	}
	if (end - q < 4 || len < 4 || d->s[S_STR_OFFSETS].size - (uint64_t)(q - p) < len)
		return 0;
	if (get_le(q, 2) != 5)
		return 0;
	return (uint64_t)(q - p) + 4;
}

/* dwarf_formstring: a NUL-terminated string, or NULL. */
static const char *formstring(struct elfio_dwarf *d, const struct unit *u,
			      const struct attrval *v, int *err)
{
	size_t avail;

	if (!v->present)
		return NULL;
	switch (v->form) {
	case DW_FORM_string:
		/* checked to end inside the unit when the DIE was read */
		return dsec_string(d, S_INFO, v->val, err);
	case DW_FORM_strp:
		return dsec_string(d, S_STR, v->val, err);
	case DW_FORM_line_strp:
		return dsec_string(d, S_LINE_STR, v->val, err);
	case DW_FORM_strx: case DW_FORM_strx1: case DW_FORM_strx2: case DW_FORM_strx3:
	case DW_FORM_strx4: case DW_FORM_GNU_str_index: {
		uint64_t base = str_offsets_base(d, u, err), sz = d->s[S_STR_OFFSETS].size;
		if (!d->s[S_STR_OFFSETS].present || u->offset_size > sz || base > sz ||
		    (sz - base) / u->offset_size <= v->val)
			return NULL;
		const uint8_t *p = dsec_at(d, S_STR_OFFSETS, base + v->val * u->offset_size,
					   u->offset_size, &avail, err);
		if (!p || avail < u->offset_size)
			return NULL;
		return dsec_string(d, S_STR, get_le(p, u->offset_size), err);
	}
	default:
		return NULL;	/* DW_FORM_GNU_strp_alt, DW_FORM_strp_sup: another file */
	}
}

/* Copy s into *buf (growing it); -ENOMEM. */
static int keep_string(struct elfio_dwarf *d, const char *s, char **buf, size_t *cap)
{
	size_t n = strlen(s) + 1;

	if (elfio_grow(buf, cap, n, 1)) {
		elfio_err(d->e, "out of memory for a DWARF string of %zu bytes", n);
		return -ENOMEM;
	}
	memcpy(*buf, s, n);
	return 0;
}

/* --- DWARF bytes in memory: the cursor (elfio.h) ------------------------------- */

/* A 64-bit value takes at most 10 bytes of LEB128; the cursor allows no more. */
#define CUR_MAX_LEB	10

uint64_t elfio_dw_fixed(struct elfio_dw_cur *c, unsigned int n)
{
	uint64_t v;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	v = get_le(c->p, n);
	c->p += n;
	return v;
}

static uint64_t cur_leb(struct elfio_dw_cur *c, bool is_signed)
{
	uint64_t v;

	if (c->bad)
		return 0;
	if (!get_leb_max(&c->p, c->end, is_signed, CUR_MAX_LEB, &v)) {
		c->bad = true;
		return 0;
	}
	return v;
}

uint64_t elfio_dw_uleb(struct elfio_dw_cur *c)
{
	return cur_leb(c, false);
}

int64_t elfio_dw_sleb(struct elfio_dw_cur *c)
{
	return (int64_t)cur_leb(c, true);
}

void elfio_dw_skip(struct elfio_dw_cur *c, uint64_t n)
{
	if (c->bad || (uint64_t)(c->end - c->p) < n)
		c->bad = true;
	else
		c->p += n;
}

uint64_t elfio_dw_initial_length(struct elfio_dw_cur *c, unsigned int *offsz)
{
	uint64_t len = elfio_dw_fixed(c, 4);

	*offsz = 4;
	if (len == 0xffffffff) {
		len = elfio_dw_fixed(c, 8);
		*offsz = 8;
	}
	return len;
}

bool elfio_dw_cu_header(struct elfio_dw_cur *c, unsigned int offsz, struct elfio_dw_cu *h)
{
	memset(h, 0, sizeof(*h));
	h->version = (unsigned int)elfio_dw_fixed(c, 2);
	if (h->version < 2 || h->version > 5)
		return false;
	if (h->version < 5) {
		/* DWARF 2-4, 7.5.1.1: abbreviation offset, then address size */
		h->unit_type = DW_UT_compile;
		h->abbrev_at = c->p;
		h->abbrev = elfio_dw_fixed(c, offsz);
		h->addr_size = (unsigned int)elfio_dw_fixed(c, 1);
		return true;
	}
	/* DWARF 5, 7.5.1: unit type and address size first */
	h->unit_type = (unsigned int)elfio_dw_fixed(c, 1);
	h->addr_size = (unsigned int)elfio_dw_fixed(c, 1);
	h->abbrev_at = c->p;
	h->abbrev = elfio_dw_fixed(c, offsz);
	if (h->unit_type == DW_UT_skeleton || h->unit_type == DW_UT_split_compile)
		elfio_dw_skip(c, 8);			/* dwo_id */
	else if (h->unit_type == DW_UT_type || h->unit_type == DW_UT_split_type)
		elfio_dw_skip(c, 8 + (uint64_t)offsz);	/* type signature, type offset */
	return true;
}

size_t elfio_dw_uleb_encode(uint8_t *buf, uint64_t v, size_t min)
{
	size_t n = 0;

	if (min > 16)
		min = 16;
	do {
		buf[n] = v & 0x7f;
		v >>= 7;
		if (v || n + 1 < min)
			buf[n] |= 0x80;
		n++;
	} while (v || n < min);
	return n;
}

bool elfio_dw_skip_form(const struct elfio_dw_sizes *s, unsigned int form, struct elfio_dw_cur *c)
{
	if (c->bad || !form_skip(s, form, &c->p, c->end, CUR_MAX_LEB))
		c->bad = true;
	return !c->bad;
}

bool elfio_dw_abbrev_find(const uint8_t *abbrev, size_t size, uint64_t table, uint64_t code,
			  struct elfio_dw_cur *attrs, uint64_t *tag)
{
	struct elfio_dw_cur c = { abbrev, abbrev + size, false };

	if (table >= size)
		return false;
	c.p += table;
	while (!c.bad && c.p < c.end) {
		uint64_t k = elfio_dw_uleb(&c), t;

		if (!k || c.bad)
			return false;
		t = elfio_dw_uleb(&c);
		elfio_dw_skip(&c, 1);		/* DW_CHILDREN_* */
		if (k == code) {
			if (tag)
				*tag = t;
			*attrs = c;
			return !c.bad;
		}
		for (;;) {
			uint64_t name = elfio_dw_uleb(&c), form = elfio_dw_uleb(&c);

			if (c.bad || (!name && !form))
				break;
			if (form == DW_FORM_implicit_const)
				elfio_dw_sleb(&c);
		}
	}
	return false;
}

int elfio_dw_die_attr(const struct elfio_dw_sizes *s, struct elfio_dw_cur *attrs,
		      struct elfio_dw_cur *c, struct elfio_dw_attr *a)
{
	a->name = elfio_dw_uleb(attrs);
	a->form = elfio_dw_uleb(attrs);
	a->implicit = 0;
	a->val = c->p;
	if (attrs->bad)
		return -EINVAL;
	if (!a->name && !a->form)
		return 0;
	if (a->form == DW_FORM_implicit_const) {
		a->implicit = elfio_dw_sleb(attrs);
		if (attrs->bad)
			return -EINVAL;
	}
	if (a->form > UINT_MAX || !elfio_dw_skip_form(s, (unsigned int)a->form, c))
		return -EINVAL;
	return 1;
}

/* --- The public walk ---------------------------------------------------------- */

struct elfio_dwarf *elfio_dwarf_open(struct elfio *e)
{
	struct elfio_dwarf *d = elfio_calloc(1, sizeof(*d));

	if (!d) {
		elfio_err(e, "out of memory for the DWARF reader");
		errno = ENOMEM;
		return NULL;
	}
	d->e = e;
	/* a module decompressed into memory keeps the compressed file open */
	d->fd = elfio_was_compressed(e) ? -1 : elfio_fd(e);
	d->single = -1;
	for (int i = 0; i < S_COUNT; i++)
		dsec_init(d, (enum dsec_id)i);
	if (!d->s[S_INFO].present) {
		elfio_free(d);
		errno = ENODATA;	/* no DWARF: attribution is simply absent */
		return NULL;
	}
	return d;
}

void elfio_dwarf_close(struct elfio_dwarf *d)
{
	if (!d)
		return;
	for (int i = 0; i < S_COUNT; i++) {
		elfio_free(d->s[i].buf);
		if (d->s[i].mapped)
			elfio_section_release(d->e, d->s[i].sec);
	}
	for (size_t i = 0; i < d->ncache; i++) {
		elfio_free(d->cache[i].name);
		elfio_free(d->cache[i].producer);
	}
	elfio_free(d->cache);
	elfio_free(d->single_cu.name);
	elfio_free(d->single_cu.producer);
	elfio_free(d->ar);
	elfio_free(d->prev);
	elfio_free(d);
}

/* The unit at off, header and first DIE: 1, 0 at the end, -ENOMEM. */
static int load_unit(struct elfio_dwarf *d, uint64_t off, struct unit *u)
{
	int ret = read_header(d, off, u);

	if (ret <= 0)
		return ret;
	if (ret == 2) {
		memset(u->a, 0, sizeof(u->a));
		u->die_ok = false;
		return 1;
	}
	return (ret = read_die(d, u)) < 0 ? ret : 1;
}

int elfio_dwarf_next_unit(struct elfio_dwarf *d, struct elfio_dwarf_unit *out)
{
	int err = 0, ret;

	memset(out, 0, sizeof(*out));
	if (!d)
		return 0;
	ret = load_unit(d, d->next, &d->u);
	if (ret <= 0) {
		d->next = NO_NEXT;
		return ret;
	}
	struct unit *u = &d->u;
	d->next = u->next;
	out->offset = u->off;
	if (!u->die_ok)
		return 1;
	const struct attrval *pv = &u->a[A_PRODUCER];
	const char *s;
	/* a kernel's thousands of units share a few producer strings */
	if (d->have_prev && pv->present && pv->form == d->prev_form &&
	    (pv->form == DW_FORM_strp || pv->form == DW_FORM_line_strp) &&
	    pv->val == d->prev_val) {
		out->producer = d->prev;
		out->same_producer = true;
		return 1;
	}
	s = formstring(d, u, pv, &err);
	if (err)
		return err;
	if (!s)
		return 1;
	if (d->have_prev && !strcmp(s, d->prev)) {
		out->same_producer = true;
	} else if ((ret = keep_string(d, s, &d->prev, &d->prev_cap))) {
		return ret;
	}
	d->have_prev = true;
	d->prev_form = pv->form;
	d->prev_val = pv->val;
	out->producer = d->prev;
	return 1;
}

/* The unit's base address (libdw's __libdw_cu_base_address). */
static uint64_t cu_base(struct elfio_dwarf *d, const struct unit *u, int *err)
{
	uint64_t b;

	if (formaddr(d, u, &u->a[A_LOW_PC], &b, err) || formaddr(d, u, &u->a[A_ENTRY_PC], &b, err))
		return b;
	return 0;
}

/* The base of the unit's .debug_rnglists offsets (libdw's __libdw_cu_ranges_base). */
static uint64_t rnglists_base(struct elfio_dwarf *d, const struct unit *u, int *err)
{
	uint64_t off = 0;
	size_t avail;

	if (u->version < 5) {
		if (!udata(d, &u->a[A_GNU_RANGES_BASE], S_COUNT, &off))
			off = 0;
		return off;
	}
	if (!udata(d, &u->a[A_RNGLISTS_BASE], S_RNGLISTS, &off))
		off = 0;
	if (off || !d->s[S_RNGLISTS].present)
		return off;
	/* none: after the first header, if the section has one */
	const uint8_t *p = dsec_at(d, S_RNGLISTS, 0, 32, &avail, err);
	if (!p || avail < 4)
		return 0;
	const uint8_t *q = p + 4, *end = p + avail;
	uint64_t len = get_le(p, 4);
	unsigned int osz = 4;
	if (len == 0xffffffff) {
		if (end - q < 8)
			return 0;
		len = get_le(q, 8);
		q += 8;
		osz = 8;
	}
	uint64_t rest = d->s[S_RNGLISTS].size - (uint64_t)(q - p);
	if (end - q < 8 || len < 8 || len > rest)
		return 0;
	if (get_le(q, 2) != 5 || (q[2] != 4 && q[2] != 8) || q[3] != 0)
		return 0;
	uint64_t count = get_le(q + 4, 4);
	if (count == 0 || len - 8 < count * osz)
		return 0;
	return (uint64_t)(q + 8 - p);
}

/*
 * Where the unit's DW_AT_ranges list starts (libdw's initial_offset), in
 * section id.  false if it has none or it cannot be read.
 */
static bool ranges_start(struct elfio_dwarf *d, const struct unit *u, enum dsec_id id,
			 uint64_t *start, int *err)
{
	const struct attrval *v = &u->a[A_RANGES];
	uint64_t sz = d->s[id].size;
	size_t avail;

	if (!d->s[id].present)
		return false;
	if (v->form == DW_FORM_rnglistx) {
		uint64_t base = rnglists_base(d, u, err), osz = u->offset_size;
		if (osz > sz || base > sz - osz || v->val > (sz - osz - base) / osz)
			return false;
		const uint8_t *p = dsec_at(d, id, base + v->val * osz, (size_t)osz, &avail, err);
		if (!p || avail < osz)
			return false;
		*start = get_le(p, (unsigned int)osz) + base;
		return true;
	}
	switch (v->form) {
	case DW_FORM_sec_offset: case DW_FORM_data4: case DW_FORM_data8:
		break;
	default:
		return false;
	}
	if (v->val >= sz)
		return false;
	*start = v->val;
	return true;
}

/* What a range list entry gave: a range, a new base, or the end (0, or the error). */
enum range_step { RANGE_PAIR, RANGE_BASE, RANGE_END, RANGE_ERR };

/*
 * One contiguous range: DW_AT_high_pc an address, or an offset from
 * DW_AT_low_pc.  1 with *lo, *hi; 0 when the unit has none (or it cannot
 * be read); -errno.
 */
static int unit_pc_range(struct elfio_dwarf *d, const struct unit *u, uint64_t *lo, uint64_t *hi)
{
	const struct attrval *h = &u->a[A_HIGH_PC];
	int err = 0;
	bool ok;

	if (!h->present)
		return 0;
	if (h->form == DW_FORM_addr) {
		ok = formaddr(d, u, h, hi, &err) && formaddr(d, u, &u->a[A_LOW_PC], lo, &err);
	} else {
		uint64_t delta = 0;
		ok = formaddr(d, u, &u->a[A_LOW_PC], lo, &err) && udata(d, h, S_COUNT, &delta);
		*hi = *lo + delta;
	}
	if (err)
		return err;
	return ok;
}

/*
 * A DWARF 4 .debug_ranges entry at p (avail bytes), w-byte addresses:
 * a pair relative to *base, a new base (the escape), or the end.  *q past
 * what was read.
 */
static enum range_step ranges_entry(const uint8_t *p, size_t avail, unsigned int w,
				    const uint8_t **q, uint64_t *base, uint64_t *lo, uint64_t *hi)
{
	uint64_t escape = w == 8 ? UINT64_MAX : 0xffffffffull, a, b;

	if (avail < 2u * w)
		return RANGE_END;
	a = get_le(p, w);
	b = get_le(p + w, w);
	*q = p + 2 * w;
	if (a == escape) {
		if (b == escape)
			return RANGE_END;
		*base = b;
		return RANGE_BASE;
	}
	if (!a && !b)
		return RANGE_END;
	*lo = a + *base;
	*hi = b + *base;
	return RANGE_PAIR;
}

/*
 * A DWARF 5 .debug_rnglists entry at p (to end), w-byte addresses, by its
 * DW_RLE_ code: a range, a new base, or the end (RANGE_ERR: the end with
 * *err, which may be 0).  *q past what was read.
 */
static enum range_step rnglists_entry(struct elfio_dwarf *d, const struct unit *u,
				      const uint8_t *p, const uint8_t *end, unsigned int w,
				      const uint8_t **q, uint64_t *base, uint64_t *lo,
				      uint64_t *hi, int *err)
{
	uint64_t a, b, idx;

	*q = p + 1;
	switch (*p) {
	case DW_RLE_end_of_list:
		return RANGE_END;
	case DW_RLE_base_addressx:
		if (!get_uleb(q, end, &idx) || !addrx(d, u, idx, base, err))
			return RANGE_ERR;
		return RANGE_BASE;
	case DW_RLE_startx_endx:
		if (!get_uleb(q, end, &idx) || !addrx(d, u, idx, lo, err) ||
		    !get_uleb(q, end, &idx) || !addrx(d, u, idx, hi, err))
			return RANGE_ERR;
		return RANGE_PAIR;
	case DW_RLE_startx_length:
		if (!get_uleb(q, end, &idx) || !addrx(d, u, idx, lo, err) || !get_uleb(q, end, &b))
			return RANGE_ERR;
		*hi = *lo + b;
		return RANGE_PAIR;
	case DW_RLE_offset_pair:
		if (!get_uleb(q, end, &a) || !get_uleb(q, end, &b))
			return RANGE_END;
		*lo = a + *base;
		*hi = b + *base;
		return RANGE_PAIR;
	case DW_RLE_base_address:
		if ((size_t)(end - *q) < w)
			return RANGE_END;
		*base = get_le(*q, w);
		*q += w;
		return RANGE_BASE;
	case DW_RLE_start_end:
		if ((size_t)(end - *q) < 2u * w)
			return RANGE_END;
		*lo = get_le(*q, w);
		*hi = get_le(*q + w, w);
		*q += 2 * w;
		return RANGE_PAIR;
	case DW_RLE_start_length:
		if ((size_t)(end - *q) < w)
			return RANGE_END;
		*lo = get_le(*q, w);
		*q += w;
		if (!get_uleb(q, end, &b))
			return RANGE_END;
		*hi = *lo + b;
		return RANGE_PAIR;
	default:
		return RANGE_END;
	}
}

int elfio_dwarf_unit_ranges(struct elfio_dwarf *d, int (*fn)(void *ctx, uint64_t lo, uint64_t hi),
			    void *ctx)
{
	const struct unit *u = &d->u;
	uint64_t lo, hi, base, pos;
	int err = 0, r;

	if (!u->die_ok)
		return 0;
	if ((r = unit_pc_range(d, u, &lo, &hi)))
		return r < 0 ? r : fn(ctx, lo, hi);
	if (!u->a[A_RANGES].present)
		return 0;
	enum dsec_id id = u->version < 5 ? S_RANGES : S_RNGLISTS;
	base = cu_base(d, u, &err);
	if (err || !ranges_start(d, u, id, &pos, &err))
		return err;
	unsigned int w = u->addr_size;
	if (w != 4 && w != 8)
		return 0;
	for (;;) {
		size_t avail;
		const uint8_t *p = dsec_at(d, id, pos, 64, &avail, &err), *q = p;
		enum range_step s;

		if (!p)
			return err;
		if (id == S_RANGES)
			s = ranges_entry(p, avail, w, &q, &base, &lo, &hi);
		else
			s = rnglists_entry(d, u, p, p + avail, w, &q, &base, &lo, &hi, &err);
		if (s == RANGE_END)
			return 0;
		if (s == RANGE_ERR)
			return err;
		pos += (uint64_t)(q - p);
		if (s == RANGE_PAIR && (r = fn(ctx, lo, hi)))
			return r;
	}
}

/* --- Address to unit (audit) ---------------------------------------------------- */

static int cmp_arange(const void *x, const void *y)
{
	const struct arange *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	/* libdw sorts them in the order read, with glibc's merge sort (stable) */
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/*
 * Each set names its unit by an offset, which libdw resolves to the unit
 * holding it, walking the unit headers: the same, with the headers walked
 * once up to the largest offset named.  0, or -ENOMEM; an offset no unit
 * holds leaves the table unusable.
 */
static int resolve_aranges(struct elfio_dwarf *d)
{
	uint64_t top = 0, off = 0;
	struct span { uint64_t lo, hi; } *v = NULL;
	size_t n = 0, cap = 0;
	struct unit u;
	int ret = 0;

	for (size_t i = 0; i < d->nar; i++)
		if (d->ar[i].unit > top)
			top = d->ar[i].unit;
	/* libdw cannot intern a unit of an unknown version: the walk ends there */
	while (off <= top && (ret = read_header(d, off, &u)) == 1) {
		if (elfio_grow(&v, &cap, n + 1, sizeof(*v))) {
			elfio_free(v);
			elfio_err(d->e, "out of memory for %zu DWARF unit headers", n + 1);
			return -ENOMEM;
		}
		v[n++] = (struct span){ u.off, u.end };
		off = u.next;
	}
	if (ret < 0) {
		elfio_free(v);
		return ret;
	}
	for (size_t i = 0; i < d->nar; i++) {
		uint64_t at = d->ar[i].unit;	/* libdw: the unit holding it */
		size_t lo = BOUND_BY(n, m, v[m].hi, at, true);
		if (lo == n || at < v[lo].lo) {
			elfio_free(v);
			return 0;	/* unusable, as libdw's whole table is */
		}
		d->ar[i].unit = v[lo].lo;
	}
	elfio_free(v);
	qsort(d->ar, d->nar, sizeof(*d->ar), cmp_arange);
	d->ar_state = 1;
	return 0;
}

/*
 * .debug_aranges, as libdw's dwarf_getaranges (0.188) reads it: a set's
 * length is checked only for its escape codes, its ranges run to the first
 * (0, 0), the next set starts right after; any malformed set, or one naming
 * an offset no unit holds, makes the whole table unusable.  0 or -ENOMEM.
 */
static int read_aranges(struct elfio_dwarf *d)
{
	const uint64_t size = d->s[S_ARANGES].size;
	uint64_t pos = 0;
	size_t cap = 0, avail;
	int err = 0;

	d->ar_state = -1;
	if (!d->s[S_ARANGES].present)
		return 0;
	while (pos < size) {
		const uint8_t *p = dsec_at(d, S_ARANGES, pos, 32, &avail, &err), *q, *end;
		if (!p)
			return err;
		end = p + avail;
		if (avail < 4)
			return 0;
		uint64_t len = get_le(p, 4);
		unsigned int osz = 4;
		q = p + 4;
		if (len == 0xffffffff) {
			if (end - q < 8)
				return 0;
			q += 8;
			osz = 8;
		} else if (len >= 0xfffffff0) {
			return 0;
		}
		if (end - q < 2 || get_le(q, 2) != 2)
			return 0;
		q += 2;
		if ((size_t)(end - q) < osz)
			return 0;
		uint64_t info = get_le(q, osz);
		q += osz;
		/* an offset into .debug_info with room for 4 bytes */
		if (!d->s[S_INFO].present || d->s[S_INFO].size < 4 ||
		    info > d->s[S_INFO].size - 4)
			return 0;
		if (end - q < 2)
			return 0;
		unsigned int asz = q[0], seg = q[1];
		q += 2;
		if ((asz != 4 && asz != 8) || seg)
			return 0;
		uint64_t at = pos + (uint64_t)(q - p), tw = 2 * asz;
		at += (tw - (at - pos) % tw) % tw;
		for (;;) {
			p = dsec_at(d, S_ARANGES, at, tw, &avail, &err);
			if (!p)
				return err;
			if (avail < tw)
				return 0;
			uint64_t a = get_le(p, asz), l = get_le(p + asz, asz);
			at += tw;
			if (!a && !l)
				break;
			if (elfio_grow(&d->ar, &cap, d->nar + 1, sizeof(*d->ar))) {
				elfio_err(d->e, "out of memory for %zu DWARF address ranges",
					  d->nar + 1);
				return -ENOMEM;
			}
			d->ar[d->nar] = (struct arange){ a, l, info, d->nar };
			d->nar++;
		}
		pos = at;
	}
	if (!d->nar)
		return 0;
	return resolve_aranges(d);
}

/* libdw's dwarf_getarange_addr: a binary search that also takes a range's first address. */
static const struct arange *arange_at(const struct elfio_dwarf *d, uint64_t addr)
{
	size_t l = 0, u = d->nar;

	while (l < u) {
		size_t idx = (l + u) / 2;
		if (addr < d->ar[idx].addr)
			u = idx;
		else if (addr > d->ar[idx].addr && addr - d->ar[idx].addr >= d->ar[idx].len)
			l = idx + 1;
		else
			return &d->ar[idx];
	}
	return NULL;
}

/* The name and producer of the unit at off, read once (strings ours): 0, -ENOMEM. */
static int unit_strings(struct elfio_dwarf *d, uint64_t off, struct cu_cache *c)
{
	struct unit u;
	int err = 0, ret;
	const char *s;

	memset(c, 0, sizeof(*c));
	c->unit = off;
	ret = load_unit(d, off, &u);
	if (ret <= 0 || !u.die_ok)
		return ret;
	s = formstring(d, &u, &u.a[A_NAME], &err);
	if (!err && s && !(c->name = elfio_strdup(s)))
		err = -ENOMEM;
	s = err ? NULL : formstring(d, &u, &u.a[A_PRODUCER], &err);
	if (!err && s && !(c->producer = elfio_strdup(s)))
		err = -ENOMEM;
	if (err) {
		elfio_free(c->name);
		elfio_free(c->producer);
		memset(c, 0, sizeof(*c));
		elfio_err(d->e, "out of memory for a DWARF unit's name and producer");
	}
	return err;
}

/* ET_REL: is there exactly one unit?  Its strings then.  0, or -ENOMEM. */
static int find_single(struct elfio_dwarf *d)
{
	struct unit u, v;
	int ret;

	d->single = 0;
	ret = load_unit(d, 0, &u);
	if (ret <= 0 || !u.die_ok)
		return ret < 0 ? ret : 0;
	ret = read_header(d, u.next, &v);
	if (ret != 0)
		return ret < 0 ? ret : 0;
	if ((ret = unit_strings(d, 0, &d->single_cu)))
		return ret;
	d->single = 1;
	return 0;
}

/* The unit whose range holds addr, as dwarf_addrdie finds it: its strings, or NULL. */
static int unit_at(struct elfio_dwarf *d, uint64_t addr, const struct cu_cache **out)
{
	const struct arange *ar;
	size_t lo;
	int ret;

	*out = NULL;
	if (d->ar_state == 0 && (ret = read_aranges(d)))
		return ret;
	ar = d->ar_state > 0 ? arange_at(d, addr) : NULL;
	if (!ar)
		return 0;
	lo = BOUND(d->cache, d->ncache, unit, ar->unit, false);
	if (lo == d->ncache || d->cache[lo].unit != ar->unit) {
		struct cu_cache nc;
		if ((ret = unit_strings(d, ar->unit, &nc)))
			return ret;
		if (elfio_grow(&d->cache, &d->cache_cap, d->ncache + 1, sizeof(*d->cache))) {
			elfio_free(nc.name);
			elfio_free(nc.producer);
			elfio_err(d->e, "out of memory for %zu DWARF units' names", d->ncache + 1);
			return -ENOMEM;
		}
		memmove(&d->cache[lo + 1], &d->cache[lo], (d->ncache - lo) * sizeof(*d->cache));
		d->cache[lo] = nc;
		d->ncache++;
	}
	*out = &d->cache[lo];
	return 0;
}

int elfio_dwarf_cu(struct elfio_dwarf *d, struct elfio *e, uint64_t addr, const char **name,
		   const char **producer)
{
	const struct cu_cache *c = NULL;
	int ret;

	*name = *producer = NULL;
	if (!d)
		return 1;
	if (elfio_is_rel(e)) {
		if (d->single < 0 && (ret = find_single(d)))
			return ret;
		if (d->single == 1)
			c = &d->single_cu;
	} else if ((ret = unit_at(d, addr, &c))) {
		return ret;
	}
	if (!c || (!c->name && !c->producer))
		return 1;
	*name = c->name;
	*producer = c->producer;
	return 0;
}
