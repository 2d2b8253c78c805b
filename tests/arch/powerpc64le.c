// SPDX-License-Identifier: GPL-2.0-only
/*
 * powerpc64le's hooks beyond decode (tests/arch/README): the PLT call stubs
 * ld puts among the text (text_plt_slot) and local entry points from
 * st_other (local_entry), and its call relocations (rows for
 * tests/arch/harness.c's shared call_reloc_back body), and where
 * -mprofile-kernel's call sits from a symbol (entry_call_offset).  The stub words
 * are those of a real link: GNU ld 2.40's `0000004b.plt_call._mcount` in
 * a -pg program whose .got is at 0x1ff00, slot 0x20030 (R_PPC64_JMP_SLOT
 * _mcount in .rela.plt).
 */
#include <errno.h>
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/arch/harness.h"

void arch_tests_powerpc64le(Suite *s);

static const struct arch_ops *ppc;

static size_t put_words(uint8_t *buf, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 4; b++)
			buf[4 * i + (size_t)b] = (uint8_t)(w[i] >> (8 * b));
	return 4 * n;
}

/* std r2,24(r1); ld r12,-32464(r2); mtctr r12; bctr */
static const uint32_t stub_short[] = { 0xf8410018u, 0xe9828130u, 0x7d8903a6u, 0x4e800420u };
/* std r2,24(r1); addis r12,r2,1; ld r12,-0x7ff0(r12); mtctr r12; bctr */
static const uint32_t stub_long[] = { 0xf8410018u, 0x3d820001u, 0xe98c8010u, 0x7d8903a6u,
				      0x4e800420u };

START_TEST(plt_stub_toc_relative)
{
	uint8_t buf[32];
	uint64_t slot = 0;
	size_t n = put_words(buf, stub_short, 4);

	ck_assert_int_eq(ppc->text_plt_slot(buf, n, 0x740, 0x1ff00, &slot), 0);
	ck_assert_uint_eq(slot, 0x20030);
	/* without the std (a stub for a callee that keeps r2) */
	ck_assert_int_eq(ppc->text_plt_slot(buf + 4, n - 4, 0x744, 0x1ff00, &slot), 0);
	ck_assert_uint_eq(slot, 0x20030);
	/* addis r12,r2,HI first: HI << 16 plus the ld's signed displacement */
	n = put_words(buf, stub_long, 5);
	ck_assert_int_eq(ppc->text_plt_slot(buf, n, 0x1000, 0x1ff00, &slot), 0);
	ck_assert_uint_eq(slot, 0x1ff00 + 0x8000 + 0x10000 - 0x7ff0);
}
END_TEST

START_TEST(plt_stub_refused)
{
	uint8_t buf[32];
	uint64_t slot = 0x5555;
	uint32_t w[5];
	size_t n;

	/* cut before the bctr */
	n = put_words(buf, stub_short, 4);
	ck_assert_int_eq(ppc->text_plt_slot(buf, n - 1, 0, 0x1ff00, &slot), -ENOENT);
	/* bctrl: a call through CTR, not a stub's jump */
	memcpy(w, stub_short, sizeof(stub_short));
	w[3] = 0x4e800421u;
	n = put_words(buf, w, 4);
	ck_assert_int_eq(ppc->text_plt_slot(buf, n, 0, 0x1ff00, &slot), -ENOENT);
	/* ldu r12,..(r2) (DS-form XO 1) */
	memcpy(w, stub_short, sizeof(stub_short));
	w[1] |= 1;
	n = put_words(buf, w, 4);
	ck_assert_int_eq(ppc->text_plt_slot(buf, n, 0, 0x1ff00, &slot), -ENOENT);
	/* after addis r12,r2 the ld must use r12, not r2 */
	memcpy(w, stub_long, sizeof(stub_long));
	w[2] = 0xe9828010u;
	n = put_words(buf, w, 5);
	ck_assert_int_eq(ppc->text_plt_slot(buf, n, 0, 0x1ff00, &slot), -ENOENT);
	/* no .got: no TOC pointer to count from */
	n = put_words(buf, stub_short, 4);
	ck_assert_int_eq(ppc->text_plt_slot(buf, n, 0, 0, &slot), -ENOENT);
	ck_assert_uint_eq(slot, 0x5555);
}
END_TEST

START_TEST(local_entry_from_st_other)
{
	/* STO_PPC64_LOCAL in bits 5-7; the visibility bits below do not count */
	static const struct { unsigned int other, bytes; } t[] = {
		{ 0, 0 }, { 1u << 5, 0 }, { 2u << 5, 4 }, { 3u << 5, 8 }, { 4u << 5, 16 },
		{ 5u << 5, 32 }, { 6u << 5, 64 }, { 7u << 5, 0 }, { (3u << 5) | 2, 8 }, { 2, 0 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(ppc->local_entry(t[i].other) == t[i].bytes, "st_other 0x%x: %u, want %u",
			      t[i].other, ppc->local_entry(t[i].other), t[i].bytes);
}
END_TEST

/*
 * -mprofile-kernel's call place from the code at the symbol: words of the
 * minikernel fixture's b_one (no TOC), b_square (static link: lis r2) and
 * a relocatable kernel's global entry (addis r2,r12).
 */
#define MFLR_R0		0x7c0802a6u
#define BL_MCOUNT	0x4bfff231u
#define ADDIS_R2_R12	0x3c4c0190u	/* addis r2,r12,400 */
#define LIS_R2		0x3c401001u	/* lis r2,4097 */
#define ADDI_R2_R2	0x3842a000u	/* addi r2,r2,-24576 */
#define STD_R0_16_R1	0xf8010010u
START_TEST(entry_call_offset_from_code)
{
	static const struct { uint32_t w[5]; size_t n; unsigned int off; } t[] = {
		{ { MFLR_R0, BL_MCOUNT }, 2, 4 },
		{ { ADDIS_R2_R12, ADDI_R2_R2, MFLR_R0, BL_MCOUNT }, 4, 12 },
		{ { LIS_R2, ADDI_R2_R2, MFLR_R0, BL_MCOUNT }, 4, 12 },
		{ { MFLR_R0, STD_R0_16_R1, BL_MCOUNT }, 3, 8 },
		{ { ADDIS_R2_R12, ADDI_R2_R2, MFLR_R0, STD_R0_16_R1, BL_MCOUNT }, 5, 16 },
		{ { ADDIS_R2_R12, ADDI_R2_R2, 0x38600000u /* li r3,0 */, 0x4e800020u }, 4, 0 },
		{ { 0xf821ffd1u /* stdu r1,-48(r1) */, MFLR_R0, BL_MCOUNT }, 3, 0 },
		{ { 0x3c6c0190u /* addis r3,r12 */, ADDI_R2_R2, MFLR_R0, BL_MCOUNT }, 4, 0 },
		{ { ADDIS_R2_R12, 0x38630010u /* addi r3,r3 */, MFLR_R0, BL_MCOUNT }, 4, 0 },
		{ { MFLR_R0 }, 1, 0 },		/* the section ends: no room for the call */
		{ { ADDIS_R2_R12, ADDI_R2_R2, MFLR_R0 }, 3, 0 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t buf[20];
		size_t n = put_words(buf, t[i].w, t[i].n);
		uint8_t *b = arch_dup_exact(buf, n);	/* ASan: no read past n */
		unsigned int got = ppc->entry_call_offset(b, n);
		free(b);
		ck_assert_msg(got == t[i].off, "case %zu: %u, want %u", i, got, t[i].off);
	}
}
END_TEST

static const struct arch_reloc_case reloc_cases[] = {
	{ 10, 0 },		/* R_PPC64_REL24 */
	{ 116, 0 },		/* R_PPC64_REL24_NOTOC */
	{ 38, -1 },		/* R_PPC64_ADDR64 */
	{ 11, -1 },		/* R_PPC64_REL14 */
};

void arch_tests_powerpc64le(Suite *s)
{
	TCase *tc = tcase_create("powerpc64le hooks");

	ppc = &arch_powerpc64le;
	tcase_add_test(tc, plt_stub_toc_relative);
	tcase_add_test(tc, plt_stub_refused);
	tcase_add_test(tc, local_entry_from_st_other);
	tcase_add_test(tc, entry_call_offset_from_code);
	arch_add_reloc_cases(tc, ppc, reloc_cases, ARRAY_SIZE(reloc_cases));
	suite_add_tcase(s, tc);
}
