// SPDX-License-Identifier: GPL-2.0-only
/*
 * tests/arch/aarch64.c - the arm64 tests that are not single decode cases
 * (those, with pcrel_decode and insn_len, are tests/arch/aarch64.cases):
 * the arch_ops fields, every word's length, the PLT reader, the encoders,
 * pcrel_encode, and embed's CALL_OPS hooks.  Run in the "arch" suite from
 * the table tests/arch/gen.py writes (tests/check_arch.c).
 *
 * Strategy: every case is a row in a table; the hooks other architectures
 * share (PLT slot, encoders, call relocations, pcrel_encode and its round
 * trip) run their rows through the one body of tests/arch/harness.c
 * (arch_add_X), the rest are the tests below; bytes are copied into a
 * heap buffer of exactly the stated length so that ASan catches any read
 * past the end.  Instruction words and PLT entries
 * were taken from aarch64-linux-gnu-objdump -d of objects and small dynamic
 * programs built by aarch64-linux-gnu-gcc (-pg, -fpatchable-function-entry
 * =4,2 -mbranch-protection=bti, and -z force-bti / -z pac-plt links), so
 * the expectations are the toolchain's, not ours.
 *
 * The pcrel_encode rows were made, as the pcrel cases were, by assembling
 * each instruction alone, `KIND .+N`, and reading the word and its target
 * back:
 *
 *	printf '\t.text\n\tcbz x3, .+1048572\n' > t.s
 *	aarch64-linux-gnu-as t.s -o t.o && aarch64-linux-gnu-objdump -dr t.o
 *	   0:	b47fffe3 	cbz	x3, ffffc <.text+0xffffc>
 *
 * (GNU as 2.40; no relocation left, target - 0 = N).  A re-encoding is
 * compared byte for byte with the word the assembler made for the new
 * displacement.  Every limit has a row at the largest displacement that
 * fits and one step past it; one step past is what the assembler refuses
 * ("branch out of range", "conditional branch out of range", "pc-relative
 * address offset out of range", "... not word aligned").
 *
 * The CALL_OPS rows (callops_site) are the bytes from a function's literal
 * to its entry + 12, copied from aarch64-linux-gnu-objdump -d of objects
 * that aarch64-linux-gnu-gcc 12.2 built with -O2 (or -Os)
 * -fpatchable-function-entry=4,2 [-falign-functions=8]
 * [-mbranch-protection=bti|pac-ret|standard] and of near-miss flavours
 * (=2, =3,2, -pg), at the addresses objdump shows; the idle rows from
 * objdump of fixtures/embed/out/prog after `patchsite embed`.  Neither GCC
 * nor clang 14 puts BTI JC or BTI J at a function entry, so those rows, the
 * attached site and the idle form itself come from GNU as:
 *
 *	printf '\t.text\n\tmov x9, x30\n\tnop\n\tbti jc\n\tbti j\n' > t.s
 *	aarch64-linux-gnu-as t.s -o t.o && aarch64-linux-gnu-objdump -d t.o
 *	   0:	aa1e03e9 	mov	x9, x30
 *	   4:	d503201f 	nop
 *	   8:	d50324df 	bti	jc
 *	   c:	d503249f 	bti	j
 *
 * The trampoline blob (callops_tramp) is checked against this source,
 * assembled by GNU as 2.40 (the listing beside a64_callops_tramp_words in
 * arch/arm64.c, with its labels):
 *
 *	aarch64-linux-gnu-as tramp.S -o tramp.o
 *	aarch64-linux-gnu-objdump -d tramp.o; aarch64-linux-gnu-nm -n tramp.o
 *
 *		.text
 *		.p2align 4
 *	anchor:	.8byte	0
 *	default_ops:
 *		.8byte	0, 0, 0
 *	noop:	bti	c
 *		ret
 *		nop
 *		nop
 *	entry:	bti	c
 *		and	x10, x30, #~7
 *		ldur	x11, [x10, #-16]
 *		adr	x16, anchor
 *		ldr	x17, anchor
 *		sub	x16, x16, x17
 *		add	x11, x11, x16
 *		adr	x17, default_ops
 *		cmp	x11, x17
 *		b.eq	fast
 *		ldr	x17, [x11, #16]
 *		cbnz	x17, direct
 *		sub	sp, sp, #240
 *		stp	x0, x1, [sp]
 *		stp	x2, x3, [sp, #16]
 *		stp	x4, x5, [sp, #32]
 *		stp	x6, x7, [sp, #48]
 *		stp	x8, x9, [sp, #64]
 *		stp	x29, x30, [sp, #80]
 *		stp	q0, q1, [sp, #96]
 *		stp	q2, q3, [sp, #128]
 *		stp	q4, q5, [sp, #160]
 *		stp	q6, q7, [sp, #192]
 *		stp	x29, x30, [sp, #224]
 *		add	x29, sp, #224
 *		sub	x0, x10, #8
 *		mov	x1, x9
 *		mov	x2, x11
 *		mov	x3, sp
 *		ldr	x16, [x11]
 *		blr	x16
 *		ldp	q0, q1, [sp, #96]
 *		ldp	q2, q3, [sp, #128]
 *		ldp	q4, q5, [sp, #160]
 *		ldp	q6, q7, [sp, #192]
 *		ldp	x0, x1, [sp]
 *		ldp	x2, x3, [sp, #16]
 *		ldp	x4, x5, [sp, #32]
 *		ldp	x6, x7, [sp, #48]
 *		ldp	x8, x9, [sp, #64]
 *		ldp	x29, x10, [sp, #80]
 *		add	sp, sp, #240
 *		mov	x30, x9
 *		ret	x10
 *	fast:	mov	x10, x30
 *		mov	x30, x9
 *		ret	x10
 *	direct:	br	x17
 *
 * Its code words are compared one by one with objdump's, and the data
 * words (anchor, default ops) with the addresses they must hold; the
 * PC-relative words are decoded with pcrel_decode and must land on the
 * labels nm lists.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/arch/harness.h"

void arch_tests_aarch64(Suite *s);

static const struct arch_ops *const ops = &arch_arm64;
#define dup_exact arch_dup_exact

/* Any word but zero decodes to exactly 4 bytes, and never reads beyond them. */
START_TEST(test_decode_any_word)
{
	uint32_t x = 0x12345678u + (uint32_t)_i;

	for (int n = 0; n < 20000; n++) {
		uint8_t bytes[4] = { W(x) };
		uint8_t *buf = dup_exact(bytes, 4);
		struct arch_insn insn;
		int ret = ops->decode(buf, 4, 0xffffffffffff0000, &insn);

		if (x == 0) {
			ck_assert_int_eq(ret, ARCH_DECODE_BAD);
		} else {
			ck_assert_int_eq(ret, ARCH_DECODE_OK);
			ck_assert_uint_eq(insn.len, 4);
		}
		free(buf);
		x = x * 1664525u + 1013904223u;
	}
}
END_TEST

static const struct arch_plt_case plt_cases[] = {
	{ "PLT0 (ld, lazy)", 0x680, 32,
	  { W(0xa9bf7bf0), W(0xf00000f0), W(0xf947fe11), W(0x913fe210),
	    W(0xd61f0220), W(0xd503201f), W(0xd503201f), W(0xd503201f) }, -ENOENT, 0 },
	{ "PLT0 first 16 bytes", 0x680, 16,
	  { W(0xa9bf7bf0), W(0xf00000f0), W(0xf947fe11), W(0x913fe210) }, -ENOENT, 0 },
	{ "strlen@plt", 0x6a0, 16,
	  { W(0x90000110), W(0xf9400211), W(0x91000210), W(0xd61f0220) }, 0, 0x20000 },
	{ "printf@plt", 0x710, 16,
	  { W(0x90000110), W(0xf9401e11), W(0x9100e210), W(0xd61f0220) }, 0, 0x20038 },
	{ "PLT0 with BTI (-z force-bti)", 0x4005c0, 32,
	  { W(0xd503245f), W(0xa9bf7bf0), W(0xf00000f0), W(0xf947fe11),
	    W(0x913fe210), W(0xd61f0220), W(0xd503201f), W(0xd503201f) }, -ENOENT, 0 },
	{ "puts@plt with BTI C (-z force-bti, address taken)", 0x400640, 24,
	  { W(0xd503245f), W(0x90000110), W(0xf9401211), W(0x91008210),
	    W(0xd61f0220), W(0xd503201f) }, 0, 0x420020 },
	{ "exit@plt with BTI C", 0x4005e0, 24,
	  { W(0xd503245f), W(0x90000110), W(0xf9400211), W(0x91000210),
	    W(0xd61f0220), W(0xd503201f) }, 0, 0x420000 },
	{ "BTI PLT entry cut at 16 bytes", 0x400640, 16,
	  { W(0xd503245f), W(0x90000110), W(0xf9401211), W(0x91008210) }, -ENOENT, 0 },
	{ "exit@plt with -z pac-plt", 0x6b8, 24,
	  { W(0x90000110), W(0xf9400611), W(0x91002210), W(0xd503219f),
	    W(0xd61f0220), W(0xd503201f) }, 0, 0x20008 },
	{ "puts@plt with BTI and PAC", 0x400640, 24,
	  { W(0xd503245f), W(0x90000110), W(0xf9401211), W(0x91008210),
	    W(0xd503219f), W(0xd61f0220) }, 0, 0x420020 },
	{ "autib1716 flavour", 0x1000, 20,
	  { W(0x90000110), W(0xf9400611), W(0x91002210), W(0xd50321df),
	    W(0xd61f0220) }, 0, 0x21008 },
	{ "adrp to the previous page", 0x10000, 16,
	  { W(0xf0fffff0), W(0xf9400611), W(0x91002210), W(0xd61f0220) }, 0, 0xf008 },
	{ "adrp 4 GiB back (sign bit of immhi)", 0x10000, 16,
	  { W(0x90800010), W(0xf9400611), W(0x91002210), W(0xd61f0220) },
	  0, 0xffffffff00010008 },
	{ "ldr and add disagree", 0x6a0, 16,
	  { W(0x90000110), W(0xf9400611), W(0x91000210), W(0xd61f0220) }, -ENOENT, 0 },
	{ "br x16 instead of x17", 0x6a0, 16,
	  { W(0x90000110), W(0xf9400211), W(0x91000210), W(0xd61f0200) }, -ENOENT, 0 },
	{ "NOP padding", 0x700, 16,
	  { W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f) }, -ENOENT, 0 },
	{ "short buffer", 0x6a0, 12,
	  { W(0x90000110), W(0xf9400211), W(0x91000210) }, -ENOENT, 0 },
	{ "empty buffer", 0x6a0, 0, { 0 }, -ENOENT, 0 },
};

static const struct arch_nops_case nops_cases[] = {
	{ 0, 0, { 0 }, 0 },
	{ 4, 0, { W(0xd503201f) }, 1 },
	{ 8, 0, { W(0xd503201f), W(0xd503201f) }, 2 },
	{ 16, 0, { W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f) }, 4 },
	{ 2, -EINVAL, { 0 }, 0 },
	{ 6, -EINVAL, { 0 }, 0 },
};

static const struct arch_call_case call_cases[] = {
	{ "bl _mcount (as assembled)", 0x400000, 0x400128, 0, { W(0x9400004a) } },
	{ "bl backwards (as assembled)", 0x40012c, 0x400000, 0, { W(0x97ffffb5) } },
	{ "bl to itself", 0x1000, 0x1000, 0, { W(0x94000000) } },
	{ "+128 MiB - 4", 0x10000000, 0x10000000 + 0x7fffffc, 0, { W(0x95ffffff) } },
	{ "+128 MiB", 0x10000000, 0x10000000 + 0x8000000, -ERANGE, { 0 } },
	{ "-128 MiB", 0x10000000, 0x10000000 - 0x8000000, 0, { W(0x96000000) } },
	{ "-128 MiB - 4", 0x10000000, 0x10000000 - 0x8000004, -ERANGE, { 0 } },
	{ "far kernel address", 0xffff800080000000, 0x1000, -ERANGE, { 0 } },
	{ "wraps below zero", 0, 0xfffffffffffffffc, 0, { W(0x97ffffff) } },
	{ "misaligned target", 0x1000, 0x1002, -ERANGE, { 0 } },
};

/* --- PC-relative references: decode --- */

#define A64_B_MIN	(-0x8000000LL)		/* imm26 words: +-128 MiB */
#define A64_B_MAX	0x7fffffcLL
#define A64_19_MIN	(-0x100000LL)		/* imm19 words: +-1 MiB */
#define A64_19_MAX	0xffffcLL
#define A64_14_MIN	(-0x8000LL)		/* imm14 words: +-32 KiB */
#define A64_14_MAX	0x7ffcLL
#define A64_ADR_MIN	(-0x100000LL)		/* ADR: 21-bit byte offset */
#define A64_ADR_MAX	0xfffffLL

/* --- PC-relative references: re-encode for a new displacement --- */

static const struct arch_penc_case penc_cases[] = {
	{ "b .+0x128 -> b .+4", 4, { W(0x1400004a) }, 4, 0, { W(0x14000001) } },
	{ "b .+0x128 -> b .+0x7fffffc (largest)", 4, { W(0x1400004a) },
	  A64_B_MAX, 0, { W(0x15ffffff) } },
	{ "b .+0x128 -> b .-0x8000000 (smallest)", 4, { W(0x1400004a) }, A64_B_MIN, 0,
	  { W(0x16000000) } },
	{ "b .+0x128 -> b .-0x1000", 4, { W(0x1400004a) }, -0x1000, 0, { W(0x17fffc00) } },
	{ "b: .+0x8000000 is out of range", 4, { W(0x1400004a) }, A64_B_MAX + 4, -ERANGE, { 0 } },
	{ "b: .-0x8000004 is out of range", 4, { W(0x1400004a) }, A64_B_MIN - 4, -ERANGE, { 0 } },
	{ "b: .+2 is not word aligned", 4, { W(0x1400004a) }, 2, -ERANGE, { 0 } },
	{ "bl .+0x40 -> bl .+0x7fffffc", 4, { W(0x94000010) }, A64_B_MAX, 0, { W(0x95ffffff) } },
	{ "bl .+0x40 -> bl .-0x8000000", 4, { W(0x94000010) }, A64_B_MIN, 0, { W(0x96000000) } },
	{ "bl: .+0x8000000 is out of range", 4, { W(0x94000010) }, A64_B_MAX + 4, -ERANGE, { 0 } },
	{ "b.ne .+0x20 -> b.ne .+0x24", 4, { W(0x54000101) }, 0x24, 0, { W(0x54000121) } },
	{ "b.ne .+0x20 -> b.ne .+0xffffc", 4, { W(0x54000101) }, A64_19_MAX, 0, { W(0x547fffe1) } },
	{ "b.ne .+0x20 -> b.ne .-0x100000", 4, { W(0x54000101) },
	  A64_19_MIN, 0, { W(0x54800001) } },
	{ "b.ne: .+0x100000 is out of range", 4, { W(0x54000101) },
	  A64_19_MAX + 4, -ERANGE, { 0 } },
	{ "b.ne: .-0x100004 is out of range", 4, { W(0x54000101) },
	  A64_19_MIN - 4, -ERANGE, { 0 } },
	{ "cbz x3, .+0x40 -> cbz x3, .+0xffffc", 4, { W(0xb4000203) }, A64_19_MAX, 0,
	  { W(0xb47fffe3) } },
	{ "cbz x3, .+0x40 -> cbz x3, .-0x100000", 4, { W(0xb4000203) }, A64_19_MIN, 0,
	  { W(0xb4800003) } },
	{ "cbz: .+0x100000 is out of range", 4, { W(0xb4000203) }, A64_19_MAX + 4, -ERANGE, { 0 } },
	{ "cbz: .+6 is not word aligned", 4, { W(0xb4000203) }, 6, -ERANGE, { 0 } },
	{ "cbnz w4, .-0x20 -> cbnz w4, .-0x1c", 4, { W(0x35ffff04) }, -0x1c, 0, { W(0x35ffff24) } },
	{ "tbz x5, #63, .+0x30 -> .+0x7ffc", 4, { W(0xb6f80185) },
	  A64_14_MAX, 0, { W(0xb6fbffe5) } },
	{ "tbz x5, #63, .+0x30 -> .-0x8000", 4, { W(0xb6f80185) },
	  A64_14_MIN, 0, { W(0xb6fc0005) } },
	{ "tbz: .+0x8000 is out of range", 4, { W(0xb6f80185) }, A64_14_MAX + 4, -ERANGE, { 0 } },
	{ "tbz: .-0x8004 is out of range", 4, { W(0xb6f80185) }, A64_14_MIN - 4, -ERANGE, { 0 } },
	{ "tbz: .+0x7ffe is not word aligned", 4, { W(0xb6f80185) }, 0x7ffe, -ERANGE, { 0 } },
	{ "tbnz w6, #3, .-0x40 -> .-0x3c", 4, { W(0x371ffe06) }, -0x3c, 0, { W(0x371ffe26) } },
	{ "ldr x7, .+0x6c -> ldr x7, .+0x70", 4, { W(0x58000367) }, 0x70, 0, { W(0x58000387) } },
	{ "ldr x7, .+0x6c -> ldr x7, .+0xffffc", 4, { W(0x58000367) }, A64_19_MAX, 0,
	  { W(0x587fffe7) } },
	{ "ldr x7, .+0x6c -> ldr x7, .-0x100000", 4, { W(0x58000367) }, A64_19_MIN, 0,
	  { W(0x58800007) } },
	{ "ldr: .+0x100000 is out of range", 4, { W(0x58000367) }, A64_19_MAX + 4, -ERANGE, { 0 } },
	{ "ldr: .+2 is not word aligned", 4, { W(0x58000367) }, 2, -ERANGE, { 0 } },
	{ "adr x10, .+0x30 -> adr x10, .+0x34", 4, { W(0x1000018a) }, 0x34, 0, { W(0x100001aa) } },
	{ "adr x11, .+0x41 -> adr x11, .+0xfffff", 4, { W(0x3000020b) }, A64_ADR_MAX, 0,
	  { W(0x707fffeb) } },
	{ "adr x11, .+0x41 -> adr x11, .-0x100000", 4, { W(0x3000020b) }, A64_ADR_MIN, 0,
	  { W(0x1080000b) } },
	{ "adr x11, .+0xfffff -> adr x11, .+0x41", 4, { W(0x707fffeb) },
	  0x41, 0, { W(0x3000020b) } },
	{ "adr: .+0x100000 is out of range", 4, { W(0x3000020b) },
	  A64_ADR_MAX + 1, -ERANGE, { 0 } },
	{ "adr: .-0x100001 is out of range", 4, { W(0x3000020b) },
	  A64_ADR_MIN - 1, -ERANGE, { 0 } },
};

/* Random words for the pcrel round trip (harness.c's test_pcrel_identity). */
static void pcrel_fill(uint8_t *in, uint32_t *x, int n)
{
	(void)n;
	for (int b = 0; b < 4; b++)
		in[b] = (uint8_t)(*x >> 8 * b);
	*x = *x * 1664525u + 1013904223u;
}

static const struct arch_pcrel_gen pcrel_gen = { 0x2545f491u, 4, 20000, pcrel_fill };

/* GCC pads with NOP on arm64 whatever e_flags holds; no alignment relocation. */
START_TEST(test_nop_unit)
{
	ck_assert_uint_eq(ops->nop_unit(0), 4);
	ck_assert_uint_eq(ops->nop_unit(0xffffffffu), 4);
	ck_assert_ptr_null(ops->align_target);
	ck_assert_ptr_null(ops->align_padding);
	ck_assert_uint_eq(ops->align_reloc, 0);
}
END_TEST

static const struct arch_reloc_case reloc_cases[] = {
	{ R_AARCH64_CALL26, 0 },
	{ R_AARCH64_JUMP26, 0 },
	{ R_AARCH64_ABS64, -1 },
	{ R_AARCH64_ADR_PREL_PG_HI21, -1 },
	{ R_AARCH64_NONE, -1 },
};

static const struct arch_ops_want fields = {
	.name = "arm64", .machine = EM_AARCH64, .insn_align = 4, .call_len = 4,
	.literal_size = 8, .abs64_reloc = R_AARCH64_ABS64, .relative_reloc = R_AARCH64_RELATIVE,
	.jump_slot_reloc = R_AARCH64_JUMP_SLOT, .glob_dat_reloc = R_AARCH64_GLOB_DAT,
	.plt_entry_size = 16, .plt_stride = 8, .align_reloc = 0,
};

START_TEST(test_ops_fields)
{
	arch_check_ops_fields(ops, &fields);
	/* one NOP unit whatever -march says: no hook; findings name it "NOP" */
	ck_assert_ptr_null(ops->nop_unit_march);
	ck_assert_str_eq(ops->nop_name(4), "NOP");
}
END_TEST

/* --- embed: CALL_OPS sites --- */

struct site_case {
	const char *what;
	uint64_t literal;		/* the literal's address: the function's - 8 */
	size_t len;
	uint8_t bytes[24];
	int ret;
	unsigned int call_off, disabled_off;	/* ARCH_CALLOPS_OK only */
};

#define SITE_OK(c, d)	ARCH_CALLOPS_OK, (c), (d)
#define SITE_NONE	ARCH_CALLOPS_NONE, 0, 0
#define SITE_MIS	ARCH_CALLOPS_MISALIGNED, 0, 0

static const struct site_case site_cases[] = {
	/* gcc -O2 =4,2 -falign-functions=8: leaf at 0x8 */
	{ "=4,2: NOP NOP, NOP NOP", 0x0, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0x90000001) },
	  SITE_OK(4, 0) },
	/* the same with -mbranch-protection=bti: leaf at 0x8 */
	{ "=4,2 bti: NOP NOP, BTI C, NOP NOP", 0x0, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd503245f), W(0xd503201f), W(0xd503201f) },
	  SITE_OK(8, 4) },
	/* -mbranch-protection=standard, non-leaf caller at 0x48: PACIASP after the area */
	{ "=4,2 standard: BTI C, NOP NOP, then PACIASP", 0x40, 24,
	  { W(0xd503201f), W(0xd503201f), W(0xd503245f), W(0xd503201f), W(0xd503201f),
	    W(0xd503233f) },
	  SITE_OK(8, 4) },
	/* -mbranch-protection=pac-ret, non-leaf caller at 0x30: no BTI, PACIASP is word 5 */
	{ "=4,2 pac-ret: NOP NOP, NOP NOP, PACIASP", 0x28, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503233f) },
	  SITE_OK(4, 0) },
	{ "BTI JC (as)", 0x0, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd50324df), W(0xd503201f), W(0xd503201f) },
	  SITE_OK(8, 4) },
	{ "a linked kernel-space address", 0xffff800080010ff8, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd503245f), W(0xd503201f), W(0xd503201f) },
	  SITE_OK(8, 4) },
	{ "more bytes than the area: only site_len are read", 0x1000, 24,
	  { W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xa9be7bfd),
	    W(0x00000000) },
	  SITE_OK(4, 0) },

	/* --- misaligned: alignment first, whatever the bytes --- */
	/* gcc -O2 =4,2 without -falign-functions: add at 0x2c */
	{ "=4,2 unaligned: literal at 0x24", 0x24, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0x0b010000) },
	  SITE_MIS },
	/* gcc -Os =4,2 -mbranch-protection=bti: sub3 at 0x4c */
	{ "=4,2 -Os bti: literal at 0x44", 0x44, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd503245f), W(0xd503201f), W(0xd503201f) },
	  SITE_MIS },
	/* fixtures/embed mis.S: mis_seven at 0x401f0c in prog */
	{ "misaligned, no bytes at all", 0x401f04, 0, { 0 }, SITE_MIS },
	{ "misaligned by 1", 0x1001, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f) },
	  SITE_MIS },

	/* --- near misses --- */
	/* =2 -falign-functions=8: caller at 0x20, the previous function's ret before */
	{ "=2: RET NOP, NOP NOP", 0x18, 20,
	  { W(0xd65f03c0), W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xa9be7bfd) },
	  SITE_NONE },
	/* =3,2 -falign-functions=8: caller at 0x28, one NOP at the entry */
	{ "=3,2: NOP NOP, NOP STP", 0x20, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xa9be7bfd), W(0x910003fd) },
	  SITE_NONE },
	/* -pg -mbranch-protection=bti: caller at 0x30 */
	{ "-pg: STR RET, BTI C, STP, MOV", 0x28, 20,
	  { W(0xb9000020), W(0xd65f03c0), W(0xd503245f), W(0xa9be7bfd), W(0x910003fd) },
	  SITE_NONE },
	/* prog after embed: add at 0x401fc0, its literal the default ops 0x4b69e8 */
	{ "idle (embedded): literal set, MOV X9, X30; NOP", 0x401fb8, 20,
	  { W(0x004b69e8), W(0x00000000), W(0xaa1e03e9), W(0xd503201f), W(0x0b010000) },
	  SITE_NONE },
	/* prog after embed: bti_add at 0x4020a0 */
	{ "idle (embedded) after BTI C", 0x402098, 20,
	  { W(0x004b69e8), W(0x00000000), W(0xd503245f), W(0xaa1e03e9), W(0xd503201f) },
	  SITE_NONE },
	{ "idle form with the literal still NOPs", 0x1000, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xaa1e03e9), W(0xd503201f), W(0x0b010000) },
	  SITE_NONE },
	/* as: .8byte 0x0000aaaaaaab8a28; mov x9, x30; bl .+0xb4a50 */
	{ "attached: ops in the literal, MOV X9, X30; BL", 0x30, 20,
	  { W(0xaaab8a28), W(0x0000aaaa), W(0xaa1e03e9), W(0x9402d294), W(0xd65f03c0) },
	  SITE_NONE },
	{ "BTI J is not a landing pad for calls (as)", 0x18, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd503249f), W(0xd503201f), W(0xd503201f) },
	  SITE_NONE },
	{ "PACIASP before the NOPs (as)", 0x48, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd503233f), W(0xd503201f), W(0xd503201f) },
	  SITE_NONE },
	{ "BTI C with one NOP after it", 0x0, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd503245f), W(0xd503201f), W(0x90000001) },
	  SITE_NONE },
	{ "one literal NOP (=3,1 shape)", 0x0, 20,
	  { W(0xd65f03c0), W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0x90000001) },
	  SITE_NONE },
	{ "UDF #0 padding for the literal", 0x0, 20,
	  { W(0x00000000), W(0x00000000), W(0xd503201f), W(0xd503201f), W(0x90000001) },
	  SITE_NONE },
	{ "19 bytes of a site", 0x0, 19,
	  { W(0xd503201f), W(0xd503201f), W(0xd503245f), W(0xd503201f), W(0xd503201f) },
	  SITE_NONE },
	{ "16 bytes: the fifth word missing", 0x0, 16,
	  { W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f) },
	  SITE_NONE },
	{ "empty buffer", 0x0, 0, { 0 }, SITE_NONE },
};

START_TEST(test_callops_site)
{
	const struct site_case *c = &site_cases[_i];
	uint8_t *buf = dup_exact(c->bytes, c->len);
	struct arch_callops_site site;
	int ret;

	memset(&site, 0x5a, sizeof(site));
	ret = ops->callops_site(buf, c->len, c->literal, &site);
	ck_assert_msg(ret == c->ret, "%s: ret %d, want %d", c->what, ret, c->ret);
	if (ret == ARCH_CALLOPS_OK) {
		struct arch_insn insn;

		ck_assert_msg(site.call_off == c->call_off && site.disabled_off == c->disabled_off,
			      "%s: call_off %u disabled_off %u, want %u %u", c->what,
			      site.call_off, site.disabled_off, c->call_off, c->disabled_off);
		ck_assert_uint_eq(site.disabled_len, 8);
		/* the call NOP is a NOP of the area, and the idle form covers it */
		ck_assert_int_eq(ops->decode(buf + ops->literal_size + site.call_off, 4,
					     c->literal + ops->literal_size + site.call_off, &insn),
				 ARCH_DECODE_OK);
		ck_assert_int_eq(insn.kind, INSN_NOP);
		ck_assert_uint_ge(site.call_off, site.disabled_off);
		ck_assert_uint_lt(site.call_off, site.disabled_off + site.disabled_len);
	}
	free(buf);
}
END_TEST

/* The literal's address decides alignment before any byte is looked at. */
START_TEST(test_callops_site_align)
{
	static const uint8_t area[20] = {
		W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f)
	};
	struct arch_callops_site site;

	for (uint64_t a = 0x1000; a < 0x1010; a++)
		ck_assert_int_eq(ops->callops_site(area, sizeof(area), a, &site),
				 a % 8 ? ARCH_CALLOPS_MISALIGNED : ARCH_CALLOPS_OK);
	ck_assert_int_eq(ops->callops_site(NULL, 0, 0x1004, &site), ARCH_CALLOPS_MISALIGNED);
	ck_assert_int_eq(ops->callops_site(area, sizeof(area), 0xfffffffffffffff8, &site),
			 ARCH_CALLOPS_OK);
}
END_TEST

struct disabled_case {
	size_t len;
	int ret;
	uint8_t bytes[8];
};

/* as: mov x9, x30; nop */
static const struct disabled_case disabled_cases[] = {
	{ 8, 0, { W(0xaa1e03e9), W(0xd503201f) } },
	{ 4, -EINVAL, { 0 } },
	{ 12, -EINVAL, { 0 } },
	{ 0, -EINVAL, { 0 } },
};

START_TEST(test_callops_disabled)
{
	const struct disabled_case *c = &disabled_cases[_i];
	uint8_t buf[16], untouched[16];
	struct arch_insn insn;

	memset(buf, 0xaa, sizeof(buf));
	memset(untouched, 0xaa, sizeof(untouched));
	ck_assert_int_eq(ops->callops_disabled(buf, c->len, 0x10000, 0x20000), c->ret);
	if (c->ret) {
		ck_assert_mem_eq(buf, untouched, sizeof(buf));
		return;
	}
	ck_assert_mem_eq(buf, c->bytes, c->len);
	ck_assert_mem_eq(buf + c->len, untouched, sizeof(buf) - c->len);
	/* MOV X9, X30 is nothing the decoder cares about; the call slot stays a NOP */
	ck_assert_int_eq(ops->decode(buf, 4, 0x1000, &insn), ARCH_DECODE_OK);
	ck_assert_int_eq(insn.kind, INSN_OTHER);
	ck_assert_int_eq(ops->decode(buf + 4, 4, 0x1004, &insn), ARCH_DECODE_OK);
	ck_assert_int_eq(insn.kind, INSN_NOP);
}
END_TEST

/* --- embed: the trampoline blob --- */

/* Labels of tramp.S (nm -n): the offsets struct arch_callops names, and two more. */
#define TB_ANCHOR	0x00
#define TB_DEFAULT_OPS	0x08
#define TB_NOOP		0x20
#define TB_ENTRY	0x30
#define TB_FAST		0xe0
#define TB_DIRECT	0xec
#define TB_SIZE		0xf0

/* objdump -d tramp.o: every code word, from noop on (the data words are checked apart) */
static const struct {
	unsigned int off;
	uint32_t word;
} tramp_as[] = {
	{ 0x20, 0xd503245f },	/* noop:    bti c */
	{ 0x24, 0xd65f03c0 },	/*          ret */
	{ 0x28, 0xd503201f },	/*          nop */
	{ 0x2c, 0xd503201f },	/*          nop */
	{ 0x30, 0xd503245f },	/* entry:   bti c */
	{ 0x34, 0x927df3ca },	/*          and x10, x30, #0xfffffffffffffff8 */
	{ 0x38, 0xf85f014b },	/*          ldur x11, [x10, #-16] */
	{ 0x3c, 0x10fffe30 },	/*          adr x16, 0 <anchor> */
	{ 0x40, 0x58fffe11 },	/*          ldr x17, 0 <anchor> */
	{ 0x44, 0xcb110210 },	/*          sub x16, x16, x17 */
	{ 0x48, 0x8b10016b },	/*          add x11, x11, x16 */
	{ 0x4c, 0x10fffdf1 },	/*          adr x17, 8 <default_ops> */
	{ 0x50, 0xeb11017f },	/*          cmp x11, x17 */
	{ 0x54, 0x54000460 },	/*          b.eq e0 <fast> */
	{ 0x58, 0xf9400971 },	/*          ldr x17, [x11, #16] */
	{ 0x5c, 0xb5000491 },	/*          cbnz x17, ec <direct> */
	{ 0x60, 0xd103c3ff },	/*          sub sp, sp, #0xf0 */
	{ 0x64, 0xa90007e0 },	/*          stp x0, x1, [sp] */
	{ 0x68, 0xa9010fe2 },	/*          stp x2, x3, [sp, #16] */
	{ 0x6c, 0xa90217e4 },	/*          stp x4, x5, [sp, #32] */
	{ 0x70, 0xa9031fe6 },	/*          stp x6, x7, [sp, #48] */
	{ 0x74, 0xa90427e8 },	/*          stp x8, x9, [sp, #64] */
	{ 0x78, 0xa9057bfd },	/*          stp x29, x30, [sp, #80] */
	{ 0x7c, 0xad0307e0 },	/*          stp q0, q1, [sp, #96] */
	{ 0x80, 0xad040fe2 },	/*          stp q2, q3, [sp, #128] */
	{ 0x84, 0xad0517e4 },	/*          stp q4, q5, [sp, #160] */
	{ 0x88, 0xad061fe6 },	/*          stp q6, q7, [sp, #192] */
	{ 0x8c, 0xa90e7bfd },	/*          stp x29, x30, [sp, #224] */
	{ 0x90, 0x910383fd },	/*          add x29, sp, #0xe0 */
	{ 0x94, 0xd1002140 },	/*          sub x0, x10, #0x8 */
	{ 0x98, 0xaa0903e1 },	/*          mov x1, x9 */
	{ 0x9c, 0xaa0b03e2 },	/*          mov x2, x11 */
	{ 0xa0, 0x910003e3 },	/*          mov x3, sp */
	{ 0xa4, 0xf9400170 },	/*          ldr x16, [x11] */
	{ 0xa8, 0xd63f0200 },	/*          blr x16 */
	{ 0xac, 0xad4307e0 },	/*          ldp q0, q1, [sp, #96] */
	{ 0xb0, 0xad440fe2 },	/*          ldp q2, q3, [sp, #128] */
	{ 0xb4, 0xad4517e4 },	/*          ldp q4, q5, [sp, #160] */
	{ 0xb8, 0xad461fe6 },	/*          ldp q6, q7, [sp, #192] */
	{ 0xbc, 0xa94007e0 },	/*          ldp x0, x1, [sp] */
	{ 0xc0, 0xa9410fe2 },	/*          ldp x2, x3, [sp, #16] */
	{ 0xc4, 0xa94217e4 },	/*          ldp x4, x5, [sp, #32] */
	{ 0xc8, 0xa9431fe6 },	/*          ldp x6, x7, [sp, #48] */
	{ 0xcc, 0xa94427e8 },	/*          ldp x8, x9, [sp, #64] */
	{ 0xd0, 0xa9452bfd },	/*          ldp x29, x10, [sp, #80] */
	{ 0xd4, 0x9103c3ff },	/*          add sp, sp, #0xf0 */
	{ 0xd8, 0xaa0903fe },	/*          mov x30, x9 */
	{ 0xdc, 0xd65f0140 },	/*          ret x10 */
	{ 0xe0, 0xaa1e03ea },	/* fast:    mov x10, x30 */
	{ 0xe4, 0xaa0903fe },	/*          mov x30, x9 */
	{ 0xe8, 0xd65f0140 },	/*          ret x10 */
	{ 0xec, 0xd61f0220 },	/* direct:  br x17 */
};

/*
 * The PC-relative words of the blob and where the listing says they point;
 * every other code word must decode as not PC-relative.
 */
static const struct {
	unsigned int off;
	const char *name;
	unsigned int target;
} tramp_pcrel[] = {
	{ 0x3c, "adr",		TB_ANCHOR },		/* adr x16, anchor */
	{ 0x40, "ldr literal",	TB_ANCHOR },		/* ldr x17, anchor */
	{ 0x4c, "adr",		TB_DEFAULT_OPS },	/* adr x17, default_ops */
	{ 0x54, "b.cond",	TB_FAST },		/* b.eq fast */
	{ 0x5c, "cbz/cbnz",	TB_DIRECT },		/* cbnz x17, direct */
};

/* Link-time addresses to write the blob for: ET_EXEC, PIE, the top of the space. */
static const uint64_t tramp_addrs[] = {
	0x4b69e0,		/* prog's blob: seg 0x4b6840 + 0x1a0 */
	0x0,
	0x10000 + 0x40 + 0x20,
	0xaaaaaaab0000,
	0xffffffffffffff00,
};

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

START_TEST(test_callops_layout)
{
	const struct arch_callops *co = ops->callops;

	ck_assert_ptr_nonnull(co);
	ck_assert_uint_eq(co->site_len, 20);		/* literal .. func + 12 */
	ck_assert_uint_eq(co->tramp_size, TB_SIZE);
	ck_assert_uint_eq(co->tramp_anchor, TB_ANCHOR);
	ck_assert_uint_eq(co->tramp_default_ops, TB_DEFAULT_OPS);
	ck_assert_uint_eq(co->tramp_noop, TB_NOOP);
	ck_assert_uint_eq(co->tramp_entry, TB_ENTRY);
	ck_assert_uint_eq(co->tramp_size % 8, 0);
	/* the default ops (func, priv, direct_call) end where the no-op function starts */
	ck_assert_uint_eq(co->tramp_default_ops + 3 * 8, co->tramp_noop);
	ck_assert_ptr_nonnull(ops->callops_site);
	ck_assert_ptr_nonnull(ops->callops_disabled);
	ck_assert_ptr_nonnull(ops->callops_tramp);
}
END_TEST

/*
 * The other architectures have callops exactly where they declare embed,
 * each either a trampoline blob (riscv64, as arm64) or a room (x86_64's
 * runtime writes its own trampolines into it), never both.
 */
START_TEST(test_callops_arm64_only)
{
	size_t others = 0;

	/* every other architecture of tests/arch/ */
	for (size_t i = 0; i < arch_case_nsets; i++) {
		const struct arch_ops *o = arch_by_machine(arch_case_sets[i].machine);
		bool embed;

		ck_assert_ptr_nonnull(o);
		if (o == ops)
			continue;
		others++;
		embed = arch_can(o, ARCH_CAP_EMBED);
		ck_assert_int_eq(o->callops != NULL, embed);
		ck_assert_int_eq(o->callops_site != NULL, embed);
		ck_assert_int_eq(o->callops_disabled != NULL, embed);
		ck_assert_int_eq(o->callops_tramp != NULL, embed && o->callops->tramp_size);
		ck_assert(!embed || !o->callops->tramp_size != !o->callops->room_size);
	}
	ck_assert_uint_eq(others, arch_case_nsets - 1);
	ck_assert_ptr_eq(arch_by_machine(EM_AARCH64), ops);
}
END_TEST

START_TEST(test_callops_tramp)
{
	uint64_t addr = tramp_addrs[_i];
	uint8_t *buf = malloc(TB_SIZE + 8);
	unsigned int k = 0;

	ck_assert_ptr_nonnull(buf);
	memset(buf, 0xaa, TB_SIZE + 8);
	ck_assert_int_eq(ops->callops_tramp(buf, TB_SIZE, addr), 0);

	/* the data: the anchor's own address; default ops = { noop, NULL, NULL } */
	ck_assert_uint_eq(get64(buf + TB_ANCHOR), addr + TB_ANCHOR);
	ck_assert_uint_eq(get64(buf + TB_DEFAULT_OPS), addr + TB_NOOP);
	ck_assert_uint_eq(get64(buf + TB_DEFAULT_OPS + 8), 0);
	ck_assert_uint_eq(get64(buf + TB_DEFAULT_OPS + 16), 0);

	/* the code, word for word as GNU as made it, and nothing written past the end */
	ck_assert_uint_eq(tramp_as[0].off, TB_NOOP);
	for (size_t i = 0; i < ARRAY_SIZE(tramp_as); i++) {
		ck_assert_uint_eq(tramp_as[i].off, TB_NOOP + 4 * i);
		ck_assert_msg(get32(buf + tramp_as[i].off) == tramp_as[i].word,
			      "blob word at 0x%x: %08x, as made %08x", tramp_as[i].off,
			      get32(buf + tramp_as[i].off), tramp_as[i].word);
	}
	ck_assert_uint_eq(TB_NOOP + 4 * ARRAY_SIZE(tramp_as), TB_SIZE);
	for (unsigned int off = TB_SIZE; off < TB_SIZE + 8; off++)
		ck_assert_uint_eq(buf[off], 0xaa);

	/* PC-relative words land on their labels; no other code word is PC-relative */
	for (unsigned int off = TB_NOOP; off < TB_SIZE; off += 4) {
		struct arch_pcrel pc;
		int ret = ops->pcrel_decode(buf + off, 4, &pc);

		if (k < ARRAY_SIZE(tramp_pcrel) && tramp_pcrel[k].off == off) {
			ck_assert_int_eq(ret, ARCH_PCREL_OK);
			ck_assert_str_eq(pc.name, tramp_pcrel[k].name);
			ck_assert_msg((int64_t)off + pc.disp == (int64_t)tramp_pcrel[k].target,
				      "%s at 0x%x goes to 0x%llx, want 0x%x", pc.name, off,
				      (unsigned long long)(off + pc.disp), tramp_pcrel[k].target);
			k++;
		} else {
			ck_assert_msg(ret == ARCH_PCREL_NONE, "word at 0x%x is PC-relative", off);
		}
	}
	ck_assert_uint_eq(k, ARRAY_SIZE(tramp_pcrel));

	/* what the labels hold: landing pads where calls arrive, the fast and direct exits */
	ck_assert_uint_eq(get32(buf + TB_NOOP), 0xd503245f);	/* bti c: default ops' func */
	ck_assert_uint_eq(get32(buf + TB_ENTRY), 0xd503245f);	/* bti c: the sites' BL */
	ck_assert_uint_eq(get32(buf + TB_FAST), 0xaa1e03ea);	/* mov x10, x30 */
	ck_assert_uint_eq(get32(buf + TB_DIRECT), 0xd61f0220);	/* br x17 */
	free(buf);
}
END_TEST

/* A site's BL reaches the entry from 128 MiB - 4 below to 128 MiB above (encode_call). */
START_TEST(test_callops_tramp_reach)
{
	uint64_t tramp = 0x4b69e0 + TB_ENTRY;
	uint8_t bl[4];
	struct arch_insn insn;

	/* from below: at most 128 MiB - 4 forward */
	ck_assert_int_eq(ops->encode_call(bl, tramp - 0x7fffffc, tramp), 0);
	ck_assert_int_eq(ops->decode(bl, 4, tramp - 0x7fffffc, &insn), ARCH_DECODE_OK);
	ck_assert_uint_eq(insn.target, tramp);
	ck_assert_int_eq(ops->encode_call(bl, tramp - 0x8000000, tramp), -ERANGE);
	/* from above: 128 MiB back */
	ck_assert_int_eq(ops->encode_call(bl, tramp + 0x8000000, tramp), 0);
	ck_assert_int_eq(ops->decode(bl, 4, tramp + 0x8000000, &insn), ARCH_DECODE_OK);
	ck_assert_uint_eq(insn.target, tramp);
	ck_assert_int_eq(ops->encode_call(bl, tramp + 0x8000004, tramp), -ERANGE);
}
END_TEST

START_TEST(test_callops_tramp_bad)
{
	static const struct {
		size_t len;
		uint64_t addr;
	} bad[] = {
		{ TB_SIZE - 4, 0x1000 }, { TB_SIZE + 4, 0x1000 }, { 0, 0x1000 },
		{ TB_SIZE, 0x1004 }, { TB_SIZE, 0x1001 },
	};
	uint8_t buf[TB_SIZE + 8], untouched[TB_SIZE + 8];

	memset(untouched, 0xaa, sizeof(untouched));
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(buf, 0xaa, sizeof(buf));
		ck_assert_int_eq(ops->callops_tramp(buf, bad[i].len, bad[i].addr), -EINVAL);
		ck_assert_mem_eq(buf, untouched, sizeof(buf));
	}
}
END_TEST
void arch_tests_aarch64(Suite *s)
{
	TCase *tc = tcase_create("aarch64 core");

	tcase_add_test(tc, test_ops_fields);
	tcase_add_loop_test(tc, test_decode_any_word, 0, 4);
	arch_add_plt_cases(tc, ops, plt_cases, ARRAY_SIZE(plt_cases));
	arch_add_nops_cases(tc, ops, nops_cases, ARRAY_SIZE(nops_cases));
	arch_add_call_cases(tc, ops, call_cases, ARRAY_SIZE(call_cases));
	arch_add_reloc_cases(tc, ops, reloc_cases, ARRAY_SIZE(reloc_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("aarch64 pcrel");
	arch_add_penc_cases(tc, ops, penc_cases, ARRAY_SIZE(penc_cases));
	arch_add_pcrel_identity(tc, ops, &pcrel_gen, 4);
	tcase_add_test(tc, test_nop_unit);
	suite_add_tcase(s, tc);

	tc = tcase_create("aarch64 callops");
	tcase_add_test(tc, test_callops_layout);
	tcase_add_test(tc, test_callops_arm64_only);
	tcase_add_loop_test(tc, test_callops_site, 0, ARRAY_SIZE(site_cases));
	tcase_add_test(tc, test_callops_site_align);
	tcase_add_loop_test(tc, test_callops_disabled, 0, ARRAY_SIZE(disabled_cases));
	tcase_add_loop_test(tc, test_callops_tramp, 0, ARRAY_SIZE(tramp_addrs));
	tcase_add_test(tc, test_callops_tramp_reach);
	tcase_add_test(tc, test_callops_tramp_bad);
	suite_add_tcase(s, tc);
}
