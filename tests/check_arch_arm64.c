// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_arch_arm64.c - unit tests for arch/arm64.c.
 *
 * Strategy: every case is a row in a table, run by tcase_add_loop_test.
 * Decode rows are short instruction streams (the bytes of one patch-site
 * flavour or one near miss) with the sequence of results a linear decode
 * must produce; the bytes are copied into a heap buffer of exactly the
 * stated length so that ASan catches any read past the end.  Instruction
 * words and PLT entries were taken from aarch64-linux-gnu-objdump -d of
 * objects and small dynamic programs built by aarch64-linux-gnu-gcc
 * (-pg, -fpatchable-function-entry=4,2 -mbranch-protection=bti, and
 * -z force-bti / -z pac-plt links), so the expectations are the
 * toolchain's, not ours.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "check_suites.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/* one A64 word as its little-endian bytes */
#define W(x)	((x) & 0xff), ((x) >> 8 & 0xff), ((x) >> 16 & 0xff), ((x) >> 24 & 0xff)

static const struct arch_ops *const ops = &arch_arm64;

struct want {
	int ret;
	unsigned int len;
	enum arch_insn_kind kind;
	uint64_t target;	/* checked for CALL and BRANCH only */
};

struct dec_case {
	const char *what;
	uint64_t addr;
	size_t len;
	uint8_t bytes[32];
	size_t nwant;
	struct want want[8];
};

#define OK(l, k, t)	{ ARCH_DECODE_OK, (l), (k), (t) }
#define NOP4		OK(4, INSN_NOP, 0)
#define OTHER4		OK(4, INSN_OTHER, 0)
#define TRUNC		{ ARCH_DECODE_TRUNC, 0, INSN_OTHER, 0 }
#define BAD		{ ARCH_DECODE_BAD, 0, INSN_OTHER, 0 }

static const struct dec_case dec_cases[] = {
	/* --- site flavours --- */
	{ "bl _mcount (linked)", 0x400000, 4, { W(0x9400004a) },
	  1, { OK(4, INSN_CALL, 0x400128) } },
	{ "-pg prologue: mov x0, x30; bl _mcount (unrelocated, target = itself)", 0x14, 8,
	  { W(0xaa1e03e0), W(0x94000000) },
	  2, { OTHER4, OK(4, INSN_CALL, 0x18) } },
	{ "-fpatchable-function-entry=2: NOP NOP", 0x1000, 8, { W(0xd503201f), W(0xd503201f) },
	  2, { NOP4, NOP4 } },
	{ "BTI C + NOP NOP", 0x8, 16,
	  { W(0xd503245f), W(0xd503201f), W(0xd503201f), W(0xa9bf7bfd) },
	  4, { OK(4, INSN_LANDING, 0), NOP4, NOP4, OTHER4 } },
	{ "CALL_OPS: literal NOPs, BTI C, NOP NOP (-fpatchable-function-entry=4,2)", 0, 20,
	  { W(0xd503201f), W(0xd503201f), W(0xd503245f), W(0xd503201f), W(0xd503201f) },
	  5, { NOP4, NOP4, OK(4, INSN_LANDING, 0), NOP4, NOP4 } },
	{ "CALL_OPS without BTI: 4 NOPs", 0xffff800080010000, 16,
	  { W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f) },
	  4, { NOP4, NOP4, NOP4, NOP4 } },
	{ "BTI JC is a landing pad", 0x40001c, 4, { W(0xd50324df) },
	  1, { OK(4, INSN_LANDING, 0) } },

	/* --- near misses --- */
	{ "lone NOP before ret", 0x2000, 8, { W(0xd503201f), W(0xd65f03c0) },
	  2, { NOP4, OTHER4 } },
	{ "bl backwards to another target", 0x40012c, 4, { W(0x97ffffb5) },
	  1, { OK(4, INSN_CALL, 0x400000) } },
	{ "bl .-8", 0x400008, 4, { W(0x97fffffe) },
	  1, { OK(4, INSN_CALL, 0x400000) } },
	{ "B is a branch, not a call", 0x400004, 4, { W(0x14000049) },
	  1, { OK(4, INSN_BRANCH, 0x400128) } },
	{ "B backwards", 0x400130, 4, { W(0x17ffffb4) },
	  1, { OK(4, INSN_BRANCH, 0x400000) } },
	{ "plain BTI is not a landing pad for calls", 0x400010, 4, { W(0xd503241f) },
	  1, { OTHER4 } },
	{ "BTI J is not a landing pad for calls", 0x400018, 4, { W(0xd503249f) },
	  1, { OTHER4 } },
	{ "PACIASP is OTHER", 0x400020, 4, { W(0xd503233f) }, 1, { OTHER4 } },
	{ "PACIBSP is OTHER", 0x400024, 4, { W(0xd503237f) }, 1, { OTHER4 } },
	{ "XPACLRI (-pg prologue) is OTHER", 0xc, 4, { W(0xd50320ff) }, 1, { OTHER4 } },
	{ "BLR x16 (indirect) is OTHER", 0, 4, { W(0xd63f0200) }, 1, { OTHER4 } },
	{ "UDF #0 is bad", 0x18, 4, { W(0x00000000) }, 1, { BAD } },
	{ "UDF #1 still decodes", 0x1c, 4, { W(0x00000001) }, 1, { OTHER4 } },
	{ "empty buffer", 0x1000, 0, { 0 }, 1, { TRUNC } },
	{ "3 bytes of a NOP", 0x1000, 3, { W(0xd503201f) }, 1, { TRUNC } },
	{ "NOP then a truncated BL", 0x1000, 6, { W(0xd503201f), W(0x94000001) },
	  2, { NOP4, TRUNC } },

	/* --- immediate extremes: sign extension without overflow --- */
	{ "bl with the most negative imm26", 0x10000000, 4, { W(0x96000000) },
	  1, { OK(4, INSN_CALL, 0x8000000) } },
	{ "bl with the most positive imm26", 0, 4, { W(0x95ffffff) },
	  1, { OK(4, INSN_CALL, 0x7fffffc) } },
	{ "bl .-4 at address 0 wraps", 0, 4, { W(0x97ffffff) },
	  1, { OK(4, INSN_CALL, 0xfffffffffffffffc) } },
	{ "bl .+8 at the top of the address space wraps", 0xfffffffffffffffc, 4, { W(0x94000002) },
	  1, { OK(4, INSN_CALL, 0x4) } },
};

static uint8_t *dup_exact(const uint8_t *bytes, size_t len)
{
	/* malloc(0) may return NULL; keep one byte so the pointer is valid, len stays 0 */
	uint8_t *p = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(p);
	if (len)
		memcpy(p, bytes, len);
	return p;
}

START_TEST(test_decode)
{
	const struct dec_case *c = &dec_cases[_i];
	uint8_t *buf = dup_exact(c->bytes, c->len);
	size_t off = 0;

	for (size_t k = 0; k < c->nwant; k++) {
		const struct want *w = &c->want[k];
		struct arch_insn insn;
		int ret;

		memset(&insn, 0x5a, sizeof(insn));
		ret = ops->decode(buf + off, c->len - off, c->addr + off, &insn);
		ck_assert_msg(ret == w->ret, "%s: insn %zu: ret %d, want %d",
			      c->what, k, ret, w->ret);
		if (ret != ARCH_DECODE_OK)
			break;
		ck_assert_msg(insn.len == w->len, "%s: insn %zu: len %u, want %u",
			      c->what, k, insn.len, w->len);
		ck_assert_msg(insn.kind == w->kind, "%s: insn %zu: kind %d, want %d",
			      c->what, k, insn.kind, w->kind);
		ck_assert_uint_eq(insn.disp_off, 0);
		if (w->kind == INSN_CALL || w->kind == INSN_BRANCH)
			ck_assert_msg(insn.target == w->target,
				      "%s: insn %zu: target %#llx, want %#llx",
				      c->what, k, (unsigned long long)insn.target,
				      (unsigned long long)w->target);
		off += insn.len;
	}
	if (c->want[c->nwant - 1].ret == ARCH_DECODE_OK)
		ck_assert_msg(off == c->len, "%s: decoded %zu of %zu bytes", c->what, off, c->len);
	free(buf);
}
END_TEST

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

struct plt_case {
	const char *what;
	uint64_t addr;
	size_t len;
	uint8_t bytes[32];
	int ret;
	uint64_t slot;
};

static const struct plt_case plt_cases[] = {
	{ "PLT0 (ld, lazy)", 0x680, 32,
	  { W(0xa9bf7bf0), W(0xf00000f0), W(0xf947fe11), W(0x913fe210),
	    W(0xd61f0220), W(0xd503201f), W(0xd503201f), W(0xd503201f) }, -1, 0 },
	{ "PLT0 first 16 bytes", 0x680, 16,
	  { W(0xa9bf7bf0), W(0xf00000f0), W(0xf947fe11), W(0x913fe210) }, -1, 0 },
	{ "strlen@plt", 0x6a0, 16,
	  { W(0x90000110), W(0xf9400211), W(0x91000210), W(0xd61f0220) }, 0, 0x20000 },
	{ "printf@plt", 0x710, 16,
	  { W(0x90000110), W(0xf9401e11), W(0x9100e210), W(0xd61f0220) }, 0, 0x20038 },
	{ "PLT0 with BTI (-z force-bti)", 0x4005c0, 32,
	  { W(0xd503245f), W(0xa9bf7bf0), W(0xf00000f0), W(0xf947fe11),
	    W(0x913fe210), W(0xd61f0220), W(0xd503201f), W(0xd503201f) }, -1, 0 },
	{ "puts@plt with BTI C (-z force-bti, address taken)", 0x400640, 24,
	  { W(0xd503245f), W(0x90000110), W(0xf9401211), W(0x91008210),
	    W(0xd61f0220), W(0xd503201f) }, 0, 0x420020 },
	{ "exit@plt with BTI C", 0x4005e0, 24,
	  { W(0xd503245f), W(0x90000110), W(0xf9400211), W(0x91000210),
	    W(0xd61f0220), W(0xd503201f) }, 0, 0x420000 },
	{ "BTI PLT entry cut at 16 bytes", 0x400640, 16,
	  { W(0xd503245f), W(0x90000110), W(0xf9401211), W(0x91008210) }, -1, 0 },
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
	  { W(0x90000110), W(0xf9400611), W(0x91000210), W(0xd61f0220) }, -1, 0 },
	{ "br x16 instead of x17", 0x6a0, 16,
	  { W(0x90000110), W(0xf9400211), W(0x91000210), W(0xd61f0200) }, -1, 0 },
	{ "NOP padding", 0x700, 16,
	  { W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f) }, -1, 0 },
	{ "short buffer", 0x6a0, 12,
	  { W(0x90000110), W(0xf9400211), W(0x91000210) }, -1, 0 },
	{ "empty buffer", 0x6a0, 0, { 0 }, -1, 0 },
};

START_TEST(test_plt_slot)
{
	const struct plt_case *c = &plt_cases[_i];
	uint8_t *buf = dup_exact(c->bytes, c->len);
	uint64_t slot = 0xdeadbeef;
	int ret = ops->plt_slot(buf, c->len, c->addr, &slot);

	ck_assert_msg(ret == c->ret, "%s: ret %d, want %d", c->what, ret, c->ret);
	if (ret == 0)
		ck_assert_msg(slot == c->slot, "%s: slot %#llx, want %#llx", c->what,
			      (unsigned long long)slot, (unsigned long long)c->slot);
	free(buf);
}
END_TEST

struct nops_case {
	size_t len;
	int ret;
	uint8_t bytes[16];
};

static const struct nops_case nops_cases[] = {
	{ 0, 0, { 0 } },
	{ 4, 0, { W(0xd503201f) } },
	{ 8, 0, { W(0xd503201f), W(0xd503201f) } },
	{ 16, 0, { W(0xd503201f), W(0xd503201f), W(0xd503201f), W(0xd503201f) } },
	{ 2, -1, { 0 } },
	{ 6, -1, { 0 } },
};

START_TEST(test_encode_nops)
{
	const struct nops_case *c = &nops_cases[_i];
	uint8_t buf[20];
	size_t off;

	memset(buf, 0xaa, sizeof(buf));
	ck_assert_int_eq(ops->encode_nops(buf, c->len), c->ret);
	if (c->ret)
		return;
	ck_assert_mem_eq(buf, c->bytes, c->len);
	/* writes exactly len bytes */
	ck_assert_uint_eq(buf[c->len], 0xaa);
	for (off = 0; off < c->len; off += 4) {
		struct arch_insn insn;

		ck_assert_int_eq(ops->decode(buf + off, c->len - off, 0x1000 + off, &insn),
				 ARCH_DECODE_OK);
		ck_assert_int_eq(insn.kind, INSN_NOP);
	}
}
END_TEST

struct call_case {
	const char *what;
	uint64_t from, to;
	int ret;
	uint8_t bytes[4];
};

static const struct call_case call_cases[] = {
	{ "bl _mcount (as assembled)", 0x400000, 0x400128, 0, { W(0x9400004a) } },
	{ "bl backwards (as assembled)", 0x40012c, 0x400000, 0, { W(0x97ffffb5) } },
	{ "bl to itself", 0x1000, 0x1000, 0, { W(0x94000000) } },
	{ "+128 MiB - 4", 0x10000000, 0x10000000 + 0x7fffffc, 0, { W(0x95ffffff) } },
	{ "+128 MiB", 0x10000000, 0x10000000 + 0x8000000, -1, { 0 } },
	{ "-128 MiB", 0x10000000, 0x10000000 - 0x8000000, 0, { W(0x96000000) } },
	{ "-128 MiB - 4", 0x10000000, 0x10000000 - 0x8000004, -1, { 0 } },
	{ "far kernel address", 0xffff800080000000, 0x1000, -1, { 0 } },
	{ "wraps below zero", 0, 0xfffffffffffffffc, 0, { W(0x97ffffff) } },
	{ "misaligned target", 0x1000, 0x1002, -1, { 0 } },
};

START_TEST(test_encode_call)
{
	const struct call_case *c = &call_cases[_i];
	uint8_t buf[8], untouched[8];
	struct arch_insn insn;

	memset(buf, 0xaa, sizeof(buf));
	memset(untouched, 0xaa, sizeof(untouched));
	ck_assert_msg(ops->encode_call(buf, c->from, c->to) == c->ret, "%s", c->what);
	if (c->ret) {
		ck_assert_mem_eq(buf, untouched, sizeof(buf));
		return;
	}
	ck_assert_mem_eq(buf, c->bytes, ops->call_len);
	ck_assert_mem_eq(buf + ops->call_len, untouched, sizeof(buf) - ops->call_len);

	/* round trip */
	ck_assert_int_eq(ops->decode(buf, ops->call_len, c->from, &insn), ARCH_DECODE_OK);
	ck_assert_uint_eq(insn.len, ops->call_len);
	ck_assert_int_eq(insn.kind, INSN_CALL);
	ck_assert_msg(insn.target == c->to, "%s: round trip", c->what);
}
END_TEST

static const struct {
	unsigned int type;
	int back;
} reloc_cases[] = {
	{ R_AARCH64_CALL26, 0 },
	{ R_AARCH64_JUMP26, 0 },
	{ R_AARCH64_ABS64, -1 },
	{ R_AARCH64_ADR_PREL_PG_HI21, -1 },
	{ R_AARCH64_NONE, -1 },
};

START_TEST(test_call_reloc_back)
{
	ck_assert_int_eq(ops->call_reloc_back(reloc_cases[_i].type), reloc_cases[_i].back);
}
END_TEST

START_TEST(test_ops_fields)
{
	ck_assert_str_eq(ops->name, "arm64");
	ck_assert_uint_eq(ops->machine, EM_AARCH64);
	ck_assert_uint_eq(ops->insn_align, 4);
	ck_assert_uint_eq(ops->call_len, 4);
	ck_assert_uint_eq(ops->literal_size, 8);
	ck_assert_uint_eq(ops->abs64_reloc, R_AARCH64_ABS64);
	ck_assert_uint_eq(ops->relative_reloc, R_AARCH64_RELATIVE);
	ck_assert_uint_eq(ops->jump_slot_reloc, R_AARCH64_JUMP_SLOT);
	ck_assert_uint_eq(ops->glob_dat_reloc, R_AARCH64_GLOB_DAT);
	ck_assert_uint_eq(ops->plt_entry_size, 16);
}
END_TEST

Suite *arch_arm64_suite(void)
{
	Suite *s = suite_create("arch_arm64");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ops_fields);
	tcase_add_loop_test(tc, test_decode, 0, ARRAY_SIZE(dec_cases));
	tcase_add_loop_test(tc, test_decode_any_word, 0, 4);
	tcase_add_loop_test(tc, test_plt_slot, 0, ARRAY_SIZE(plt_cases));
	tcase_add_loop_test(tc, test_encode_nops, 0, ARRAY_SIZE(nops_cases));
	tcase_add_loop_test(tc, test_encode_call, 0, ARRAY_SIZE(call_cases));
	tcase_add_loop_test(tc, test_call_reloc_back, 0, ARRAY_SIZE(reloc_cases));
	suite_add_tcase(s, tc);
	return s;
}
