// SPDX-License-Identifier: GPL-2.0-only
/*
 * x86_64.c - instruction knowledge for x86-64 (64-bit mode only).
 *
 * Strategy: x86 has no fixed instruction length, so finding a patch site
 * means decoding every instruction from a known boundary.  The decoder is
 * a length decoder: it walks legacy prefixes and REX, picks the opcode map
 * (one byte, 0F, 0F38, 0F3A, or a VEX/EVEX/XOP map), then consults a static
 * table saying whether the opcode takes a ModRM byte and how large its
 * immediate is.  Operands are never interpreted except for the handful of
 * instructions patchsite cares about (call/jmp rel32, call *disp32(%rip),
 * NOPs, ENDBR64), which are classified after the length is known.
 *
 * Where Intel and AMD disagree we follow Intel, as the kernel's own decoder
 * does: near branches (E8, E9, 0F 8x) always carry rel32 in 64-bit mode,
 * whatever a 66 prefix says.  Opcodes that #UD in 64-bit mode are reported
 * as ARCH_DECODE_BAD so that a sweep running into data stops early.
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "base/base.h"

#define X86_MAX_INSN	15

/* Opcode properties.  Immediate flags add up (ENTER has OP_I16 | OP_I8). */
enum {
	OP_M	 = 1 << 0,	/* ModRM (plus SIB and displacement) follows */
	OP_I8	 = 1 << 1,	/* 1-byte immediate */
	OP_I16	 = 1 << 2,	/* 2-byte immediate */
	OP_IZ	 = 1 << 3,	/* 2 or 4 bytes: operand size, 66 vs REX.W */
	OP_IV	 = 1 << 4,	/* 2, 4 or 8 bytes: MOV r, imm (B8-BF) */
	OP_I32	 = 1 << 5,	/* 4 bytes whatever the prefixes: rel32 of near branches */
	OP_BAD	 = 1 << 6,	/* #UD in 64-bit mode */
	OP_PFX	 = 1 << 7,	/* prefix byte; consumed before the table is consulted */
	OP_ESC	 = 1 << 8,	/* escape to another map (0F, VEX, EVEX) */
	OP_GRP3	 = 1 << 9,	/* F6/F7: /0 and /1 (TEST) take an immediate */
	OP_MOFFS = 1 << 10,	/* A0-A3: 8-byte absolute address (4 with 67) */
	OP_MREG	 = 1 << 11,	/* ModRM always names registers (MOV to/from CR/DR) */
	OP_XOP	 = 1 << 12,	/* 8F: POP r/m, or AMD XOP when the next byte says so */
	OP_SSE4A = 1 << 13,	/* 0F 78: VMREAD, or EXTRQ/INSERTQ ib,ib with 66/F2 */
};

#define M	OP_M
#define MI8	(OP_M | OP_I8)
#define MIZ	(OP_M | OP_IZ)
#define I8	OP_I8
#define IZ	OP_IZ
#define BAD	OP_BAD
#define PFX	OP_PFX
#define ESC	OP_ESC

/* One-byte opcode map, 64-bit mode. */
static const uint16_t map_1b[256] = {
	/* 00 */ M, M, M, M, I8, IZ, BAD, BAD, M, M, M, M, I8, IZ, BAD, ESC,
	/* 10 */ M, M, M, M, I8, IZ, BAD, BAD, M, M, M, M, I8, IZ, BAD, BAD,
	/* 20 */ M, M, M, M, I8, IZ, PFX, BAD, M, M, M, M, I8, IZ, PFX, BAD,
	/* 30 */ M, M, M, M, I8, IZ, PFX, BAD, M, M, M, M, I8, IZ, PFX, BAD,
	/* 40: REX */
	/* 40 */ PFX, PFX, PFX, PFX, PFX, PFX, PFX, PFX,
		 PFX, PFX, PFX, PFX, PFX, PFX, PFX, PFX,
	/* 50: push/pop */
	/* 50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 60: 60/61 pusha/popa gone, 62 is EVEX, 63 movsxd */
	/* 60 */ BAD, BAD, ESC, M, PFX, PFX, PFX, PFX, IZ, MIZ, I8, MI8, 0, 0, 0, 0,
	/* 70: jcc rel8 */
	/* 70 */ I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8,
	/* 80: group 1 (82 is gone), test, xchg, mov, lea, pop */
	/* 80 */ MI8, MIZ, BAD, MI8, M, M, M, M, M, M, M, M, M, M, M, M | OP_XOP,
	/* 90: xchg, cbw, cwd, (9A far call gone), fwait, pushf, popf, sahf, lahf */
	/* 90 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, BAD, 0, 0, 0, 0, 0,
	/* A0 */ OP_MOFFS, OP_MOFFS, OP_MOFFS, OP_MOFFS, 0, 0, 0, 0,
		 I8, IZ, 0, 0, 0, 0, 0, 0,
	/* B0: mov r8, imm8; mov r, imm16/32/64 */
	/* B0 */ I8, I8, I8, I8, I8, I8, I8, I8,
		 OP_IV, OP_IV, OP_IV, OP_IV, OP_IV, OP_IV, OP_IV, OP_IV,
	/* C0: shifts, ret imm16, C4/C5 VEX, mov imm, enter, leave, retf, int3, int, (into) */
	/* C0 */ MI8, MI8, OP_I16, 0, ESC, ESC, MI8, MIZ,
		 OP_I16 | OP_I8, 0, OP_I16, 0, 0, I8, BAD, 0,
	/* D0: shifts, (aam, aad, salc gone), xlat, x87 */
	/* D0 */ M, M, M, M, BAD, BAD, BAD, 0, M, M, M, M, M, M, M, M,
	/* E0: loop/jrcxz, in/out imm8, call/jmp rel32, (EA far jmp gone), jmp rel8, in/out dx */
	/* E0 */ I8, I8, I8, I8, I8, I8, I8, I8, OP_I32, OP_I32, BAD, I8, 0, 0, 0, 0,
	/* F0: lock, int1, rep, hlt, cmc, group 3, flag ops, group 4, group 5 */
	/* F0 */ PFX, 0, PFX, PFX, 0, 0, M | OP_GRP3, M | OP_GRP3,
		 0, 0, 0, 0, 0, 0, M, M,
};

/* Two-byte map, 0F xx.  Also gives ModRM/imm8 for VEX/EVEX map 1. */
static const uint16_t map_0f[256] = {
	/*
	 * 00: group 6/7, lar, lsl, syscall, clts, sysret, invd, wbinvd, ud2,
	 * prefetch, femms, 3DNow! (ModRM, then an imm8 that is really the
	 * opcode; gone from current CPUs but still in FFmpeg's and xvid's
	 * runtime-dispatched code, so decoded rather than refused).
	 */
	/* 00 */ M, M, M, M, BAD, 0, 0, 0, 0, 0, BAD, 0, BAD, M, 0, MI8,
	/* 10: SSE moves, 18-1F hint NOPs, prefetch, endbr, nopl */
	/* 10 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 20: mov cr/dr (register form whatever mod says), SSE */
	/* 20 */ M | OP_MREG, M | OP_MREG, M | OP_MREG, M | OP_MREG, BAD, BAD, BAD, BAD,
		 M, M, M, M, M, M, M, M,
	/* 30: wrmsr, rdtsc, rdmsr, rdpmc, sysenter, sysexit, getsec, 38/3A escapes */
	/* 30 */ 0, 0, 0, 0, 0, 0, BAD, 0, ESC, BAD, ESC, BAD, BAD, BAD, BAD, BAD,
	/* 40: cmovcc */
	/* 40 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 50 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 60 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 70: pshuf*, shift groups 12-14 (imm8), pcmpeq, emms, vmread/vmwrite */
	/* 70 */ MI8, MI8, MI8, MI8, M, M, M, 0, M | OP_SSE4A, M, BAD, BAD, M, M, M, M,
	/* 80: jcc rel32 */
	/* 80 */ OP_I32, OP_I32, OP_I32, OP_I32, OP_I32, OP_I32, OP_I32, OP_I32,
		 OP_I32, OP_I32, OP_I32, OP_I32, OP_I32, OP_I32, OP_I32, OP_I32,
	/* 90: setcc */
	/* 90 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* A0: push/pop fs/gs, cpuid, bt, shld, VIA PadLock, bts, rsm, shrd, group 15, imul */
	/* A0 */ 0, 0, 0, M, MI8, M, M, M, 0, 0, 0, M, MI8, M, M, M,
	/* B0: cmpxchg, lss, btr, lfs, lgs, movzx, popcnt, ud1, group 8 (imm8), bsf, bsr, movsx */
	/* B0 */ M, M, M, M, M, M, M, M, M, M, MI8, M, M, M, M, M,
	/* C0: xadd, cmpps, movnti, pinsrw, pextrw, shufps, group 9, bswap */
	/* C0 */ M, M, MI8, M, MI8, MI8, MI8, M, 0, 0, 0, 0, 0, 0, 0, 0,
	/* D0-FF: MMX/SSE, FF is ud0 (takes ModRM) */
	/* D0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* E0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* F0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
};

/*
 * Opcode groups whose ModRM.reg selects the instruction, where some
 * selections #UD: bit n set means /n exists.  Refusing the others makes
 * a sweep that has wandered into data stop sooner.  C6/C7 /7 exist only as
 * XABORT/XBEGIN with ModRM F8.  Groups that keep gaining members (0F 00,
 * 0F 01, 0F AE, 0F C7, ...) are not checked.
 */
static const uint8_t grp_1b[256] = {
	[0x8f] = 0x01,		/* pop; the rest is XOP space */
	[0xc6] = 0x81,		/* mov, xabort */
	[0xc7] = 0x81,		/* mov, xbegin */
	[0xfe] = 0x03,		/* inc, dec */
	[0xff] = 0x7f,		/* inc, dec, call, lcall, jmp, ljmp, push */
};
static const uint8_t grp_0f[256] = {
	[0xba] = 0xf0,		/* bt, bts, btr, btc */
};

/*
 * Three-byte maps.  Every 0F 38 opcode takes ModRM and no immediate, every
 * 0F 3A opcode ModRM and imm8, in legacy, VEX and EVEX form alike.  Many
 * slots are unassigned, but marking them would only buy a slightly earlier
 * stop on data, at the risk of refusing an instruction newer than the table.
 */
static const uint16_t map_0f38[256] = { [0x00 ... 0xff] = M };
static const uint16_t map_0f3a[256] = { [0x00 ... 0xff] = MI8 };

#undef M
#undef MI8
#undef MIZ
#undef I8
#undef IZ
#undef BAD
#undef PFX
#undef ESC

/* Where the opcode came from; selects the table and the immediate rules. */
enum x86_map {
	MAP_1B,		/* one-byte map */
	MAP_0F,
	MAP_0F38,
	MAP_0F3A,
	MAP_FP16_5,	/* EVEX map 5 (AVX512-FP16): ModRM, no immediate */
	MAP_FP16_6,	/* EVEX map 6 */
	MAP_XOP8,	/* AMD XOP map 8: ModRM, imm8 */
	MAP_XOP9,	/* AMD XOP map 9: ModRM */
	MAP_XOPA,	/* AMD XOP map A: ModRM, imm32 */
};

/* Everything learnt about one instruction while decoding it. */
struct x86_decoder {
	const uint8_t *buf;
	size_t len;			/* bytes available */
	unsigned int pos;		/* bytes consumed so far */

	bool opsize;			/* 66 */
	bool adsize;			/* 67 */
	bool lock;			/* F0 */
	uint8_t rep;			/* last of F2/F3, 0 if none */
	uint8_t rex;			/* REX directly before the opcode, 0 if none */
	uint8_t esc;			/* first byte after the prefixes */
	bool vex;			/* VEX, EVEX or XOP encoded */

	enum x86_map map;
	uint8_t op;
	unsigned int flags;		/* OP_* of the opcode, adjusted for prefixes and ModRM */
	uint8_t modrm;			/* valid if flags & OP_M */
	bool riprel;			/* ModRM operand is disp32(%rip) */
	unsigned int disp_at;		/* offset of a 32-bit displacement, 0 if none */
	unsigned int imm_at;		/* offset of the immediate */
};

/*
 * Check that n more bytes may be consumed.  The 15-byte limit is tested
 * first: an instruction that would exceed it is invalid however much of
 * it the buffer holds.
 */
static int x86_need(const struct x86_decoder *d, unsigned int n)
{
	if (d->pos + n > X86_MAX_INSN)
		return ARCH_DECODE_BAD;
	if ((size_t)d->pos + n > d->len)
		return ARCH_DECODE_TRUNC;
	return ARCH_DECODE_OK;
}

/* Sign-extend without relying on implementation-defined conversions. */
static int64_t sext32(uint32_t v)
{
	return (int64_t)(v ^ 0x80000000u) - 0x80000000ll;
}

static int64_t sext8(uint8_t v)
{
	return (int64_t)(v ^ 0x80u) - 0x80;
}

/*
 * Legacy prefixes in any order, then REX.  A REX followed by another
 * prefix is ignored by the CPU, so it is forgotten here too; it still
 * counts towards the length.
 */
static int x86_prefixes(struct x86_decoder *d)
{
	for (;;) {
		int ret = x86_need(d, 1);
		uint8_t b;

		if (ret)
			return ret;
		b = d->buf[d->pos];
		if (!(map_1b[b] & OP_PFX))
			return ARCH_DECODE_OK;
		d->pos++;
		if ((b & 0xf0) == 0x40) {
			d->rex = b;
			continue;
		}
		d->rex = 0;
		if (b == 0x66)
			d->opsize = true;
		else if (b == 0x67)
			d->adsize = true;
		else if (b == 0xf0)
			d->lock = true;
		else if (b == 0xf2 || b == 0xf3)
			d->rep = b;
	}
}

/*
 * Parse a VEX (C4/C5), EVEX (62) or XOP (8F) prefix at d->pos and leave
 * the cursor on the opcode byte.  The map comes from the prefix's
 * map-select field; unknown maps are BAD.
 */
static int x86_vex(struct x86_decoder *d)
{
	unsigned int size = d->esc == 0xc5 ? 2 : d->esc == 0x62 ? 4 : 3;
	uint8_t sel;
	int ret;

	/* VEX/EVEX/XOP after 66, F2, F3, F0 or REX is #UD. */
	if (d->opsize || d->rep || d->lock || d->rex)
		return ARCH_DECODE_BAD;
	ret = x86_need(d, size);
	if (ret)
		return ret;
	sel = d->buf[d->pos + 1];

	switch (d->esc) {
	case 0xc5:
		d->map = MAP_0F;
		break;
	case 0xc4:
		switch (sel & 0x1f) {
		case 1: d->map = MAP_0F; break;
		case 2: d->map = MAP_0F38; break;
		case 3: d->map = MAP_0F3A; break;
		default: return ARCH_DECODE_BAD;
		}
		break;
	case 0x8f:
		switch (sel & 0x1f) {
		case 8: d->map = MAP_XOP8; break;
		case 9: d->map = MAP_XOP9; break;
		case 10: d->map = MAP_XOPA; break;
		default: return ARCH_DECODE_BAD;
		}
		break;
	default:
		/*
		 * EVEX.  Bits P0[3] and P1[2] are fixed in AVX-512 but reused by
		 * APX; neither changes the length, so they are not checked.  Map
		 * 4 (APX promoted legacy opcodes) and 7 are not supported.
		 */
		switch (sel & 0x7) {
		case 1: d->map = MAP_0F; break;
		case 2: d->map = MAP_0F38; break;
		case 3: d->map = MAP_0F3A; break;
		case 5: d->map = MAP_FP16_5; break;
		case 6: d->map = MAP_FP16_6; break;
		default: return ARCH_DECODE_BAD;
		}
		break;
	}
	d->vex = true;
	d->pos += size;
	return ARCH_DECODE_OK;
}

/* Find the opcode map through 0F / 0F 38 / 0F 3A or a VEX-style prefix. */
static int x86_escape(struct x86_decoder *d)
{
	int ret;

	d->esc = d->buf[d->pos];
	d->map = MAP_1B;
	if (d->esc == 0x0f) {
		ret = x86_need(d, 2);
		if (ret)
			return ret;
		d->pos++;
		d->map = MAP_0F;
		if (d->buf[d->pos] == 0x38 || d->buf[d->pos] == 0x3a) {
			d->map = d->buf[d->pos] == 0x38 ? MAP_0F38 : MAP_0F3A;
			d->pos++;
		}
		return ARCH_DECODE_OK;
	}
	if (map_1b[d->esc] & OP_ESC)
		return x86_vex(d);
	if (map_1b[d->esc] & OP_XOP) {
		/* XOP when the map field is >= 8; POP r/m has ModRM.reg = 0 there. */
		ret = x86_need(d, 2);
		if (ret)
			return ret;
		if ((d->buf[d->pos + 1] & 0x1f) >= 8)
			return x86_vex(d);
	}
	return ARCH_DECODE_OK;
}

/* Read the opcode byte and settle its properties under the prefixes seen. */
static int x86_opcode(struct x86_decoder *d)
{
	int ret = x86_need(d, 1);

	if (ret)
		return ret;
	d->op = d->buf[d->pos++];

	switch (d->map) {
	case MAP_1B:	d->flags = map_1b[d->op]; break;
	case MAP_0F:	d->flags = map_0f[d->op]; break;
	case MAP_0F38:	d->flags = map_0f38[d->op]; break;
	case MAP_0F3A:	d->flags = map_0f3a[d->op]; break;
	case MAP_XOP8:	d->flags = OP_M | OP_I8; break;
	case MAP_XOPA:	d->flags = OP_M | OP_I32; break;
	default:	d->flags = OP_M; break;	/* FP16 maps 5/6, XOP map 9 */
	}

	if (d->vex && d->map == MAP_0F) {
		/*
		 * VEX/EVEX map 1 holds only SSE-style opcodes: all take ModRM,
		 * the same ones as in legacy form an imm8, except VZEROUPPER/
		 * VZEROALL (VEX 77) which have neither.  Legacy opcodes without
		 * ModRM (jcc, syscall, bswap, ...) and MOV CR/DR have no such
		 * form.  Slots that are #UD in legacy form may not be here
		 * (EVEX 7A/7B are conversions), so those are accepted.
		 */
		if (d->op == 0x77 && d->esc != 0x62)
			d->flags = 0;
		else if (!(d->flags & (OP_M | OP_BAD)) || (d->flags & OP_MREG))
			return ARCH_DECODE_BAD;
		else
			d->flags = OP_M | (d->flags & OP_I8);
	}
	if (d->flags & OP_BAD)
		return ARCH_DECODE_BAD;
	/* 0F 78 with 66 or F2 is AMD's EXTRQ/INSERTQ, with two imm8. */
	if ((d->flags & OP_SSE4A) && (d->opsize || d->rep == 0xf2))
		d->flags |= OP_I16;
	return ARCH_DECODE_OK;
}

/* Consume ModRM and whatever SIB/displacement it calls for. */
static int x86_modrm(struct x86_decoder *d)
{
	unsigned int mod, rm, disp = 0;
	int ret = x86_need(d, 1);

	if (ret)
		return ret;
	d->modrm = d->buf[d->pos++];
	mod = d->modrm >> 6;
	rm = d->modrm & 7;

	if (!d->vex) {
		const uint8_t *grp = d->map == MAP_1B ? grp_1b : d->map == MAP_0F ? grp_0f : NULL;
		unsigned int reg = (d->modrm >> 3) & 7;

		if (grp && grp[d->op] && !(grp[d->op] & (1u << reg)))
			return ARCH_DECODE_BAD;
		if ((d->op == 0xc6 || d->op == 0xc7) && d->map == MAP_1B && reg == 7 &&
		    d->modrm != 0xf8)
			return ARCH_DECODE_BAD;
	}

	/* TEST r/m, imm is /0 (and its alias /1) of F6/F7; the rest have no imm. */
	if ((d->flags & OP_GRP3) && ((d->modrm >> 3) & 7) <= 1)
		d->flags |= d->op == 0xf6 ? OP_I8 : OP_IZ;

	if (mod == 3 || (d->flags & OP_MREG))
		return ARCH_DECODE_OK;
	if (rm == 4) {
		ret = x86_need(d, 1);
		if (ret)
			return ret;
		/* SIB base 101 with mod 00 means disp32 and no base. */
		if (mod == 0 && (d->buf[d->pos] & 7) == 5)
			disp = 4;
		d->pos++;
	} else if (mod == 0 && rm == 5) {
		disp = 4;
		d->riprel = true;
	}
	if (mod == 1)
		disp = 1;
	else if (mod == 2)
		disp = 4;

	ret = x86_need(d, disp);
	if (ret)
		return ret;
	if (disp == 4)
		d->disp_at = d->pos;
	d->pos += disp;
	return ARCH_DECODE_OK;
}

/* Size of the immediate under the prefixes seen. */
static unsigned int x86_imm_size(const struct x86_decoder *d)
{
	bool rexw = d->rex & 0x08;
	unsigned int n = 0;

	if (d->flags & OP_I8)
		n += 1;
	if (d->flags & OP_I16)
		n += 2;
	if (d->flags & OP_I32)
		n += 4;
	if (d->flags & OP_IZ)
		n += (d->opsize && !rexw) ? 2 : 4;
	if (d->flags & OP_IV)
		n += rexw ? 8 : d->opsize ? 2 : 4;
	if (d->flags & OP_MOFFS)
		n += d->adsize ? 4 : 8;
	return n;
}

/* Classify a decoded legacy-encoded instruction for the generic code. */
static void x86_classify(const struct x86_decoder *d, uint64_t addr, struct arch_insn *insn)
{
	const uint8_t *buf = d->buf;
	uint64_t next = addr + insn->len;
	unsigned int reg = (d->modrm >> 3) & 7;
	bool has_modrm = d->flags & OP_M;

	if (d->map == MAP_0F) {
		if (d->op == 0x1f && has_modrm && reg == 0)
			insn->kind = INSN_NOP;
		else if (d->op == 0x1e && d->modrm == 0xfa && d->rep == 0xf3 && !d->opsize)
			insn->kind = INSN_LANDING;
		return;
	}
	if (d->map != MAP_1B)
		return;

	switch (d->op) {
	case 0x90:
		/* 41 90 is xchg %eax,%r8d; F3 90 is pause. */
		if (!(d->rex & 0x01) && d->rep != 0xf3 && !d->lock)
			insn->kind = INSN_NOP;
		break;
	case 0xe8:
	case 0xe9:
		insn->kind = d->op == 0xe8 ? INSN_CALL : INSN_BRANCH;
		insn->disp_off = d->imm_at;
		insn->target = next + (uint64_t)sext32(get_le32(buf + d->imm_at));
		break;
	case 0xeb:
		insn->kind = INSN_BRANCH;
		insn->disp_off = d->imm_at;
		insn->target = next + (uint64_t)sext8(buf[d->imm_at]);
		break;
	case 0xff:
		/* FF /2 with a RIP-relative operand: call *disp32(%rip). */
		if (has_modrm && d->riprel && reg == 2) {
			insn->kind = INSN_CALL_MEM;
			insn->disp_off = d->disp_at;
			insn->target = next + (uint64_t)sext32(get_le32(buf + d->disp_at));
			/* With 67 the address is computed in 32 bits (%eip). */
			if (d->adsize)
				insn->target &= 0xffffffffu;
		}
		break;
	default:
		break;
	}
}

static int x86_decode(const uint8_t *buf, size_t len, uint64_t addr, struct arch_insn *insn)
{
	struct x86_decoder d = { .buf = buf, .len = len };
	unsigned int imm;
	int ret;

	memset(insn, 0, sizeof(*insn));

	/*
	 * The two instructions every site check starts with (a patch site's
	 * `call rel32`, the ENDBR64 before it) decoded directly: they are
	 * most of what record decodes in a kernel-sized image.
	 */
	if (len >= 5 && buf[0] == 0xe8) {
		int32_t rel = (int32_t)get_le32(buf + 1);
		insn->len = 5;
		insn->kind = INSN_CALL;
		insn->target = addr + 5 + (uint64_t)(int64_t)rel;
		insn->disp_off = 1;
		return ARCH_DECODE_OK;
	}
	if (len >= 4 && buf[0] == 0xf3 && buf[1] == 0x0f && buf[2] == 0x1e && buf[3] == 0xfa) {
		insn->len = 4;
		insn->kind = INSN_LANDING;
		return ARCH_DECODE_OK;
	}

	ret = x86_prefixes(&d);
	if (!ret)
		ret = x86_escape(&d);
	if (!ret)
		ret = x86_opcode(&d);
	if (!ret && (d.flags & OP_M))
		ret = x86_modrm(&d);
	if (ret)
		return ret;

	d.imm_at = d.pos;
	imm = x86_imm_size(&d);
	ret = x86_need(&d, imm);
	if (ret)
		return ret;
	d.pos += imm;

	insn->len = d.pos;
	insn->kind = INSN_OTHER;
	if (!d.vex)
		x86_classify(&d, addr, insn);
	return ARCH_DECODE_OK;
}

static int x86_call_reloc_back(unsigned int type)
{
	switch (type) {
	case R_X86_64_PLT32:
	case R_X86_64_PC32:
		return 1;	/* E8 rel32 */
	case R_X86_64_GOTPCRELX:
	case R_X86_64_GOTPCREL:
		return 2;	/* FF 15 disp32 */
	default:
		return -1;
	}
}

/*
 * A PLT entry that jumps through its GOT slot starts, after an optional
 * ENDBR64 and an optional BND (F2) prefix, with FF 25 disp32.  That
 * covers lazy .plt entries without IBT, .plt.sec, .plt.bnd and .plt.got.
 * PLT0 (FF 35 push) and IBT lazy stubs (endbr64; push; jmp PLT0) do not
 * name a slot of their own and are rejected.
 */
static int x86_plt_slot(const uint8_t *buf, size_t len, uint64_t addr, uint64_t *slot)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t pos = 0;

	if (len >= sizeof(endbr64) && memcmp(buf, endbr64, sizeof(endbr64)) == 0)
		pos += sizeof(endbr64);
	if (pos < len && buf[pos] == 0xf2)
		pos++;
	if (len < pos + 6 || buf[pos] != 0xff || buf[pos + 1] != 0x25)
		return -ENOENT;
	*slot = addr + pos + 6 + (uint64_t)sext32(get_le32(buf + pos + 2));
	return 0;
}

/* Intel's recommended multi-byte NOPs (SDM vol. 2B, "NOP"), by length. */
static const uint8_t x86_nops[9][8] = {
	[1] = { 0x90 },
	[2] = { 0x66, 0x90 },
	[3] = { 0x0f, 0x1f, 0x00 },
	[4] = { 0x0f, 0x1f, 0x40, 0x00 },
	[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	[6] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	[7] = { 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
	[8] = { 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
};

/* Largest first, so that a patched-out call becomes one 5-byte NOP. */
static int x86_encode_nops(uint8_t *buf, size_t len)
{
	while (len) {
		size_t n = len > 8 ? 8 : len;

		memcpy(buf, x86_nops[n], n);
		buf += n;
		len -= n;
	}
	return 0;
}

static int x86_encode_call(uint8_t *buf, uint64_t from, uint64_t to)
{
	uint64_t rel = to - (from + 5);

	/* rel must be a sign-extended 32-bit value: bias it into [0, 2^32). */
	if (rel + 0x80000000u > 0xffffffffu)
		return -ERANGE;
	buf[0] = 0xe8;
	put_le32(buf + 1, (uint32_t)rel);
	return 0;
}

static unsigned int x86_patch_nop_at(const uint8_t *buf, size_t len)
{
	return len >= 1 && buf[0] == 0x90 ? 1 : 0;
}

/* The one-byte NOP (0x90) of -fpatchable-function-entry, whatever the flags. */
static unsigned int x86_nop_unit(unsigned int e_flags)
{
	(void)e_flags;
	return 1;
}

static const char *x86_nop_name(unsigned int len)
{
	return len == 1 ? "0x90" : "NOP";
}

/*
 * embed: an entry site is, after an optional ENDBR64 (-fcf-protection), a
 * call to __fentry__ (-pg -mfentry: `call rel32`, or in a PIE `call
 * *GOT(%rip)`, which a static link may relax to `addr32 call rel32`), a
 * 5-byte NOP (-mnop-mcount, clang's -fpatchable-function-entry=5) or five
 * 0x90 (GCC's -fpatchable-function-entry=5).  Which calls are sites record
 * has judged (their target); here only the shape is checked.  embed writes
 * the one 5-byte NOP over each (a 6-byte call: the NOP and one 0x90), so
 * that the runtime swaps one instruction, never a run of them a thread
 * could stand inside.  No code is written into the segment: the runtime
 * copies its own trampolines into the room.
 */
#define X86_ENDBR64_LEN	4
#define X86_SITE_MAX	6	/* the longest site: a call through the GOT */

static const uint8_t x86_endbr64[X86_ENDBR64_LEN] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* The length of the entry site at buf[0..len), 0 when it is none. */
static unsigned int x86_entry_site(const uint8_t *buf, size_t len)
{
	static const uint8_t ninety[5] = { 0x90, 0x90, 0x90, 0x90, 0x90 };

	if (len >= 5 && (buf[0] == 0xe8 || !memcmp(buf, ninety, 5) ||
			 (buf[0] == 0x0f && buf[1] == 0x1f && buf[2] == 0x44 && buf[3] == 0x00)))
		return 5;	/* call rel32; five 0x90; nopl disp8(%rax,%rax,1) */
	if (len >= 6 && ((buf[0] == 0xff && buf[1] == 0x15) || (buf[0] == 0x67 && buf[1] == 0xe8)))
		return 6;	/* call *disp32(%rip); addr32 call rel32 */
	return 0;
}

static int x86_callops_site(const uint8_t *buf, size_t len, uint64_t addr,
			    struct arch_callops_site *site)
{
	unsigned int entry, n;

	(void)addr;	/* no literal: nothing to align */
	if (len < X86_ENDBR64_LEN)
		return ARCH_CALLOPS_NONE;
	n = x86_entry_site(buf + X86_ENDBR64_LEN, len - X86_ENDBR64_LEN);
	if (!n)
		return ARCH_CALLOPS_NONE;
	/* the ENDBR64 right before the site is the function's own landing pad */
	entry = memcmp(buf, x86_endbr64, X86_ENDBR64_LEN) ? X86_ENDBR64_LEN : 0;
	site->entry_off = entry;
	site->call_off = site->disabled_off = X86_ENDBR64_LEN - entry;
	site->disabled_len = n;
	return ARCH_CALLOPS_OK;
}

static int x86_callops_disabled(uint8_t *buf, size_t len, uint64_t at, uint64_t tramp)
{
	(void)at;	/* the runtime writes the call; the idle NOP is the same anywhere */
	(void)tramp;
	if (len != 5 && len != 6)
		return -EINVAL;
	memcpy(buf, x86_nops[5], 5);
	if (len == 6)
		buf[5] = 0x90;
	return 0;
}

static const struct arch_callops x86_callops = {
	.call_slot		= 5,
	.site_len	= X86_ENDBR64_LEN + X86_SITE_MAX,
	.site_back	= X86_ENDBR64_LEN,
	.tramp_size	= 0,		/* no blob: the runtime writes the trampolines */
	.room_size	= 8192 * 16,	/* 128 KiB: 8192 slots of 16 bytes */
	.entry_calls	= true,
	.entry_nop	= true,
	.area_n		= 5,
	.area_m		= 0,
	.site_desc	= "a call to __fentry__, a 5-byte NOP or five 0x90 at its entry "
			  "(after ENDBR64)",
	.no_sites	= "no patch sites at function entries: build with -pg -mfentry "
			  "[-mnop-mcount] or -fpatchable-function-entry=5",
	.reach		= "rel32 reach (2 GiB)",
};

const struct arch_ops arch_x86_64 = {
	.name = "x86_64",
	/*
	 * repad: no x86 site has an ops literal to align (literal_size 0), so
	 * there is nothing to pad: repad leaves an x86_64 object byte for byte
	 * (and a kernel build that repads every object works here too).
	 */
	.caps = ARCH_CAN(ARCH_CAP_RECORD) | ARCH_CAN(ARCH_CAP_AUDIT) |
		ARCH_CAN(ARCH_CAP_IN_PLACE) | ARCH_CAN(ARCH_CAP_REPAD) |
		ARCH_CAN(ARCH_CAP_EMBED) | ARCH_CAN(ARCH_CAP_RUNTIME),
	.machine = EM_X86_64,
	.policy = ARCH_POLICY_NOP_MCOUNT | ARCH_POLICY_PFE_IS_PADDING,
	.insn_align = 1,
	.call_len = 5,
	.literal_size = 0,
	.patch_nop_sizes	= 1u << 1,
	.patch_nop_at = x86_patch_nop_at,
	.abs64_reloc = R_X86_64_64,
	.relative_reloc = R_X86_64_RELATIVE,
	.jump_slot_reloc = R_X86_64_JUMP_SLOT,
	.glob_dat_reloc = R_X86_64_GLOB_DAT,
	.plt_entry_size = 16,
	.plt_stride = 8,		/* .plt.got without IBT: 8-byte entries */
	/*
	 * The x86-64 link never changes an instruction's size: GOTPCRELX
	 * relaxation rewrites `call *slot(%rip)` as `addr32 call`, six bytes
	 * for six.  So no alignment or relaxation relocations to honour and
	 * no patch points to pin.
	 */
	.align_reloc = 0,
	.relax_reloc = 0,
	.none_reloc = R_X86_64_NONE,
	.patch_points = NULL,
	.patch_point_len = 0,
	.decode = x86_decode,
	.call_reloc_back = x86_call_reloc_back,
	.plt_slot = x86_plt_slot,
	.encode_nops = x86_encode_nops,
	.encode_call = x86_encode_call,
	.nop_unit = x86_nop_unit,
	.nop_name = x86_nop_name,
	/*
	 * Not needed: moving x86 code would need a length decode of every
	 * instruction and rel8/rel32 re-encoding, and no x86 site has an
	 * alignment to restore.  insn_len, pcrel_decode, pcrel_encode,
	 * align_target, align_padding and mapping_symbol stay NULL; so does
	 * callops_tramp (embed writes no code: the room is the runtime's).
	 */
	.max_page_size = 0x1000,	/* every x86_64 kernel maps 4 KiB pages */
	.callops = &x86_callops,
	.callops_site = x86_callops_site,
	.callops_disabled = x86_callops_disabled,
};
