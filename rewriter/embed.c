// SPDX-License-Identifier: GPL-2.0-only
/*
 * embed.c - add the arm64 call-ops trampoline and a site table to a linked
 * program (ET_EXEC or PIE) in a new loadable segment, and leave every
 * CALL_OPS site in its disabled form.
 *
 * Strategy: one mechanism for every image, whether or not it links the
 * runtime: a new R+X PT_LOAD appended to the file.  The STYLE.md rules for
 * files with program headers hold:
 *
 *  - nothing loaded moves: the original bytes keep their offsets; only the
 *    sites' bytes, the ELF header and one program header entry change;
 *  - the segment goes after the end of the file, at an address above every
 *    PT_LOAD (rounded up to 64 KiB, the largest arm64 page), with offset and
 *    address congruent modulo 64 KiB and p_align 64 KiB;
 *  - its program header reuses the PT_NOTE entry (the notes stay in their
 *    sections; nothing at run time reads the main program's PT_NOTE), moved
 *    behind the last PT_LOAD if needed so that PT_LOADs stay sorted; PT_PHDR
 *    and the table itself stay where they are, so AT_PHDR stays right;
 *  - every added byte is covered by a section header: `.patchsite.sites`
 *    (the header and table) and `.patchsite.tramp` (code), plus a grown
 *    `.shstrtab` and the section header table, both written after the
 *    segment (the old ones are left in place, unreferenced).
 *
 * The segment (layout in runtime/callops.h) starts with struct
 * ps_seg_header, which the runtime finds by walking the main program's
 * PT_LOADs; then the sites, sorted by function (function, literal, the
 * NOP); then the trampoline blob: an anchor word holding its own link-time
 * address, the default no-op ops, a no-op function, and the trampoline.
 *
 * PIE: the literals hold (ops - load bias) and the trampoline adds the bias,
 * computed PC-relatively as (ADR anchor) - [anchor].  The alternative,
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
 * The trampoline (written from the ABI described in the CALL_OPS series,
 * not copied): it is entered by the BL at func+4 (func+8 after BTI C), with
 * x30 = the address after the BL and x9 = the caller's LR.  The literal is
 * at func-8 and 8-aligned, so x30 is literal+16 or literal+20: clearing the
 * low 3 bits gives literal+16 in both cases.  An ops with direct_call set
 * is entered by `BR X17` at once, with x9 and x30 as they are (the kernel's
 * direct-call convention).  Otherwise it saves x0-x8 (arguments and the
 * indirect-result register), x9, fp, the resume address and q0-q7
 * (user-space callbacks may use FP/SIMD), calls
 * ops->func(func, parent_ip, ops, regs), restores everything and returns
 * with `RET x10` (RET is not subject to BTI) and x30 = the caller's LR, so
 * the function's own PAC/frame code sees its real return address.
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

#include "elfio.h"
#include "recordsites.h"
#include "rewriter.h"
#include "segment.h"

#define A64_NOP		0xd503201fu
#define A64_BTI_C	0xd503245fu
#define A64_BTI_JC	0xd50324dfu
#define A64_MOV_X9_LR	0xaa1e03e9u	/* ORR x9, xzr, x30 */

#define SEG_ALIGN	0x10000u	/* 64 KiB: the largest arm64 page */

/* The segment's layout: the one definition the runtime reads too. */
#define SEG_HDR		sizeof(struct ps_seg_header)
#define SEG_ENTRY	sizeof(struct ps_site)
#define HDR_FIELD(f)	offsetof(struct ps_seg_header, f)
#define SITE_FIELD(f)	offsetof(struct ps_site, f)

/* The trampoline blob; offsets of its parts. */
#define TB_ANCHOR	0x00	/* .8byte: link-time address of the anchor */
#define TB_DOPS		0x08	/* default ops: func, priv, direct_call */
#define TB_NOOP		0x20	/* the default ops' func */
#define TB_ENTRY	0x30	/* the BL target */

static const uint32_t tramp_code[] = {
	0, 0,		/* anchor (filled in)					*/
	0, 0, 0, 0, 0, 0, /* default ops: func (filled in), priv, direct_call	*/
	0xd503245f,	/* noop:  bti	c					*/
	0xd65f03c0,	/*	ret						*/
	0xd503201f,	/*	nop						*/
	0xd503201f,	/*	nop						*/
	0xd503245f,	/* entry: bti	c					*/
	0x927df3ca,	/*	and	x10, x30, #~7		literal + 16	*/
	0xf85f014b,	/*	ldur	x11, [x10, #-16]	ops - bias	*/
	0x10fffe30,	/*	adr	x16, anchor				*/
	0x58fffe11,	/*	ldr	x17, anchor		its link address */
	0xcb110210,	/*	sub	x16, x16, x17		bias		*/
	0x8b10016b,	/*	add	x11, x11, x16		ops		*/
	0x10fffdf1,	/*	adr	x17, default_ops			*/
	0xeb11017f,	/*	cmp	x11, x17				*/
	0x54000460,	/*	b.eq	fast					*/
	0xf9400971,	/*	ldr	x17, [x11, #16]		ops->direct_call */
	0xb5000491,	/*	cbnz	x17, direct				*/
	0xd103c3ff,	/*	sub	sp, sp, #240				*/
	0xa90007e0,	/*	stp	x0, x1, [sp]				*/
	0xa9010fe2,	/*	stp	x2, x3, [sp, #16]			*/
	0xa90217e4,	/*	stp	x4, x5, [sp, #32]			*/
	0xa9031fe6,	/*	stp	x6, x7, [sp, #48]			*/
	0xa90427e8,	/*	stp	x8, x9, [sp, #64]	x9: caller's LR	*/
	0xa9057bfd,	/*	stp	x29, x30, [sp, #80]	fp, resume pc	*/
	0xad0307e0,	/*	stp	q0, q1, [sp, #96]			*/
	0xad040fe2,	/*	stp	q2, q3, [sp, #128]			*/
	0xad0517e4,	/*	stp	q4, q5, [sp, #160]			*/
	0xad061fe6,	/*	stp	q6, q7, [sp, #192]			*/
	0xa90e7bfd,	/*	stp	x29, x30, [sp, #224]	frame record	*/
	0x910383fd,	/*	add	x29, sp, #224				*/
	0xd1002140,	/*	sub	x0, x10, #8		ip = func	*/
	0xaa0903e1,	/*	mov	x1, x9			parent_ip	*/
	0xaa0b03e2,	/*	mov	x2, x11			ops		*/
	0x910003e3,	/*	mov	x3, sp			regs		*/
	0xf9400170,	/*	ldr	x16, [x11]		ops->func	*/
	0xd63f0200,	/*	blr	x16					*/
	0xad4307e0,	/*	ldp	q0, q1, [sp, #96]			*/
	0xad440fe2,	/*	ldp	q2, q3, [sp, #128]			*/
	0xad4517e4,	/*	ldp	q4, q5, [sp, #160]			*/
	0xad461fe6,	/*	ldp	q6, q7, [sp, #192]			*/
	0xa94007e0,	/*	ldp	x0, x1, [sp]				*/
	0xa9410fe2,	/*	ldp	x2, x3, [sp, #16]			*/
	0xa94217e4,	/*	ldp	x4, x5, [sp, #32]			*/
	0xa9431fe6,	/*	ldp	x6, x7, [sp, #48]			*/
	0xa94427e8,	/*	ldp	x8, x9, [sp, #64]			*/
	0xa9452bfd,	/*	ldp	x29, x10, [sp, #80]	fp, resume pc	*/
	0x9103c3ff,	/*	add	sp, sp, #240				*/
	0xaa0903fe,	/*	mov	x30, x9			caller's LR back */
	0xd65f0140,	/*	ret	x10					*/
	0xaa1e03ea,	/* fast:  mov	x10, x30	default ops: nothing to do */
	0xaa0903fe,	/*	mov	x30, x9					*/
	0xd65f0140,	/*	ret	x10					*/
	0xd61f0220,	/* direct: br	x17	lands on the target's BTI C	*/
};
#define TB_SIZE		((uint64_t)sizeof(tramp_code))


static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}


static int read_u32(struct elfio *e, uint64_t addr, uint32_t *v)
{
	struct elfio_section *s = elfio_addr_to_sec(e, addr);

	if (!s || addr + 4 > s->addr + s->shdr.sh_size || elfio_section_data(e, s) ||
	    !s->data || addr - s->addr + 4 > s->size)
		return -ERANGE;
	*v = (uint32_t)get_le(s->data + (addr - s->addr), 4);
	return 0;
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
	uint64_t func, lit, call;
};

/* Offsets of Elf64_Phdr fields in the file. */
#define PH_TYPE		0
#define PH_FLAGS	4
#define PH_OFFSET	8
#define PH_VADDR	16
#define PH_PADDR	24
#define PH_FILESZ	32
#define PH_MEMSZ	40
#define PH_ALIGN	48

int embed_image(const char *in, const char *out, struct embed_report *rep)
{
	struct embed_report dummy;
	struct record_options o;
	struct record *r = NULL;
	struct elfio *e;
	struct esite *v = NULL;
	struct elfio_rw *w = NULL;
	const uint8_t *buf, *p;
	uint8_t *seg = NULL;
	uint64_t len = 0, n = 0, total = 0, maxend = 0, phoff, shoff;
	uint64_t seg_off, seg_addr, seg_size, tb_off, tramp, dops;
	uint64_t old_str_off, old_str_size;
	const GElf_Ehdr *eh;
	size_t note = SIZE_MAX, nloads = 0, shnum, shstrndx, phnum, rawlen;
	int err = -EINVAL;

	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof(*rep));
	e = elfio_open(in, 0);
	if (!e)
		return errno ? -errno : -EINVAL;
	eh = elfio_ehdr(e);

	if (eh->e_machine != EM_AARCH64) {
		elfio_err(e, "embed handles arm64 images only");
		goto out;
	}
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
	phoff = eh->e_phoff;
	phnum = eh->e_phnum;
	shoff = eh->e_shoff;
	shnum = eh->e_shnum;
	shstrndx = eh->e_shstrndx;
	if (phoff > len || (len - phoff) / sizeof(Elf64_Phdr) < phnum ||
	    shoff > len || (len - shoff) / sizeof(Elf64_Shdr) < shnum) {
		elfio_err(e, "program or section header table is past the end of the file");
		goto out;
	}

	/* Program headers: the end of the address space, a PT_NOTE to reuse. */
	for (size_t i = 0; i < phnum; i++) {
		p = buf + phoff + i * sizeof(Elf64_Phdr);
		uint32_t type = (uint32_t)get_le(p + PH_TYPE, 4);

		if (type == PT_LOAD) {
			uint64_t va = get_le(p + PH_VADDR, 8), msz = get_le(p + PH_MEMSZ, 8);
			uint64_t fo = get_le(p + PH_OFFSET, 8), fsz = get_le(p + PH_FILESZ, 8);

			if (va + msz < va || va + msz > UINT64_MAX - 2 * SEG_ALIGN) {
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
		} else if (type == PT_NOTE && note == SIZE_MAX) {
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
	p = buf + shoff + shstrndx * sizeof(Elf64_Shdr);
	old_str_off = get_le(p + 24, 8);
	old_str_size = get_le(p + 32, 8);
	if (get_le(p + 4, 4) != SHT_STRTAB || old_str_off > len || old_str_size > len - old_str_off) {
		elfio_err(e, "the section name table is not a string table inside the file");
		goto out;
	}

	/*
	 * The sites.  embed's contract is the CALL_OPS layout (=4,2), so it is
	 * stated, not voted: a program with a handful of traced functions is too
	 * small for a vote.  Each site is still verified by decoding.
	 */
	record_options_init(&o);
	o.patchable_n = 4;
	o.patchable_m = 2;
	if ((err = record_scan(e, &o, &r)))
		goto out;
	err = -EINVAL;
	for (size_t i = 0; i < r->nsites; i++)
		total += r->sites[i].flavour == FLAVOUR_CALL_OPS;
	if (!total) {
		elfio_err(e, "no CALL_OPS patch sites: build with -fpatchable-function-entry=4,2 "
			  "-falign-functions=8");
		goto out;
	}
	if (!(v = calloc(total, sizeof(*v)))) {
		err = -ENOMEM;
		elfio_err(e, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < r->nsites; i++) {
		const struct site *s = &r->sites[i];
		uint64_t lit = s->addr, func = lit + 8, call;
		uint32_t w0, w1, w2, l0, l1;

		if (s->flavour != FLAVOUR_CALL_OPS)
			continue;
		if (s->misaligned || lit % 8) {
			printf("misaligned: %s at 0x%" PRIx64 ": ops literal 0x%" PRIx64
			       " not 8-byte aligned, left untraced\n", func_name(s), func, lit);
			rep->misaligned++;
			continue;
		}
		if (read_u32(e, lit, &l0) || read_u32(e, lit + 4, &l1) ||
		    read_u32(e, func, &w0) || read_u32(e, func + 4, &w1) ||
		    read_u32(e, func + 8, &w2)) {
			elfio_err(e, "cannot read the entry of %s at 0x%" PRIx64, func_name(s), func);
			goto out;
		}
		call = func + 4;
		if (w0 == A64_BTI_C || w0 == A64_BTI_JC) {
			call += 4;
			w0 = w1;
			w1 = w2;
		}
		if (l0 != A64_NOP || l1 != A64_NOP || w0 != A64_NOP || w1 != A64_NOP) {
			elfio_err(e, "%s at 0x%" PRIx64 " is not two NOPs before and two "
				  "NOPs at its entry: not a -fpatchable-function-entry=4,2 site", func_name(s), func);
			goto out;
		}
		v[n].func = func;
		v[n].lit = lit;
		v[n++].call = call;
	}
	if (!n) {
		elfio_err(e, "every CALL_OPS site is misaligned: nothing can be traced");
		goto out;
	}

	/*
	 * The output, through elfio's rewrite: the input | pad | the segment |
	 * .shstrtab | section headers; its PT_LOAD takes over the PT_NOTE entry.
	 */
	w = elfio_rw_new(e);
	if (!w) {
		err = -ENOMEM;
		goto out;
	}
	tb_off = SEG_HDR + n * SEG_ENTRY;		/* a multiple of 16 */
	seg_size = tb_off + TB_SIZE;
	if ((err = elfio_rw_place_segment(w, seg_size, SEG_ALIGN, maxend, &seg_off, &seg_addr)))
		goto out;
	err = -EINVAL;
	tramp = seg_addr + tb_off + TB_ENTRY;
	dops = seg_addr + tb_off + TB_DOPS;

	for (size_t i = 0; i < n; i++) {
		int64_t d = (int64_t)(tramp - v[i].call);

		if (d < -(1LL << 27) || d >= (1LL << 27)) {
			const struct elfio_symbol *f = elfio_function_at(e, v[i].func, 8);

			elfio_err(e, "%s at 0x%" PRIx64 " is out of BL range (128 MiB) of the "
				  "trampoline at 0x%" PRIx64 " (the new segment goes above the "
				  "highest PT_LOAD)", f && f->name ? f->name : "?", v[i].func,
				  tramp);
			goto out;
		}
	}

	if (!(seg = calloc(1, seg_size))) {
		err = -ENOMEM;
		elfio_err(e, "out of memory");
		goto out;
	}

	/* The sites: default ops in the literal, MOV X9, X30; NOP at the entry. */
	for (size_t i = 0; i < n; i++)
		if ((err = put_addr(w, v[i].lit, dops, 8)) ||
		    (err = put_addr(w, v[i].call - 4, A64_MOV_X9_LR, 4)) ||
		    (err = put_addr(w, v[i].call, A64_NOP, 4)))
			goto out;

	/* The segment. */
	uint8_t *q0 = seg;
	put_le(q0 + HDR_FIELD(magic), PS_SEG_MAGIC, 8);
	put_le(q0 + HDR_FIELD(self), seg_addr, 8);
	put_le(q0 + HDR_FIELD(count), n, 8);
	put_le(q0 + HDR_FIELD(sites), seg_addr + SEG_HDR, 8);
	put_le(q0 + HDR_FIELD(tramp), tramp, 8);
	put_le(q0 + HDR_FIELD(default_ops), dops, 8);
	for (size_t i = 0; i < n; i++) {
		uint8_t *q = q0 + SEG_HDR + i * SEG_ENTRY;

		put_le(q + SITE_FIELD(func), v[i].func, 8);
		put_le(q + SITE_FIELD(literal), v[i].lit, 8);
		put_le(q + SITE_FIELD(call), v[i].call, 8);
	}
	for (size_t i = 0; i < TB_SIZE / 4; i++)
		put_le(q0 + tb_off + 4 * i, tramp_code[i], 4);
	put_le(q0 + tb_off + TB_ANCHOR, seg_addr + tb_off + TB_ANCHOR, 8);
	put_le(q0 + tb_off + TB_DOPS, seg_addr + tb_off + TB_NOOP, 8);

	/* The segment's two sections: the header and table, the code. */
	GElf_Shdr sites_sh = { .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC, .sh_addr = seg_addr,
			       .sh_offset = 0, .sh_size = tb_off, .sh_addralign = 8 };
	GElf_Shdr tramp_sh = { .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			       .sh_addr = seg_addr + tb_off, .sh_offset = tb_off,
			       .sh_size = TB_SIZE, .sh_addralign = 16 };
	if ((err = elfio_rw_add_segment(w, PF_R | PF_X, seg)) ||
	    (err = elfio_rw_add_section(w, ".patchsite.sites", &sites_sh)) ||
	    (err = elfio_rw_add_section(w, ".patchsite.tramp", &tramp_sh)))
		goto out;

	if ((err = elfio_rw_commit(w, out, NULL)))
		goto out;
	rep->sites = n;
	rep->tramp = tramp;
	rep->tramp_bytes = TB_SIZE;
	rep->seg_addr = seg_addr;
	rep->seg_offset = seg_off;
	rep->seg_size = seg_size;
	err = 0;
out:
	elfio_rw_free(w);
	free(seg);
	free(v);
	record_free(r);
	elfio_close(e);
	return err;
}
