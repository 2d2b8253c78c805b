// SPDX-License-Identifier: GPL-2.0-only
/*
 * embed.c - put the arm64 call-ops trampoline and a site table into a
 * linked program, and leave every CALL_OPS site in its disabled form.
 *
 * Strategy: the program links libpatchsite-callops.a (runtime/), which
 * reserves the space we fill: `.patchsite.tramp` (allocated and executable,
 * in the text segment, so a BL from every site reaches it) and
 * `.patchsite.sites` (writable data: struct ps_site_table of
 * runtime/callops.h, whose header holds the address of the default no-op
 * ops).  Nothing moves and no segment is added, so the whole rewrite is an
 * elfio edit list (bytes replaced at file offsets) written atomically:
 *
 *  - the trampoline's code into .patchsite.tramp;
 *  - each aligned site's 8-byte literal (func - 8) := &ps_default_ops;
 *  - each site's two entry NOPs (after a BTI C if there is one) := the
 *    kernel's disabled form `MOV X9, X30; NOP`; the runtime later turns the
 *    NOP into `BL trampoline`;
 *  - the table: one entry per site (function, literal, the NOP), sorted by
 *    function address, the trampoline's address, and the "embedded" magic.
 *
 * Sites whose literal is not 8-byte aligned cannot have their ops swapped
 * with one store: they are reported and left untouched (untraceable).
 *
 * The trampoline (written from the ABI described in the CALL_OPS series,
 * not copied): it is entered by the BL at func+4 (func+8 after BTI C), with
 * x30 = the address after the BL and x9 = the caller's LR.  The literal is
 * at func-8 and 8-aligned, so x30 is literal+16 or literal+20: clearing the
 * low 3 bits gives literal+16 in both cases.  It saves x0-x8 (arguments and
 * the indirect-result register), x9, fp, the resume address and q0-q7
 * (user-space callbacks may use FP/SIMD, the kernel's do not), calls
 * ops->func(func, parent_ip, ops, regs), restores everything and returns
 * with `RET x10` (RET is not subject to BTI) and x30 = the caller's LR, so
 * the function's own PAC/frame code sees its real return address.
 *
 * Only ET_EXEC is handled: the literals and the table hold absolute
 * addresses, which a PIE would need R_AARCH64_RELATIVE entries for.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfio.h"
#include "recordsites.h"
#include "rewriter.h"

#define A64_NOP		0xd503201fu
#define A64_BTI_C	0xd503245fu
#define A64_BTI_JC	0xd50324dfu
#define A64_MOV_X9_LR	0xaa1e03e9u	/* ORR x9, xzr, x30 */
#define A64_BL		0x94000000u

/* Must match runtime/callops.h. */
#define SITES_MAGIC_EMPTY	0x305345544953u
#define SITES_MAGIC_FULL	0x315345544953u
#define SITES_HDR		64	/* magic, count, capacity, default_ops, tramp, 3 spare */
#define SITES_ENTRY		32	/* func, literal, call, spare */

static const uint32_t tramp_code[] = {
	0xd503245f,	/* bti	c				*/
	0xd103c3ff,	/* sub	sp, sp, #240			*/
	0xa90007e0,	/* stp	x0, x1, [sp]			*/
	0xa9010fe2,	/* stp	x2, x3, [sp, #16]		*/
	0xa90217e4,	/* stp	x4, x5, [sp, #32]		*/
	0xa9031fe6,	/* stp	x6, x7, [sp, #48]		*/
	0xa90427e8,	/* stp	x8, x9, [sp, #64]	x9: caller's LR */
	0xa9057bfd,	/* stp	x29, x30, [sp, #80]	fp, resume pc */
	0xad0307e0,	/* stp	q0, q1, [sp, #96]		*/
	0xad040fe2,	/* stp	q2, q3, [sp, #128]		*/
	0xad0517e4,	/* stp	q4, q5, [sp, #160]		*/
	0xad061fe6,	/* stp	q6, q7, [sp, #192]		*/
	0xa90e7bfd,	/* stp	x29, x30, [sp, #224]	frame record */
	0x910383fd,	/* add	x29, sp, #224			*/
	0x927df3ca,	/* and	x10, x30, #~7		literal + 16 */
	0xf85f0142,	/* ldur	x2, [x10, #-16]		ops	*/
	0xd1002140,	/* sub	x0, x10, #8		ip = func */
	0xaa0903e1,	/* mov	x1, x9			parent_ip */
	0x910003e3,	/* mov	x3, sp			regs	*/
	0xf9400050,	/* ldr	x16, [x2]		ops->func */
	0xd63f0200,	/* blr	x16				*/
	0xad4307e0,	/* ldp	q0, q1, [sp, #96]		*/
	0xad440fe2,	/* ldp	q2, q3, [sp, #128]		*/
	0xad4517e4,	/* ldp	q4, q5, [sp, #160]		*/
	0xad461fe6,	/* ldp	q6, q7, [sp, #192]		*/
	0xa94007e0,	/* ldp	x0, x1, [sp]			*/
	0xa9410fe2,	/* ldp	x2, x3, [sp, #16]		*/
	0xa94217e4,	/* ldp	x4, x5, [sp, #32]		*/
	0xa9431fe6,	/* ldp	x6, x7, [sp, #48]		*/
	0xa94427e8,	/* ldp	x8, x9, [sp, #64]		*/
	0xa9452bfd,	/* ldp	x29, x10, [sp, #80]	fp, resume pc */
	0x9103c3ff,	/* add	sp, sp, #240			*/
	0xaa0903fe,	/* mov	x30, x9			caller's LR back */
	0xd65f0140,	/* ret	x10				*/
};

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int read_u32(struct elfio *e, uint64_t addr, uint32_t *v)
{
	struct elfio_section *s = elfio_addr_to_sec(e, addr);

	if (!s || addr + 4 > s->addr + s->shdr.sh_size || elfio_section_data(e, s) ||
	    !s->data || addr - s->addr + 4 > s->size)
		return -ERANGE;
	const uint8_t *p = s->data + (addr - s->addr);
	*v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return 0;
}

static int add_word(struct elfio_edits *ed, struct elfio *e, uint64_t addr, uint64_t v, int n)
{
	uint8_t b[8];
	uint64_t off;
	int err = elfio_addr_to_offset(e, addr, &off);

	if (err) {
		elfio_err(e, "address 0x%" PRIx64 " has no file bytes", addr);
		return err;
	}
	put_le(b, v, n);
	return elfio_edits_add(ed, off, b, (size_t)n);
}

/* A reserved section of the runtime, checked for type, flags and size. */
static struct elfio_section *reserved(struct elfio *e, const char *name, uint64_t flags,
				      uint64_t min)
{
	struct elfio_section *s = elfio_find_section_by_name(e, name);

	if (!s) {
		elfio_err(e, "no %s section: link the program with libpatchsite-callops.a", name);
		return NULL;
	}
	if (s->shdr.sh_type != SHT_PROGBITS || (s->shdr.sh_flags & flags) != flags ||
	    (s->shdr.sh_flags & SHF_COMPRESSED) || s->shdr.sh_size < min) {
		elfio_err(e, "section %s is not the reserved space of libpatchsite-callops.a "
			  "(PROGBITS, flags 0x%" PRIx64 ", at least %" PRIu64 " bytes)", name, flags,
			  min);
		return NULL;
	}
	return s;
}

static const char *func_name(const struct site *s)
{
	return s->func && s->func->name ? s->func->name : "?";
}

int embed_image(const char *in, const char *out, struct embed_report *rep)
{
	struct embed_report dummy;
	struct elfio_edits ed;
	struct record_options o;
	struct record *r = NULL;
	struct elfio *e;
	struct elfio_section *tramp, *tab;
	uint64_t magic, capacity, default_ops, tramp_addr, n = 0, total = 0;
	int err = -EINVAL;

	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof(*rep));
	elfio_edits_init(&ed);
	e = elfio_open(in, 0);
	if (!e)
		return errno ? -errno : -EINVAL;

	if (elfio_ehdr(e)->e_machine != EM_AARCH64) {
		elfio_err(e, "embed handles arm64 images only");
		goto out;
	}
	if (elfio_ehdr(e)->e_type != ET_EXEC) {
		elfio_err(e, "embed needs a non-PIE executable (ET_EXEC): link with -no-pie");
		goto out;
	}
	if (elfio_was_compressed(e)) {
		elfio_err(e, "a compressed image cannot be embedded into");
		goto out;
	}
	if (!(tramp = reserved(e, ".patchsite.tramp", SHF_ALLOC | SHF_EXECINSTR,
			       sizeof(tramp_code))))
		goto out;
	if (!(tab = reserved(e, ".patchsite.sites", SHF_ALLOC | SHF_WRITE, SITES_HDR)))
		goto out;
	if ((err = elfio_read_u64(e, tab->addr, &magic)) ||
	    (err = elfio_read_u64(e, tab->addr + 16, &capacity)) ||
	    (err = elfio_read_u64(e, tab->addr + 24, &default_ops))) {
		elfio_err(e, "cannot read the .patchsite.sites header");
		goto out;
	}
	err = -EINVAL;
	if (magic == SITES_MAGIC_FULL) {
		elfio_err(e, "already embedded (.patchsite.sites is filled)");
		goto out;
	}
	if (magic != SITES_MAGIC_EMPTY || capacity > (tab->shdr.sh_size - SITES_HDR) / SITES_ENTRY ||
	    !default_ops || !elfio_addr_to_sec(e, default_ops)) {
		elfio_err(e, ".patchsite.sites does not hold a libpatchsite-callops.a site table");
		goto out;
	}
	tramp_addr = tramp->addr;
	if (tramp_addr % 4) {
		elfio_err(e, ".patchsite.tramp is not 4-byte aligned");
		goto out;
	}

	record_options_init(&o);
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

	for (size_t i = 0; i < r->nsites; i++) {
		const struct site *s = &r->sites[i];
		uint64_t lit = s->addr, func = lit + 8, call, ent;
		uint32_t w0, w1, w2;
		int64_t d;

		if (s->flavour != FLAVOUR_CALL_OPS)
			continue;
		if (s->misaligned || lit % 8) {
			printf("misaligned: %s at 0x%" PRIx64 ": ops literal 0x%" PRIx64
			       " not 8-byte aligned, left untraced\n", func_name(s), func, lit);
			rep->misaligned++;
			continue;
		}
		if (read_u32(e, func, &w0) || read_u32(e, func + 4, &w1) ||
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
		if (w0 != A64_NOP || w1 != A64_NOP) {
			elfio_err(e, "%s at 0x%" PRIx64 " does not start with two NOPs: "
				  "not a -fpatchable-function-entry=4,2 site", func_name(s), func);
			goto out;
		}
		d = (int64_t)(tramp_addr - call);
		if (d < -(1LL << 27) || d >= (1LL << 27)) {
			elfio_err(e, "%s at 0x%" PRIx64 " is out of BL range (128 MiB) of the "
				  "trampoline at 0x%" PRIx64, func_name(s), func, tramp_addr);
			goto out;
		}
		if (n >= capacity) {
			elfio_err(e, ".patchsite.sites has room for %" PRIu64 " sites, the image has "
				  "more: rebuild the runtime with a larger PS_MAX_SITES", capacity);
			goto out;
		}
		ent = tab->addr + SITES_HDR + n * SITES_ENTRY;
		if ((err = add_word(&ed, e, lit, default_ops, 8)) ||
		    (err = add_word(&ed, e, call - 4, A64_MOV_X9_LR, 4)) ||
		    (err = add_word(&ed, e, call, A64_NOP, 4)) ||
		    (err = add_word(&ed, e, ent, func, 8)) ||
		    (err = add_word(&ed, e, ent + 8, lit, 8)) ||
		    (err = add_word(&ed, e, ent + 16, call, 8)) ||
		    (err = add_word(&ed, e, ent + 24, 0, 8)))
			goto out;
		err = -EINVAL;
		n++;
	}

	for (size_t i = 0; i < sizeof(tramp_code) / sizeof(tramp_code[0]); i++)
		if ((err = add_word(&ed, e, tramp_addr + 4 * i, tramp_code[i], 4)))
			goto out;
	if ((err = add_word(&ed, e, tab->addr + 8, n, 8)) ||
	    (err = add_word(&ed, e, tab->addr + 32, tramp_addr, 8)) ||
	    (err = add_word(&ed, e, tab->addr, SITES_MAGIC_FULL, 8)))
		goto out;
	/* the record's symbols and names belong to e: report before closing it */
	if ((err = elfio_write_edited(e, &ed, out)))
		goto out;
	rep->sites = n;
	rep->tramp = tramp_addr;
	rep->tramp_bytes = sizeof(tramp_code);
	err = 0;
out:
	record_free(r);
	elfio_edits_free(&ed);
	elfio_close(e);
	return err;
}
