// SPDX-License-Identifier: GPL-2.0-only
/*
 * embed.c - add the call-ops trampoline (or a room for the runtime's
 * trampolines) and a site table to a linked program (ET_EXEC or PIE) or a
 * shared library (ET_DYN with DT_SONAME: the same case as a PIE, its own
 * load bias added at run time) in a new loadable segment, and leave every
 * entry site in its disabled form.
 *
 * Strategy: one mechanism for every image, whether or not it links the
 * runtime: a new R+X PT_LOAD appended to the file.  The STYLE.md rules for
 * files with program headers hold:
 *
 *  - nothing loaded moves: the original bytes keep their offsets; only the
 *    sites' bytes, the ELF header and one program header entry change;
 *  - the segment goes after the end of the file, at an address above every
 *    PT_LOAD (rounded up to the largest page the architecture's kernels map,
 *    arch_ops.max_page_size: arm64 64 KiB), with offset and address
 *    congruent modulo that and p_align that;
 *  - its program header reuses the PT_NOTE entry (the notes stay in their
 *    sections; nothing at run time reads the main program's PT_NOTE), moved
 *    behind the last PT_LOAD if needed so that PT_LOADs stay sorted; PT_PHDR
 *    and the table itself stay where they are, so AT_PHDR stays right;
 *  - every added byte is covered by a section header: `.patchsite.sites`
 *    (the header and table) and `.patchsite.tramp` (code, or the room), plus a grown
 *    `.shstrtab` and the section header table, both written after the
 *    segment (the old ones are left in place, unreferenced).
 *
 * The segment (layout in runtime/callops.h) starts with struct
 * ps_seg_header, which the runtime finds by walking the main program's
 * PT_LOADs; then the sites, sorted by function (function, literal, the
 * NOP); then the trampoline blob: an anchor word holding its own link-time
 * address, the default no-op ops, a no-op function, and the trampoline.
 * An architecture whose runtime writes its own trampolines (no blob, no
 * literal) asks instead for a zero-filled room (arch_callops.room_size),
 * aligned to max_page_size, which the header's tramp and tramp_size name
 * and every site must reach; the file holds its zeros, so the PT_LOAD has
 * p_filesz == p_memsz (no bss to clear in an R+X segment).
 *
 * Every instruction is the architecture's (arch_ops.callops*, where it
 * declares ARCH_CAP_EMBED): what an undisturbed site looks like and where
 * its call goes (callops_site), the idle form written at its entry
 * (callops_disabled: MOV X9, X30; NOP), and the blob, written for its link-time address with
 * its anchor and the default ops filled in (callops_tramp; the code and
 * its calling convention are described in arch/arm64.c).  The BL that the
 * runtime writes must reach the trampoline from every site, which
 * encode_call, the same encoding, checks.  embed only places bytes and
 * computes addresses.  Which layouts record is told to scan for, and the
 * bytes before a site the architecture looks at (an ENDBR64), are its too
 * (struct arch_callops).
 *
 * PIE: the literals hold (ops - load bias) and the trampoline adds the bias,
 * computed PC-relatively from the anchor.  The alternative,
 * R_AARCH64_RELATIVE relocations for the literals, would be text
 * relocations: every page of text made writable by the dynamic linker
 * (DT_TEXTREL), refused under W^X policies and by ld.so's BTI/PAC hardening,
 * plus a new .rela.dyn and DT_RELA* edits.  With the bias in the trampoline
 * nothing is relocated: the segment and the text stay read-only, ET_EXEC and
 * PIE are the same case (bias 0), and the disabled literal, the link-time
 * address of the default ops, is valid in both.  The default ops are
 * recognised by address in the trampoline and return at once, so their func
 * field (link-time) is never called through a PIE bias.
 *
 * Sites whose literal is not 8-byte aligned cannot have their ops swapped
 * with one store: they are reported and left untouched (untraceable).  A
 * site out of BL range (128 MiB) of the trampoline is refused.
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arch/arch.h"
#include "elfio/elfio.h"
#include "recordsites/recordsites.h"
#include "rewriter/rewriter.h"
#include "runtime/segment.h"

/* The segment's layout: the one definition the runtime reads too. */
#define SEG_HDR		sizeof(struct ps_seg_header)
#define SEG_ENTRY	sizeof(struct ps_site)
#define HDR_FIELD(f)	offsetof(struct ps_seg_header, f)
#define SITE_FIELD(f)	offsetof(struct ps_site, f)


/*
 * Read up to n bytes of code at addr into buf, one instruction unit at a
 * time, each checked to lie in a section's bytes on its own; the number of
 * bytes read, short at the first unit that does not.
 */
static size_t read_code(struct elfio *e, uint64_t addr, uint8_t *buf, size_t n, unsigned int unit)
{
	size_t got = 0;

	while (n - got >= unit) {
		uint64_t a = addr + got;
		struct elfio_section *s = elfio_addr_to_sec(e, a);

		if (!s || a + unit > s->addr + s->shdr.sh_size || elfio_section_data(e, s) ||
		    !s->data || a - s->addr + unit > s->size)
			break;
		memcpy(buf + got, s->data + (a - s->addr), unit);
		got += unit;
	}
	return got;
}

/*
 * Read a site: n bytes from addr - back into buf, where the site is at addr.
 * The bytes before addr that lie before its section (or before any) read
 * as zero: a landing pad that belongs to the site's function is in the
 * same section.  The number of bytes of buf that hold the image's or those
 * zeros, short at the first unit after addr that cannot be read.
 */
static size_t read_site(struct elfio *e, uint64_t addr, size_t back, uint8_t *buf, size_t n,
			unsigned int unit)
{
	const struct elfio_section *s = elfio_addr_to_sec(e, addr);
	size_t k = back;

	if (!back)
		return read_code(e, addr, buf, n, unit);
	memset(buf, 0, n);
	while (k && (!s || addr - k < s->addr || addr - k > addr))
		k = k > unit ? k - unit : 0;
	return back - k + read_code(e, addr - k, buf + back - k, n - back + k, unit);
}

/* Write n bytes of v at address addr, through the rewrite. */
static int put_addr(struct elfio_rw *w, uint64_t addr, uint64_t v, int n)
{
	uint8_t b[8];

	put_le(b, v, n);
	return elfio_rw_patch_addr(w, addr, b, (size_t)n);
}

static const char *func_name(const struct site *s)
{
	return s->func && s->func->name ? s->func->name : "?";
}

struct esite {
	uint64_t func, lit, call;	/* lit: 0 without a literal */
	uint64_t idle;			/* where the idle form goes ... */
	unsigned int idle_len;		/* ... and its length */
};

static int esite_cmp(const void *a, const void *b)
{
	const struct esite *x = a, *y = b;

	return x->func < y->func ? -1 : x->func > y->func;
}

/*
 * The scans record makes for embed, one per layout the architecture states
 * (arch_callops): the patch area, entry calls, the entry NOP.
 */
#define EMBED_SCANS	3

static int embed_scans(const struct arch_callops *co, struct record_options *o)
{
	int k = 0;

	if (co->area_n) {
		record_options_init(&o[k]);
		o[k].patchable_n = co->area_n;
		o[k].patchable_m = co->area_m;
		o[k++].patchable_unit = co->area_unit;
	}
	if (co->entry_calls) {
		record_options_init(&o[k]);
		o[k++].force_calls = true;
	}
	if (co->entry_nop) {
		record_options_init(&o[k]);
		o[k++].force_nop_mcount = true;
	}
	for (int i = 0; i < k; i++)
		o[i].cap = ARCH_CAP_EMBED;
	return k;
}

/* A site embed takes: CALL_OPS with an ops literal, else an entry site. */
static bool entry_flavour(const struct arch_ops *ops, enum site_flavour f)
{
	if (ops->literal_size)
		return f == FLAVOUR_CALL_OPS;
	return f == FLAVOUR_FENTRY || f == FLAVOUR_ENTRY_NOP || f == FLAVOUR_PATCHABLE;
}

/*
 * What embed holds between its steps.  Every resource starts released;
 * embed_free releases what a step left.
 */
struct embed {
	struct elfio *e, *q;		/* q: the quiet copy the probes scan */
	const struct arch_ops *ops;
	const struct arch_callops *co;
	struct embed_report *rep;
	const uint8_t *buf;		/* the image's bytes, elfio's */
	uint64_t len, maxend;		/* file size; the end of the highest PT_LOAD */
	struct record_options so[EMBED_SCANS];
	struct record *r[EMBED_SCANS];
	int nscans;
	struct esite *v;		/* the sites, sorted by function */
	size_t n;
	struct elfio_rw *w;
	uint8_t *seg;			/* the new segment's bytes */
	uint64_t seg_off, seg_addr, seg_size, tramp, code_size;
};

/*
 * Plan: the image is a linked program of an architecture embed knows, its
 * headers whole, no patchsite segment yet, a PT_NOTE to turn into the new
 * PT_LOAD; the end of the address space the new segment goes above.
 */
static int embed_plan(struct embed *m)
{
	struct elfio *e = m->e;
	const Elf64_Ehdr *eh = elfio_ehdr(e);
	const struct arch_ops *ops;
	const uint8_t *buf;
	uint64_t len = 0, maxend = 0;
	size_t note = SIZE_MAX, nloads = 0, phnum, rawlen;
	int err = -EINVAL;

	char why[256];
	ops = arch_for(eh->e_machine, elfio_machine_name(eh->e_machine), ARCH_CAP_EMBED, why, sizeof(why));
	if (!ops) {
		elfio_err(e, "%s", why);
		goto out;
	}
	m->ops = ops;
	m->co = ops->callops;
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) {
		elfio_err(e, "embed needs a linked program (ET_EXEC or PIE)");
		goto out;
	}
	if (elfio_was_compressed(e)) {
		elfio_err(e, "a compressed image cannot be embedded into");
		goto out;
	}
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 ||
	    eh->e_phnum == PN_XNUM || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shnum == 0 || eh->e_shstrndx == SHN_UNDEF || eh->e_shstrndx >= eh->e_shnum) {
		elfio_err(e, "embed needs program headers, section headers and .shstrtab "
			  "without extended numbering");
		goto out;
	}
	/* the bytes elfio has open (validated there), never the path opened again */
	buf = elfio_raw(e, &rawlen);
	len = rawlen;
	if (!buf || len != elfio_file_size(e)) {
		elfio_err(e, "the image's bytes are not available");
		goto out;
	}
	phnum = eh->e_phnum;
	if (!elfio_header_tables_inside(e)) {
		elfio_err(e, "program or section header table is past the end of the file");
		goto out;
	}

	/* Program headers: the end of the address space, a PT_NOTE to reuse. */
	for (size_t i = 0; i < phnum; i++) {
		struct elfio_phdr ph;

		if ((err = elfio_phdr_read(e, i, &ph)))
			goto out;	/* not reached: the table is inside the file */
		err = -EINVAL;
		if (ph.type == PT_LOAD) {
			uint64_t va = ph.vaddr, msz = ph.memsz, fo = ph.offset, fsz = ph.filesz;

			if (va + msz < va || va + msz > UINT64_MAX - 2 * ops->max_page_size) {
				elfio_err(e, "PT_LOAD %zu wraps around the address space", i);
				goto out;
			}
			if (fsz >= 8 && fo <= len - 8 && get_le(buf + fo, 8) == PS_SEG_MAGIC) {
				elfio_err(e, "already embedded (a PT_LOAD holds a patchsite "
					  "segment)");
				goto out;
			}
			if (va + msz > maxend)
				maxend = va + msz;
			nloads++;
		} else if (ph.type == PT_NOTE && note == SIZE_MAX) {
			note = i;
		}
	}
	if (elfio_find_section_by_name(e, ".patchsite.sites") ||
	    elfio_find_section_by_name(e, ".patchsite.tramp")) {
		elfio_err(e, "already embedded (it has a .patchsite.sites or .patchsite.tramp section; "
			  "an older libpatchsite-callops.a reserved them too: relink with this one)");
		goto out;
	}
	if (!nloads) {
		elfio_err(e, "no PT_LOAD program header");
		goto out;
	}
	if (note == SIZE_MAX) {
		elfio_err(e, "no PT_NOTE program header to turn into the new segment's PT_LOAD");
		goto out;
	}
	Elf64_Shdr names;
	if ((err = elfio_shdr_read(e, eh->e_shstrndx, &names)))
		goto out;	/* not reached: the table is inside the file */
	err = -EINVAL;
	if (names.sh_type != SHT_STRTAB || names.sh_offset > len ||
	    names.sh_size > len - names.sh_offset) {
		elfio_err(e, "the section name table is not a string table inside the file");
		goto out;
	}

	m->buf = buf;
	m->len = len;
	m->maxend = maxend;
	return 0;
out:
	return err;
}

/* Sites: record's scans, each site decoded, one table sorted by function. */
static int embed_sites(struct embed *m, const char *in)
{
	struct elfio *e = m->e;
	const struct arch_ops *ops = m->ops;
	const struct arch_callops *co = m->co;
	struct embed_report *rep = m->rep;
	struct record_options *so = m->so;
	struct record **r = m->r;
	struct esite *v;
	size_t n = 0, total = 0;
	int err = -EINVAL;

	/*
	 * The sites.  embed's contract is the layouts the architecture states
	 * (arm64: the CALL_OPS layout, =4,2; x86_64: entry calls, the entry
	 * NOP, the =5 area), so they are stated, not voted: a program with a
	 * handful of traced functions is too small for a vote.  With several
	 * layouts each scan is a probe on a quiet copy of the image (a layout
	 * the program does not use is no error).  Each site is still verified
	 * by decoding.
	 */
	m->nscans = embed_scans(co, so);
	if (m->nscans > 1 &&
	    !(m->q = elfio_open_memory(in, m->buf, (size_t)m->len, ELFIO_QUIET))) {
		err = -ENOMEM;
		elfio_err(e, "out of memory for a copy of the image to scan");
		goto out;
	}
	for (int k = 0; k < m->nscans; k++) {
		if ((err = record_scan(m->q ? m->q : e, &so[k], &r[k]))) {
			if (!m->q || err == -ENOMEM) {
				if (m->q)
					elfio_err(e, "out of memory for the scan of its sites");
				goto out;
			}
			r[k] = NULL;	/* a probe: the program does not use this layout */
			continue;
		}
		for (size_t i = 0; i < r[k]->nsites; i++)
			total += entry_flavour(ops, r[k]->sites[i].flavour);
	}
	err = -EINVAL;
	if (!total) {
		elfio_err(e, "%s", co->no_sites);
		goto out;
	}
	if (!(v = m->v = elfio_calloc(total, sizeof(*v)))) {
		err = -ENOMEM;
		elfio_err(e, "out of memory for %zu entry sites", total);
		goto out;
	}
	for (int k = 0; k < m->nscans; k++) {
		for (size_t i = 0; r[k] && i < r[k]->nsites; i++) {
			const struct site *s = &r[k]->sites[i];
			uint64_t at = s->addr - co->site_back, func;
			struct arch_callops_site cs;
			uint8_t area[ARCH_CALLOPS_SITE_MAX];	/* site_len at most (arch_lacks()) */
			size_t want = co->site_len < sizeof(area) ? co->site_len : sizeof(area);
			size_t got = 0;
			int ret = ARCH_CALLOPS_MISALIGNED;

			if (!entry_flavour(ops, s->flavour))
				continue;
			/* record has judged the literal against its --align (8); the arch's rule decides */
			if (!s->misaligned) {
				got = read_site(e, s->addr, co->site_back, area, want, ops->insn_align);
				ret = ops->callops_site(area, got, at, &cs);
			}
			if (ret == ARCH_CALLOPS_MISALIGNED) {
				printf("misaligned: %s at 0x%" PRIx64 ": ops literal 0x%" PRIx64
				       " not 8-byte aligned, left untraced\n", func_name(s),
				       s->addr + ops->literal_size, s->addr);
				rep->misaligned++;
				continue;
			}
			if (ret != ARCH_CALLOPS_OK && got < co->site_len) {
				elfio_err(e, "cannot read the entry of %s at 0x%" PRIx64, func_name(s),
					  s->addr + ops->literal_size);
				goto out;
			}
			if (ret != ARCH_CALLOPS_OK) {
				elfio_err(e, "%s at 0x%" PRIx64 " is not %s", func_name(s),
					  s->addr + ops->literal_size, co->site_desc);
				goto out;
			}
			func = at + cs.entry_off;
			/* a site inside its function: the entry is that function's */
			if (cs.entry_off <= co->site_back && s->func && s->func->addr != func &&
			    s->func->addr <= s->addr && s->addr - s->func->addr < s->func->size) {
				elfio_err(e, "%s at 0x%" PRIx64 ": the site at 0x%" PRIx64 " decodes "
					  "as the entry of a function at 0x%" PRIx64, func_name(s),
					  s->func->addr, s->addr, func);
				goto out;
			}
			v[n].func = func;
			v[n].lit = ops->literal_size ? s->addr : 0;
			v[n].call = func + cs.call_off;
			v[n].idle = func + cs.disabled_off;
			v[n++].idle_len = cs.disabled_len;
		}
	}
	if (!n) {
		elfio_err(e, "every CALL_OPS site is misaligned: nothing can be traced");
		goto out;
	}
	/* one table, sorted by function; two layouts never claim one function */
	qsort(v, n, sizeof(*v), esite_cmp);
	for (size_t i = 1; i < n; i++)
		if (v[i].func == v[i - 1].func) {
			elfio_err(e, "two patch-site layouts at the function at 0x%" PRIx64,
				  v[i].func);
			goto out;
		}
	m->n = n;
	return 0;
out:
	return err;
}

/* Where the new segment lies and what is in it. */
struct seg_plan {
	uint64_t off, addr, size;	/* in the file, in memory, its size */
	uint64_t tb_off;		/* the trampoline's blob (after header and table) */
	uint64_t room_off;		/* or the room, page aligned */
	uint64_t tramp;			/* the address the sites call */
	uint64_t dops;			/* the default ops' address (0: none) */
};

/*
 * The output, through elfio's rewrite: the input | pad | the segment |
 * .shstrtab | section headers; its PT_LOAD takes over the PT_NOTE entry.
 * The segment: header and table, then the blob at tb_off, or the room at
 * room_off aligned to max_page_size (elfio places the segment at an
 * address congruent to its file offset, the file's end rounded up to 16).
 * 0 or -errno.
 */
static int place_segment(struct embed *m, struct seg_plan *sp)
{
	const struct arch_ops *ops = m->ops;
	const struct arch_callops *co = m->co;
	uint64_t len = m->len;
	int err;

	sp->tb_off = SEG_HDR + m->n * SEG_ENTRY;		/* a multiple of 16 */
	sp->size = sp->tb_off + co->tramp_size;
	sp->room_off = 0;
	if (co->room_size) {
		uint64_t o16 = (len + 15) & ~15ull, pg = ops->max_page_size;

		sp->room_off = ((o16 + sp->size + pg - 1) & ~(pg - 1)) - o16;
		sp->size = sp->room_off + co->room_size;
	}
	if ((err = elfio_rw_place_segment(m->w, sp->size, ops->max_page_size, m->maxend, &sp->off,
					  &sp->addr)))
		return err;
	if (co->room_size && ((sp->addr + sp->room_off) % ops->max_page_size ||
			      sp->off != ((len + 15) & ~15ull))) {
		elfio_err(m->e, "the trampoline room at 0x%" PRIx64 " is not page aligned: a bug, "
			  "please report it", sp->addr + sp->room_off);
		return -EINVAL;
	}
	sp->dops = co->tramp_size ? sp->addr + sp->tb_off + co->tramp_default_ops : 0;
	sp->tramp = co->tramp_size ? sp->addr + sp->tb_off + co->tramp_entry
				   : sp->addr + sp->room_off;
	return 0;
}

/*
 * The call the runtime writes at each site, encoded here once to know it
 * can be, and the idle form, which may hold part of it (riscv64's auipc).
 * 0 or -EINVAL (said).
 */
static int check_reach(struct embed *m, const struct seg_plan *sp)
{
	const struct arch_ops *ops = m->ops;
	const struct arch_callops *co = m->co;
	const struct esite *v = m->v;

	for (size_t i = 0; i < m->n; i++) {
		uint8_t call[16], idle[64];
		uint64_t last = co->tramp_size ? sp->tramp : sp->tramp + co->room_size - 1;

		if (ops->call_len > sizeof(call) || ops->encode_call(call, v[i].call, sp->tramp) ||
		    ops->encode_call(call, v[i].call, last) || v[i].idle_len > sizeof(idle) ||
		    ops->callops_disabled(idle, v[i].idle_len, v[i].idle, sp->tramp)) {
			const struct elfio_symbol *f = elfio_function_at(m->e, v[i].func, 8);

			elfio_err(m->e, "%s at 0x%" PRIx64 " is out of %s of the trampoline%s at "
				  "0x%" PRIx64 " (the new segment goes above the highest PT_LOAD)",
				  f && f->name ? f->name : "?", v[i].func, co->reach,
				  co->tramp_size ? "" : " room", sp->tramp);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * The sites: default ops in the literal, the idle form at the entry,
 * patched a unit at a time as the site was read.  0 or -errno.
 */
static int patch_sites(struct embed *m, const struct seg_plan *sp)
{
	const struct arch_ops *ops = m->ops;
	const struct esite *v = m->v;
	int err;

	for (size_t i = 0; i < m->n; i++) {
		uint8_t idle[64];

		if (ops->literal_size &&
		    (err = put_addr(m->w, v[i].lit, sp->dops, (int)ops->literal_size)))
			return err;
		if (v[i].idle_len > sizeof(idle) || ops->callops_disabled(idle, v[i].idle_len, v[i].idle, sp->tramp)) {
			elfio_err(m->e, "cannot encode the idle form of the site at 0x%" PRIx64
				  ": a bug, please report it", v[i].func);
			return -EINVAL;
		}
		for (unsigned int k = 0, u = ops->insn_align; k < v[i].idle_len; k += u)
			if ((err = elfio_rw_patch_addr(m->w, v[i].idle + k, idle + k, u)))
				return err;
	}
	return 0;
}

/* The segment's bytes: header, table, trampoline.  0 or -EINVAL (said). */
static int fill_segment(struct embed *m, const struct seg_plan *sp, uint8_t *q0)
{
	const struct arch_callops *co = m->co;
	const struct esite *v = m->v;

	put_le(q0 + HDR_FIELD(magic), PS_SEG_MAGIC, 8);
	put_le(q0 + HDR_FIELD(self), sp->addr, 8);
	put_le(q0 + HDR_FIELD(count), m->n, 8);
	put_le(q0 + HDR_FIELD(sites), sp->addr + SEG_HDR, 8);
	put_le(q0 + HDR_FIELD(tramp), sp->tramp, 8);
	put_le(q0 + HDR_FIELD(default_ops), sp->dops, 8);
	put_le(q0 + HDR_FIELD(tramp_size), co->room_size, 8);
	for (size_t i = 0; i < m->n; i++) {
		uint8_t *t = q0 + SEG_HDR + i * SEG_ENTRY;

		put_le(t + SITE_FIELD(func), v[i].func, 8);
		put_le(t + SITE_FIELD(literal), v[i].lit, 8);
		put_le(t + SITE_FIELD(call), v[i].call, 8);
	}
	if (co->tramp_size &&
	    m->ops->callops_tramp(q0 + sp->tb_off, co->tramp_size, sp->addr + sp->tb_off)) {
		elfio_err(m->e, "cannot write the trampoline at 0x%" PRIx64
			  ": a bug, please report it", sp->addr + sp->tb_off);
		return -EINVAL;
	}
	return 0;
}

/*
 * The segment and its two sections: the header and table (with the
 * padding before the room), the code or the room.  0 or -errno.
 */
static int add_segment(struct embed *m, const struct seg_plan *sp, uint64_t *code_size)
{
	const struct arch_callops *co = m->co;
	uint64_t code_off = co->tramp_size ? sp->tb_off : sp->room_off;
	int err;

	*code_size = co->tramp_size ? co->tramp_size : co->room_size;
	Elf64_Shdr sites_sh = { .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC, .sh_addr = sp->addr,
			       .sh_offset = 0, .sh_size = code_off, .sh_addralign = 8 };
	Elf64_Shdr tramp_sh = { .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			       .sh_addr = sp->addr + code_off, .sh_offset = code_off,
			       .sh_size = *code_size,
			       .sh_addralign = co->tramp_size ? 16 : m->ops->max_page_size };
	if ((err = elfio_rw_add_segment(m->w, PF_R | PF_X, m->seg)) ||
	    (err = elfio_rw_add_section(m->w, ".patchsite.sites", &sites_sh)) ||
	    (err = elfio_rw_add_section(m->w, ".patchsite.tramp", &tramp_sh)))
		return err;
	return 0;
}

/*
 * Segment: placed after the file's last byte, above every PT_LOAD; each
 * site's call reaches the trampoline; the sites get their idle form and
 * default ops through the rewrite; the segment's bytes and its two sections.
 */
static int embed_segment(struct embed *m)
{
	struct seg_plan sp;
	uint64_t code_size;
	int err;

	m->w = elfio_rw_new(m->e);
	if (!m->w)
		return -ENOMEM;
	if ((err = place_segment(m, &sp)) || (err = check_reach(m, &sp)))
		return err;
	if (!(m->seg = elfio_calloc(1, sp.size))) {
		elfio_err(m->e, "out of memory for the new segment (%zu bytes)", (size_t)sp.size);
		return -ENOMEM;
	}
	if ((err = patch_sites(m, &sp)) || (err = fill_segment(m, &sp, m->seg)) ||
	    (err = add_segment(m, &sp, &code_size)))
		return err;
	m->seg_off = sp.off;
	m->seg_addr = sp.addr;
	m->seg_size = sp.size;
	m->tramp = sp.tramp;
	m->code_size = code_size;
	return 0;
}

static void embed_free(struct embed *m)
{
	elfio_rw_free(m->w);
	elfio_free(m->seg);
	elfio_free(m->v);
	for (int k = 0; k < m->nscans; k++)
		record_free(m->r[k]);
	elfio_close(m->q);
	elfio_close(m->e);
}

/* plan, sites, segment, commit */
int embed_image(const char *in, const char *out, struct embed_report *rep)
{
	struct embed_report dummy;
	struct embed m = { .rep = rep ? rep : &dummy };
	int err;

	memset(m.rep, 0, sizeof(*m.rep));
	m.e = elfio_open(in, 0);
	if (!m.e)
		return errno ? -errno : -EINVAL;
	if ((err = embed_plan(&m)) || (err = embed_sites(&m, in)) || (err = embed_segment(&m)) ||
	    (err = elfio_rw_commit(m.w, out, NULL)))
		goto out;
	m.rep->sites = m.n;
	m.rep->tramp = m.tramp;
	m.rep->tramp_bytes = m.code_size;
	m.rep->seg_addr = m.seg_addr;
	m.rep->seg_offset = m.seg_off;
	m.rep->seg_size = m.seg_size;
out:
	embed_free(&m);
	return err;
}
