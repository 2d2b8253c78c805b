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
 */
#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"

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

static uint32_t rv_get16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t rv_get32(const uint8_t *p)
{
	return rv_get16(p) | rv_get16(p + 2) << 16;
}

static void rv_put16(uint8_t *p, uint32_t w)
{
	p[0] = (uint8_t)w;
	p[1] = (uint8_t)(w >> 8);
}

static void rv_put32(uint8_t *p, uint32_t w)
{
	rv_put16(p, w);
	rv_put16(p + 2, w >> 16);
}

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
	next = rv_get32(buf + 4);
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
	w = rv_get16(buf);

	insn->kind = INSN_OTHER;
	insn->target = 0;
	insn->disp_off = 0;

	if ((w & 3u) != 3u) {
		insn->len = 2;
		table = rv_patterns16;
		n = sizeof(rv_patterns16) / sizeof(rv_patterns16[0]);
	} else if ((w & 0x1cu) != 0x1cu) {
		if (len < 4)
			return ARCH_DECODE_TRUNC;
		w = rv_get32(buf);
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
		return -1;
	for (size_t i = 0; i < n; i++)
		if ((rv_get32(buf + i * 4) & rv_plt_steps[i].mask) != rv_plt_steps[i].value)
			return -1;

	*slot = addr + rv_uimm(rv_get32(buf)) + rv_iimm(rv_get32(buf + 4));
	return 0;
}

static int rv_encode_nops(uint8_t *buf, size_t len)
{
	size_t off = 0;

	if (len % 2)
		return -1;
	for (; len - off >= 4; off += 4)
		rv_put32(buf + off, RV_NOP);
	if (off < len)
		rv_put16(buf + off, RV_C_NOP);
	return 0;
}

/* auipc ra, hi20; jalr ra, lo12(ra) -- the non-relaxed `call` */
static int rv_encode_call(uint8_t *buf, uint64_t from, uint64_t to)
{
	uint64_t disp = to - from;
	uint32_t hi, lo;

	if (disp & 1 || disp + RV_PAIR_LOW >= RV_PAIR_SPAN)
		return -1;
	/* lo12 is signed, so round hi20 up when lo12 will subtract */
	hi = (uint32_t)((disp + 0x800) & 0xfffff000u);
	lo = (uint32_t)(disp & 0xfffu);
	rv_put32(buf, hi | RV_REG_RA << 7 | RV_OP_AUIPC);
	rv_put32(buf + 4, lo << 20 | RV_REG_RA << 15 | RV_REG_RA << 7 | RV_OP_JALR);
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
	if (len >= 2 && (buf[0] | buf[1] << 8) == RV_C_NOP)
		return 2;
	if (len >= 4 && (buf[0] | buf[1] << 8 | buf[2] << 16 | (uint32_t)buf[3] << 24) == RV_NOP)
		return 4;
	return 0;
}

const struct arch_ops arch_riscv64 = {
	.name			= "riscv64",
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
	.align_reloc		= R_RISCV_ALIGN,
	.relax_reloc		= R_RISCV_RELAX,
	.none_reloc		= R_RISCV_NONE,
	.patch_points		= riscv_patch_points,
	.patch_point_len	= 8,
	.decode			= rv_decode,
	.call_reloc_back	= rv_call_reloc_back,
	.plt_slot		= rv_plt_slot,
	.encode_nops		= rv_encode_nops,
	.encode_call		= rv_encode_call,
};
