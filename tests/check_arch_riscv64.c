// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_arch_riscv64.c - unit tests for arch/riscv64.c.
 *
 * Strategy: every case is a row in a table, run by tcase_add_loop_test.
 * Decode rows are short instruction streams (the bytes of one patch-site
 * flavour or one near miss) with the sequence of results a linear decode
 * must produce; the bytes are copied into a heap buffer of exactly the
 * stated length so that ASan catches any read past the end.  The
 * encodings were taken from riscv64-linux-gnu-objdump -d of code built by
 * riscv64-linux-gnu-gcc/as (-pg with and without linker relaxation,
 * -fpatchable-function-entry, `call t0, sym`, `tail`) and the PLT of a
 * small dynamic program, so the expectations are the toolchain's.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "check_suites.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/* little-endian bytes of one 32-bit and one 16-bit instruction */
#define W(x)	((x) & 0xff), ((x) >> 8 & 0xff), ((x) >> 16 & 0xff), ((x) >> 24 & 0xff)
#define H(x)	((x) & 0xff), ((x) >> 8 & 0xff)

static const struct arch_ops *const ops = &arch_riscv64;

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
#define NOP2		OK(2, INSN_NOP, 0)
#define NOP4		OK(4, INSN_NOP, 0)
#define OTHER2		OK(2, INSN_OTHER, 0)
#define OTHER4		OK(4, INSN_OTHER, 0)
#define TRUNC		{ ARCH_DECODE_TRUNC, 0, INSN_OTHER, 0 }
#define BAD		{ ARCH_DECODE_BAD, 0, INSN_OTHER, 0 }

static const struct dec_case dec_cases[] = {
	/* --- site flavours --- */
	{ "call _mcount: auipc ra + jalr ra (not relaxed)", 0x80001000, 8,
	  { W(0x00001097), W(0x158080e7) },
	  1, { OK(8, INSN_CALL, 0x80002158) } },
	{ "-pg prologue in an object: mv a0,ra; call _mcount (target = itself)", 0x8, 10,
	  { H(0x8506), W(0x00000097), W(0x000080e7) },
	  2, { OTHER2, OK(8, INSN_CALL, 0xa) } },
	{ "relaxed -pg: jal ra, _mcount@plt", 0x83e, 4, { W(0xee3ff0ef) },
	  1, { OK(4, INSN_CALL, 0x720) } },
	{ "jal ra forwards", 0x80001018, 4, { W(0x140010ef) },
	  1, { OK(4, INSN_CALL, 0x80002158) } },
	{ "jal t0 (relaxed ftrace call)", 0x8000101c, 4, { W(0x13c012ef) },
	  1, { OK(4, INSN_CALL, 0x80002158) } },
	{ "kernel ftrace: auipc t0 + jalr t0", 0, 8, { W(0x00001297), W(0x150282e7) },
	  1, { OK(8, INSN_CALL, 0x1150) } },
	{ "`call t0, sym`: auipc t1 + jalr t0", 0x80001008, 8, { W(0x00001317), W(0x150302e7) },
	  1, { OK(8, INSN_CALL, 0x80002158) } },
	{ "-fpatchable-function-entry=4 with RVC: 4 c.nop", 0, 10,
	  { H(0x0001), H(0x0001), H(0x0001), H(0x0001), H(0x1141) },
	  5, { NOP2, NOP2, NOP2, NOP2, OTHER2 } },
	{ "patchable area without RVC: nop nop", 0xffffffff80001000, 8,
	  { W(0x00000013), W(0x00000013) },
	  2, { NOP4, NOP4 } },
	{ "mixed nop run: nop c.nop nop", 0x2, 10,
	  { W(0x00000013), H(0x0001), W(0x00000013) },
	  3, { NOP4, NOP2, NOP4 } },
	{ "two calls back to back", 0x80001000, 16,
	  { W(0x00001097), W(0x158080e7), W(0x00001317), W(0x150302e7) },
	  2, { OK(8, INSN_CALL, 0x80002158), OK(8, INSN_CALL, 0x80002158) } },

	/* --- near misses --- */
	{ "lone c.nop before ret", 0x100, 4, { H(0x0001), H(0x8082) }, 2, { NOP2, OTHER2 } },
	{ "c.addi x0, 1 is a HINT, not c.nop", 0x8000104e, 2, { H(0x0005) }, 1, { OTHER2 } },
	{ "call to another target", 0x8000102c, 8, { W(0x12345097), W(0x800080e7) },
	  1, { OK(8, INSN_CALL, 0x9234582c) } },
	{ "jal ra backwards", 0x80001154, 4, { W(0xeadff0ef) },
	  1, { OK(4, INSN_CALL, 0x80001000) } },
	{ "jal x0 is a branch, not a call", 0x80001020, 4, { W(0x1380106f) },
	  1, { OK(4, INSN_BRANCH, 0x80002158) } },
	{ "tail: auipc t1 + jr is a branch", 0x80001010, 8, { W(0x00001317), W(0x14830067) },
	  1, { OK(8, INSN_BRANCH, 0x80002158) } },
	{ "tail through t2 (Zicfilp)", 0x18, 8, { W(0x00001397), W(0xffc38067) },
	  1, { OK(8, INSN_BRANCH, 0x1014) } },
	{ "auipc t0 + jalr ra, 16(t1): different register", 0x80001024, 8,
	  { W(0x00000297), W(0x010300e7) },
	  2, { OTHER4, OTHER4 } },
	{ "auipc a5 + jalr ra, (a5): not a call register", 0x8, 8,
	  { W(0x00000797), W(0x000780e7) },
	  2, { OTHER4, OTHER4 } },
	{ "auipc ra + jalr a0, (ra): links through a0", 0x10, 8,
	  { W(0x00000097), W(0x00008567) },
	  2, { OTHER4, OTHER4 } },
	{ "jalr t0, t0 alone", 0x80001044, 4, { W(0x000282e7) }, 1, { OTHER4 } },
	{ "lone auipc at the end of the buffer", 0x80001000, 4, { W(0x00001097) },
	  1, { OTHER4 } },
	{ "auipc with 2 bytes after it", 0x80001000, 6, { W(0x00001097), H(0x0001) },
	  2, { OTHER4, NOP2 } },
	{ "auipc followed by compressed insns", 0x80001000, 8,
	  { W(0x00001097), H(0x0001), H(0x0001) },
	  3, { OTHER4, NOP2, NOP2 } },
	{ "auipc then half of the jalr", 0x80001000, 6, { W(0x00001097), W(0x158080e7) },
	  2, { OTHER4, TRUNC } },
	{ "c.j forwards", 0x80001048, 2, { H(0xa229) }, 1, { OK(2, INSN_BRANCH, 0x80001152) } },
	{ "c.j backwards", 0x80001152, 2, { H(0xb57d) }, 1, { OK(2, INSN_BRANCH, 0x80001000) } },
	{ "c.addiw (the RV32 c.jal encoding) is not a call", 0x8000104a, 2, { H(0x2505) },
	  1, { OTHER2 } },
	{ "c.jalr a5 (indirect) is not a direct call", 0, 2, { H(0x9782) }, 1, { OTHER2 } },
	{ "0x0000 is illegal", 0, 2, { H(0x0000) }, 1, { BAD } },
	{ "48-bit encoding is bad", 0, 6, { H(0x001f), H(0), H(0) }, 1, { BAD } },
	{ "all-ones is bad", 0, 4, { W(0xffffffff) }, 1, { BAD } },
	{ "empty buffer", 0x1000, 0, { 0 }, 1, { TRUNC } },
	{ "one byte", 0x1000, 1, { 0x13 }, 1, { TRUNC } },
	{ "half of a nop", 0x1000, 2, { W(0x00000013) }, 1, { TRUNC } },
	{ "c.nop then three bytes of a nop", 0x1000, 5, { H(0x0001), W(0x00000013) },
	  2, { NOP2, TRUNC } },

	/* --- immediate extremes: sign extension without overflow --- */
	{ "auipc 0x80000 is -2 GiB", 0x80001034, 8, { W(0x80000097), W(0x800080e7) },
	  1, { OK(8, INSN_CALL, 0x834) } },
	{ "largest positive pair, jalr clears bit 0", 0x8000103c, 8,
	  { W(0x7ffff097), W(0x7ff080e7) },
	  1, { OK(8, INSN_CALL, 0x10000083a) } },
	{ "jal ra, .-4 at address 0 wraps", 0, 4, { W(0xffdff0ef) },
	  1, { OK(4, INSN_CALL, 0xfffffffffffffffc) } },
	{ "pair wraps past the top", 0xfffffffffffff000, 8, { W(0x00001097), W(0x008080e7) },
	  1, { OK(8, INSN_CALL, 0x8) } },
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

/*
 * Every first halfword, with exactly two bytes available: compressed ones
 * decode to 2 bytes (0x0000 bad), 32-bit ones are truncated, longer
 * formats are bad.  ASan checks nothing beyond the two bytes is read.
 */
START_TEST(test_decode_every_halfword)
{
	for (uint32_t h = (uint32_t)_i << 12; h < ((uint32_t)_i + 1) << 12; h++) {
		uint8_t bytes[2] = { H(h) };
		uint8_t *buf = dup_exact(bytes, 2);
		struct arch_insn insn;
		int ret = ops->decode(buf, 2, 0x1000, &insn);

		if (h == 0 || (h & 0x1f) == 0x1f)
			ck_assert_int_eq(ret, ARCH_DECODE_BAD);
		else if ((h & 3) == 3)
			ck_assert_int_eq(ret, ARCH_DECODE_TRUNC);
		else {
			ck_assert_int_eq(ret, ARCH_DECODE_OK);
			ck_assert_uint_eq(insn.len, 2);
		}
		free(buf);
	}
}
END_TEST

/* Random 8-byte windows at every length 0..8: no over-read, lengths consistent. */
START_TEST(test_decode_random_windows)
{
	uint32_t x = 0x9e3779b9u + (uint32_t)_i;

	for (int n = 0; n < 5000; n++) {
		uint8_t bytes[8];

		for (int b = 0; b < 8; b++) {
			x = x * 1664525u + 1013904223u;
			bytes[b] = (uint8_t)(x >> 24);
		}
		/* make the fusion path common: auipc ra followed by jalr ra */
		if (n % 4 == 0) {
			bytes[0] = 0x97;
			bytes[4] = 0xe7;
			bytes[5] = 0x80;
			bytes[6] = (uint8_t)(bytes[6] & 0xf0);
		}
		for (size_t len = 0; len <= 8; len++) {
			uint8_t *buf = dup_exact(bytes, len);
			struct arch_insn insn;
			int ret = ops->decode(buf, len, 0xfffffffffffffff0, &insn);

			if (ret == ARCH_DECODE_OK)
				ck_assert(insn.len == 2 || insn.len == 4 || insn.len == 8);
			if (ret == ARCH_DECODE_OK)
				ck_assert_uint_le(insn.len, len);
			free(buf);
		}
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
	{ "PLT0", 0x620, 32,
	  { W(0x00002397), W(0x41c30333), W(0x9e83be03), W(0xfd430313),
	    W(0x9e838293), W(0x00135313), W(0x0082b283), W(0x000e0067) }, -1, 0 },
	{ "PLT0 first 16 bytes", 0x620, 16,
	  { W(0x00002397), W(0x41c30333), W(0x9e83be03), W(0xfd430313) }, -1, 0 },
	{ "__libc_start_main@plt", 0x640, 16,
	  { W(0x00002e17), W(0x9d8e3e03), W(0x000e0367), W(0x00000013) }, 0, 0x2018 },
	{ "puts@plt", 0x660, 16,
	  { W(0x00002e17), W(0x9c8e3e03), W(0x000e0367), W(0x00000013) }, 0, 0x2028 },
	{ "printf@plt", 0x680, 16,
	  { W(0x00002e17), W(0x9b8e3e03), W(0x000e0367), W(0x00000013) }, 0, 0x2038 },
	{ "positive lo12", 0x1000, 16,
	  { W(0x00002e17), W(0x010e3e03), W(0x000e0367), W(0x00000013) }, 0, 0x3010 },
	{ "slot below the PLT (negative hi20)", 0x80000000, 16,
	  { W(0xfffffe17), W(0x008e3e03), W(0x000e0367), W(0x00000013) }, 0, 0x7ffff008 },
	{ "entry without its padding nop", 0x660, 12,
	  { W(0x00002e17), W(0x9c8e3e03), W(0x000e0367) }, 0, 0x2028 },
	{ "short buffer", 0x660, 8, { W(0x00002e17), W(0x9c8e3e03) }, -1, 0 },
	{ "lw instead of ld (RV32 PLT)", 0x660, 16,
	  { W(0x00002e17), W(0x9c8e2e03), W(0x000e0367), W(0x00000013) }, -1, 0 },
	{ "jalr ra instead of t1", 0x660, 16,
	  { W(0x00002e17), W(0x9c8e3e03), W(0x000e00e7), W(0x00000013) }, -1, 0 },
	{ "nop padding", 0x690, 16,
	  { W(0x00000013), W(0x00000013), W(0x00000013), W(0x00000013) }, -1, 0 },
	{ "empty buffer", 0x660, 0, { 0 }, -1, 0 },
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
	size_t nnops;		/* instructions a decode must find */
};

static const struct nops_case nops_cases[] = {
	{ 0, 0, { 0 }, 0 },
	{ 2, 0, { H(0x0001) }, 1 },
	{ 4, 0, { W(0x00000013) }, 1 },
	{ 6, 0, { W(0x00000013), H(0x0001) }, 2 },
	{ 8, 0, { W(0x00000013), W(0x00000013) }, 2 },
	{ 14, 0, { W(0x00000013), W(0x00000013), W(0x00000013), H(0x0001) }, 4 },
	{ 16, 0, { W(0x00000013), W(0x00000013), W(0x00000013), W(0x00000013) }, 4 },
	{ 1, -1, { 0 }, 0 },
	{ 7, -1, { 0 }, 0 },
};

START_TEST(test_encode_nops)
{
	const struct nops_case *c = &nops_cases[_i];
	uint8_t buf[20], untouched[20];
	struct arch_insn insn;
	size_t off, n = 0;

	memset(buf, 0xaa, sizeof(buf));
	memset(untouched, 0xaa, sizeof(untouched));
	ck_assert_int_eq(ops->encode_nops(buf, c->len), c->ret);
	if (c->ret) {
		ck_assert_mem_eq(buf, untouched, sizeof(buf));
		return;
	}
	ck_assert_mem_eq(buf, c->bytes, c->len);
	ck_assert_uint_eq(buf[c->len], 0xaa);	/* exactly len bytes */
	for (off = 0; off < c->len; off += insn.len, n++) {
		ck_assert_int_eq(ops->decode(buf + off, c->len - off, 0x1000 + off, &insn),
				 ARCH_DECODE_OK);
		ck_assert_int_eq(insn.kind, INSN_NOP);
	}
	ck_assert_uint_eq(n, c->nnops);
}
END_TEST

struct call_case {
	const char *what;
	uint64_t from, to;
	int ret;
	uint8_t bytes[8];
};

static const struct call_case call_cases[] = {
	{ "call _mcount (as assembled)", 0x80001000, 0x80002158, 0,
	  { W(0x00001097), W(0x158080e7) } },
	{ "lo12 negative rounds hi20 up (as assembled)", 0x8000102c, 0x9234582c, 0,
	  { W(0x12345097), W(0x800080e7) } },
	{ "call to itself", 0x1000, 0x1000, 0, { W(0x00000097), W(0x000080e7) } },
	{ "backwards", 0x80001000, 0x80000000, 0, { W(0xfffff097), W(0x000080e7) } },
	{ "largest forward reach", 0x10000000, 0x10000000ull + 0x7ffff7fe, 0,
	  { W(0x7ffff097), W(0x7fe080e7) } },
	{ "one step too far forward", 0x10000000, 0x10000000ull + 0x7ffff800, -1, { 0 } },
	{ "largest backward reach", 0x90000000, 0x90000000ull - 0x80000800, 0,
	  { W(0x80000097), W(0x800080e7) } },
	{ "one step too far back", 0x90000000, 0x90000000ull - 0x80000802, -1, { 0 } },
	{ "kernel to user distance", 0xffffffff80000000, 0x1000, -1, { 0 } },
	{ "wraps below zero", 0, 0xfffffffffffffff0, 0, { W(0x00000097), W(0xff0080e7) } },
	{ "odd target", 0x1000, 0x1001, -1, { 0 } },
};

START_TEST(test_encode_call)
{
	const struct call_case *c = &call_cases[_i];
	uint8_t buf[12], untouched[12];
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

	/* round trip through the fused decoder */
	ck_assert_int_eq(ops->decode(buf, ops->call_len, c->from, &insn), ARCH_DECODE_OK);
	ck_assert_uint_eq(insn.len, ops->call_len);
	ck_assert_int_eq(insn.kind, INSN_CALL);
	ck_assert_msg(insn.target == c->to, "%s: round trip %#llx", c->what,
		      (unsigned long long)insn.target);
}
END_TEST

static const struct {
	unsigned int type;
	int back;
} reloc_cases[] = {
	{ R_RISCV_CALL, 0 },
	{ R_RISCV_CALL_PLT, 0 },
	{ R_RISCV_JAL, 0 },
	{ R_RISCV_RVC_JUMP, -1 },
	{ R_RISCV_PCREL_HI20, -1 },
	{ R_RISCV_RELAX, -1 },
	{ R_RISCV_64, -1 },
	{ R_RISCV_NONE, -1 },
};

START_TEST(test_call_reloc_back)
{
	ck_assert_int_eq(ops->call_reloc_back(reloc_cases[_i].type), reloc_cases[_i].back);
}
END_TEST

START_TEST(test_ops_fields)
{
	ck_assert_str_eq(ops->name, "riscv64");
	ck_assert_uint_eq(ops->machine, EM_RISCV);
	ck_assert_uint_eq(ops->insn_align, 2);
	ck_assert_uint_eq(ops->call_len, 8);
	ck_assert_uint_eq(ops->literal_size, 8);
	ck_assert_uint_eq(ops->abs64_reloc, R_RISCV_64);
	ck_assert_uint_eq(ops->relative_reloc, R_RISCV_RELATIVE);
	ck_assert_uint_eq(ops->jump_slot_reloc, R_RISCV_JUMP_SLOT);
	ck_assert_uint_eq(ops->glob_dat_reloc, 0);
	ck_assert_uint_eq(ops->plt_entry_size, 16);
}
END_TEST

Suite *arch_riscv64_suite(void)
{
	Suite *s = suite_create("arch_riscv64");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ops_fields);
	tcase_add_loop_test(tc, test_decode, 0, ARRAY_SIZE(dec_cases));
	tcase_add_loop_test(tc, test_decode_every_halfword, 0, 16);
	tcase_add_loop_test(tc, test_decode_random_windows, 0, 4);
	tcase_add_loop_test(tc, test_plt_slot, 0, ARRAY_SIZE(plt_cases));
	tcase_add_loop_test(tc, test_encode_nops, 0, ARRAY_SIZE(nops_cases));
	tcase_add_loop_test(tc, test_encode_call, 0, ARRAY_SIZE(call_cases));
	tcase_add_loop_test(tc, test_call_reloc_back, 0, ARRAY_SIZE(reloc_cases));
	suite_add_tcase(s, tc);
	return s;
}
