// SPDX-License-Identifier: GPL-2.0-only
/*
 * repad.c - give every arm64 and riscv64 CALL_OPS ops literal of an object
 * its 8-byte alignment before the final link.
 *
 * Strategy: with -fpatchable-function-entry=4,2 the two NOPs before each
 * function are the ops literal, which must be 8-byte aligned.  GCC ignores
 * -falign-functions under -Os and for cold code, and leaves the text section
 * 4-byte aligned, so the literal's alignment is left to chance.  We raise
 * sh_addralign of every text section holding a site to 8 and, walking its
 * sites in increasing offset order, insert one 4-byte NOP in front of each
 * literal whose offset (counting the NOPs inserted so far) is 4 mod 8.  An
 * insertion point always lies between two functions, so no function grows.
 *
 * Everything behind an insertion point moves by 4 for each point at or
 * before it (map_offset()):
 *  - symbol values, and the sizes of symbols that strictly span a point;
 *  - r_offset of the section's own relocations;
 *  - addends of relocations anywhere whose symbol is defined in the section
 *    (`.text + 0x54` in __patchable_function_entries, .eh_frame, .debug_*,
 *    function-pointer tables): the new addend is map(V + A) - map(V);
 *  - PC-relative instructions that the assembler resolved inside the section
 *    with no relocation (calls between static functions): B, BL, B.cond,
 *    CBZ/CBNZ, TBZ/TBNZ, ADR, LDR literal.  Their immediates are re-encoded,
 *    or we refuse when the new distance does not fit.  An ADRP always carries
 *    a relocation in an object; an unrelocated one is refused.
 * Words in data regions of a text section (AAELF64 `$d` mapping symbols)
 * are not decoded.
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
 * offset order without splitting R_RISCV_RELAX pairs.  The linker moves
 * symbols as it deletes bytes but not addends and not resolved
 * instructions, so in a relaxed section we refuse an addend (`.text + N`)
 * or a resolved branch that crosses our padding.  Without relaxation the
 * padding is plain NOPs, as on arm64, and the resolved branch, jal, c.j,
 * c.beqz/c.bnez and auipc + %pcrel_lo pairs (LLVM resolves them under
 * -mno-relax; GNU as keeps relocations) are re-encoded or refused; data
 * (`$d`) that would lose the alignment of its offset is refused too.
 * R_RISCV_ADD/SUB/SET and PCREL_LO12 relocations name local labels, whose
 * values move like any symbol's.
 *
 * What is instruction knowledge is asked of arch/ (arch.h): the NOP unit
 * for the object's e_flags and the NOP bytes (nop_unit, encode_nops), the
 * instruction lengths and the PC-relative references with their limits
 * (insn_len, pcrel_decode, pcrel_encode), where an R_RISCV_ALIGN pads to
 * (align_target) and what `.balign 8` emits (align_padding).  This file
 * walks sections, mapping symbols and relocations, and moves offsets.
 *
 * elfio's edit list only replaces bytes in place, and a grown section moves
 * everything after it in the file, so the output is rebuilt with libelf
 * (ELF_C_WRITE on a memfd; an ET_REL has no program headers, so libelf's own
 * layout is right) and handed to elfio_write_file_atomic().
 *
 * DWARF quantities that the assembler resolved as label differences inside
 * a section are fixed by repad_dwarf.c (dwarf_fixups()): line-program
 * address advances, a unit's DW_AT_high_pc length, .debug_aranges lengths
 * and the offset pairs of .debug_rnglists and .debug_loclists (objects with
 * one unit).  Relocations from .debug_* sections to exactly an insertion
 * point name the end of the function before it (map_target()).  riscv64
 * objects built with relaxation relocate all of these, and are left to the
 * linker.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch.h"
#include "elfio.h"
#include "recordsites.h"
#include "repad_dwarf.h"
#include "rewriter.h"

#define REPAD_MAX_ALIGN	0x1000000	/* 16 MiB: larger section alignments are refused */
#define REPAD_ALIGN	8	/* natural alignment of the 8-byte ops literal */

/* What happens to one section of the input. */
struct grow {
	uint64_t *points;	/* old offsets of the insertion points, increasing */
	size_t n, cap;
	uint64_t *pads;		/* bytes inserted at each point (n of them) */
	size_t npads, cappads;
	uint64_t *cum;		/* cum[k]: bytes inserted before point k; cum[n]: all */
	bool relax;		/* riscv: the linker may relax it, points get R_RISCV_ALIGN */
	uint64_t first_relax;	/* riscv: lowest offset of an R_RISCV_RELAX/ALIGN */
	uint64_t *aligned;	/* riscv: offsets an R_RISCV_ALIGN pads up to (>= 8), sorted */
	size_t naligned, capaligned;
	uint64_t *maps;		/* mapping symbols, see mapping_symbols() */
	size_t nmaps, capmaps;
	uint64_t *sites;	/* old offsets of its CALL_OPS literals, increasing */
	size_t nsites, capsites;
	uint64_t *relocated;	/* old r_offsets of its own relocations, sorted */
	size_t nrelocated, caprelocated;
	bool realign;		/* sh_addralign below REPAD_ALIGN */
	uint8_t *buf;		/* new contents (ours), NULL if unchanged */
	size_t size;
};

static int push(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		uint64_t *nv = realloc(*v, nc * sizeof(**v));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = x;
	return 0;
}

/* Number of points p with p < x (strict) or p <= x. */
static size_t points_before(const struct grow *g, int64_t x, bool strict)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		bool below = strict ? (int64_t)g->points[mid] < x : (int64_t)g->points[mid] <= x;

		if (below)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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

static int add_point(struct grow *g, uint64_t off, uint64_t pad)
{
	if (push(&g->points, &g->n, &g->cap, off) ||
	    push(&g->pads, &g->npads, &g->cappads, pad))
		return -ENOMEM;
	return 0;
}

/* Prefix sums of the pads, once the points are chosen. */
static int finish_points(struct grow *g)
{
	if (!g->n)
		return 0;
	g->cum = malloc((g->n + 1) * sizeof(*g->cum));
	if (!g->cum)
		return -ENOMEM;
	g->cum[0] = 0;
	for (size_t k = 0; k < g->n; k++)
		g->cum[k + 1] = g->cum[k] + g->pads[k];
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_relocated(const struct grow *g, uint64_t off)
{
	return g->nrelocated &&
	       bsearch(&off, g->relocated, g->nrelocated, sizeof(off), cmp_u64) != NULL;
}

struct repad {
	const char *path;
	struct elfio *e;
	const struct arch_ops *arch;
	Elf *in;		/* our own read handle: raw section data to copy */
	int in_fd;
	size_t nsec;
	struct grow *g;		/* one per section index */
	Elf_Data *symdata;	/* input .symtab and SHT_SYMTAB_SHNDX (libelf's) */
	Elf_Data *xndxdata;
	size_t symtab_index;
	struct repad_report *rep;
	bool riscv;		/* EM_RISCV (else EM_AARCH64) */
	unsigned int unit;	/* NOP unit for e_flags: arm64 4, riscv 2 with RVC, else 4 */
	struct arch_align_pad apad;	/* riscv: `.balign 8` where the linker relaxes */
};

/* Section of a symbol, through SHT_SYMTAB_SHNDX; 0 if not in a section. */
static size_t sym_section(const GElf_Sym *sym, Elf32_Word xndx)
{
	if (sym->st_shndx == SHN_XINDEX)
		return xndx;
	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE)
		return 0;
	return sym->st_shndx;
}

static int get_sym(struct repad *rp, size_t i, GElf_Sym *sym, size_t *shndx)
{
	Elf32_Word xndx = 0;

	if (!rp->symdata || !gelf_getsymshndx(rp->symdata, rp->xndxdata, (int)i, sym, &xndx)) {
		elfio_error(rp->path, "symbol %zu: %s", i, elf_errmsg(-1));
		return -EINVAL;
	}
	*shndx = sym_section(sym, xndx);
	if (*shndx >= rp->nsec)
		*shndx = 0;
	return 0;
}

/*
 * riscv64: which sections the linker may relax (any R_RISCV_RELAX or
 * R_RISCV_ALIGN in their relocations), the lowest such offset, and the
 * offsets that an R_RISCV_ALIGN of at least REPAD_ALIGN pads up to.
 */
static int scan_relax(struct repad *rp)
{
	Elf_Scn *scn = NULL;

	for (size_t i = 0; i < rp->nsec; i++)
		rp->g[i].first_relax = UINT64_MAX;
	while ((scn = elf_nextscn(rp->in, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		struct grow *g;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !sh.sh_info || sh.sh_info >= rp->nsec)
			continue;
		g = &rp->g[sh.sh_info];
		d = elf_getdata(scn, NULL);
		n = d && sh.sh_entsize ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela ra;
			unsigned int type;
			uint64_t to, al;

			if (!gelf_getrela(d, (int)i, &ra)) {
				elfio_error(rp->path, "relocation %zu of section %zu: %s", i,
					    elf_ndxscn(scn), elf_errmsg(-1));
				return -EINVAL;
			}
			type = (unsigned int)GELF_R_TYPE(ra.r_info);
			if (type != rp->arch->relax_reloc && type != rp->arch->align_reloc)
				continue;
			g->relax = true;
			if (ra.r_offset < g->first_relax)
				g->first_relax = ra.r_offset;
			if (type != rp->arch->align_reloc ||
			    rp->arch->align_target(ra.r_offset, ra.r_addend, &to, &al))
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

/* Collect the CALL_OPS literals per section and choose the insertion points. */
static int plan(struct repad *rp)
{
	struct record_options o;
	struct record *r = NULL;
	int ret;

	record_options_init(&o);
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
			if (rp->riscv && g->relax) {
				/*
				 * The linker deletes bytes at every R_RISCV_RELAX and
				 * R_RISCV_ALIGN, so the offset in the object says nothing
				 * past the first of them: only an R_RISCV_ALIGN that pads
				 * up to the literal keeps it aligned.
				 */
				if (g->naligned &&
				    bsearch(&off, g->aligned, g->naligned, sizeof(off), cmp_u64))
					continue;
				if (!shift && off <= g->first_relax && !mis)
					continue;
				if (off % rp->unit) {
					elfio_error(rp->path, "%s+%#" PRIx64 ": ops literal is not %u-byte "
						    "aligned in an object without C", sec->name, off,
						    rp->unit);
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

static int load_relocated(struct repad *rp)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(rp->in, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		struct grow *g;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL))
			continue;
		if (sh.sh_info >= rp->nsec || !rp->g[sh.sh_info].n)
			continue;
		if (sh.sh_type == SHT_REL) {
			elfio_error(rp->path, "SHT_REL relocations for a section to grow are not supported");
			return -ENOTSUP;
		}
		g = &rp->g[sh.sh_info];
		d = elf_getdata(scn, NULL);
		n = d && sh.sh_entsize ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela ra;

			if (!gelf_getrela(d, (int)i, &ra)) {
				elfio_error(rp->path, "relocation %zu of section %zu: %s", i,
					    elf_ndxscn(scn), elf_errmsg(-1));
				return -EINVAL;
			}
			if (push(&g->relocated, &g->nrelocated, &g->caprelocated, ra.r_offset))
				return -ENOMEM;
		}
		qsort(g->relocated, g->nrelocated, sizeof(*g->relocated), cmp_u64);
	}
	return 0;
}

/*
 * Mapping symbols (AAELF64 `$x`, `$d`, optionally `.suffix`; riscv `$x`
 * with an ISA string) of every section that grows, as old offsets with
 * bit 0 set for `$d`, sorted, in g->maps.  One pass over the symbols.
 */
static int mapping_symbols(struct repad *rp)
{
	size_t nsym = rp->symdata ? rp->symdata->d_size / sizeof(Elf64_Sym) : 0;
	size_t strndx = rp->symtab_index ?
			elfio_section(rp->e, rp->symtab_index)->shdr.sh_link : 0;

	for (size_t i = 1; i < nsym; i++) {
		GElf_Sym sym;
		size_t sx;
		const char *name;
		struct grow *g;

		if (get_sym(rp, i, &sym, &sx))
			return -EINVAL;
		if (!sx || !rp->g[sx].n || GELF_ST_TYPE(sym.st_info) != STT_NOTYPE)
			continue;
		g = &rp->g[sx];
		name = elf_strptr(rp->in, strndx, sym.st_name);
		/* riscv: `$x` may carry the ISA string, `$xrv64i2p1_c2p0` */
		if (!name || name[0] != '$' || (name[1] != 'd' && name[1] != 'x') ||
		    (name[2] && name[2] != '.' &&
		     !(rp->riscv && name[1] == 'x' && !strncmp(name + 2, "rv", 2))))
			continue;
		/* values are 2-aligned in text, so bit 0 is free */
		if (push(&g->maps, &g->nmaps, &g->capmaps, (sym.st_value & ~1ULL) | (name[1] == 'd')))
			return -ENOMEM;
	}
	for (size_t i = 0; i < rp->nsec; i++)
		if (rp->g[i].nmaps)
			qsort(rp->g[i].maps, rp->g[i].nmaps, sizeof(uint64_t), cmp_u64);
	return 0;
}

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
	 * riscv64: without relaxation no R_RISCV_ALIGN tells the linker
	 * about a `.balign` before data in the section: data (`$d`) must keep
	 * the alignment (up to 8) that its offset had.
	 */
	for (size_t k = 0; rp->riscv && k < nmap && !g->relax; k++) {
		uint64_t x = maps[k] & ~1ULL, a = 8;

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
		if (is_relocated(g, off))
			continue;
		st = rp->arch->pcrel_decode(old + off, size - off, &pc);
		if (st == ARCH_PCREL_NONE)
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
	g->buf = malloc(g->size ? g->size : 1);
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

/* Copy a libelf buffer so that we may change it (ours, freed by the caller). */
static void *dup_buf(const Elf_Data *d)
{
	void *p = malloc(d->d_size ? d->d_size : 1);

	if (p && d->d_size)
		memcpy(p, d->d_buf, d->d_size);
	return p;
}

/* Owners of the output's Elf_Data buffers that are ours. */
struct owned {
	void **v;
	size_t n, cap;
};

static int own(struct owned *o, void *p)
{
	if (o->n == o->cap) {
		size_t nc = o->cap ? o->cap * 2 : 16;
		void **nv = realloc(o->v, nc * sizeof(*nv));

		if (!nv) {
			free(p);
			return -ENOMEM;
		}
		o->v = nv;
		o->cap = nc;
	}
	o->v[o->n++] = p;
	return 0;
}

/*
 * riscv64, a section the linker relaxes: each insertion point's padding
 * gets an R_RISCV_ALIGN (symbol 0, addend = the padding's size), as GNU as
 * emits for `.balign 8` (rp->apad, from arch_ops.align_padding), so that
 * the linker keeps what the literal's alignment needs after it has deleted
 * bytes before it.  The relocations
 * (already moved) are merged in offset order, never between two at the same
 * offset, so R_RISCV_RELAX pairs stay adjacent.
 */
static int add_align_relocs(struct repad *rp, const struct grow *g, size_t n, Elf_Data *od,
			    struct owned *owned)
{
	size_t total = n + g->n, k = 0, o = 0;
	Elf64_Rela *nv = malloc(total * sizeof(*nv));
	const Elf64_Rela *ov = od->d_buf;

	if (!nv || own(owned, nv))
		return -ENOMEM;
	for (size_t i = 0; i <= n; i++) {
		while (k < g->n && (i == n || g->points[k] + g->cum[k] <= ov[i].r_offset)) {
			nv[o].r_offset = g->points[k] + g->cum[k];
			/* the addend counts the NOPs it covers: pads[k], rp->apad.size */
			nv[o].r_info = ELF64_R_INFO(0, rp->apad.type);
			nv[o].r_addend = (Elf64_Sxword)g->pads[k];
			o++;
			k++;
			rp->rep->relocs++;
		}
		if (i < n)
			nv[o++] = ov[i];
	}
	od->d_buf = nv;
	od->d_size = total * sizeof(*nv);
	return 0;
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

static int fix_relas(struct repad *rp, size_t idx, const GElf_Shdr *sh, Elf_Data *od,
		     struct owned *owned)
{
	size_t n = sh->sh_entsize ? od->d_size / sh->sh_entsize : 0;
	const struct grow *gt = sh->sh_info < rp->nsec ? &rp->g[sh->sh_info] : NULL;
	bool debug = sh->sh_info < rp->nsec && is_debug_section(rp, sh->sh_info);

	for (size_t i = 0; i < n; i++) {
		GElf_Rela ra;
		GElf_Sym sym;
		size_t sx, si;
		bool changed = false;

		if (!gelf_getrela(od, (int)i, &ra)) {
			elfio_error(rp->path, "relocation %zu of section %zu (entry size %" PRIu64
				    "): %s", i, idx, (uint64_t)sh->sh_entsize, elf_errmsg(-1));
			return -EINVAL;
		}
		if (gt && gt->n) {
			int64_t no = map_offset(gt, (int64_t)ra.r_offset);

			changed |= (uint64_t)no != ra.r_offset;
			ra.r_offset = (uint64_t)no;
		}
		si = GELF_R_SYM(ra.r_info);
		if (si && sh->sh_link == rp->symtab_index) {
			if (get_sym(rp, si, &sym, &sx))
				return -EINVAL;
			if (sx && rp->g[sx].n) {
				int64_t v = (int64_t)sym.st_value, t;

				/* the target may lie outside the section (an end
				   pointer, a negative bias), but not absurdly far */
				if (__builtin_add_overflow(v, ra.r_addend, &t) ||
				    t > INT64_MAX / 2 || t < INT64_MIN / 2 ||
				    v > INT64_MAX / 2 || v < 0) {
					elfio_error(rp->path, "relocation %zu of section %zu: target "
						    "%#" PRIx64 " %+" PRId64 " is out of range", i, idx,
						    (uint64_t)sym.st_value, (int64_t)ra.r_addend);
					return -EINVAL;
				}
				int64_t na = map_target(rp, sx, t, debug) - map_offset(&rp->g[sx], v);

				/* the linker moves symbols as it relaxes, never addends */
				if (na != ra.r_addend && rp->g[sx].relax) {
					elfio_error(rp->path, "relocation %zu in '%s' against %s+%#" PRIx64
						    " crosses alignment padding that linker relaxation "
						    "may shrink", i, elfio_section(rp->e, idx)->name,
						    elfio_section(rp->e, sx)->name, (uint64_t)t);
					return -ENOTSUP;
				}
				changed |= na != ra.r_addend;
				ra.r_addend = na;
			}
		}
		if (changed) {
			if (!gelf_update_rela(od, (int)i, &ra)) {
				elfio_error(rp->path, "relocation %zu of section %zu: %s", i, idx,
					    elf_errmsg(-1));
				return -EINVAL;
			}
			rp->rep->relocs++;
		}
	}
	if (gt && gt->n && gt->relax)
		return add_align_relocs(rp, gt, n, od, owned);
	return 0;
}

static int fix_symtab(struct repad *rp, Elf_Data *od)
{
	size_t n = od->d_size / sizeof(Elf64_Sym);

	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		size_t sx;
		const struct grow *g;
		int64_t v, nv, ne;

		if (get_sym(rp, i, &sym, &sx))
			return -EINVAL;
		if (!sx || !rp->g[sx].n || GELF_ST_TYPE(sym.st_info) == STT_SECTION)
			continue;
		g = &rp->g[sx];
		uint64_t secsize = elfio_section(rp->e, sx)->shdr.sh_size;
		if (sym.st_value > secsize || sym.st_size > secsize - sym.st_value) {
			elfio_error(rp->path, "symbol %zu lies outside its section %zu ('%s'): value "
				    "%#" PRIx64 ", size %#" PRIx64 ", section size %#" PRIx64, i, sx,
				    elfio_section(rp->e, sx)->name, (uint64_t)sym.st_value,
				    (uint64_t)sym.st_size, secsize);
			return -EINVAL;
		}
		v = (int64_t)sym.st_value;
		nv = map_offset(g, v);
		ne = sym.st_size ? map_end(g, v + (int64_t)sym.st_size) : nv;
		if (nv == v && ne - nv == (int64_t)sym.st_size)
			continue;
		sym.st_value = (uint64_t)nv;
		sym.st_size = (uint64_t)(ne - nv);
		if (!gelf_update_sym(od, (int)i, &sym)) {
			elfio_error(rp->path, "symbol %zu: %s", i, elf_errmsg(-1));
			return -EINVAL;
		}
		rp->rep->symbols++;
	}
	return 0;
}

/*
 * Rebuild the object on memfd `fd`.  Each output section gets one Elf_Data:
 * either the input's d_buf (libelf's, valid while rp->in is open) or a
 * buffer of ours listed in `owned`.
 */
static int build(struct repad *rp, Elf *out, struct owned *owned)
{
	GElf_Ehdr eh;
	size_t shstrndx;
	int ret;

	if (!gelf_getehdr(rp->in, &eh) || !gelf_newehdr(out, ELFCLASS64) ||
	    elf_getshdrstrndx(rp->in, &shstrndx))
		goto libelf_err;
	for (size_t i = 1; i < rp->nsec; i++) {
		Elf_Scn *is = elf_getscn(rp->in, i), *os = elf_newscn(out);
		struct grow *g = &rp->g[i];
		GElf_Shdr sh;
		Elf_Data *id, *od;

		if (!is || !os || !gelf_getshdr(is, &sh))
			goto libelf_err;
		if (elf_ndxscn(os) != i) {
			elfio_error(rp->path, "section numbering changed while copying");
			return -EINVAL;
		}
		id = elf_getdata(is, NULL);
		if (elf_getdata(is, id)) {
			elfio_error(rp->path, "section %zu has more than one data block", i);
			return -EINVAL;
		}
		if ((g->nsites || sh.sh_type == SHT_RELA || i == rp->symtab_index) &&
		    (sh.sh_flags & SHF_COMPRESSED) && (g->n || sh.sh_type != SHT_PROGBITS)) {
			elfio_error(rp->path, "section '%s' is compressed",
				    elfio_section(rp->e, i)->name);
			return -ENOTSUP;
		}
		if (g->realign)
			sh.sh_addralign = REPAD_ALIGN;
		if (g->realign || (g->n && g->nsites))
			rp->rep->sections++;
		od = elf_newdata(os);
		if (!od)
			goto libelf_err;
		if (id) {
			od->d_type = id->d_type;
			od->d_size = id->d_size;
			od->d_buf = id->d_buf;
		} else {
			od->d_type = ELF_T_BYTE;
			od->d_size = sh.sh_type == SHT_NOBITS ? sh.sh_size : 0;
		}
		od->d_align = sh.sh_addralign ? sh.sh_addralign : 1;
		od->d_off = 0;
		od->d_version = EV_CURRENT;
		if (g->buf && id) {
			/* DWARF rewritten by dwarf_fixups() */
			od->d_buf = g->buf;
			od->d_size = g->size;
		} else if (g->n && id) {
			ret = grow_text(rp, i, id->d_buf, id->d_size);
			if (ret)
				return ret;
			od->d_buf = g->buf;
			od->d_size = g->size;
		} else if (id && (sh.sh_type == SHT_RELA || i == rp->symtab_index)) {
			void *copy = dup_buf(id);

			if (!copy || own(owned, copy))
				return -ENOMEM;
			od->d_buf = copy;
			ret = sh.sh_type == SHT_RELA ? fix_relas(rp, i, &sh, od, owned) : fix_symtab(rp, od);
			if (ret)
				return ret;
		}
		if (!gelf_update_shdr(os, &sh))
			goto libelf_err;
	}
	eh.e_phoff = 0;
	eh.e_phnum = 0;
	/* elfutils has no elf_setshstrndx: a large index goes to section 0's sh_link */
	if (shstrndx >= SHN_LORESERVE) {
		Elf_Scn *zero = elf_getscn(out, 0);
		GElf_Shdr sh0;

		if (!zero || !gelf_getshdr(zero, &sh0))
			goto libelf_err;
		sh0.sh_link = (Elf64_Word)shstrndx;
		if (!gelf_update_shdr(zero, &sh0))
			goto libelf_err;
		eh.e_shstrndx = SHN_XINDEX;
	} else {
		eh.e_shstrndx = (Elf64_Half)shstrndx;
	}
	if (!gelf_update_ehdr(out, &eh) || elf_update(out, ELF_C_WRITE) < 0)
		goto libelf_err;
	return 0;
libelf_err:
	elfio_error(rp->path, "cannot build the output: %s", elf_errmsg(-1));
	return -EINVAL;
}

static int check_input(struct repad *rp)
{
	const GElf_Ehdr *eh = elfio_ehdr(rp->e);

	/* the architectures whose PC-relative references arch/ can move */
	rp->arch = arch_by_machine(eh->e_machine);
	if (!rp->arch || !rp->arch->insn_len || !rp->arch->pcrel_decode ||
	    !rp->arch->pcrel_encode) {
		elfio_error(rp->path, "repad handles arm64 and riscv64 objects only (e_machine %u)",
			    eh->e_machine);
		return -ENOTSUP;
	}
	if (!elfio_is_rel(rp->e)) {
		elfio_error(rp->path, "not a relocatable object (ET_REL): repad runs before the final link");
		return -EINVAL;
	}
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

static int open_input(struct repad *rp)
{
	const struct elfio_symtab *st;
	Elf_Scn *scn = NULL;

	rp->in_fd = open(rp->path, O_RDONLY | O_CLOEXEC);
	if (rp->in_fd < 0) {
		elfio_error(rp->path, "cannot open: %s", strerror(errno));
		return -errno;
	}
	rp->in = elf_begin(rp->in_fd, ELF_C_READ, NULL);
	if (!rp->in || elf_getshdrnum(rp->in, &rp->nsec)) {
		elfio_error(rp->path, "cannot read: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	if (rp->nsec != elfio_nsections(rp->e)) {
		elfio_error(rp->path, "section count differs between readers");
		return -EINVAL;
	}
	if (elfio_symbols(rp->e, &st))
		return -EINVAL;
	if (st) {
		rp->symtab_index = st->shndx;
		rp->symdata = elf_getdata(elf_getscn(rp->in, st->shndx), NULL);
	}
	while ((scn = elf_nextscn(rp->in, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB_SHNDX &&
		    sh.sh_link == rp->symtab_index)
			rp->xndxdata = elf_getdata(scn, NULL);
	}
	rp->g = calloc(rp->nsec, sizeof(*rp->g));
	return rp->g ? 0 : -ENOMEM;
}

/* Run libelf on a memfd, then hand the bytes to the atomic writer. */
static int write_output(struct repad *rp, const char *out_path)
{
	struct owned owned = { 0 };
	struct stat st;
	Elf *out = NULL;
	void *map = MAP_FAILED;
	mode_t mode;
	int fd = -1, ret;

	fd = memfd_create("patchsite-repad", MFD_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		elfio_error(out_path, "memfd_create: %s", strerror(errno));
		goto out;
	}
	out = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!out) {
		elfio_error(out_path, "elf_begin: %s", elf_errmsg(-1));
		ret = -EINVAL;
		goto out;
	}
	ret = build(rp, out, &owned);
	if (ret)
		goto out;
	elf_end(out);
	out = NULL;
	if (fstat(rp->in_fd, &st) < 0) {
		ret = -errno;
		elfio_error(out_path, "fstat: %s", strerror(errno));
		goto out;
	}
	mode = st.st_mode & 07777;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		elfio_error(out_path, "fstat: %s", strerror(errno));
		goto out;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		elfio_error(out_path, "mmap: %s", strerror(errno));
		goto out;
	}
	ret = elfio_write_file_atomic(out_path, map, (size_t)st.st_size, mode);
out:
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	elf_end(out);
	if (fd >= 0)
		close(fd);
	for (size_t i = 0; i < owned.n; i++)
		free(owned.v[i]);
	free(owned.v);
	return ret;
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

/* The relocations of debug section idx, resolved as fix_relas() will, sorted. */
static int dw_rels(struct repad *rp, size_t idx, struct repad_dw_rel **out, size_t *nout)
{
	Elf_Scn *scn = NULL;
	struct repad_dw_rel *v = NULL;
	size_t n = 0, cap = 0;

	while ((scn = elf_nextscn(rp->in, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t nr;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_info != idx ||
		    sh.sh_link != rp->symtab_index || !rp->symtab_index)
			continue;
		d = elf_getdata(scn, NULL);
		nr = d && sh.sh_entsize ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < nr; i++) {
			GElf_Rela ra;
			GElf_Sym sym;
			size_t sx = 0, si;
			struct repad_dw_rel r = { 0 };

			if (!gelf_getrela(d, (int)i, &ra)) {
				elfio_error(rp->path, "relocation %zu of section %zu: %s", i,
					    elf_ndxscn(scn), elf_errmsg(-1));
				goto bad;
			}
			si = GELF_R_SYM(ra.r_info);
			if (si && get_sym(rp, si, &sym, &sx))
				goto bad;
			r.offset = ra.r_offset;
			if (si && sx && sym.st_value <= INT64_MAX / 4 &&
			    ra.r_addend <= INT64_MAX / 4 && ra.r_addend >= -(INT64_MAX / 4)) {
				int64_t t = (int64_t)sym.st_value + ra.r_addend;

				r.sec = sx;
				r.old = t;
				r.new = map_target(rp, sx, t, true);
			}
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct repad_dw_rel *nv = realloc(v, nc * sizeof(*nv));

				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
				cap = nc;
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
	free(v);
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
 * Their new contents go to g->buf, which build() takes as they are.
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
		Elf_Data *id;
		uint8_t *copy = NULL;

		if (!idx)
			continue;
		g = &rp->g[idx];
		id = elf_getdata(elf_getscn(rp->in, idx), NULL);
		/* d_buf is NULL for an empty or SHT_NOBITS section: nothing to read */
		if (!id || !id->d_size || !id->d_buf || g->n || g->buf)
			continue;
		ret = dw_rels(rp, idx, &rel, &dw.nrel);
		if (ret)
			break;
		dw.rel = rel;
		if (k == 1 || k == 3 || k == 4) {
			/* sections that may grow: their own insertion points */
			if (k == 1)
				ret = repad_dwarf_line(&dw, id->d_buf, id->d_size, &o);
			else if (k == 3)
				ret = repad_dwarf_rnglists(&dw, id->d_buf, id->d_size, &o);
			else
				ret = repad_dwarf_loclists(&dw, id->d_buf, id->d_size, &o);
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
			copy = dup_buf(id);
			if (!copy) {
				ret = -ENOMEM;
			} else if (k == 0) {
				Elf_Data *ad = abbrev ? elf_getdata(elf_getscn(rp->in, abbrev), NULL) : NULL;

				dw.loc_sec = dw_section(rp, ".debug_loclists");
				if (ad && ad->d_buf && ad->d_size)
					ret = repad_dwarf_info(&dw, copy, id->d_size, ad->d_buf,
							       ad->d_size, abbrev);
				units = dw.units;
				cu_low = dw.cu_low;
				info = dw;	/* takes dw.loc_starts */
			} else {
				ret = repad_dwarf_aranges(&dw, copy, id->d_size);
			}
			if (!ret && dw.fixed) {
				g->buf = copy;
				g->size = id->d_size;
				copy = NULL;
			}
		}
		free(copy);
		free(rel);
		repad_dw_out_free(&o);
	}
	free(info.loc_starts);
	return ret;
}

int repad_object(const char *in, const char *out, struct repad_report *rep)
{
	struct repad rp = { .path = in, .in_fd = -1, .rep = rep };
	int ret;

	memset(rep, 0, sizeof(*rep));
	elf_version(EV_CURRENT);
	rp.e = elfio_open(in, 0);
	if (!rp.e)
		return errno ? -errno : -EINVAL;
	ret = check_input(&rp);
	if (ret)
		goto out;
	rp.riscv = elfio_ehdr(rp.e)->e_machine == EM_RISCV;
	rp.unit = rp.arch->nop_unit(elfio_ehdr(rp.e)->e_flags);
	if (rp.arch->align_padding &&
	    rp.arch->align_padding(elfio_ehdr(rp.e)->e_flags, REPAD_ALIGN, &rp.apad)) {
		elfio_error(in, "no %u-byte alignment padding for NOPs of %u bytes", REPAD_ALIGN,
			    rp.unit);
		ret = -EINVAL;
		goto out;
	}
	ret = open_input(&rp);
	if (ret)
		goto out;
	if (rp.arch->align_target)
		ret = scan_relax(&rp);
	if (ret)
		goto out;
	ret = plan(&rp);
	if (ret)
		goto out;
	ret = dwarf_fixups(&rp);
	if (ret)
		goto out;
	ret = load_relocated(&rp);
	if (ret)
		goto out;
	ret = mapping_symbols(&rp);
	if (ret)
		goto out;
	ret = write_output(&rp, out);
	if (ret)
		memset(rep, 0, sizeof(*rep));
out:
	for (size_t i = 0; rp.g && i < rp.nsec; i++) {
		free(rp.g[i].points);
		free(rp.g[i].sites);
		free(rp.g[i].relocated);
		free(rp.g[i].pads);
		free(rp.g[i].cum);
		free(rp.g[i].aligned);
		free(rp.g[i].maps);
		free(rp.g[i].buf);
	}
	free(rp.g);
	elf_end(rp.in);
	if (rp.in_fd >= 0)
		close(rp.in_fd);
	elfio_close(rp.e);
	return ret;
}
