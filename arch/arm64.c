// SPDX-License-Identifier: GPL-2.0-only
/*
 * arm64.c - AArch64 instruction knowledge for patch-site discovery.
 *
 * Strategy: every A64 instruction is one little-endian 32-bit word, so
 * decoding never has to find boundaries; it only has to classify.  A
 * small table of mask/value pairs picks out the handful of words that
 * matter to ftrace (NOP, BTI C/JC, BL, B) and everything else is
 * INSN_OTHER.  The PLT recogniser is a second table describing the
 * sequence GNU ld and lld emit (optional BTI C, ADRP/LDR/ADD, optional
 * AUTIA1716/AUTIB1716, BR x17), walked one word at a time.  A third
 * table lists the PC-relative instructions an assembler resolves in place
 * (B, BL, B.cond, CBZ/CBNZ, TBZ/TBNZ, LDR literal, ADR; ADRP, which an
 * object always relocates), each an immediate field of known width and
 * scale, which the rewriting commands read and re-encode when code moves.
 * For embed, a fourth table gives the shapes of an undisturbed CALL_OPS
 * site, word by word, and the trampoline blob embed places is a static
 * const array of instruction words with its data words left zero, filled
 * in for the address it is written at.
 * Words are assembled byte by byte so that neither host endianness nor
 * buffer alignment matters, and immediates are sign-extended in unsigned
 * arithmetic so nothing can overflow.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "base/base.h"

#define A64_INSN_SIZE	4
#define A64_LITERAL_SIZE	8	/* the CALL_OPS ops literal before a function */
#define A64_NOP		0xd503201fu
#define A64_BTI_C	0xd503245fu
#define A64_BTI_JC	0xd50324dfu
#define A64_MOV_X9_LR	0xaa1e03e9u	/* ORR x9, xzr, x30 */
#define A64_BL		0x94000000u
#define A64_IMM26_MASK	0x03ffffffu

/* BL/B reach: imm26 words either side, i.e. [-128 MiB, +128 MiB). */
#define A64_BRANCH_RANGE	(UINT64_C(1) << 27)

enum a64_field {
	A64_F_NONE,
	A64_F_IMM26,		/* B/BL: target = addr + sext(imm26) * 4 */
};

struct a64_pattern {
	uint32_t mask;
	uint32_t value;
	bool bad;		/* not an instruction at all */
	enum arch_insn_kind kind;
	enum a64_field field;
};

/*
 * First match wins.  Only the BTI flavours that accept a BL/BLR-style
 * indirect call (C and JC) count as landing pads for a function entry;
 * plain BTI and BTI J do not, and PACIASP/PACIBSP, although they act as
 * implicit BTI C, are not what a patcher would skip over, so they stay
 * INSN_OTHER with every other HINT.
 */
static const struct a64_pattern a64_patterns[] = {
	/* UDF #0: what zero padding and unwritten memory look like */
	{ 0xffffffffu, 0x00000000u, true,  INSN_OTHER,   A64_F_NONE  },
	{ 0xffffffffu, A64_NOP,     false, INSN_NOP,     A64_F_NONE  },
	{ 0xffffffffu, A64_BTI_C,   false, INSN_LANDING, A64_F_NONE  },	/* BTI c  */
	{ 0xffffffffu, A64_BTI_JC,  false, INSN_LANDING, A64_F_NONE  },	/* BTI jc */
	{ 0xfc000000u, A64_BL,      false, INSN_CALL,    A64_F_IMM26 },	/* BL     */
	{ 0xfc000000u, 0x14000000u, false, INSN_BRANCH,  A64_F_IMM26 },	/* B      */
};

/* Sign-extend the low `bits` of v, staying in unsigned arithmetic. */
static uint64_t a64_sext(uint64_t v, unsigned int bits)
{
	uint64_t sign = UINT64_C(1) << (bits - 1);

	v &= (sign << 1) - 1;
	return (v ^ sign) - sign;
}

static int a64_decode(const uint8_t *buf, size_t len, uint64_t addr, struct arch_insn *insn)
{
	uint32_t w;

	if (len < A64_INSN_SIZE)
		return ARCH_DECODE_TRUNC;
	w = get_le32(buf);

	insn->len = A64_INSN_SIZE;
	insn->kind = INSN_OTHER;
	insn->target = 0;
	insn->disp_off = 0;

	for (size_t i = 0; i < sizeof(a64_patterns) / sizeof(a64_patterns[0]); i++) {
		const struct a64_pattern *p = &a64_patterns[i];

		if ((w & p->mask) != p->value)
			continue;
		if (p->bad)
			return ARCH_DECODE_BAD;
		insn->kind = p->kind;
		if (p->field == A64_F_IMM26)
			insn->target = addr + (a64_sext(w & A64_IMM26_MASK, 26) << 2);
		break;
	}
	return ARCH_DECODE_OK;
}

/* -pg and -fpatchable-function-entry calls are relocated as plain BL (or B for a tail). */
static int a64_call_reloc_back(unsigned int type)
{
	return type == R_AARCH64_CALL26 || type == R_AARCH64_JUMP26 ? 0 : -1;
}

enum a64_plt_role {
	PLT_BTI,		/* optional landing pad */
	PLT_ADRP,		/* adrp x16, page of the slot */
	PLT_LDR,		/* ldr x17, [x16, #lo12] */
	PLT_ADD,		/* add x16, x16, #lo12 (same lo12: x16 = slot for the resolver) */
	PLT_AUT,		/* optional autia1716/autib1716 (-z pac-plt) */
	PLT_BR,			/* br x17 */
};

struct a64_plt_step {
	uint32_t mask;
	uint32_t value;
	bool optional;
	enum a64_plt_role role;
};

/*
 * PLTn as binutils and lld lay it out.  PLT0 starts (after its own
 * optional BTI C) with `stp x16, x30, [sp, #-16]!` and so fails at the
 * ADRP step, which is how it is told apart.
 */
static const struct a64_plt_step a64_plt_steps[] = {
	{ 0xffffffffu, 0xd503245fu, true,  PLT_BTI  },
	{ 0x9f00001fu, 0x90000010u, false, PLT_ADRP },
	{ 0xffc003ffu, 0xf9400211u, false, PLT_LDR  },
	{ 0xffc003ffu, 0x91000210u, false, PLT_ADD  },
	{ 0xffffffbfu, 0xd503219fu, true,  PLT_AUT  },
	{ 0xffffffffu, 0xd61f0220u, false, PLT_BR   },
};

static int a64_plt_slot(const uint8_t *buf, size_t len, uint64_t addr, uint64_t *slot)
{
	uint64_t page = 0, ldr_off = 0, add_off = 0;
	size_t off = 0;

	for (size_t i = 0; i < sizeof(a64_plt_steps) / sizeof(a64_plt_steps[0]); i++) {
		const struct a64_plt_step *s = &a64_plt_steps[i];
		uint32_t w, imm;

		if (len - off < A64_INSN_SIZE)
			return -ENOENT;
		w = get_le32(buf + off);
		if ((w & s->mask) != s->value) {
			if (s->optional)
				continue;
			return -ENOENT;
		}

		switch (s->role) {
		case PLT_ADRP:
			/* immhi:immlo is a signed 21-bit count of 4 KiB pages */
			imm = (w >> 5 & 0x7ffffu) << 2 | (w >> 29 & 3u);
			page = ((addr + off) & ~UINT64_C(0xfff)) + (a64_sext(imm, 21) << 12);
			break;
		case PLT_LDR:
			ldr_off = (uint64_t)(w >> 10 & 0xfffu) << 3;	/* scaled by 8 */
			break;
		case PLT_ADD:
			add_off = w >> 10 & 0xfffu;
			break;
		default:
			break;
		}
		off += A64_INSN_SIZE;
	}

	/* Both immediates are :lo12: of the same slot; anything else is not a PLT. */
	if (ldr_off != add_off)
		return -ENOENT;
	*slot = page + ldr_off;
	return 0;
}

/*
 * PC-relative instructions that an assembler resolves in place when the
 * target is in the same section (GNU as does for all of these but ADRP,
 * whose page offset depends on the final address).  The immediate is
 * `width` bits at bit `shift`, counted in words; ADR's is a byte offset
 * split in two, immlo at bit 29 and immhi at bit 5.  First match wins:
 * the masks of B and BL, and of CBZ/CBNZ and TBZ/TBNZ, differ in one bit.
 */
enum a64_pcrel_field {
	A64_PC_WORDS,		/* signed word count */
	A64_PC_ADR,		/* signed byte count, immhi:immlo */
	A64_PC_PAGE,		/* ADRP: signed 4 KiB page count, relocated in an object */
};

struct a64_pcrel {
	const char *name;
	uint32_t mask, value;
	unsigned int shift, width;
	enum a64_pcrel_field field;
};

static const struct a64_pcrel a64_pcrel[] = {
	{ "b",		 0xfc000000u, 0x14000000u, 0, 26, A64_PC_WORDS },
	{ "bl",		 0xfc000000u, 0x94000000u, 0, 26, A64_PC_WORDS },
	{ "b.cond",	 0xff000000u, 0x54000000u, 5, 19, A64_PC_WORDS },
	{ "cbz/cbnz",	 0x7e000000u, 0x34000000u, 5, 19, A64_PC_WORDS },
	{ "tbz/tbnz",	 0x7e000000u, 0x36000000u, 5, 14, A64_PC_WORDS },
	{ "ldr literal", 0x3b000000u, 0x18000000u, 5, 19, A64_PC_WORDS },
	{ "adr",	 0x9f000000u, 0x10000000u, 0, 21, A64_PC_ADR },
	{ "adrp",	 0x9f000000u, 0x90000000u, 0, 21, A64_PC_PAGE },
};

#define A64_NPCREL	(sizeof(a64_pcrel) / sizeof(a64_pcrel[0]))

/* The byte displacements form p can hold: [-2^(bits-1), 2^(bits-1) - step], step apart. */
static void a64_pcrel_limits(const struct a64_pcrel *p, struct arch_pcrel *pc)
{
	unsigned int bits = p->field == A64_PC_ADR ? p->width : p->width + 2;

	pc->step = p->field == A64_PC_ADR ? 1 : A64_INSN_SIZE;
	pc->min = -((int64_t)1 << (bits - 1));
	pc->max = ((int64_t)1 << (bits - 1)) - pc->step;
}

static int a64_pcrel_decode(const uint8_t *buf, size_t len, struct arch_pcrel *pc)
{
	uint32_t w;

	if (len < A64_INSN_SIZE)
		return ARCH_PCREL_NONE;
	w = get_le32(buf);
	for (size_t i = 0; i < A64_NPCREL; i++) {
		const struct a64_pcrel *p = &a64_pcrel[i];

		if ((w & p->mask) != p->value)
			continue;
		*pc = (struct arch_pcrel){ .name = p->name, .len = A64_INSN_SIZE,
					   .form = (unsigned int)i, .word = { w } };
		if (p->field == A64_PC_PAGE)
			return ARCH_PCREL_PAGE;
		a64_pcrel_limits(p, pc);
		if (p->field == A64_PC_ADR)
			pc->disp = (int64_t)a64_sext((w >> 5 & 0x7ffffu) << 2 | (w >> 29 & 3u), 21);
		else
			pc->disp = (int64_t)(a64_sext(w >> p->shift, p->width) << 2);
		return ARCH_PCREL_OK;
	}
	return ARCH_PCREL_NONE;
}

static int a64_pcrel_encode(const struct arch_pcrel *pc, int64_t disp, uint8_t *out)
{
	const struct a64_pcrel *p;
	struct arch_pcrel lim;
	uint32_t w = pc->word[0];
	uint64_t u = (uint64_t)disp;

	if (pc->form >= A64_NPCREL || a64_pcrel[pc->form].field == A64_PC_PAGE)
		return -EINVAL;
	/* the limits are the table's, whatever the caller left in *pc */
	p = &a64_pcrel[pc->form];
	a64_pcrel_limits(p, &lim);
	if (disp < lim.min || disp > lim.max || u % lim.step)
		return -ERANGE;
	if (p->field == A64_PC_ADR) {
		w &= ~(UINT32_C(3) << 29 | UINT32_C(0x7ffff) << 5);
		w |= (uint32_t)(u & 3) << 29 | (uint32_t)(u >> 2 & 0x7ffff) << 5;
	} else {
		uint32_t m = (uint32_t)(((UINT64_C(1) << p->width) - 1) << p->shift);

		w = (w & ~m) | ((uint32_t)(u >> 2) << p->shift & m);
	}
	put_le32(out, w);
	return 0;
}

static unsigned int a64_insn_len(const uint8_t *buf, size_t len)
{
	(void)buf;
	return len >= A64_INSN_SIZE ? A64_INSN_SIZE : 0;
}

/* GCC and GNU as pad with NOP whatever the flags say. */
static unsigned int a64_nop_unit(unsigned int e_flags)
{
	(void)e_flags;
	return A64_INSN_SIZE;
}

static int a64_encode_nops(uint8_t *buf, size_t len)
{
	if (len % A64_INSN_SIZE)
		return -EINVAL;
	for (size_t off = 0; off < len; off += A64_INSN_SIZE)
		put_le32(buf + off, A64_NOP);
	return 0;
}

static int a64_encode_call(uint8_t *buf, uint64_t from, uint64_t to)
{
	uint64_t disp = to - from;

	/* disp is two's complement: biasing by the range maps the legal span onto [0, 2*range) */
	if (disp & 3 || disp + A64_BRANCH_RANGE >= 2 * A64_BRANCH_RANGE)
		return -ERANGE;
	put_le32(buf, A64_BL | ((uint32_t)(disp >> 2) & A64_IMM26_MASK));
	return 0;
}

static unsigned int a64_patch_nop_at(const uint8_t *buf, size_t len)
{
	return len >= 4 && get_le32(buf) == A64_NOP ? 4 : 0;
}

/*
 * CALL_OPS (DYNAMIC_FTRACE_WITH_CALL_OPS): -fpatchable-function-entry=4,2
 * with -falign-functions=8 puts two NOPs, the 8-byte ops literal, before
 * the function and two at its entry, after BTI C or BTI JC when the
 * function has one.  embed rewrites the two at the entry to the idle form
 * `MOV X9, X30; NOP`, and the runtime turns that NOP into `BL trampoline`.
 * The shapes, literal first, one mask/value pair per word, first match
 * wins; a mask of 0 is any word (without a landing pad the fifth word is
 * the function's own).
 */
#define A64_CALLOPS_WORDS	5
#define A64_W(x)		{ 0xffffffffu, (x) }
#define A64_ANY			{ 0, 0 }

static const struct a64_callops_shape {
	struct { uint32_t mask, value; } w[A64_CALLOPS_WORDS];
	unsigned int call_off, disabled_off;		/* from the function entry */
} a64_callops_shapes[] = {
	{ { A64_W(A64_NOP), A64_W(A64_NOP), A64_W(A64_BTI_C), A64_W(A64_NOP), A64_W(A64_NOP) },
	  8, 4 },
	{ { A64_W(A64_NOP), A64_W(A64_NOP), A64_W(A64_BTI_JC), A64_W(A64_NOP), A64_W(A64_NOP) },
	  8, 4 },
	{ { A64_W(A64_NOP), A64_W(A64_NOP), A64_W(A64_NOP), A64_W(A64_NOP), A64_ANY },
	  4, 0 },
};

/* The idle form, at disabled_off: x9 = the caller's LR for the trampoline; the call's NOP. */
static const uint32_t a64_callops_disabled_words[] = { A64_MOV_X9_LR, A64_NOP };

static int a64_callops_site(const uint8_t *buf, size_t len, uint64_t literal,
			    struct arch_callops_site *site)
{
	/* one aligned 64-bit store swaps the ops: single-copy atomic only when aligned */
	if (literal % A64_LITERAL_SIZE)
		return ARCH_CALLOPS_MISALIGNED;
	if (len < A64_CALLOPS_WORDS * A64_INSN_SIZE)
		return ARCH_CALLOPS_NONE;
	for (size_t i = 0; i < sizeof(a64_callops_shapes) / sizeof(a64_callops_shapes[0]); i++) {
		const struct a64_callops_shape *sh = &a64_callops_shapes[i];
		size_t k = 0;

		while (k < A64_CALLOPS_WORDS &&
		       (get_le32(buf + k * A64_INSN_SIZE) & sh->w[k].mask) == sh->w[k].value)
			k++;
		if (k < A64_CALLOPS_WORDS)
			continue;
		site->entry_off = A64_LITERAL_SIZE;
		site->call_off = sh->call_off;
		site->disabled_off = sh->disabled_off;
		site->disabled_len = sizeof(a64_callops_disabled_words);
		return ARCH_CALLOPS_OK;
	}
	return ARCH_CALLOPS_NONE;
}

static int a64_callops_disabled(uint8_t *buf, size_t len, uint64_t at, uint64_t tramp)
{
	(void)at;	/* the runtime writes the BL; the idle form is the same anywhere */
	(void)tramp;
	if (len != sizeof(a64_callops_disabled_words))
		return -EINVAL;
	for (size_t i = 0; i < len / A64_INSN_SIZE; i++)
		put_le32(buf + i * A64_INSN_SIZE, a64_callops_disabled_words[i]);
	return 0;
}

/*
 * The trampoline blob (written from the ABI described in the CALL_OPS
 * series, not copied).  It is entered by the BL at func+4 (func+8 after
 * BTI C), with x30 = the address after the BL and x9 = the caller's LR
 * (the idle form's MOV).  The literal is at func-8 and 8-aligned, so x30
 * is literal+16 or literal+20: clearing the low 3 bits gives literal+16 in
 * both cases.  The literal holds ops minus the load bias (so that the text
 * needs no relocation in a PIE); the bias is (ADR anchor) - [anchor], the
 * anchor holding its own link-time address.  The default ops are told by
 * address and return at once, so their func (link-time) is never called
 * through a bias.  An ops with direct_call set is entered by `BR X17` at
 * once, with x9 and x30 as they are (the kernel's direct-call convention).
 * Otherwise it saves x0-x8 (arguments and the indirect-result register),
 * x9, fp, the resume address and q0-q7 (user-space callbacks may use
 * FP/SIMD), calls ops->func(func, parent_ip, ops, regs), restores
 * everything and returns with `RET x10` (RET is not subject to BTI) and
 * x30 = the caller's LR, so the function's own PAC/frame code sees its real
 * return address.  The ops offsets (func 0, direct_call 16) and the frame
 * (struct ps_regs) are runtime/callops.h's.
 */
#define A64_TB_ANCHOR	0x00	/* .8byte: link-time address of the anchor */
#define A64_TB_DOPS	0x08	/* default ops: func, priv, direct_call */
#define A64_TB_NOOP	0x20	/* the default ops' func */
#define A64_TB_ENTRY	0x30	/* the BL target */

static const uint32_t a64_callops_tramp_words[] = {
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

static const struct arch_callops a64_callops = {
	.call_slot		= 4,
	.site_len		= A64_CALLOPS_WORDS * A64_INSN_SIZE,
	.site_back		= 0,
	.tramp_size		= sizeof(a64_callops_tramp_words),
	.tramp_anchor		= A64_TB_ANCHOR,
	.tramp_default_ops	= A64_TB_DOPS,
	.tramp_noop		= A64_TB_NOOP,
	.tramp_entry		= A64_TB_ENTRY,
	.area_n			= 4,
	.area_m			= 2,
	.site_desc		= "two NOPs before and two NOPs at its entry: not a "
				  "-fpatchable-function-entry=4,2 site",
	.no_sites		= "no CALL_OPS patch sites: build with "
				  "-fpatchable-function-entry=4,2 -falign-functions=8",
	.reach			= "BL range (128 MiB)",
};

static int a64_callops_tramp(uint8_t *buf, size_t len, uint64_t addr)
{
	if (len != sizeof(a64_callops_tramp_words) || addr % 8)
		return -EINVAL;
	for (size_t i = 0; i < len / A64_INSN_SIZE; i++)
		put_le32(buf + i * A64_INSN_SIZE, a64_callops_tramp_words[i]);
	put_le64(buf + A64_TB_ANCHOR, addr + A64_TB_ANCHOR);
	put_le64(buf + A64_TB_DOPS, addr + A64_TB_NOOP);	/* default ops' func */
	return 0;
}

static const char *a64_nop_name(unsigned int len)
{
	(void)len;
	return "NOP";
}

const struct arch_ops arch_arm64 = {
	.name			= "arm64",
	.caps			= ARCH_CAN(ARCH_CAP_RECORD) | ARCH_CAN(ARCH_CAP_AUDIT) |
				  ARCH_CAN(ARCH_CAP_IN_PLACE) | ARCH_CAN(ARCH_CAP_REPAD) |
				  ARCH_CAN(ARCH_CAP_EMBED) | ARCH_CAN(ARCH_CAP_RUNTIME),
	.machine		= EM_AARCH64,
	.insn_align		= 4,
	.call_len		= 4,
	.literal_size		= A64_LITERAL_SIZE,
	.patch_nop_sizes	= 1u << 4,
	.patch_nop_at		= a64_patch_nop_at,
	.abs64_reloc		= R_AARCH64_ABS64,
	.relative_reloc		= R_AARCH64_RELATIVE,
	.jump_slot_reloc	= R_AARCH64_JUMP_SLOT,
	.glob_dat_reloc		= R_AARCH64_GLOB_DAT,
	.plt_entry_size		= 16,
	.plt_stride		= 8,	/* 32-byte PLT0, then 16 or 24 (BTI/PAC) */
	.decode			= a64_decode,
	.call_reloc_back	= a64_call_reloc_back,
	.plt_slot		= a64_plt_slot,
	.encode_nops		= a64_encode_nops,
	.encode_call		= a64_encode_call,
	.nop_unit		= a64_nop_unit,
	.nop_name		= a64_nop_name,
	.insn_len		= a64_insn_len,
	.pcrel_decode		= a64_pcrel_decode,
	.pcrel_encode		= a64_pcrel_encode,
	/* no alignment relocations: align_target and align_padding stay NULL */
	.mapping_symbol		= arch_mapping_symbol,
	.max_page_size		= 0x10000,	/* 64 KiB pages */
	.callops		= &a64_callops,
	.callops_site		= a64_callops_site,
	.callops_disabled	= a64_callops_disabled,
	.callops_tramp		= a64_callops_tramp,
};
