// SPDX-License-Identifier: GPL-2.0-only
/*
 * repad.c - give every arm64 and riscv64 CALL_OPS ops literal of an object
 * its 8-byte alignment before the final link.
 *
 * Strategy: with -fpatchable-function-entry=4,2 the two NOPs before each
 * function are the ops literal, which must be 8-byte aligned.  GCC ignores
 * -falign-functions under -Os and for cold code, and leaves the text section
 * 4-byte aligned, so the literal's alignment is left to chance.  repad is a
 * plan, a map and a rewrite, on the object elfio has open.
 *
 * The plan: where padding goes.  record_scan() finds the literals; every
 * text section holding one gets sh_addralign 8 and, walking its literals in
 * increasing offset order, one 4-byte NOP in front of each literal whose
 * offset (counting the NOPs inserted so far) is 4 mod 8.  An insertion
 * point always lies between two functions, so no function grows.
 *
 * riscv64 (=8,4 with C: four c.nop; =4,2 without: two nop) is different.
 * The literal may sit at 2, 4 or 6 mod 8, so each point has its own
 * pad size (g->pads, prefix sums in g->cum).  A section whose relocations
 * hold an R_RISCV_RELAX or R_RISCV_ALIGN is relaxed by the linker, which
 * deletes bytes there and so undoes any alignment made by padding alone;
 * in such a section every literal behind the first of them gets what GNU as
 * emits for `.balign 8`: 8 - (2 with RVC in e_flags, else 4) bytes of NOP
 * and an R_RISCV_ALIGN (symbol 0, addend = that size) at their start, which
 * the linker shrinks to what the alignment needs (also under --no-relax).
 * A literal that an existing R_RISCV_ALIGN already pads up to is left
 * alone, so a second run adds nothing; the new relocations are merged in
 * offset order without splitting R_RISCV_RELAX pairs.
 *
 * DWARF quantities that the assembler resolved as label differences inside
 * a section are planned by repad_dwarf.c (dwarf_fixups()): line-program
 * address advances, a unit's DW_AT_high_pc length, .debug_aranges lengths
 * and the offset pairs of .debug_rnglists and .debug_loclists (objects with
 * one unit).  .debug_line, .debug_rnglists and .debug_loclists may need
 * more bytes themselves, and get insertion points of their own.  riscv64
 * objects built with relaxation relocate all of these, and are left to the
 * linker.
 *
 * The map: how every offset moves.  Everything behind an insertion point
 * moves by the padding at or before it (map_offset(); map_end() for the end
 * of a range, map_target() for what a relocation points to):
 *  - symbol values, and the sizes of symbols that strictly span a point;
 *  - r_offset of the section's own relocations;
 *  - addends of relocations anywhere whose symbol is defined in the section
 *    (`.text + 0x54` in __patchable_function_entries, .eh_frame, .debug_*,
 *    function-pointer tables): the new addend is map(V + A) - map(V).
 *    Relocations from .debug_* sections to exactly an insertion point name
 *    the end of the function before it;
 *  - PC-relative instructions that the assembler resolved inside the section
 *    with no relocation (calls between static functions): B, BL, B.cond,
 *    CBZ/CBNZ, TBZ/TBNZ, ADR, LDR literal; riscv64 branches, jal, c.j,
 *    c.beqz/c.bnez and auipc + %pcrel_lo pairs (LLVM resolves them under
 *    -mno-relax; GNU as keeps relocations).  Their immediates are
 *    re-encoded, or we refuse when the new distance does not fit.  An ADRP
 *    always carries a relocation in an object; an unrelocated one is
 *    refused.  Words in data regions of a text section (`$d` mapping
 *    symbols) are not decoded; riscv64 data that would lose the alignment
 *    of its offset (where no R_RISCV_ALIGN keeps it) is refused.
 * The linker moves symbols as it relaxes but not addends and not resolved
 * instructions, so in a section it relaxes we refuse an addend (`.text + N`)
 * or a resolved branch that crosses our padding.  R_RISCV_ADD/SUB/SET and
 * PCREL_LO12 relocations name local labels, whose values move like any
 * symbol's.
 *
 * The rewrite: the new contents of every section that changes (grown text
 * with its NOPs and re-encoded instructions, moved relocations with the new
 * R_RISCV_ALIGNs, the symbol table, the DWARF) go to elfio's writer
 * (elfio_rw_set_data(), a raised alignment elfio_rw_set_shdr()), which has
 * libelf lay the object out anew and writes it atomically: an ET_REL has
 * no program headers, and a grown section moves everything after it.
 * The input is read through elfio alone (its section headers, symbols,
 * relocations and section bytes, from its open handle), as the file says
 * it: a section that elfio or libdw decompressed in place while the plan
 * was made is written back as it was (keep_as_in_file()).  An archive's
 * member is repadded from memory into memory (repad_member()).
 *
 * What is instruction knowledge is asked of arch/ (arch.h): the NOP unit
 * for the object's e_flags and the NOP bytes (nop_unit, encode_nops), the
 * instruction lengths and the PC-relative references with their limits
 * (insn_len, pcrel_decode, pcrel_encode), where an R_RISCV_ALIGN pads to
 * (align_target) and what `.balign 8` emits (align_padding).  This file
 * walks sections, mapping symbols and relocations, and moves offsets.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "elfio/elfio.h"
#include "recordsites/recordsites.h"
#include "rewriter/repad_dwarf.h"
#include "rewriter/rewriter.h"

#define REPAD_MAX_ALIGN	0x1000000	/* 16 MiB: larger section alignments are refused */
#define REPAD_ALIGN	8	/* natural alignment of the 8-byte ops literal */

/*
 * What happens to one section of the input: its part of the plan, and
 * (buf) its new contents.  The arrays grow with elfio_grow() and, buf
 * too, are elfio_free()d, as are cum and bucket.
 */
struct grow {
	uint64_t *points;	/* old offsets of the insertion points, increasing */
	size_t n, cap;
	uint64_t *pads;		/* bytes inserted at each point (n of them) */
	size_t npads, cappads;
	uint64_t *cum;		/* cum[k]: bytes inserted before point k; cum[n]: all */
	size_t *bucket;		/* bucket[b]: first point at or after b << bshift (nbuckets + 1) */
	size_t nbuckets;
	unsigned int bshift;
	bool relax;		/* the linker may relax it: points get an align_reloc */
	uint64_t first_relax;	/* lowest offset of a relax_reloc or align_reloc */
	uint64_t *aligned;	/* offsets an align_reloc pads up to (>= 8), sorted */
	size_t naligned, capaligned;
	uint64_t *maps;		/* mapping symbols, see mapping_symbols() */
	size_t nmaps, capmaps;
	uint64_t *sites;	/* old offsets of its CALL_OPS literals, increasing */
	size_t nsites, capsites;
	uint64_t *relocated;	/* old r_offsets of its own relocations, sorted */
	size_t nrelocated, caprelocated;
	bool realign;		/* sh_addralign below REPAD_ALIGN */
	uint8_t *buf;		/* new contents (ours, handed to elfio_rw until the commit),
				   NULL if unchanged */
	size_t size;
};

static int push(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (elfio_grow(v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = x;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether the sorted v[0..n) holds x. */
static bool sorted_has(const uint64_t *v, size_t n, uint64_t x)
{
	size_t k = bound(v, n, sizeof(*v), 0, x, false);

	return k < n && v[k] == x;
}

/* A copy of n bytes that we may change (elfio_free()d, never empty). */
static void *dup_bytes(const void *p, size_t n)
{
	void *q = elfio_calloc(n ? n : 1, 1);

	if (q && n)
		memcpy(q, p, n);
	return q;
}

static void grow_free(struct grow *g)
{
	elfio_free(g->points);
	elfio_free(g->pads);
	elfio_free(g->aligned);
	elfio_free(g->maps);
	elfio_free(g->sites);
	elfio_free(g->relocated);
	elfio_free(g->cum);
	elfio_free(g->bucket);
	elfio_free(g->buf);
}

struct repad {
	const char *path;
	struct elfio *e;
	const struct arch_ops *arch;
	size_t nsec;
	/*
	 * The section headers as the file has them, taken when elfio has
	 * validated them and nothing is decompressed yet: elfio_section_data()
	 * (a symbol table's strings) and libdw inflate an SHF_COMPRESSED
	 * section in elfio's handle, whose header then says so.  What repad
	 * reads a section as, and refuses, follows the file.
	 */
	Elf64_Shdr *shdr;
	struct grow *g;		/* one per section index */
	const struct elfio_symtab *symtab;	/* elfio's main symbol table, checked */
	size_t symtab_index;
	struct repad_report *rep;
	unsigned int unit;	/* NOP unit for e_flags: arm64 4, riscv 2 with RVC, else 4 */
	struct arch_align_pad apad;	/* `.balign 8` where the linker relaxes (align_padding) */
};

/*
 * Section i's bytes as a rewrite keeps them (elfio_section_bytes): a
 * relocation or symbol section whose size is not a whole number of
 * entries has none, an SHF_COMPRESSED one is the compressed bytes unless
 * something inflated it in place.  Valid until elfio_close().
 */
static bool in_data(struct repad *rp, size_t i, const uint8_t **data, size_t *size)
{
	return elfio_section_bytes(rp->e, elfio_section(rp->e, i), data, size);
}

/* What repad reads of a symbol: st_value, st_size and the type. */
struct rsym {
	uint64_t value, size;
	unsigned char type;
};

/*
 * Symbol i of the main table (elfio checked it whole, and every relocation
 * that names one: i < count) and its section, through SHT_SYMTAB_SHNDX;
 * 0 if it is in none.
 */
static void get_sym(const struct repad *rp, size_t i, struct rsym *y, size_t *shndx)
{
	const struct elfio_symbol *s = &rp->symtab->syms[i];

	*shndx = s->in_section && s->shndx < rp->nsec ? s->shndx : 0;
	y->value = elfio_symbol_value(rp->e, s);
	y->size = s->size;
	y->type = s->type;
}

/* Relocation section k's entries (elfio's one reader), or an error printed. */
static int relocs_of(struct repad *rp, size_t k, struct elfio_relocs *rl)
{
	return elfio_relocs(rp->e, elfio_section(rp->e, k), rl) ? -EINVAL : 0;
}

/* --- The map ---------------------------------------------------------------- */

/*
 * Number of points p with p < x (strict) or p <= x.  Points are offsets in
 * a section, never negative, so none lies below a negative x (an addend's
 * target before the section's start).
 */
static size_t points_before(const struct grow *g, int64_t x, bool strict)
{
	uint64_t b = (uint64_t)x >> g->bshift;
	size_t lo, hi;

	if (x < 0)
		return 0;
	if (b >= g->nbuckets)
		return g->n;	/* behind the last point */
	/* every point before lo is below x, every one from hi on above it */
	lo = g->bucket[b];
	hi = g->bucket[b + 1];
	return lo + bound(g->points + lo, hi - lo, sizeof(*g->points), 0, (uint64_t)x,
				!strict);
}

/* New offset of old offset x: what sits at a point moves behind the padding. */
static int64_t map_offset(const struct grow *g, int64_t x)
{
	return g->n ? x + (int64_t)g->cum[points_before(g, x, false)] : x;
}

/* New end of an old range ending (exclusive) at x. */
static int64_t map_end(const struct grow *g, int64_t x)
{
	return g->n ? x + (int64_t)g->cum[points_before(g, x, true)] : x;
}

/* A non-SHF_ALLOC .debug_* section: what it says about code ends at a point too. */
static bool is_debug_section(const struct repad *rp, size_t i)
{
	const struct elfio_section *sec = elfio_section(rp->e, i);

	return sec && !(sec->shdr.sh_flags & SHF_ALLOC) && sec->name &&
	       !strncmp(sec->name, ".debug_", 7);
}

/*
 * New offset of a relocation's target t in section sx.  A padded text
 * section moves what sits at an insertion point behind the padding: the
 * literal and the function after it, which __patchable_function_entries,
 * .eh_frame and code point to.  In DWARF a target at a point is as often
 * the end of the previous function (the DW_AT_call_return_pc of a tail
 * call, the end of a DWARF 4 range) as the start of the next one, and
 * what starts there (the literal) has no DWARF of its own, so the debug
 * sections map it as an end: the padding goes to the function before.
 * Not in a riscv64 section the linker relaxes: there the DWARF names
 * local labels, which move with the symbols, and the linker owns the
 * padding (R_RISCV_ALIGN).
 */
static int64_t map_target(const struct repad *rp, size_t sx, int64_t t, bool debug)
{
	const struct grow *g = &rp->g[sx];

	return debug && g->nsites && !g->relax ? map_end(g, t) : map_offset(g, t);
}

/* --- The plan --------------------------------------------------------------- */

static int add_point(struct grow *g, uint64_t off, uint64_t pad)
{
	if (push(&g->points, &g->n, &g->cap, off) ||
	    push(&g->pads, &g->npads, &g->cappads, pad))
		return -ENOMEM;
	return 0;
}

/*
 * Prefix sums of the pads, once the points are chosen, and the bucket
 * index that map_offset() and map_end() start from: every symbol,
 * relocation and DWARF address of the section is mapped (1.7 M lookups on
 * the 40,000-function bench object), and a plain binary search over the
 * points took 17 steps each.  Buckets of 2^bshift bytes, about one point
 * each, leave a step or two.
 */
static int finish_points(struct grow *g)
{
	uint64_t span;
	size_t k = 0;

	if (!g->n)
		return 0;
	g->cum = elfio_calloc(g->n + 1, sizeof(*g->cum));
	if (!g->cum)
		return -ENOMEM;
	g->cum[0] = 0;
	for (k = 0; k < g->n; k++)
		g->cum[k + 1] = g->cum[k] + g->pads[k];
	span = g->points[g->n - 1] / g->n;
	g->bshift = 0;
	while (g->bshift < 63 && (2ull << g->bshift) <= span)
		g->bshift++;
	g->nbuckets = (size_t)(g->points[g->n - 1] >> g->bshift) + 1;
	g->bucket = elfio_calloc(g->nbuckets + 1, sizeof(*g->bucket));
	if (!g->bucket)
		return -ENOMEM;
	k = 0;
	for (size_t b = 0; b <= g->nbuckets; b++) {
		while (k < g->n && (g->points[k] >> g->bshift) < b)
			k++;
		g->bucket[b] = k;
	}
	return 0;
}

/*
 * riscv64: which sections the linker may relax (any R_RISCV_RELAX or
 * R_RISCV_ALIGN in their relocations), the lowest such offset, and the
 * offsets that an R_RISCV_ALIGN of at least REPAD_ALIGN pads up to.
 */
static int scan_relax(struct repad *rp)
{
	for (size_t i = 0; i < rp->nsec; i++)
		rp->g[i].first_relax = UINT64_MAX;
	for (size_t k = 1; k < rp->nsec; k++) {
		const Elf64_Shdr *sh = &rp->shdr[k];
		struct elfio_relocs rl;
		struct grow *g;

		if (sh->sh_type != SHT_RELA || !sh->sh_info || sh->sh_info >= rp->nsec)
			continue;
		g = &rp->g[sh->sh_info];
		if (relocs_of(rp, k, &rl))
			return -EINVAL;
		for (size_t i = 0; i < rl.count; i++) {
			struct elfio_rela ra = elfio_relocs_get(&rl, i);
			unsigned int type = ra.type;
			uint64_t to, al;

			if (type != rp->arch->relax_reloc && type != rp->arch->align_reloc)
				continue;
			g->relax = true;
			if (ra.offset < g->first_relax)
				g->first_relax = ra.offset;
			if (type != rp->arch->align_reloc ||
			    rp->arch->align_target(ra.offset, ra.addend, &to, &al))
				continue;
			if (al >= REPAD_ALIGN && push(&g->aligned, &g->naligned, &g->capaligned, to))
				return -ENOMEM;
		}
	}
	for (size_t i = 0; i < rp->nsec; i++)
		if (rp->g[i].naligned)
			qsort(rp->g[i].aligned, rp->g[i].naligned, sizeof(uint64_t), cmp_u64);
	return 0;
}

/* The CALL_OPS literals of each section (record_scan()), and the insertion points. */
static int choose_points(struct repad *rp)
{
	struct record_options o;
	struct record *r = NULL;
	int ret;

	record_options_init(&o);
	o.cap = ARCH_CAP_REPAD;
	ret = record_scan(rp->e, &o, &r);
	if (ret)
		return ret;
	for (size_t i = 0; i < r->nsites; i++) {
		const struct site *s = &r->sites[i];
		struct elfio_section *sec;
		struct grow *g;

		if (s->flavour != FLAVOUR_CALL_OPS)
			continue;
		sec = elfio_addr_to_sec(rp->e, s->addr);
		if (!sec || sec->index >= rp->nsec) {
			elfio_error(rp->path, "site %#" PRIx64 " is in no section", s->addr);
			ret = -EINVAL;
			goto out;
		}
		g = &rp->g[sec->index];
		ret = push(&g->sites, &g->nsites, &g->capsites, s->addr - sec->addr);
		if (ret)
			goto out;
	}
	for (size_t i = 1; i < rp->nsec; i++) {
		struct grow *g = &rp->g[i];
		struct elfio_section *sec = elfio_section(rp->e, i);
		uint64_t shift = 0;

		if (!g->nsites)
			continue;
		g->realign = sec->shdr.sh_addralign < REPAD_ALIGN;
		qsort(g->sites, g->nsites, sizeof(*g->sites), cmp_u64);
		for (size_t k = 0; k < g->nsites; k++) {
			uint64_t off = g->sites[k], mis = (off + shift) % REPAD_ALIGN, pad;

			if (k && off == g->sites[k - 1])
				continue;
			if (g->relax) {
				/*
				 * The linker deletes bytes at every relaxation and
				 * alignment relocation (R_RISCV_RELAX, R_RISCV_ALIGN),
				 * so the offset in the object says nothing past the
				 * first of them: only an alignment relocation that pads
				 * up to the literal keeps it aligned.
				 */
				if (sorted_has(g->aligned, g->naligned, off))
					continue;
				if (!shift && off <= g->first_relax && !mis)
					continue;
				if (off % rp->unit) {
					elfio_error(rp->path, "%s+%#" PRIx64 ": ops literal is not "
						    "aligned to the object's %u-byte NOP unit",
						    sec->name, off, rp->unit);
					ret = -EINVAL;
					goto out;
				}
				pad = rp->apad.size;
			} else {
				/* the padding is whole NOPs */
				if (mis % rp->unit) {
					elfio_error(rp->path, "%s+%#" PRIx64 ": ops literal is not %u-byte aligned",
						    sec->name, off, rp->unit);
					ret = -EINVAL;
					goto out;
				}
				if (!mis)
					continue;
				pad = REPAD_ALIGN - mis;
			}
			ret = add_point(g, off, pad);
			if (ret)
				goto out;
			shift += pad;
		}
		ret = finish_points(g);
		if (ret)
			goto out;
	}
out:
	record_free(r);
	return ret;
}

static bool is_relocated(const struct grow *g, uint64_t off)
{
	return sorted_has(g->relocated, g->nrelocated, off);
}

static int load_relocated(struct repad *rp)
{
	for (size_t k = 1; k < rp->nsec; k++) {
		const Elf64_Shdr *sh = &rp->shdr[k];
		struct elfio_relocs rl;
		struct grow *g;

		if (sh->sh_type != SHT_RELA && sh->sh_type != SHT_REL)
			continue;
		if (sh->sh_info >= rp->nsec || !rp->g[sh->sh_info].n)
			continue;
		if (sh->sh_type == SHT_REL) {
			elfio_error(rp->path, "SHT_REL relocations for a section to grow are not supported");
			return -ENOTSUP;
		}
		g = &rp->g[sh->sh_info];
		if (relocs_of(rp, k, &rl))
			return -EINVAL;
		for (size_t i = 0; i < rl.count; i++)
			if (push(&g->relocated, &g->nrelocated, &g->caprelocated,
				 elfio_relocs_get(&rl, i).offset))
				return -ENOMEM;
		qsort(g->relocated, g->nrelocated, sizeof(*g->relocated), cmp_u64);
	}
	return 0;
}

/*
 * Mapping symbols (arch_ops.mapping_symbol: AAELF64 `$x`, `$d`, and the
 * architecture's own forms) of every section that grows, as old offsets with
 * bit 0 set for `$d`, sorted, in g->maps.  One pass over the symbols; the
 * names are elfio's (it checked every one when it loaded the table).
 */
static int mapping_symbols(struct repad *rp)
{
	size_t nsym = rp->symtab ? rp->symtab->count : 0;

	for (size_t i = 1; i < nsym; i++) {
		struct rsym sym;
		size_t sx;
		const char *name;
		struct grow *g;
		int kind;

		get_sym(rp, i, &sym, &sx);
		if (!sx || !rp->g[sx].n || sym.type != STT_NOTYPE)
			continue;
		g = &rp->g[sx];
		name = rp->symtab->syms[i].name;
		kind = name ? rp->arch->mapping_symbol(name) : ARCH_MAP_NONE;
		if (kind == ARCH_MAP_NONE)
			continue;
		/* values are 2-aligned in text, so bit 0 is free */
		if (push(&g->maps, &g->nmaps, &g->capmaps,
			 (sym.value & ~1ULL) | (kind == ARCH_MAP_DATA)))
			return -ENOMEM;
	}
	for (size_t i = 0; i < rp->nsec; i++)
		if (rp->g[i].nmaps)
			qsort(rp->g[i].maps, rp->g[i].nmaps, sizeof(uint64_t), cmp_u64);
	return 0;
}

/* repad_dwarf.c's view of the sections. */
static int64_t dw_map(const void *ctx, size_t sec, int64_t x, bool end)
{
	const struct repad *rp = ctx;

	return end ? map_end(&rp->g[sec], x) : map_offset(&rp->g[sec], x);
}

static bool dw_grows(const void *ctx, size_t sec)
{
	const struct repad *rp = ctx;

	/* riscv64 relaxed: the toolchain relocates its DWARF, see map_target() */
	return sec < rp->nsec && rp->g[sec].n && rp->g[sec].nsites && !rp->g[sec].relax;
}

static int cmp_dw_rel(const void *a, const void *b)
{
	const struct repad_dw_rel *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/*
 * The relocations of debug section idx, resolved as fix_relas() will, sorted
 * (elfio_free()d by the caller).
 */
static int dw_rels(struct repad *rp, size_t idx, struct repad_dw_rel **out, size_t *nout)
{
	struct repad_dw_rel *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t k = 1; k < rp->nsec; k++) {
		const Elf64_Shdr *sh = &rp->shdr[k];
		struct elfio_relocs rl;

		if (sh->sh_type != SHT_RELA || sh->sh_info != idx ||
		    sh->sh_link != rp->symtab_index || !rp->symtab_index)
			continue;
		if (relocs_of(rp, k, &rl))
			goto bad;
		for (size_t i = 0; i < rl.count; i++) {
			struct elfio_rela ra = elfio_relocs_get(&rl, i);
			struct rsym sym = { 0 };
			size_t sx = 0, si = ra.sym;
			struct repad_dw_rel r = { 0 };

			if (si)
				get_sym(rp, si, &sym, &sx);
			r.offset = ra.offset;
			if (si && sx && sym.value <= INT64_MAX / 4 &&
			    ra.addend <= INT64_MAX / 4 && ra.addend >= -(INT64_MAX / 4)) {
				int64_t t = (int64_t)sym.value + ra.addend;

				r.sec = sx;
				r.old = t;
				r.new = map_target(rp, sx, t, true);
			}
			if (elfio_grow(&v, &cap, n + 1, sizeof(*v))) {
				elfio_free(v);
				return -ENOMEM;
			}
			v[n++] = r;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_dw_rel);
	*out = v;
	*nout = n;
	return 0;
bad:
	elfio_free(v);
	return -EINVAL;
}

/* Section index of the non-alloc, uncompressed PROGBITS section `name`; 0 if none. */
static size_t dw_section(const struct repad *rp, const char *name)
{
	for (size_t i = 1; i < rp->nsec; i++) {
		const struct elfio_section *sec = elfio_section(rp->e, i);

		if (sec && sec->name && !strcmp(sec->name, name) &&
		    sec->shdr.sh_type == SHT_PROGBITS &&
		    !(sec->shdr.sh_flags & (SHF_ALLOC | SHF_COMPRESSED)))
			return i;
	}
	return 0;
}

/*
 * The DWARF that the assembler resolved without relocations
 * (repad_dwarf.c): .debug_line, .debug_rnglists and .debug_loclists may
 * grow (their own insertion points, like a text section's; relocations in
 * them and DW_AT_stmt_list/DW_AT_ranges/DW_AT_location addends move with
 * them), .debug_info and .debug_aranges are patched in place.
 * Their new contents go to g->buf, which rewrite_section() takes as they are.
 */
static int dwarf_fixups(struct repad *rp)
{
	static const char *const names[] = { ".debug_info", ".debug_line", ".debug_aranges",
					     ".debug_rnglists", ".debug_loclists" };
	size_t abbrev = dw_section(rp, ".debug_abbrev"), units = 0;
	struct repad_dw_rel cu_low = { 0 };
	struct repad_dw info = { 0 };	/* what .debug_info said about the location lists */
	bool any = false;
	int ret = 0;

	for (size_t i = 1; i < rp->nsec; i++)
		any |= dw_grows(rp, i);
	if (!any)
		return 0;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]) && !ret; k++) {
		size_t idx = dw_section(rp, names[k]);
		struct repad_dw dw = { .path = rp->path, .name = names[k], .ctx = rp,
				       .map = dw_map, .grows = dw_grows, .units = units,
				       .cu_low = cu_low, .loc_sec = info.loc_sec,
				       .loc_starts = info.loc_starts,
				       .nloc_starts = info.nloc_starts, .loc_bad = info.loc_bad };
		struct repad_dw_rel *rel = NULL;
		struct repad_dw_out o = { 0 };
		struct grow *g;
		const uint8_t *id;
		size_t isize;
		uint8_t *copy = NULL;

		if (!idx)
			continue;
		g = &rp->g[idx];
		/* no bytes for an empty or SHT_NOBITS section: nothing to read */
		if (!in_data(rp, idx, &id, &isize) || !isize || !id || g->n || g->buf)
			continue;
		ret = dw_rels(rp, idx, &rel, &dw.nrel);
		if (ret)
			break;
		dw.rel = rel;
		if (k == 1 || k == 3 || k == 4) {
			/* sections that may grow: their own insertion points */
			if (k == 1)
				ret = repad_dwarf_line(&dw, id, isize, &o);
			else if (k == 3)
				ret = repad_dwarf_rnglists(&dw, id, isize, &o);
			else
				ret = repad_dwarf_loclists(&dw, id, isize, &o);
			for (size_t j = 0; !ret && o.buf && j < o.n; j++)
				ret = add_point(g, o.points[j], o.pads[j]);
			if (!ret && o.buf)
				ret = finish_points(g);
			if (!ret && o.buf) {
				g->buf = o.buf;
				g->size = o.size;
				o.buf = NULL;
			}
		} else {
			copy = dup_bytes(id, isize);
			if (!copy) {
				ret = -ENOMEM;
			} else if (k == 0) {
				const uint8_t *ad = NULL;
				size_t asize = 0;

				dw.loc_sec = dw_section(rp, ".debug_loclists");
				if (abbrev && in_data(rp, abbrev, &ad, &asize) && ad && asize)
					ret = repad_dwarf_info(&dw, copy, isize, ad, asize, abbrev);
				units = dw.units;
				cu_low = dw.cu_low;
				info = dw;	/* takes dw.loc_starts */
			} else {
				ret = repad_dwarf_aranges(&dw, copy, isize);
			}
			if (!ret && dw.fixed) {
				g->buf = copy;
				g->size = isize;
				copy = NULL;
			}
		}
		elfio_free(copy);
		elfio_free(rel);
		repad_dw_out_free(&o);
	}
	elfio_free(info.loc_starts);
	return ret;
}

/* --- The rewrite ------------------------------------------------------------ */

/*
 * Where mapping symbol m takes effect in a walk that steps from
 * instruction to instruction: its offset (bit 0 holds `$d`), rounded up
 * to the instruction alignment.  riscv offsets are even already; an arm64
 * `$d`/`$x` between two word boundaries counts from the next word.
 */
static uint64_t map_at(uint64_t m, uint64_t align)
{
	return ((m & ~1ULL) + align - 1) / align * align;
}

/*
 * Re-encode the PC-relative references of section i that carry no
 * relocation: arm64 B, BL, B.cond, CBZ/CBNZ, TBZ/TBNZ, ADR, LDR literal;
 * riscv64 branches, jal, c.j, c.beqz/c.bnez, auipc and its %pcrel_lo use
 * in the next instruction.  The architecture decodes and re-encodes them
 * (arch_ops.pcrel_decode, pcrel_encode); here they are found, and their
 * targets moved.  An unrelocated arm64 ADRP is refused, as is an auipc
 * without its use next to it, or whose value is read again later.  In a
 * section the linker relaxes, one that crosses an insertion point is
 * refused: the linker deletes part of the padding and would not fix it.
 * Regions under `$d` are not decoded.
 */
static int fix_pcrel(struct repad *rp, size_t i, const uint8_t *old, size_t size,
		     const uint64_t *maps, size_t nmap)
{
	struct grow *g = &rp->g[i];
	const char *name = elfio_section(rp->e, i)->name;
	uint64_t align = rp->arch->insn_align;
	size_t m = 0;
	bool data = false;

	/*
	 * Without relaxation no alignment relocation (riscv64 R_RISCV_ALIGN)
	 * tells the linker about a `.balign` before data in the section: data
	 * (`$d`) must keep the alignment (up to arch_ops.data_align) that its
	 * offset had.
	 */
	for (size_t k = 0; rp->arch->data_align && k < nmap && !g->relax; k++) {
		uint64_t x = maps[k] & ~1ULL, a = rp->arch->data_align;

		if (!(maps[k] & 1))
			continue;
		while (a > 1 && x % a)
			a >>= 1;
		if ((uint64_t)map_offset(g, (int64_t)x) % a) {
			elfio_error(rp->path, "%s+%#" PRIx64 ": data in the section would lose its "
				    "%" PRIu64 "-byte alignment", name, x, a);
			return -ENOTSUP;
		}
	}
	for (uint64_t off = 0, len; off + align <= size; off += len) {
		struct arch_pcrel pc;
		int64_t target, nd;
		int st;

		while (m < nmap && map_at(maps[m], align) <= off)
			data = maps[m++] & 1;
		if (data) {
			len = m < nmap ? map_at(maps[m], align) - off : size - off;
			continue;
		}
		len = rp->arch->insn_len(old + off, size - off);
		if (!len) {
			elfio_error(rp->path, "%s+%#" PRIx64 ": instruction longer than 32 bits",
				    name, off);
			return -ENOTSUP;
		}
		if (m < nmap && map_at(maps[m], align) < off + len) {
			len = map_at(maps[m], align) - off;	/* resynchronise on the mapping symbol */
			continue;
		}
		if (off + len > size)
			break;
		/*
		 * Decode first: most words are not PC-relative, and the search
		 * of the relocated offsets cost more than the decode (callgrind:
		 * 200 M instructions on the 40,000-function bench object).
		 */
		st = rp->arch->pcrel_decode(old + off, size - off, &pc);
		if (st == ARCH_PCREL_NONE || is_relocated(g, off))
			continue;
		if (st == ARCH_PCREL_PAGE) {
			elfio_error(rp->path, "%s+%#" PRIx64 ": %s without a relocation", name, off,
				    pc.name);
			return -ENOTSUP;
		}
		if (st != ARCH_PCREL_OK || (pc.lo_off && is_relocated(g, off + pc.lo_off))) {
			elfio_error(rp->path, "%s+%#" PRIx64 ": %s without a relocation and "
				    "without its %%pcrel_lo use next to it", name, off, pc.name);
			return -ENOTSUP;
		}
		target = (int64_t)off + pc.disp;
		nd = map_offset(g, target) - map_offset(g, (int64_t)off);
		if (nd != pc.disp && (pc.flags & ARCH_PCREL_LIVE)) {
			elfio_error(rp->path, "%s+%#" PRIx64 ": %s without a relocation "
				    "whose value may be used again after its %%pcrel_lo use",
				    name, off, pc.name);
			return -ENOTSUP;
		}
		len = pc.len;
		if (nd == pc.disp)
			continue;
		if (g->relax) {
			elfio_error(rp->path, "%s+%#" PRIx64 ": %s to %s+%#" PRIx64 " has no relocation "
				    "but crosses alignment padding that linker relaxation may shrink",
				    name, off, pc.name, name, (uint64_t)target);
			return -ENOTSUP;
		}
		/* from the old bytes (in pc) to where they now sit */
		if (rp->arch->pcrel_encode(&pc, nd, g->buf + map_offset(g, (int64_t)off))) {
			elfio_error(rp->path, "%s+%#" PRIx64 ": %s to %s+%#" PRIx64
				    ": displacement %" PRId64 " no longer fits", name, off, pc.name,
				    name, (uint64_t)target, nd);
			return -ERANGE;
		}
		rp->rep->branches++;
	}
	return 0;
}

/* Build the grown contents of section i and fix resolved PC-relative words. */
static int grow_text(struct repad *rp, size_t i, const uint8_t *old, size_t size)
{
	struct grow *g = &rp->g[i];
	const char *name = elfio_section(rp->e, i)->name;
	size_t from = 0, to = 0;

	g->size = size + g->cum[g->n];
	g->buf = elfio_calloc(g->size ? g->size : 1, 1);
	if (!g->buf)
		return -ENOMEM;
	for (size_t k = 0; k <= g->n; k++) {
		size_t end = k < g->n ? g->points[k] : size;

		if (end > size) {
			elfio_error(rp->path, "%s: literal past the end of the section", name);
			return -EINVAL;
		}
		memcpy(g->buf + to, old + from, end - from);
		to += end - from;
		from = end;
		if (k < g->n) {
			if (rp->arch->encode_nops(g->buf + to, g->pads[k]))
				return -EINVAL;
			to += g->pads[k];
			rp->rep->functions++;
			rp->rep->bytes += g->pads[k];
		}
	}

	return fix_pcrel(rp, i, old, size, g->maps, g->nmaps);
}

/*
 * riscv64, a section the linker relaxes: each insertion point's padding
 * gets an R_RISCV_ALIGN (symbol 0, addend = the padding's size), as GNU as
 * emits for `.balign 8` (rp->apad, from arch_ops.align_padding), so that
 * the linker keeps what the literal's alignment needs after it has deleted
 * bytes before it.  The first n relocations of rg->buf (already moved) and
 * the new ones are merged in offset order, never between two at the same
 * offset, so R_RISCV_RELAX pairs stay adjacent; rg->buf is replaced.
 */
static int add_align_relocs(struct repad *rp, const struct elfio_section *rsec,
			    const struct grow *g, size_t n, struct grow *rg)
{
	size_t total = n + g->n, k = 0, o = 0, es = rsec->shdr.sh_entsize;
	uint8_t *nv = elfio_calloc(total, es);
	const struct elfio_relocs ov = { .raw = rg->buf, .count = n, .entsize = es };

	if (!nv)
		return -ENOMEM;
	for (size_t i = 0; i <= n; i++) {
		struct elfio_rela r = { 0 };

		if (i < n)
			r = elfio_relocs_get(&ov, i);
		while (k < g->n && (i == n || g->points[k] + g->cum[k] <= r.offset)) {
			/* the addend counts the NOPs it covers: pads[k], rp->apad.size */
			struct elfio_rela a = { .offset = g->points[k] + g->cum[k],
						.type = rp->apad.type,
						.addend = (int64_t)g->pads[k] };

			elfio_reloc_put(rsec, nv, o++, &a);
			k++;
			rp->rep->relocs++;
		}
		if (i < n)
			memcpy(nv + o++ * es, ov.raw + i * es, es);
	}
	elfio_free(rg->buf);
	rg->buf = nv;
	rg->size = total * es;
	return 0;
}

/*
 * The relocations of section idx (header sh), moved, into g->buf: read
 * with elfio's reader (which checked the entry size and every symbol
 * index), the changed ones written back in the file's layout.
 */
static int fix_relas(struct repad *rp, size_t idx, const Elf64_Shdr *sh)
{
	const struct elfio_section *rsec = elfio_section(rp->e, idx);
	struct elfio_relocs rl;
	const struct grow *gt = sh->sh_info < rp->nsec ? &rp->g[sh->sh_info] : NULL;
	bool debug = sh->sh_info < rp->nsec && is_debug_section(rp, sh->sh_info);
	struct grow *rg = &rp->g[idx];

	if (relocs_of(rp, idx, &rl))
		return -EINVAL;
	rg->buf = dup_bytes(rl.raw, rl.count * rl.entsize);
	if (!rg->buf)
		return -ENOMEM;
	rg->size = rl.count * rl.entsize;
	for (size_t i = 0; i < rl.count; i++) {
		struct elfio_rela ra = elfio_relocs_get(&rl, i);
		struct rsym sym;
		size_t sx, si = ra.sym;
		bool changed = false;

		if (gt && gt->n) {
			int64_t no = map_offset(gt, (int64_t)ra.offset);

			changed |= (uint64_t)no != ra.offset;
			ra.offset = (uint64_t)no;
		}
		if (si && rp->symtab && sh->sh_link == rp->symtab_index) {
			get_sym(rp, si, &sym, &sx);
			if (sx && rp->g[sx].n) {
				int64_t v = (int64_t)sym.value, t;

				/* the target may lie outside the section (an end
				   pointer, a negative bias), but not absurdly far */
				if (__builtin_add_overflow(v, ra.addend, &t) ||
				    t > INT64_MAX / 2 || t < INT64_MIN / 2 ||
				    v > INT64_MAX / 2 || v < 0) {
					elfio_error(rp->path, "relocation %zu of section %zu: target "
						    "%#" PRIx64 " %+" PRId64 " is out of range", i, idx,
						    sym.value, ra.addend);
					return -EINVAL;
				}
				int64_t na = map_target(rp, sx, t, debug) - map_offset(&rp->g[sx], v);

				/* the linker moves symbols as it relaxes, never addends */
				if (na != ra.addend && rp->g[sx].relax) {
					elfio_error(rp->path, "relocation %zu in '%s' against %s+%#" PRIx64
						    " crosses alignment padding that linker relaxation "
						    "may shrink", i, elfio_section(rp->e, idx)->name,
						    elfio_section(rp->e, sx)->name, (uint64_t)t);
					return -ENOTSUP;
				}
				changed |= na != ra.addend;
				ra.addend = na;
			}
		}
		if (changed) {
			elfio_reloc_put(rsec, rg->buf, i, &ra);
			rp->rep->relocs++;
		}
	}
	if (gt && gt->n && gt->relax)
		return add_align_relocs(rp, rsec, gt, rl.count, rg);
	return 0;
}

/* The symbol table (its bytes id), its values and sizes moved, into its g->buf. */
static int fix_symtab(struct repad *rp, const uint8_t *id, size_t size)
{
	size_t n = rp->symtab->count;
	struct grow *sg = &rp->g[rp->symtab_index];

	sg->buf = dup_bytes(id, size);
	if (!sg->buf)
		return -ENOMEM;
	sg->size = size;
	for (size_t i = 1; i < n; i++) {
		struct rsym sym;
		size_t sx;
		const struct grow *g;
		int64_t v, nv, ne;

		get_sym(rp, i, &sym, &sx);
		if (!sx || !rp->g[sx].n || sym.type == STT_SECTION)
			continue;
		g = &rp->g[sx];
		uint64_t secsize = elfio_section(rp->e, sx)->shdr.sh_size;
		if (sym.value > secsize || sym.size > secsize - sym.value) {
			elfio_error(rp->path, "symbol %zu lies outside its section %zu ('%s'): value "
				    "%#" PRIx64 ", size %#" PRIx64 ", section size %#" PRIx64, i, sx,
				    elfio_section(rp->e, sx)->name, sym.value, sym.size, secsize);
			return -EINVAL;
		}
		v = (int64_t)sym.value;
		nv = map_offset(g, v);
		ne = sym.size ? map_end(g, v + (int64_t)sym.size) : nv;
		if (nv == v && ne - nv == (int64_t)sym.size)
			continue;
		elfio_symbol_put(sg->buf, i, (uint64_t)nv, (uint64_t)(ne - nv));
		rp->rep->symbols++;
	}
	return 0;
}

/*
 * A section nobody changed, but that elfio (a symbol table's strings) or
 * libdw inflated in place while the plan was made: libelf would write it
 * inflated, under its live header.  Write it as the file has it.
 */
static int keep_as_in_file(struct repad *rp, struct elfio_rw *w, size_t i)
{
	const Elf64_Shdr *live = elfio_rw_shdr(w, i);
	const Elf64_Shdr *sh = &rp->shdr[i];
	size_t len;
	const uint8_t *raw = elfio_raw(rp->e, &len);
	int ret;

	if (!live || !(sh->sh_flags & SHF_COMPRESSED) || (live->sh_flags & SHF_COMPRESSED))
		return 0;
	/* elfio_open() checked that every section lies inside the file */
	if (!raw || sh->sh_offset > len || sh->sh_size > len - sh->sh_offset) {
		elfio_error(rp->path, "section %zu: the file's bytes are not available", i);
		return -EINVAL;
	}
	ret = elfio_rw_set_shdr(w, i, sh);
	return ret ? ret : elfio_rw_set_data(w, i, raw + sh->sh_offset, sh->sh_size);
}

/*
 * Section i's new contents and header, to the writer.  The checks and the
 * choices are made on the file's header (rp->shdr) and libelf's data, in
 * section order, as the output is laid out.
 */
static int rewrite_section(struct repad *rp, struct elfio_rw *w, size_t i)
{
	const Elf64_Shdr *sh = &rp->shdr[i];
	struct grow *g = &rp->g[i];
	const uint8_t *id;
	size_t isize;
	bool has = in_data(rp, i, &id, &isize);
	int ret = 0;

	if ((g->nsites || sh->sh_type == SHT_RELA || i == rp->symtab_index) &&
	    (sh->sh_flags & SHF_COMPRESSED) && (g->n || sh->sh_type != SHT_PROGBITS)) {
		elfio_error(rp->path, "section '%s' is compressed", elfio_section(rp->e, i)->name);
		return -ENOTSUP;
	}
	if (g->realign) {
		Elf64_Shdr nsh = *sh;

		nsh.sh_addralign = REPAD_ALIGN;
		ret = elfio_rw_set_shdr(w, i, &nsh);
		if (ret)
			return ret;
	}
	if (g->realign || (g->n && g->nsites))
		rp->rep->sections++;
	if (!has)
		return 0;	/* libelf has no data for it: written empty, as it reads it */
	if (!g->buf) {		/* else DWARF, rewritten by dwarf_fixups() */
		if (g->n)
			ret = grow_text(rp, i, id, isize);
		else if (sh->sh_type == SHT_RELA)
			ret = fix_relas(rp, i, sh);
		else if (i == rp->symtab_index)
			ret = fix_symtab(rp, id, isize);
		else
			return keep_as_in_file(rp, w, i);
		if (ret)
			return ret;
	}
	return elfio_rw_set_data(w, i, g->buf, g->size);
}

/*
 * The rewrite: every section's new contents to elfio's writer, which has
 * libelf lay the object out anew and writes it atomically (mode kept), or
 * (out_path NULL: an archive's member) into *obuf.  The buffers are ours
 * (g->buf) and live until repad_object() returns.
 */
static int rewrite(struct repad *rp, const char *out_path, uint8_t **obuf, size_t *olen)
{
	struct elfio_rw *w = elfio_rw_new(rp->e);
	int ret = 0;

	if (!w)
		return -ENOMEM;
	for (size_t i = 1; i < rp->nsec && !ret; i++)
		ret = rewrite_section(rp, w, i);
	if (!ret && out_path)
		ret = elfio_rw_commit(w, out_path, NULL);
	else if (!ret)
		ret = elfio_rw_commit_memory(w, obuf, olen);
	elfio_rw_free(w);
	return ret;
}

/* Whether the plan changes anything: an insertion point or a raised alignment. */
static bool plan_changes(const struct repad *rp)
{
	for (size_t i = 1; i < rp->nsec; i++)
		if (rp->g[i].n || rp->g[i].realign)
			return true;
	return false;
}

/* -o of an object with nothing to pad: the input's own bytes, written atomically. */
static int copy_input(struct repad *rp, const char *out)
{
	size_t len;
	const uint8_t *raw = elfio_raw(rp->e, &len);

	if (!raw) {
		elfio_error(rp->path, "the file's bytes are not available");
		return -EINVAL;
	}
	return elfio_write_file_atomic(out, raw, len, elfio_mode(rp->e));
}

/* --- The object ------------------------------------------------------------- */

static int check_input(struct repad *rp)
{
	const Elf64_Ehdr *eh = elfio_ehdr(rp->e);

	char why[256];

	rp->arch = arch_for(eh->e_machine, elfio_machine_name(eh->e_machine), ARCH_CAP_REPAD, why, sizeof(why));
	if (!rp->arch) {
		elfio_error(rp->path, "%s", why);
		return -ENOTSUP;
	}
	if (!elfio_is_rel(rp->e)) {
		elfio_error(rp->path, "not a relocatable object (ET_REL): repad runs before the final link");
		return -EINVAL;
	}
	/*
	 * An architecture without an ops literal before its functions (x86_64)
	 * has nothing to align: the object is left as it is, so that a kernel
	 * build that repads every object (contrib/linux) works there too.
	 * With one, ARCH_CAP_REPAD promises the hooks that move its code.
	 */
	if (!rp->arch->literal_size)
		return 1;
	if (elfio_was_compressed(rp->e)) {
		elfio_error(rp->path, "compressed objects cannot be repadded; decompress it first");
		return -ENOTSUP;
	}
	/*
	 * The output is laid out anew by libelf, which honours each section's
	 * alignment: a corrupt sh_addralign of 2^32 would make it write a
	 * 4 GiB file.  ELF requires 0 or a power of two; no object needs more
	 * than REPAD_MAX_ALIGN.
	 */
	for (size_t i = 1; i < elfio_nsections(rp->e); i++) {
		const struct elfio_section *sec = elfio_section(rp->e, i);
		uint64_t a = sec->shdr.sh_addralign;

		if ((a & (a - 1)) || a > REPAD_MAX_ALIGN) {
			elfio_error(rp->path, "section %zu ('%s') has alignment %#" PRIx64 " (must be a power "
				    "of two up to %#x)", i, sec->name, a, REPAD_MAX_ALIGN);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * What repad reads the object as, from elfio: the section headers as the
 * file has them (before anything is inflated in place) and the main symbol
 * table (elfio's, which checks it).
 */
static int load_input(struct repad *rp)
{
	const struct elfio_symtab *st;

	rp->nsec = elfio_nsections(rp->e);
	rp->shdr = elfio_calloc(rp->nsec, sizeof(*rp->shdr));
	if (!rp->shdr)
		return -ENOMEM;
	for (size_t i = 1; i < rp->nsec; i++)
		rp->shdr[i] = elfio_section(rp->e, i)->shdr;
	int ret = elfio_symbols(rp->e, &st);
	if (ret)
		return ret;
	if (st) {
		rp->symtab = st;
		rp->symtab_index = st->shndx;
	}
	rp->g = elfio_calloc(rp->nsec, sizeof(*rp->g));
	return rp->g ? 0 : -ENOMEM;
}

/* The plan: insertion points, the DWARF's, and what the map needs (*what: the step). */
static int make_plan(struct repad *rp, const char **what)
{
	int ret;

	*what = "the alignment relocations";
	/* ARCH_CAP_REPAD: an architecture that relaxes has both relocations */
	if (rp->arch->align_reloc && (ret = scan_relax(rp)))
		return ret;
	*what = "the insertion points";
	if ((ret = choose_points(rp)))
		return ret;
	*what = "the DWARF's insertion points and new contents";
	if ((ret = dwarf_fixups(rp)))
		return ret;
	*what = "the relocations to move";
	if ((ret = load_relocated(rp)))
		return ret;
	*what = "the mapping symbols";
	return mapping_symbols(rp);
}

/*
 * Nothing to change: in place nothing is written, -o gets the input's
 * bytes, an archive's member (out NULL) stays as it is.
 */
static int unchanged(struct repad *rp, const char *out)
{
	return !out || elfio_same_file(rp->path, out) ? 0 : copy_input(rp, out);
}

/*
 * Repad the object e has open into out, or (out NULL) into *obuf, which
 * stays NULL when nothing changes.  e is the caller's.
 */
static int repad_image(struct elfio *e, const char *out, uint8_t **obuf, size_t *olen,
		       struct repad_report *rep)
{
	const char *in = elfio_path(e);
	struct repad rp = { .path = in, .e = e, .rep = rep };
	unsigned long errors = elfio_errors_reported();
	const char *what = "the object's section headers and symbols";
	int ret;

	memset(rep, 0, sizeof(*rep));
	ret = check_input(&rp);
	if (ret == 1) {
		/* nothing to align on this architecture: as for an object with nothing to pad */
		ret = unchanged(&rp, out);
		goto out;
	}
	if (ret)
		goto out;
	rp.unit = rp.arch->nop_unit(elfio_ehdr(rp.e)->e_flags);
	if (rp.arch->align_reloc &&
	    rp.arch->align_padding(elfio_ehdr(rp.e)->e_flags, REPAD_ALIGN, &rp.apad)) {
		elfio_error(in, "no %u-byte alignment padding for NOPs of %u bytes", REPAD_ALIGN,
			    rp.unit);
		ret = -EINVAL;
		goto out;
	}
	ret = load_input(&rp);
	if (!ret)
		ret = make_plan(&rp, &what);
	if (!ret && !plan_changes(&rp)) {
		/*
		 * Nothing to pad or realign (most assembly files, any object
		 * without CALL_OPS): the output is the input, byte for byte, not
		 * libelf's layout of it, and in place nothing is written at all,
		 * so that make sees the object as it was.
		 */
		what = "a copy of the object";
		ret = unchanged(&rp, out);
	} else if (!ret) {
		what = "the repadded object";
		ret = rewrite(&rp, out, obuf, olen);
		if (ret)
			memset(rep, 0, sizeof(*rep));
	}
out:
	/* after the commit: the writer held our buffers until then */
	for (size_t i = 0; rp.g && i < rp.nsec; i++)
		grow_free(&rp.g[i]);
	elfio_free(rp.g);
	elfio_free(rp.shdr);
	/* the paths that only return -ENOMEM: say it once, here, and what for */
	if (ret == -ENOMEM && elfio_errors_reported() == errors)
		elfio_error(in, "out of memory for %s", what);
	else if (ret && elfio_errors_reported() == errors)
		elfio_error(in, "cannot repad: %s", strerror(-ret));
	return ret;
}

int repad_object(const char *in, const char *out, struct repad_report *rep)
{
	struct elfio *e;
	int ret;

	memset(rep, 0, sizeof(*rep));
	e = elfio_open(in, 0);
	if (!e)
		return errno ? -errno : -EINVAL;
	ret = repad_image(e, out, NULL, NULL, rep);
	elfio_close(e);
	return ret;
}

int repad_member(struct elfio *e, uint8_t **out, size_t *len, struct repad_report *rep)
{
	*out = NULL;
	*len = 0;
	return repad_image(e, NULL, out, len, rep);
}
