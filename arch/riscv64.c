// SPDX-License-Identifier: GPL-2.0-only
/*
 * riscv64.c - RV64GC instruction knowledge for patch-site discovery.
 *
 * Strategy: the length of a RISC-V instruction is in the low bits of its
 * first halfword (xx != 11: 16-bit compressed; 11 with bits[4:2] != 111:
 * 32-bit; the longer reserved formats are not used by any toolchain we
 * meet and are reported as bad), so decoding walks halfwords and never
 * has to guess.  Two mask/value tables, one per length, classify the few
 * instructions that matter (NOP, c.nop, JAL, c.j).  A far call is the
 * two-instruction `auipc rX, hi20; jalr rd, lo12(rX)` that the `call`
 * pseudo-instruction (R_RISCV_CALL_PLT) expands to and that the kernel
 * patches into its ftrace NOP area; a third table lists the register
 * combinations that make such a pair, and the decoder fuses it into one
 * 8-byte INSN_CALL (or, for the `tail` pseudo, INSN_BRANCH) so that
 * generic code sees a single site.  Halfwords are assembled byte by byte
 * and immediates are sign-extended in unsigned arithmetic.
 *
 * For the rewriting commands, a fourth table describes the PC-relative
 * instructions an assembler may resolve in place (branches, jal, c.j,
 * c.beqz/c.bnez) as pieces of a displacement scattered over the word, so
 * one loop reads and one loop re-encodes them all; `auipc` is read
 * together with its %pcrel_lo use in the next instruction, and a small
 * register-use scan tells whether the auipc's value may be read again
 * after that use.  The file also knows the NOP unit (c.nop with
 * EF_RISCV_RVC) and the arithmetic of R_RISCV_ALIGN, which GNU ld and lld
 * honour by deleting NOP bytes.
 *
 * For embed, the CALL_OPS site of Linux 6.16 (8 bytes of NOPs before the
 * function and 8 at its entry, in c.nop or nop), its idle form (the
 * entry's `auipc t0` written once, then the call's NOP) and the trampoline
 * blob, a static const array of instruction words assembled from the
 * listing beside it, with its data words filled in for its address.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arch/arch.h"
#include "base/base.h"

#define RV_NOP		0x00000013u	/* addi x0, x0, 0 */
#define RV_C_NOP	0x0001u
#define RV_OP_AUIPC	0x17u
#define RV_OP_JALR	0x67u
#define RV_REG_RA	1u
#define RV_REG_T0	5u

/* auipc+jalr reach: sext(hi20 << 12) + sext(lo12), i.e. [-2 GiB - 2 KiB, +2 GiB - 2 KiB) */
#define RV_PAIR_LOW	UINT64_C(0x80000800)
#define RV_PAIR_SPAN	UINT64_C(0x100000000)

#define RV_RD(w)	((w) >> 7 & 0x1fu)
#define RV_RS1(w)	((w) >> 15 & 0x1fu)

enum rv_field {
	RV_F_NONE,
	RV_F_JIMM,		/* jal: imm[20|10:1|11|19:12] in bits 31..12 */
	RV_F_CJIMM,		/* c.j: imm[11|4|9:8|10|6|7|3:1|5] in bits 12..2 */
	RV_F_AUIPC,		/* may open a fused call pair */
};

struct rv_pattern {
	uint32_t mask;
	uint32_t value;
	bool bad;
	enum arch_insn_kind kind;
	enum rv_field field;
};

/*
 * 16-bit encodings.  0x0000 is defined to be illegal so that zeroed
 * memory traps.  RV64 has no c.jal (that encoding is c.addiw) and
 * c.jalr is indirect, so the only compressed control transfer we report
 * is c.j.  HINTs such as `c.addi x0, imm` are deliberately not NOPs:
 * only the canonical c.nop is what a patcher writes.
 */
static const struct rv_pattern rv_patterns16[] = {
	{ 0xffffu, 0x0000u,  true,  INSN_OTHER,  RV_F_NONE  },
	{ 0xffffu, RV_C_NOP, false, INSN_NOP,    RV_F_NONE  },
	{ 0xe003u, 0xa001u,  false, INSN_BRANCH, RV_F_CJIMM },	/* c.j */
};

/*
 * 32-bit encodings.  A JAL links through rd: ra is the psABI call, t0 the
 * alternate link register the kernel's ftrace uses; rd = x0 is a plain
 * jump; any other rd is unusual enough to leave as INSN_OTHER.
 */
static const struct rv_pattern rv_patterns32[] = {
	{ 0xffffffffu, RV_NOP, false, INSN_NOP,    RV_F_NONE  },
	{ 0x00000fffu, 0x0ef,  false, INSN_CALL,   RV_F_JIMM  },	/* jal ra */
	{ 0x00000fffu, 0x2ef,  false, INSN_CALL,   RV_F_JIMM  },	/* jal t0 */
	{ 0x00000fffu, 0x06f,  false, INSN_BRANCH, RV_F_JIMM  },	/* jal x0 */
	{ 0x0000007fu, RV_OP_AUIPC, false, INSN_OTHER, RV_F_AUIPC },
};

/*
 * Fused `auipc rX; jalr rd, lo12(rX)` pairs: `call` uses rX = rd = ra,
 * `call t0, sym` (kernel ftrace) rX = rd = t0, and hand-written code may
 * build the address in t1 and link through ra or t0.  `tail` jumps with
 * rd = x0 through t1 (t2 when Zicfilp landing pads are on).
 */
#define RV_RX(r)	(UINT32_C(1) << (r))

struct rv_pair {
	uint32_t rx_set;	/* registers the auipc may write (and the jalr read) */
	uint32_t rd;		/* jalr link register */
	enum arch_insn_kind kind;
};

static const struct rv_pair rv_pairs[] = {
	{ RV_RX(1) | RV_RX(5) | RV_RX(6), RV_REG_RA, INSN_CALL   },
	{ RV_RX(1) | RV_RX(5) | RV_RX(6), RV_REG_T0, INSN_CALL   },
	{ RV_RX(6) | RV_RX(7),            0,         INSN_BRANCH },
};

/* Sign-extend the low `bits` of v, staying in unsigned arithmetic. */
static uint64_t rv_sext(uint64_t v, unsigned int bits)
{
	uint64_t sign = UINT64_C(1) << (bits - 1);

	v &= (sign << 1) - 1;
	return (v ^ sign) - sign;
}

static uint64_t rv_jimm(uint32_t w)
{
	uint32_t imm = (w >> 31 & 1u) << 20 | (w >> 21 & 0x3ffu) << 1 |
		       (w >> 20 & 1u) << 11 | (w >> 12 & 0xffu) << 12;

	return rv_sext(imm, 21);
}

static uint64_t rv_cjimm(uint32_t h)
{
	uint32_t imm = (h >> 12 & 1u) << 11 | (h >> 11 & 1u) << 4 |
		       (h >> 9 & 3u) << 8 | (h >> 8 & 1u) << 10 |
		       (h >> 7 & 1u) << 6 | (h >> 6 & 1u) << 7 |
		       (h >> 3 & 7u) << 1 | (h >> 2 & 1u) << 5;

	return rv_sext(imm, 12);
}

/* U-type immediate: bits 31..12 already in place, sign-extended from 32 bits on RV64. */
static uint64_t rv_uimm(uint32_t w)
{
	return rv_sext(w & 0xfffff000u, 32);
}

static uint64_t rv_iimm(uint32_t w)
{
	return rv_sext(w >> 20, 12);
}

/* Length from the first halfword h: 2 (compressed), 4, or 0 (48 bits and longer). */
static unsigned int rv_len(uint32_t h)
{
	if ((h & 3u) != 3u)
		return 2;
	return (h & 0x1cu) != 0x1cu ? 4 : 0;
}

/*
 * The auipc `w` at buf[0] (address addr) has been decoded as a 4-byte
 * INSN_OTHER; widen *insn to the 8-byte pair if the next word is a jalr
 * that completes one of rv_pairs.  A lone auipc at the end of the buffer
 * is still a whole instruction, so a short buffer leaves *insn alone.
 */
static void rv_fuse(const uint8_t *buf, size_t len, uint64_t addr, uint32_t w,
		    struct arch_insn *insn)
{
	uint32_t rx = RV_RD(w), next;

	if (len < 8)
		return;
	next = get_le32(buf + 4);
	/* jalr with funct3 = 0, reading the register the auipc just wrote */
	if ((next & 0x707fu) != RV_OP_JALR || RV_RS1(next) != rx)
		return;

	for (size_t i = 0; i < sizeof(rv_pairs) / sizeof(rv_pairs[0]); i++) {
		const struct rv_pair *p = &rv_pairs[i];

		if (RV_RD(next) != p->rd || !(p->rx_set & RV_RX(rx)))
			continue;
		insn->len = 8;
		insn->kind = p->kind;
		/* jalr clears bit 0 of the sum */
		insn->target = (addr + rv_uimm(w) + rv_iimm(next)) & ~UINT64_C(1);
		return;
	}
}

static int rv_decode(const uint8_t *buf, size_t len, uint64_t addr, struct arch_insn *insn)
{
	const struct rv_pattern *table;
	size_t n;
	uint32_t w;

	if (len < 2)
		return ARCH_DECODE_TRUNC;
	w = get_le16(buf);

	insn->kind = INSN_OTHER;
	insn->target = 0;
	insn->disp_off = 0;

	if (rv_len(w) == 2) {
		insn->len = 2;
		table = rv_patterns16;
		n = sizeof(rv_patterns16) / sizeof(rv_patterns16[0]);
	} else if (rv_len(w) == 4) {
		if (len < 4)
			return ARCH_DECODE_TRUNC;
		w = get_le32(buf);
		insn->len = 4;
		table = rv_patterns32;
		n = sizeof(rv_patterns32) / sizeof(rv_patterns32[0]);
	} else {
		/* 48-bit and longer formats: reserved for extensions nobody ships */
		return ARCH_DECODE_BAD;
	}

	for (size_t i = 0; i < n; i++) {
		const struct rv_pattern *p = &table[i];

		if ((w & p->mask) != p->value)
			continue;
		if (p->bad)
			return ARCH_DECODE_BAD;
		insn->kind = p->kind;
		switch (p->field) {
		case RV_F_JIMM:
			insn->target = addr + rv_jimm(w);
			break;
		case RV_F_CJIMM:
			insn->target = addr + rv_cjimm(w);
			break;
		case RV_F_AUIPC:
			rv_fuse(buf, len, addr, w, insn);
			break;
		default:
			break;
		}
		break;
	}
	return ARCH_DECODE_OK;
}

static int rv_call_reloc_back(unsigned int type)
{
	switch (type) {
	case R_RISCV_CALL:
	case R_RISCV_CALL_PLT:
	case R_RISCV_JAL:
		return 0;
	default:
		return -1;
	}
}

/*
 * PLTn as GNU ld and lld emit it:
 *	auipc t3, %pcrel_hi(slot)
 *	ld    t3, %pcrel_lo(slot)(t3)
 *	jalr  t1, t3
 *	nop
 * PLT0 opens with `auipc t2` and fails the first step.  The immediates
 * are masked out; the trailing nop is only padding and is not required.
 */
struct rv_plt_step {
	uint32_t mask;
	uint32_t value;
};

static const struct rv_plt_step rv_plt_steps[] = {
	{ 0x00000fffu, 0x00000e17u },	/* auipc t3, hi20      */
	{ 0x000fffffu, 0x000e3e03u },	/* ld t3, lo12(t3)     */
	{ 0xffffffffu, 0x000e0367u },	/* jalr t1, 0(t3)      */
};

static int rv_plt_slot(const uint8_t *buf, size_t len, uint64_t addr, uint64_t *slot)
{
	size_t n = sizeof(rv_plt_steps) / sizeof(rv_plt_steps[0]);

	if (len < n * 4)
		return -ENOENT;
	for (size_t i = 0; i < n; i++)
		if ((get_le32(buf + i * 4) & rv_plt_steps[i].mask) != rv_plt_steps[i].value)
			return -ENOENT;

	*slot = addr + rv_uimm(get_le32(buf)) + rv_iimm(get_le32(buf + 4));
	return 0;
}

static int rv_encode_nops(uint8_t *buf, size_t len)
{
	size_t off = 0;

	if (len % 2)
		return -EINVAL;
	for (; len - off >= 4; off += 4)
		put_le32(buf + off, RV_NOP);
	if (off < len)
		put_le16(buf + off, RV_C_NOP);
	return 0;
}

/* auipc ra, hi20; jalr ra, lo12(ra) -- the non-relaxed `call` */
static int rv_encode_call(uint8_t *buf, uint64_t from, uint64_t to)
{
	uint64_t disp = to - from;
	uint32_t hi, lo;

	if (disp & 1 || disp + RV_PAIR_LOW >= RV_PAIR_SPAN)
		return -ERANGE;
	/* lo12 is signed, so round hi20 up when lo12 will subtract */
	hi = (uint32_t)((disp + 0x800) & 0xfffff000u);
	lo = (uint32_t)(disp & 0xfffu);
	put_le32(buf, hi | RV_REG_RA << 7 | RV_OP_AUIPC);
	put_le32(buf + 4, lo << 20 | RV_REG_RA << 15 | RV_REG_RA << 7 | RV_OP_JALR);
	return 0;
}

/*
 * PC-relative instructions that an assembler may resolve in place (GNU as
 * keeps relocations on them, LLVM resolves them under -mno-relax): the
 * byte displacement is scattered over the word; each piece moves `n` bits
 * from bit `from` of the displacement to bit `to` of the instruction.
 * The displacement is signed, `width` bits, even.
 */
struct rv_piece {
	unsigned char from, to, n;
};

struct rv_pcrel {
	const char *name;
	unsigned int len;	/* 2 or 4 */
	uint32_t mask, value;
	unsigned int width;	/* bits of the signed displacement */
	struct rv_piece piece[9];	/* ends with n = 0 */
};

static const struct rv_pcrel rv_pcrel[] = {
	{ "branch", 4, 0x0000607f, 0x00000063, 13,
	  { { 12, 31, 1 }, { 5, 25, 6 }, { 1, 8, 4 }, { 11, 7, 1 } } },	/* beq bne */
	{ "branch", 4, 0x0000407f, 0x00004063, 13,
	  { { 12, 31, 1 }, { 5, 25, 6 }, { 1, 8, 4 }, { 11, 7, 1 } } },	/* blt bge bltu bgeu */
	{ "jal", 4, 0x0000007f, 0x0000006f, 21,
	  { { 20, 31, 1 }, { 1, 21, 10 }, { 11, 20, 1 }, { 12, 12, 8 } } },
	{ "c.j", 2, 0xe003, 0xa001, 12,
	  { { 11, 12, 1 }, { 4, 11, 1 }, { 8, 9, 2 }, { 10, 8, 1 }, { 6, 7, 1 }, { 7, 6, 1 },
	    { 1, 3, 3 }, { 5, 2, 1 } } },
	{ "c.beqz", 2, 0xe003, 0xc001, 9,
	  { { 8, 12, 1 }, { 3, 10, 2 }, { 6, 5, 2 }, { 1, 3, 2 }, { 5, 2, 1 } } },
	{ "c.bnez", 2, 0xe003, 0xe001, 9,
	  { { 8, 12, 1 }, { 3, 10, 2 }, { 6, 5, 2 }, { 1, 3, 2 }, { 5, 2, 1 } } },
};

#define RV_NPCREL	(sizeof(rv_pcrel) / sizeof(rv_pcrel[0]))

/*
 * arch_pcrel.form of an auipc pair: RV_FORM_PAIR plus how its %pcrel_lo
 * use holds the low 12 bits (rv_lo_use); below it, an index in rv_pcrel.
 */
#define RV_FORM_PAIR	0x100u
#define RV_LO_I		1	/* I-type: addi, jalr, loads; imm[11:0] at bit 20 */
#define RV_LO_S		2	/* S-type: stores; imm[11:5] at bit 25, imm[4:0] at bit 7 */

/* auipc + %pcrel_lo reach: sext(hi20 << 12) + sext(lo12), any byte */
#define RV_PAIR_MIN	(-(INT64_C(1) << 31) - 0x800)
#define RV_PAIR_MAX	((INT64_C(1) << 31) - 0x800 - 1)

/*
 * The %pcrel_lo use of an auipc's register rd: addi, jalr, loads and
 * stores (integer and FP) with rs1 = rd.  RV_LO_I, RV_LO_S, or 0.
 */
static int rv_lo_use(uint32_t v, uint32_t rd)
{
	uint32_t op = v & 0x7f, f3 = v >> 12 & 7;

	if (!rd || RV_RS1(v) != rd)
		return 0;
	if ((op == 0x13 && f3 == 0) || (op == RV_OP_JALR && f3 == 0) || op == 0x03 || op == 0x07)
		return RV_LO_I;
	if (op == 0x23 || op == 0x27)
		return RV_LO_S;
	return 0;
}

static uint64_t rv_lo_get(uint32_t v, int kind)
{
	if (kind == RV_LO_I)
		return rv_iimm(v);
	return rv_sext((v >> 25) << 5 | (v >> 7 & 0x1f), 12);
}

/* v with its low 12 bits set to those of lo */
static uint32_t rv_lo_set(uint32_t v, int kind, uint32_t lo)
{
	uint32_t u = lo & 0xfff;

	if (kind == RV_LO_I)
		return (v & 0x000fffff) | u << 20;
	return (v & 0x01fff07f) | (u >> 5) << 25 | (u & 0x1f) << 7;
}

/*
 * Whether the instruction w (len 2 or 4) may read register r: every
 * register field that could be a source is compared, so the answer errs
 * towards yes.  *writes: a 32-bit instruction that sets r without reading it.
 */
static bool rv_may_read(uint32_t w, unsigned int len, uint32_t r, bool *writes)
{
	*writes = false;
	if (len == 2) {
		if ((w >> 7 & 0x1f) == r || (w >> 2 & 0x1f) == r)
			return true;
		/* the 3-bit register fields of CIW/CL/CS/CA/CB name x8..x15 */
		return r >= 8 && r < 16 && ((w >> 7 & 7) == r - 8 || (w >> 2 & 7) == r - 8);
	}
	switch (w & 0x7f) {
	case 0x37: case 0x17: case 0x6f:	/* lui, auipc, jal: no source */
		*writes = RV_RD(w) == r;
		return false;
	case 0x13: case 0x1b: case 0x03: case 0x07: case 0x67:	/* I-type: rs1 */
		if (RV_RS1(w) == r)
			return true;
		*writes = RV_RD(w) == r;
		return false;
	default:				/* R, S, B and the rest: rs1, rs2 */
		return RV_RS1(w) == r || (w >> 20 & 0x1f) == r;
	}
}

/*
 * After `auipc r` and its %pcrel_lo use at buf[0] (len bytes to the end of
 * the section, at least 4): true if a later instruction may still read r,
 * the auipc's value, so that moving only the first use would be wrong.
 * The use itself may overwrite r; else up to 8 instructions are looked at,
 * up to a write of r, and leaving the straight line (a branch or jump,
 * where r may be read) or the end of the bytes counts as a read.
 */
static bool rv_auipc_reused(const uint8_t *buf, size_t len, uint32_t r)
{
	uint32_t v = get_le32(buf);
	size_t off = 4;
	bool writes;

	if (rv_lo_use(v, r) == RV_LO_I && RV_RD(v) == r)
		return false;
	for (int k = 0; k < 8 && off + 2 <= len; k++) {
		/* 48-bit and longer formats are taken as 32-bit: they err towards a read */
		unsigned int n = rv_len(get_le16(buf + off)) == 2 ? 2 : 4;
		uint32_t w;

		if (off + n > len)
			return true;
		w = n == 2 ? get_le16(buf + off) : get_le32(buf + off);
		if (rv_may_read(w, n, r, &writes))
			return true;
		if (writes)
			return false;
		if (n == 4 && ((w & 0x7f) == 0x63 || (w & 0x7f) == 0x6f || (w & 0x7f) == RV_OP_JALR))
			return true;	/* control leaves: r may be read there */
		if (n == 2 && (w & 3) == 1 && (w >> 13) >= 5)
			return true;	/* c.j, c.beqz, c.bnez */
		if (n == 2 && (w & 0xe07f) == 0x8002 && (w >> 7 & 0x1f))
			return true;	/* c.jr, c.jalr */
		off += n;
	}
	return true;
}

static int rv_pcrel_decode(const uint8_t *buf, size_t len, struct arch_pcrel *pc)
{
	unsigned int n = len >= 2 ? rv_len(get_le16(buf)) : 0;
	uint32_t w;

	if (!n || n > len)
		return ARCH_PCREL_NONE;
	w = n == 2 ? get_le16(buf) : get_le32(buf);
	if (n == 4 && (w & 0x7f) == RV_OP_AUIPC) {
		uint32_t v = len >= 8 ? get_le32(buf + 4) : 0;
		int use = (v & 3) == 3 ? rv_lo_use(v, RV_RD(w)) : 0;

		*pc = (struct arch_pcrel){ .name = "auipc", .len = 4, .word = { w } };
		if (!use)
			return ARCH_PCREL_UNPAIRED;
		pc->len = 8;
		pc->lo_off = 4;
		pc->word[1] = v;
		pc->form = RV_FORM_PAIR + (unsigned int)use;
		pc->disp = (int64_t)(rv_uimm(w) + rv_lo_get(v, use));
		pc->min = RV_PAIR_MIN;
		pc->max = RV_PAIR_MAX;
		pc->step = 1;
		if (rv_auipc_reused(buf + 4, len - 4, RV_RD(w)))
			pc->flags |= ARCH_PCREL_LIVE;
		return ARCH_PCREL_OK;
	}
	for (size_t i = 0; i < RV_NPCREL; i++) {
		const struct rv_pcrel *p = &rv_pcrel[i];
		uint64_t d = 0;

		if (p->len != n || (w & p->mask) != p->value)
			continue;
		for (const struct rv_piece *q = p->piece; q->n; q++)
			d |= (uint64_t)(w >> q->to & ((1u << q->n) - 1)) << q->from;
		*pc = (struct arch_pcrel){ .name = p->name, .len = n, .form = (unsigned int)i,
					   .word = { w }, .disp = (int64_t)rv_sext(d, p->width),
					   .min = -(INT64_C(1) << (p->width - 1)),
					   .max = (INT64_C(1) << (p->width - 1)) - 2, .step = 2 };
		return ARCH_PCREL_OK;
	}
	return ARCH_PCREL_NONE;
}

static int rv_pcrel_encode(const struct arch_pcrel *pc, int64_t disp, uint8_t *out)
{
	uint32_t w = pc->word[0];

	if (pc->form == RV_FORM_PAIR + RV_LO_I || pc->form == RV_FORM_PAIR + RV_LO_S) {
		int use = (int)(pc->form - RV_FORM_PAIR);

		if (disp < RV_PAIR_MIN || disp > RV_PAIR_MAX)
			return -ERANGE;
		/* lo12 is signed, so round hi20 up when lo12 will subtract */
		w = (w & 0xfffu) | ((uint32_t)((uint64_t)disp + 0x800) & 0xfffff000u);
		put_le32(out, w);
		put_le32(out + 4, rv_lo_set(pc->word[1], use, (uint32_t)disp));
		return 0;
	}
	if (pc->form >= RV_NPCREL)
		return -EINVAL;

	const struct rv_pcrel *p = &rv_pcrel[pc->form];
	int64_t lim = INT64_C(1) << (p->width - 1);

	if (disp < -lim || disp >= lim || (disp & 1))
		return -ERANGE;
	for (const struct rv_piece *q = p->piece; q->n; q++) {
		uint32_t m = ((1u << q->n) - 1) << q->to;

		w = (w & ~m) | ((uint32_t)((uint64_t)disp >> q->from) << q->to & m);
	}
	if (p->len == 2)
		put_le16(out, w);
	else
		put_le32(out, w);
	return 0;
}

static unsigned int rv_insn_len(const uint8_t *buf, size_t len)
{
	return len >= 2 ? rv_len(get_le16(buf)) : 0;
}

/* GCC and GNU as pad with c.nop when the C extension is on (EF_RISCV_RVC). */
static unsigned int rv_nop_unit(unsigned int e_flags)
{
	return e_flags & EF_RISCV_RVC ? 2 : 4;
}

/*
 * An R_RISCV_ALIGN covers `addend` bytes of NOPs at `offset`; the linker
 * (GNU ld _bfd_riscv_relax_align, lld) deletes as many of them as it
 * takes for what follows, at offset + addend, to land on the smallest
 * power of two above the addend.  Counting from 2 rather than 1 differs
 * only for an addend of 0, which pads nothing.
 */
static int rv_align_target(uint64_t offset, int64_t addend, uint64_t *to, uint64_t *align)
{
	uint64_t al = 2;

	if (addend < 0 || addend >= 1 << 20)
		return -ERANGE;
	while (al <= (uint64_t)addend)
		al <<= 1;
	*to = offset + (uint64_t)addend;
	*align = al;
	return 0;
}

/*
 * GNU as for `.balign N` in relaxed code: N minus the NOP unit bytes of
 * NOPs, the most the linker can need, and an R_RISCV_ALIGN whose addend is
 * their number at the first of them.
 */
static int rv_align_padding(unsigned int e_flags, uint64_t align, struct arch_align_pad *pad)
{
	unsigned int unit = rv_nop_unit(e_flags);

	if ((align & (align - 1)) || align <= unit)
		return -EINVAL;
	pad->size = align - unit;
	pad->type = R_RISCV_ALIGN;
	pad->addend = (int64_t)pad->size;
	return 0;
}

/*
 * The calls in arch/riscv/kernel/mcount-dyn.S that ftrace rewrites with an
 * 8-byte auipc+jalr; linker relaxation would shrink them to a 4-byte jal.
 */
static const char *const riscv_patch_points[] = {
	"ftrace_call", "ftrace_graph_call", "ftrace_regs_call", NULL
};

static unsigned int rv_patch_nop_at(const uint8_t *buf, size_t len)
{
	if (len >= 2 && get_le16(buf) == RV_C_NOP)
		return 2;
	if (len >= 4 && get_le32(buf) == RV_NOP)
		return 4;
	return 0;
}

/*
 * CALL_OPS as Linux 6.16 lays it out on riscv64 (read for its facts:
 * arch/riscv/kernel/ftrace.c, mcount-dyn.S): -fpatchable-function-entry=8,4
 * with the C extension (four c.nop before the function and four at its
 * entry) or 4,2 without (two nop each), with the functions 8-aligned: the
 * 8 bytes before the function are the ops literal.  The entry's 8 bytes
 * become `auipc t0, hi20; jalr t0, lo12(t0)`, a call through the alternate
 * link register (ra keeps the caller's return address, t0 gets func + 8,
 * so the literal is at t0 - 16).  The auipc is written once; the jalr,
 * 4-aligned at func + 4, is toggled with a NOP by one aligned 4-byte
 * store, which other harts see whole.  The kernel aligns the literal with
 * the functions and never checks it; embed refuses a misaligned one, whose
 * ops could not be swapped with one store.
 */
#define RV_LITERAL_SIZE		8
#define RV_CALLOPS_LEN		16	/* the literal and the entry's 8 bytes */
#define RV_OP_AUIPC_T0		(RV_REG_T0 << 7 | RV_OP_AUIPC)

/* Are buf[0..8) patch NOPs (c.nop and nop, in any mix)? */
static bool rv_nops8(const uint8_t *buf)
{
	unsigned int off = 0, n;

	while (off < 8 && (n = rv_patch_nop_at(buf + off, 8 - off)))
		off += n;
	return off == 8;
}

static int rv_callops_site(const uint8_t *buf, size_t len, uint64_t literal,
			   struct arch_callops_site *site)
{
	/* one aligned 64-bit store swaps the ops: single-copy atomic only when aligned */
	if (literal % RV_LITERAL_SIZE)
		return ARCH_CALLOPS_MISALIGNED;
	if (len < RV_CALLOPS_LEN || !rv_nops8(buf) || !rv_nops8(buf + RV_LITERAL_SIZE))
		return ARCH_CALLOPS_NONE;
	site->entry_off = RV_LITERAL_SIZE;
	site->call_off = 4;		/* the jalr slot */
	site->disabled_off = 0;		/* auipc t0; nop */
	site->disabled_len = 8;
	return ARCH_CALLOPS_OK;
}

/* The idle form at `at`: `auipc t0, hi20(tramp - at)` (written once) and the call's NOP. */
static int rv_callops_disabled(uint8_t *buf, size_t len, uint64_t at, uint64_t tramp)
{
	uint64_t disp = tramp - at;

	if (len != 8)
		return -EINVAL;
	if (disp & 1 || disp + RV_PAIR_LOW >= RV_PAIR_SPAN)
		return -ERANGE;
	/* lo12 is signed, so round hi20 up when the jalr's lo12 will subtract */
	put_le32(buf, (uint32_t)((disp + 0x800) & 0xfffff000u) | RV_OP_AUIPC_T0);
	put_le32(buf + 4, RV_NOP);
	return 0;
}

/*
 * The trampoline blob (written from the calling convention the 6.16
 * CALL_OPS code describes, not copied; RV64GC, every instruction 4 bytes).
 * It is entered by the site's `jalr t0` with t0 = func + 8 (where the body
 * resumes), ra = the caller's return address, the arguments in a0-a7 and
 * fa0-fa7 and the static chain in t2.  The literal (ops minus the load
 * bias) is at t0 - 16; the bias is (auipc's anchor) - [anchor], the anchor
 * holding its own link-time address.  The default ops are told by address
 * and return at once.  An ops with direct_call set is entered by `jr t4`
 * with every register as the site left it (runtime/patcher/riscv64.h).
 * Otherwise it saves a0-a7, ra, fp (s0), the resume address, t2 and
 * fa0-fa7 (struct ps_regs), links a frame record (s0 = its CFA, the resume
 * address and the caller's s0 below it), calls ops->func(func, ra, ops,
 * regs) and restores everything, ra and the resume address from the frame
 * (a tracer may change either).  Scratch: t1, t3, t4, which the psABI
 * leaves dead at a function's entry (t0 is the site's own).  The ops
 * offsets (func 0, direct_call 16) are runtime/callops.h's.
 *
 *	anchor:	.8byte	anchor			(filled in)
 *	dops:	.8byte	noop, 0, 0		(func filled in)
 *	noop:	ret
 *		nop
 *	entry:	ld	t1, -16(t0)		ops - bias
 *	1:	auipc	t3, 0
 *		addi	t3, t3, anchor - 1b
 *		ld	t4, 0(t3)		the anchor's link address
 *		sub	t4, t3, t4		bias
 *		add	t1, t1, t4		ops
 *		addi	t4, t3, dops - anchor
 *		beq	t1, t4, fast
 *		ld	t4, 16(t1)		ops->direct_call
 *		bnez	t4, direct
 *		addi	sp, sp, -176
 *		sd	a0..a7, 0..56(sp)
 *		sd	ra, 64(sp); sd s0, 72(sp); sd t0, 80(sp); sd t2, 88(sp)
 *		fsd	fa0..fa7, 96..152(sp)
 *		sd	s0, 160(sp); sd t0, 168(sp)	frame record
 *		addi	s0, sp, 176
 *		addi	a0, t0, -8		ip = func
 *		mv	a1, ra			parent_ip
 *		mv	a2, t1			ops
 *		mv	a3, sp			regs
 *		ld	t1, 0(t1)		ops->func
 *		jalr	t1
 *		fld	fa0..fa7; ld a0..a7
 *		ld	ra, 64(sp); ld s0, 72(sp); ld t2, 88(sp); ld t0, 80(sp)
 *		addi	sp, sp, 176
 *		jr	t0
 *	fast:	jr	t0
 *	direct:	jr	t4
 */
#define RV_TB_ANCHOR	0x00	/* .8byte: link-time address of the anchor */
#define RV_TB_DOPS	0x08	/* default ops: func, priv, direct_call */
#define RV_TB_NOOP	0x20	/* the default ops' func */
#define RV_TB_ENTRY	0x28	/* where every site's jalr goes */

static const uint32_t rv_callops_tramp_words[] = {
	0, 0,			/* anchor (filled in)				*/
	0, 0, 0, 0, 0, 0,	/* default ops: func (filled in), priv, direct_call */
	0x00008067,		/* noop:  ret					*/
	0x00000013,		/*	nop					*/
	0xff02b303,		/* entry: ld	t1, -16(t0)			*/
	0x00000e17,		/*	auipc	t3, 0				*/
	0xfd4e0e13,		/*	addi	t3, t3, -44	anchor		*/
	0x000e3e83,		/*	ld	t4, 0(t3)			*/
	0x41de0eb3,		/*	sub	t4, t3, t4	bias		*/
	0x01d30333,		/*	add	t1, t1, t4	ops		*/
	0x008e0e93,		/*	addi	t4, t3, 8	default ops	*/
	0x0dd30e63,		/*	beq	t1, t4, fast			*/
	0x01033e83,		/*	ld	t4, 16(t1)	direct_call	*/
	0x0c0e9c63,		/*	bnez	t4, direct			*/
	0xf5010113,		/*	addi	sp, sp, -176			*/
	0x00a13023, 0x00b13423, 0x00c13823, 0x00d13c23,	/* sd a0-a3	*/
	0x02e13023, 0x02f13423, 0x03013823, 0x03113c23,	/* sd a4-a7	*/
	0x04113023,		/*	sd	ra, 64(sp)	parent_ra	*/
	0x04813423,		/*	sd	s0, 72(sp)	fp		*/
	0x04513823,		/*	sd	t0, 80(sp)	pc		*/
	0x04713c23,		/*	sd	t2, 88(sp)	static chain	*/
	0x06a13027, 0x06b13427, 0x06c13827, 0x06d13c27,	/* fsd fa0-fa3	*/
	0x08e13027, 0x08f13427, 0x09013827, 0x09113c27,	/* fsd fa4-fa7	*/
	0x0a813023,		/*	sd	s0, 160(sp)	frame record	*/
	0x0a513423,		/*	sd	t0, 168(sp)			*/
	0x0b010413,		/*	addi	s0, sp, 176			*/
	0xff828513,		/*	addi	a0, t0, -8	ip = func	*/
	0x00008593,		/*	mv	a1, ra		parent_ip	*/
	0x00030613,		/*	mv	a2, t1		ops		*/
	0x00010693,		/*	mv	a3, sp		regs		*/
	0x00033303,		/*	ld	t1, 0(t1)	ops->func	*/
	0x000300e7,		/*	jalr	t1				*/
	0x06013507, 0x06813587, 0x07013607, 0x07813687,	/* fld fa0-fa3	*/
	0x08013707, 0x08813787, 0x09013807, 0x09813887,	/* fld fa4-fa7	*/
	0x00013503, 0x00813583, 0x01013603, 0x01813683,	/* ld a0-a3	*/
	0x02013703, 0x02813783, 0x03013803, 0x03813883,	/* ld a4-a7	*/
	0x04013083,		/*	ld	ra, 64(sp)			*/
	0x04813403,		/*	ld	s0, 72(sp)			*/
	0x05813383,		/*	ld	t2, 88(sp)			*/
	0x05013283,		/*	ld	t0, 80(sp)			*/
	0x0b010113,		/*	addi	sp, sp, 176			*/
	0x00028067,		/*	jr	t0				*/
	0x00028067,		/* fast:  jr	t0	default ops: nothing to do */
	0x000e8067,		/* direct: jr	t4				*/
};

static const struct arch_callops rv_callops = {
	.call_slot		= 4,
	.site_len		= RV_CALLOPS_LEN,
	.site_back		= 0,
	.tramp_size		= sizeof(rv_callops_tramp_words),
	.tramp_anchor		= RV_TB_ANCHOR,
	.tramp_default_ops	= RV_TB_DOPS,
	.tramp_noop		= RV_TB_NOOP,
	.tramp_entry		= RV_TB_ENTRY,
	.area_n			= 8,
	.area_m			= 4,
	.area_unit		= 2,	/* 8 bytes before, 8 at the entry: =8,4 with C, =4,2 without */
	.site_desc		= "8 bytes of NOPs before and 8 at its entry: not a "
				  "-fpatchable-function-entry=8,4 (C) or 4,2 site",
	.no_sites		= "no CALL_OPS patch sites: build with "
				  "-fpatchable-function-entry=8,4 (4,2 without the C extension) "
				  "-falign-functions=8",
	.reach			= "auipc+jalr range (2 GiB)",
};

static int rv_callops_tramp(uint8_t *buf, size_t len, uint64_t addr)
{
	if (len != sizeof(rv_callops_tramp_words) || addr % 8)
		return -EINVAL;
	for (size_t i = 0; i < len / 4; i++)
		put_le32(buf + i * 4, rv_callops_tramp_words[i]);
	put_le64(buf + RV_TB_ANCHOR, addr + RV_TB_ANCHOR);
	put_le64(buf + RV_TB_DOPS, addr + RV_TB_NOOP);	/* default ops' func */
	return 0;
}

static unsigned int rv_nop_unit_march(const char *march)
{
	const char *p = march;

	if (strncmp(p, "rv32", 4) && strncmp(p, "rv64", 4))
		return 0;
	for (p += 4; *p && *p != '_' && *p != ' '; p++)
		if (*p == 'c')
			return 2;
	return 4;
}

static const char *rv_nop_name(unsigned int len)
{
	return len == 2 ? "c.nop" : "nop";
}

/*
 * The psABI's mapping symbols: AAELF64's `$x` and `$d` (with `.suffix`),
 * and `$x` followed by the ISA string the code after it is built for
 * (`$xrv64i2p1_c2p0`, GNU as when the ISA changes within a section).
 */
static int rv_mapping_symbol(const char *name)
{
	if (name[0] == '$' && name[1] == 'x' && !strncmp(name + 2, "rv", 2))
		return ARCH_MAP_CODE;
	return arch_mapping_symbol(name);
}

const struct arch_ops arch_riscv64 = {
	.name			= "riscv64",
	.caps			= ARCH_CAN(ARCH_CAP_RECORD) | ARCH_CAN(ARCH_CAP_AUDIT) |
				  ARCH_CAN(ARCH_CAP_IN_PLACE) | ARCH_CAN(ARCH_CAP_REPAD) |
				  ARCH_CAN(ARCH_CAP_PIN) | ARCH_CAN(ARCH_CAP_EMBED) |
				  ARCH_CAN(ARCH_CAP_RUNTIME),
	.machine		= EM_RISCV,
	.insn_align		= 2,
	.call_len		= 8,
	.literal_size		= 8,
	.patch_nop_sizes	= (1u << 2) | (1u << 4),
	.patch_nop_at		= rv_patch_nop_at,
	.abs64_reloc		= R_RISCV_64,
	.relative_reloc		= R_RISCV_RELATIVE,
	.jump_slot_reloc	= R_RISCV_JUMP_SLOT,
	.glob_dat_reloc		= 0,
	.plt_entry_size		= 16,
	.plt_stride		= 8,	/* 32-byte PLT0, 16-byte entries; 8 as before */
	.align_reloc		= R_RISCV_ALIGN,
	.relax_reloc		= R_RISCV_RELAX,
	.none_reloc		= R_RISCV_NONE,
	.patch_points		= riscv_patch_points,
	.patch_point_len	= 8,
	.data_align		= 8,
	.decode			= rv_decode,
	.call_reloc_back	= rv_call_reloc_back,
	.plt_slot		= rv_plt_slot,
	.encode_nops		= rv_encode_nops,
	.encode_call		= rv_encode_call,
	.nop_unit		= rv_nop_unit,
	.nop_unit_march		= rv_nop_unit_march,
	.nop_name		= rv_nop_name,
	.insn_len		= rv_insn_len,
	.pcrel_decode		= rv_pcrel_decode,
	.pcrel_encode		= rv_pcrel_encode,
	.align_target		= rv_align_target,
	.align_padding		= rv_align_padding,
	.mapping_symbol		= rv_mapping_symbol,
	.max_page_size		= 0x1000,	/* Linux riscv64 maps 4 KiB pages only */
	.callops		= &rv_callops,
	.callops_site		= rv_callops_site,
	.callops_disabled	= rv_callops_disabled,
	.callops_tramp		= rv_callops_tramp,
};
