// SPDX-License-Identifier: GPL-2.0-only
/*
 * tests/arch/x86_64.c - the x86-64 tests that are not single decode cases
 * (those, and linear walks of real .text, are tests/arch/x86_64.cases):
 * the arch_ops fields, the call relocations, NOP runs, a decode fuzz, the
 * PLT reader and the encoders.  Run in the "arch" suite from the table
 * tests/arch/gen.py writes (tests/check_arch.c).
 *
 * Strategy: every test is a row in a static table, so a new case is one
 * line of data; the PLT, encode_call and call relocation rows run through
 * the bodies every architecture shares (tests/arch/harness.c).  Byte
 * sequences come from `objdump -d` of real binaries (/usr/bin/ls, libc.so.6, small
 * programs linked with -pg/-mfentry, -fcf-protection, -no-pie and -pie);
 * the few hand-made ones say so.  Each decode runs on an exactly sized heap
 * copy so that ASan reports any read past `len`.  A fuzz loop checks that
 * lengths never depend on bytes past the end.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/arch/harness.h"

void arch_tests_x86_64(Suite *s);

static const struct arch_ops_want fields = {
	.name = "x86_64", .machine = EM_X86_64, .insn_align = 1, .call_len = 5,
	.literal_size = 0, .abs64_reloc = R_X86_64_64, .relative_reloc = R_X86_64_RELATIVE,
	.jump_slot_reloc = R_X86_64_JUMP_SLOT, .glob_dat_reloc = R_X86_64_GLOB_DAT,
	.plt_entry_size = 16, .plt_stride = 8, .align_reloc = 0,
};

START_TEST(test_ops_fields)
{
	const struct arch_ops *a = &arch_x86_64;

	arch_check_ops_fields(a, &fields);
	ck_assert_ptr_null(a->nop_unit_march);
	ck_assert_str_eq(a->nop_name(1), "0x90");	/* -fpatchable-function-entry pads with 0x90 */
	ck_assert_str_eq(a->nop_name(5), "NOP");
	ck_assert_uint_eq(a->relax_reloc, 0);
	ck_assert_uint_eq(a->none_reloc, R_X86_64_NONE);
	ck_assert_ptr_null(a->patch_points);
	ck_assert_uint_eq(a->patch_point_len, 0);
	ck_assert_ptr_nonnull(a->decode);
	ck_assert_ptr_nonnull(a->call_reloc_back);
	ck_assert_ptr_nonnull(a->plt_slot);
	ck_assert_ptr_nonnull(a->encode_nops);
	ck_assert_ptr_nonnull(a->encode_call);
	/* 0x90 is the NOP unit whatever e_flags says */
	ck_assert_uint_eq(a->nop_unit(0), 1);
	ck_assert_uint_eq(a->nop_unit(0xffffffffu), 1);
	/* moving x86 code is not supported: the rewriting hooks are absent */
	ck_assert_ptr_null(a->insn_len);
	ck_assert_ptr_null(a->pcrel_decode);
	ck_assert_ptr_null(a->pcrel_encode);
	ck_assert_ptr_null(a->align_target);
	ck_assert_ptr_null(a->align_padding);
}
END_TEST

/* a byte string and its length, for struct arch_plt_case's len, bytes */
#define B(s) sizeof(s) - 1, s

/* A run of -fpatchable-function-entry NOPs decodes one byte at a time. */
START_TEST(test_nop_run)
{
	size_t n = (size_t)_i;
	uint8_t *run = malloc(n);
	struct arch_insn insn;

	ck_assert_ptr_nonnull(run);
	memset(run, 0x90, n);
	for (size_t off = 0; off < n; off++) {
		ck_assert_int_eq(arch_x86_64.decode(run + off, n - off, 0x1000 + off, &insn),
				 ARCH_DECODE_OK);
		ck_assert_uint_eq(insn.len, 1);
		ck_assert_int_eq(insn.kind, INSN_NOP);
	}
	free(run);
}
END_TEST

/*
 * Random bytes, seeded per loop iteration: whatever decode returns must be
 * consistent.  OK with length L means the same result for any longer
 * buffer and TRUNC for any shorter one; lengths stay within 1..15.  The
 * inner loop checks without ck_assert (each of which costs Check a write)
 * and reports the first inconsistency.
 */
static uint32_t lcg_next(uint32_t *state)
{
	*state = *state * 1664525u + 1013904223u;
	return *state >> 8;
}

/*
 * Decode k bytes placed at the very end of a heap block, so that reading
 * past them runs into ASan's redzone without a malloc per decode.
 */
static int decode_at_end(uint8_t *block, size_t block_size, const uint8_t *bytes, size_t k,
			 struct arch_insn *insn)
{
	uint8_t *p = block + block_size - k;

	memcpy(p, bytes, k);
	return arch_x86_64.decode(p, k, 0x1000, insn);
}

/* 0 if decoding bytes[0..k) for every k agrees with the full decode, else k + 1. */
static int fuzz_one(uint8_t *block, const uint8_t *bytes, size_t size, int *full_ret)
{
	struct arch_insn ref, insn;
	int ret;

	*full_ret = decode_at_end(block, size, bytes, size, &ref);
	if (*full_ret != ARCH_DECODE_OK)
		return *full_ret == ARCH_DECODE_BAD ? 0 : -1;
	if (ref.len < 1 || ref.len > 15)
		return -1;
	for (size_t k = 0; k < size; k++) {
		ret = decode_at_end(block, size, bytes, k, &insn);
		if (k < ref.len ? ret != ARCH_DECODE_TRUNC :
		    ret != ARCH_DECODE_OK || insn.len != ref.len || insn.kind != ref.kind ||
		    insn.target != ref.target || insn.disp_off != ref.disp_off)
			return (int)k + 1;
	}
	return 0;
}

START_TEST(test_fuzz_consistency)
{
	uint32_t seed = 0x9e3779b9u ^ (uint32_t)_i;
	unsigned int decoded = 0;
	uint8_t bytes[16];
	uint8_t *block = malloc(sizeof(bytes));

	ck_assert_ptr_nonnull(block);
	for (int round = 0; round < 2000; round++) {
		int full_ret, bad;

		for (size_t k = 0; k < sizeof(bytes); k++)
			bytes[k] = lcg_next(&seed) & 0xff;
		/* bias towards the interesting escapes */
		switch (round % 8) {
		case 1: bytes[0] = 0x0f; break;
		case 2: bytes[0] = 0x0f; bytes[1] = 0x38 | (bytes[1] & 2); break;
		case 3: bytes[0] = 0xc4; break;
		case 4: bytes[0] = 0xc5; break;
		case 5: bytes[0] = 0x62; break;
		case 6: bytes[0] = 0x66; bytes[1] = 0x40 | (bytes[1] & 0xf); break;
		default: break;
		}
		bad = fuzz_one(block, bytes, sizeof(bytes), &full_ret);
		ck_assert_msg(bad == 0, "round %d: %02x %02x %02x %02x %02x %02x: full ret %d, "
			      "inconsistent at %d bytes", round, bytes[0], bytes[1], bytes[2],
			      bytes[3], bytes[4], bytes[5], full_ret, bad - 1);
		decoded += full_ret == ARCH_DECODE_OK;
	}
	free(block);
	/* most random bytes are some instruction */
	ck_assert_uint_gt(decoded, 1000);
}
END_TEST

static const struct arch_reloc_case reloc_cases[] = {
	{ R_X86_64_PLT32, 1 },
	{ R_X86_64_PC32, 1 },
	{ R_X86_64_GOTPCRELX, 2 },
	{ R_X86_64_GOTPCREL, 2 },
	{ R_X86_64_REX_GOTPCRELX, -1 },
	{ R_X86_64_64, -1 },
	{ R_X86_64_32, -1 },
	{ R_X86_64_32S, -1 },
	{ R_X86_64_NONE, -1 },
	{ R_X86_64_JUMP_SLOT, -1 },
	{ 0xffffffffu, -1 },
};

/*
 * PLT entries, 16 bytes each unless noted, from objdump -d of small
 * programs linked by GNU ld 2.40 (-no-pie; -pie -fcf-protection -z ibtplt)
 * and of /usr/bin/ls.  The BND forms are made by hand after the layout
 * older ld emitted for -z bndplt.
 */
static const struct arch_plt_case plt_cases[] = {
	{ "no-pie PLT0", 0x401020,
	  B("\xff\x35\xca\x2f\x00\x00\xff\x25\xcc\x2f\x00\x00\x0f\x1f\x40\x00"),
	  -ENOENT, 0 },
	{ "no-pie lazy puts@plt", 0x401030,
	  B("\xff\x25\xca\x2f\x00\x00\x68\x00\x00\x00\x00\xe9\xe0\xff\xff\xff"),
	  0, 0x404000 },
	{ "no-pie lazy exit@plt", 0x401060,
	  B("\xff\x25\xb2\x2f\x00\x00\x68\x03\x00\x00\x00\xe9\xb0\xff\xff\xff"),
	  0, 0x404018 },
	{ "ls lazy __ctype_toupper_loc@plt", 0x4030,
	  B("\xff\x25\xca\xff\x01\x00\x68\x00\x00\x00\x00\xe9\xe0\xff\xff\xff"),
	  0, 0x24000 },
	{ "ls .plt.got free@plt (8 bytes)", 0x4680,
	  B("\xff\x25\x02\xf9\x01\x00\x66\x90"),
	  0, 0x23f88 },
	{ "ibt PLT0", 0x1020,
	  B("\xff\x35\xca\x2f\x00\x00\xff\x25\xcc\x2f\x00\x00\x0f\x1f\x40\x00"),
	  -ENOENT, 0 },
	{ "ibt lazy stub", 0x1030,
	  B("\xf3\x0f\x1e\xfa\x68\x00\x00\x00\x00\xe9\xe2\xff\xff\xff\x66\x90"),
	  -ENOENT, 0 },
	{ "ibt .plt.sec puts@plt", 0x1080,
	  B("\xf3\x0f\x1e\xfa\xff\x25\x76\x2f\x00\x00\x66\x0f\x1f\x44\x00\x00"),
	  0, 0x4000 },
	{ "ibt .plt.sec exit@plt", 0x10b0,
	  B("\xf3\x0f\x1e\xfa\xff\x25\x5e\x2f\x00\x00\x66\x0f\x1f\x44\x00\x00"),
	  0, 0x4018 },
	{ "ibt .plt.got __cxa_finalize@plt", 0x1070,
	  B("\xf3\x0f\x1e\xfa\xff\x25\x66\x2f\x00\x00\x66\x0f\x1f\x44\x00\x00"),
	  0, 0x3fe0 },
	{ "bnd+ibt .plt.sec (hand-made)", 0x1080,
	  B("\xf3\x0f\x1e\xfa\xf2\xff\x25\x75\x2f\x00\x00\x0f\x1f\x44\x00\x00"),
	  0, 0x4000 },
	{ "bnd+ibt lazy stub (hand-made)", 0x1030,
	  B("\xf3\x0f\x1e\xfa\x68\x00\x00\x00\x00\xf2\xe9\xe1\xff\xff\xff\x90"),
	  -ENOENT, 0 },
	{ "bnd .plt.bnd, 8 bytes (hand-made)", 0x2000,
	  B("\xf2\xff\x25\x00\x10\x00\x00\x90"),
	  0, 0x3007 },
	{ "slot behind the entry", 0x2000, B("\xff\x25\x00\xff\xff\xff"), 0, 0x1f06 },
	{ "jmp truncated", 0x2000, B("\xff\x25\x00\x10\x00"), -ENOENT, 0 },
	{ "endbr64 only", 0x2000, B("\xf3\x0f\x1e\xfa"), -ENOENT, 0 },
	{ "empty", 0x2000, 0, "", -ENOENT, 0 },
	{ "padding", 0x2000,
	  B("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
	  -ENOENT, 0 },
	{ "call *disp(%rip) is no PLT jump", 0x2000, B("\xff\x15\x00\x10\x00\x00\x66\x90"), -ENOENT, 0 },
};

/* encode_nops(len) decodes as NOPs covering exactly len bytes; _i is len. */
START_TEST(test_encode_nops)
{
	size_t len = (size_t)_i;
	uint8_t *buf = malloc(len + 1);

	ck_assert_ptr_nonnull(buf);
	memset(buf, 0xcc, len + 1);
	ck_assert_int_eq(arch_x86_64.encode_nops(buf, len), 0);
	ck_assert_uint_eq(buf[len], 0xcc);	/* exactly len bytes */
	/* largest first: at most one piece shorter than 8 bytes */
	ck_assert_uint_eq(arch_nops_walk(&arch_x86_64, buf, len), len / 8 + (len % 8 != 0));
	free(buf);
}
END_TEST

/* The NOP that replaces a call is the single 5-byte form. */
START_TEST(test_encode_nop5)
{
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	uint8_t buf[6] = { 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc };

	ck_assert_int_eq(arch_x86_64.encode_nops(buf, 5), 0);
	ck_assert_mem_eq(buf, nop5, 5);
	ck_assert_uint_eq(buf[5], 0xcc);
}
END_TEST

/* CALL rel32: the displacement at byte 1, from the end of the 5 bytes */
static const struct arch_call_case call_cases[] = {
	{ "forward", 0x401130, 0x401160, 0, "\xe8\x2b\x00\x00\x00", 1 },
	{ "backward", 0x401160, 0x401130, 0, "\xe8\xcb\xff\xff\xff", 1 },
	{ "to the next instruction", 0x1000, 0x1005, 0, "\xe8\x00\x00\x00\x00", 1 },
	{ "to itself", 0x1000, 0x1000, 0, "\xe8\xfb\xff\xff\xff", 1 },
	{ "largest forward reach", 0x1000, 0x1005 + 0x7fffffffull, 0, "\xe8\xff\xff\xff\x7f", 1 },
	{ "one past the forward reach", 0x1000, 0x1005 + 0x80000000ull, -ERANGE, { 0 }, 0 },
	{ "largest backward reach", 0x80001000ull, 0x80001005ull - 0x80000000ull, 0,
	  "\xe8\x00\x00\x00\x80", 1 },
	{ "one past the backward reach", 0x80001000ull, 0x80001004ull - 0x80000000ull, -ERANGE,
	  { 0 }, 0 },
	{ "within kernel text", 0xffffffff81000000ull, 0xffffffff81e00000ull, 0,
	  "\xe8\xfb\xff\xdf\x00", 1 },
	{ "user to the top 4 GiB", 0x1000, 0xffffffff00000000ull, -ERANGE, { 0 }, 0 },
	{ "kernel to user", 0xffffffff81000000ull, 0x100000000ull, -ERANGE, { 0 }, 0 },
	/* the displacement adds modulo 2^64, as in the CPU */
	{ "wraps below zero", 0x10, 0xfffffffffffffff0ull, 0, "\xe8\xdb\xff\xff\xff", 1 },
};

/*
 * embed's entry sites (callops_site): the 10 bytes from 4 before the site,
 * copied from objdump -d of the fixtures/embed-x86 programs named (at
 * `add`, `mul` or `fib`); the refused rows say how they were made.
 */
static const struct x86_site_case {
	const char *what;
	size_t len;
	const char *bytes;
	int ret;
	unsigned int entry_off, call_off, disabled_len;
} site_cases[] = {
	{ "gcc -pg -mfentry static", B("\x00\x00\x00\x90\xe8\x3b\x8f\x03\x00\x55"),
	  ARCH_CALLOPS_OK, 4, 0, 5 },
	{ "gcc -pg -mfentry -fcf-protection static",
	  B("\xf3\x0f\x1e\xfa\xe8\x67\x8f\x03\x00\x55"), ARCH_CALLOPS_OK, 0, 4, 5 },
	{ "gcc -pg -mfentry -fcf-protection PIE: call *GOT(%rip)",
	  B("\xf3\x0f\x1e\xfa\xff\x15\x16\x2d\x00\x00"), ARCH_CALLOPS_OK, 0, 4, 6 },
	{ "gcc -pg -mfentry static PIE: addr32 call",
	  B("\x00\x00\x00\x00\x67\xe8\x2a\x8f\x03\x00"), ARCH_CALLOPS_OK, 4, 0, 6 },
	{ "clang -pg -mfentry -fcf-protection PIE: call __fentry__@plt",
	  B("\xf3\x0f\x1e\xfa\xe8\x87\xfc\xff\xff\x55"), ARCH_CALLOPS_OK, 0, 4, 5 },
	{ "gcc -fpatchable-function-entry=5 dynamic: five 0x90",
	  B("\x00\x00\x00\x00\x90\x90\x90\x90\x90\x48"), ARCH_CALLOPS_OK, 4, 0, 5 },
	{ "gcc -fpatchable-function-entry=5 -fcf-protection PIE",
	  B("\xf3\x0f\x1e\xfa\x90\x90\x90\x90\x90\x48"), ARCH_CALLOPS_OK, 0, 4, 5 },
	{ "clang -fpatchable-function-entry=5 PIE: nopl 0x8(%rax,%rax,1)",
	  B("\x5d\xc3\x66\x90\x0f\x1f\x44\x00\x08\x55"), ARCH_CALLOPS_OK, 4, 0, 5 },
	{ "clang -fpatchable-function-entry=5 -fcf-protection static",
	  B("\xf3\x0f\x1e\xfa\x0f\x1f\x44\x00\x08\x55"), ARCH_CALLOPS_OK, 0, 4, 5 },
	{ "gcc -mnop-mcount static", B("\x00\x00\x00\x00\x0f\x1f\x44\x00\x00\x48"),
	  ARCH_CALLOPS_OK, 4, 0, 5 },
	{ "gcc -mnop-mcount -fcf-protection dynamic",
	  B("\xf3\x0f\x1e\xfa\x0f\x1f\x44\x00\x00\x48"), ARCH_CALLOPS_OK, 0, 4, 5 },
	/* hand-made from the rows above */
	{ "four 0x90 (=4)", B("\x00\x00\x00\x00\x90\x90\x90\x90\x48\x89"), ARCH_CALLOPS_NONE },
	{ "a 4-byte NOP", B("\x00\x00\x00\x00\x0f\x1f\x40\x00\x55\x48"), ARCH_CALLOPS_NONE },
	{ "ENDBR64 then push %rbp", B("\xf3\x0f\x1e\xfa\x55\x48\x89\xe5\x48\x83"),
	  ARCH_CALLOPS_NONE },
	{ "call rel32 cut short", B("\x00\x00\x00\x00\xe8\x3b\x8f\x03"), ARCH_CALLOPS_NONE },
	{ "call *GOT(%rip) cut short", B("\x00\x00\x00\x00\xff\x15\x16\x2d\x00"),
	  ARCH_CALLOPS_NONE },
	{ "ENDBR64 alone", B("\xf3\x0f\x1e\xfa"), ARCH_CALLOPS_NONE },
	{ "empty", 0, "", ARCH_CALLOPS_NONE },
};

START_TEST(test_callops_site)
{
	const struct x86_site_case *c = &site_cases[_i];
	uint8_t *buf = arch_dup_exact(c->bytes, c->len);
	struct arch_callops_site site;
	int ret;

	memset(&site, 0x5a, sizeof(site));
	ret = arch_x86_64.callops_site(buf, c->len, 0x401000, &site);
	ck_assert_msg(ret == c->ret, "%s: ret %d, want %d", c->what, ret, c->ret);
	if (ret == ARCH_CALLOPS_OK) {
		ck_assert_msg(site.entry_off == c->entry_off && site.call_off == c->call_off &&
			      site.disabled_off == c->call_off &&
			      site.disabled_len == c->disabled_len,
			      "%s: entry %u call %u disabled %u+%u", c->what, site.entry_off,
			      site.call_off, site.disabled_off, site.disabled_len);
		/* the site is right after the 4 bytes looked back at */
		ck_assert_uint_eq(site.entry_off + site.call_off, arch_x86_64.callops->site_back);
	}
	free(buf);
}
END_TEST

/* The idle form: the one 5-byte NOP, then 0x90 over the sixth byte of a call. */
START_TEST(test_callops_disabled)
{
	static const uint8_t nop6[6] = { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x90 };
	uint8_t buf[8];

	for (size_t len = 0; len <= sizeof(buf); len++) {
		memset(buf, 0xcc, sizeof(buf));
		if (len == 5 || len == 6) {
			ck_assert_int_eq(arch_x86_64.callops_disabled(buf, len, 0x401000, 0x402000), 0);
			ck_assert_mem_eq(buf, nop6, len);
			ck_assert_uint_eq(buf[len], 0xcc);
		} else {
			ck_assert_int_eq(arch_x86_64.callops_disabled(buf, len, 0x401000, 0x402000), -EINVAL);
			ck_assert_uint_eq(buf[0], 0xcc);
		}
	}
	/* no blob: the runtime fills the room */
	ck_assert_ptr_null(arch_x86_64.callops_tramp);
	ck_assert_uint_eq(arch_x86_64.callops->tramp_size, 0);
	ck_assert_uint_eq(arch_x86_64.callops->room_size, 128 * 1024);
	ck_assert_uint_eq(arch_x86_64.max_page_size, 4096);
}
END_TEST

void arch_tests_x86_64(Suite *s)
{
	TCase *tc;

	tc = tcase_create("x86_64 ops");
	tcase_add_test(tc, test_ops_fields);
	arch_add_reloc_cases(tc, &arch_x86_64, reloc_cases, ARRAY_SIZE(reloc_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("x86_64 decode");
	tcase_add_loop_test(tc, test_nop_run, 1, 17);
	tcase_add_loop_test(tc, test_fuzz_consistency, 0, 8);
	suite_add_tcase(s, tc);

	tc = tcase_create("x86_64 plt");
	arch_add_plt_cases(tc, &arch_x86_64, plt_cases, ARRAY_SIZE(plt_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("x86_64 encode");
	tcase_add_loop_test(tc, test_encode_nops, 0, 65);
	tcase_add_test(tc, test_encode_nop5);
	arch_add_call_cases(tc, &arch_x86_64, call_cases, ARRAY_SIZE(call_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("x86_64 embed");
	tcase_add_loop_test(tc, test_callops_site, 0, (int)ARRAY_SIZE(site_cases));
	tcase_add_test(tc, test_callops_disabled);
	suite_add_tcase(s, tc);
}
