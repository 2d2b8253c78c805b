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
 *
 * The PC-relative rows (pcrel_decode, pcrel_encode) come from LLVM's
 * assembler, which resolves branches in place under -relax (GNU as keeps
 * an R_RISCV_BRANCH even with -mno-relax), read back with GNU objdump:
 * each instruction alone, its target a label N bytes away,
 *
 *	printf '\t.text\n\t.skip 16\n.Ls:\n\tc.beqz a0, .Lt\n\t.skip 270\n'
 *	       '.Lt = .Ls + 254\n' > t.s
 *	llvm-mc-14 -triple=riscv64 -mattr=+c,+d,-relax -filetype=obj t.s -o t.o
 *	riscv64-linux-gnu-objdump -dr --start-address=16 t.o
 *	  10:	cd7d                	beqz	a0,0x10e
 *
 * (no relocation left, target - 0x10 = N).  auipc pairs were assembled
 * from their immediates (`auipc t1, 0x7ffff; addi t1, t1, 2047`) and N
 * read from objdump's `# target` comment.  A re-encoding is compared byte
 * for byte with what the assembler made for the new displacement.  Every
 * limit has a row at the largest displacement that fits and one step
 * past it; one step past is what llvm-mc refuses ("fixup value out of
 * range"; for c.j and c.beqz it relaxes to the 4-byte jal/beq instead;
 * for a pair, hi20 would be 0x80000 = -2^31 or lo12 outside [-2048,
 * 2047]).  The register-use rows are whole sequences assembled the same
 * way (`.option norvc` where a 32-bit encoding is wanted).
 *
 * The R_RISCV_ALIGN rows follow GNU as 2.40: `.balign 8` after one
 * instruction emits R_RISCV_ALIGN with addend 6 (-march=rv64gc, e_flags
 * RVC) or 4 (rv64g), `.balign 16` 14 or 12, `.balign 4` 2 or nothing
 * (riscv64-linux-gnu-readelf -r); riscv64-linux-gnu-ld places what
 * follows the padding on a multiple of 8 or 16.
 */
#include <elf.h>
#include <errno.h>
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

/* --- PC-relative references: decode --- */

#define RV_B_MIN	(-4096LL)		/* B-type: 13-bit even */
#define RV_B_MAX	4094LL
#define RV_J_MIN	(-0x100000LL)		/* jal: 21-bit even */
#define RV_J_MAX	0xffffeLL
#define RV_CJ_MIN	(-2048LL)		/* c.j: 12-bit even */
#define RV_CJ_MAX	2046LL
#define RV_CB_MIN	(-256LL)		/* c.beqz/c.bnez: 9-bit even */
#define RV_CB_MAX	254LL
#define RV_P_MIN	(-0x80000800LL)		/* auipc + lo12: any byte */
#define RV_P_MAX	0x7ffff7ffLL

struct pdec_case {
	const char *what;		/* what was assembled, at address 0 */
	size_t len;
	uint8_t bytes[32];
	int ret;
	const char *name;
	unsigned int plen;
	int64_t disp, min, max;
	unsigned int step;
	unsigned int flags;
};

#define BR(d)	ARCH_PCREL_OK, "branch", 4, (d), RV_B_MIN, RV_B_MAX, 2, 0
#define JAL(d)	ARCH_PCREL_OK, "jal", 4, (d), RV_J_MIN, RV_J_MAX, 2, 0
#define CJ(d)	ARCH_PCREL_OK, "c.j", 2, (d), RV_CJ_MIN, RV_CJ_MAX, 2, 0
#define CBZ(d)	ARCH_PCREL_OK, "c.beqz", 2, (d), RV_CB_MIN, RV_CB_MAX, 2, 0
#define CBNZ(d)	ARCH_PCREL_OK, "c.bnez", 2, (d), RV_CB_MIN, RV_CB_MAX, 2, 0
#define PAIR(d, f)	ARCH_PCREL_OK, "auipc", 8, (d), RV_P_MIN, RV_P_MAX, 1, (f)
#define LIVE	ARCH_PCREL_LIVE
#define UNPAIRED	ARCH_PCREL_UNPAIRED, "auipc", 4, 0, 0, 0, 0, 0
#define NONE	ARCH_PCREL_NONE, NULL, 0, 0, 0, 0, 0, 0

static const struct pdec_case pdec_cases[] = {
	{ "beq a0, a1, .+64", 4, { W(0x04b50063) }, BR(64) },
	{ "beq a0, a1, .+4094", 4, { W(0x7eb50fe3) }, BR(RV_B_MAX) },
	{ "beq a0, a1, .-4096", 4, { W(0x80b50063) }, BR(RV_B_MIN) },
	{ "bne a2, a3, .-32", 4, { W(0xfed610e3) }, BR(-32) },
	{ "blt a0, a1, .+256", 4, { W(0x10b54063) }, BR(256) },
	{ "bge s0, s1, .+256", 4, { W(0x10945063) }, BR(256) },
	{ "bltu t0, t1, .-256", 4, { W(0xf062e0e3) }, BR(-256) },
	{ "bgeu a4, a5, .+4094", 4, { W(0x7ef77fe3) }, BR(RV_B_MAX) },
	{ "jal ra, .+156", 4, { W(0x09c000ef) }, JAL(156) },
	{ "jal ra, .+0xffffe", 4, { W(0x7ffff0ef) }, JAL(RV_J_MAX) },
	{ "jal ra, .-0x100000", 4, { W(0x800000ef) }, JAL(RV_J_MIN) },
	{ "c.j .+74", 2, { H(0xa0a9) }, CJ(74) },
	{ "c.j .+2046", 2, { H(0xaffd) }, CJ(RV_CJ_MAX) },
	{ "c.j .-2048", 2, { H(0xb001) }, CJ(RV_CJ_MIN) },
	{ "jal zero, .-64 (assembled as c.j)", 2, { H(0xb7c1) }, CJ(-64) },
	{ "c.beqz a0, .+32", 2, { H(0xc105) }, CBZ(32) },
	{ "c.beqz a0, .+254", 2, { H(0xcd7d) }, CBZ(RV_CB_MAX) },
	{ "c.beqz a0, .-256", 2, { H(0xd101) }, CBZ(RV_CB_MIN) },
	{ "c.bnez s1, .-64", 2, { H(0xf0e1) }, CBNZ(-64) },
	{ "c.j .+74 with more bytes after it", 6, { H(0xa0a9), W(0x04b50063) }, CJ(74) },

	/* auipc + its %pcrel_lo use, and whether the auipc's value is read later */
	{ "auipc t1; addi t1, t1, 144: the use overwrites t1", 8,
	  { W(0x00000317), W(0x09030313) }, PAIR(144, 0) },
	{ "auipc a5; ld a5, 154(a5)", 8, { W(0x00000797), W(0x09a7b783) }, PAIR(154, 0) },
	{ "auipc t1, 0x7ffff; addi t1, t1, 2047", 8, { W(0x7ffff317), W(0x7ff30313) },
	  PAIR(RV_P_MAX, 0) },
	{ "auipc t1, 0x80000; addi t1, t1, -2048", 8, { W(0x80000317), W(0x80030313) },
	  PAIR(RV_P_MIN, 0) },
	{ "auipc t1, 0xfffff; addi t1, t1, 2047", 8, { W(0xfffff317), W(0x7ff30313) },
	  PAIR(-2049, 0) },
	{ "auipc t5; jalr t5, 52(t5)", 8, { W(0x00000f17), W(0x034f0f67) }, PAIR(52, 0) },
	{ "auipc a4; lw a3, 126(a4), then the end of the bytes", 8,
	  { W(0x00000717), W(0x07e72683) }, PAIR(126, LIVE) },
	{ "auipc a4; lw a3, 126(a4); lui a4, 1 (a write)", 12,
	  { W(0x00000717), W(0x07e72683), W(0x00001737) }, PAIR(126, 0) },
	{ "auipc a4; lw a3, 126(a4); c.lui a4, 1 (a compressed rd counts as read)", 10,
	  { W(0x00000717), W(0x07e72683), H(0x6705) }, PAIR(126, LIVE) },
	{ "auipc a4; lw a3, 126(a4); half of lui a4", 10,
	  { W(0x00000717), W(0x07e72683), W(0x00001737) }, PAIR(126, LIVE) },
	{ "auipc a4; flw fa0, 142(a4); li a4, 0", 12,
	  { W(0x00000717), W(0x08e72507), W(0x00000713) }, PAIR(142, 0) },
	{ "auipc s1; sd a0, 110(s1); c.mv a0, a1; li s1, 7", 14,
	  { W(0x00000497), W(0x06a4b723), H(0x852e), W(0x00700493) }, PAIR(110, 0) },
	{ "auipc s1; sd a0, 110(s1); ld a2, 0(s1)", 12,
	  { W(0x00000497), W(0x06a4b723), W(0x0004b603) }, PAIR(110, LIVE) },
	{ "auipc s1; sd a0, 110(s1); c.sw a1, 0(s1) (3-bit register field)", 10,
	  { W(0x00000497), W(0x06a4b723), H(0xc08c) }, PAIR(110, LIVE) },
	{ "auipc t2; sw a0, 84(t2); c.li t2, 5 (rd field)", 10,
	  { W(0x00000397), W(0x04a3aa23), H(0x4395) }, PAIR(84, LIVE) },
	{ "auipc t3; fsd fa0, 92(t3); lui t3, 5", 12,
	  { W(0x00000e17), W(0x04ae3e27), W(0x00005e37) }, PAIR(92, 0) },
	{ "auipc a0; addi a1, a0, 144; ld a2, 0(a0)", 12,
	  { W(0x00000517), W(0x09050593), W(0x00053603) }, PAIR(144, LIVE) },
	{ "auipc a0; addi a1, a0, 144; beqz a1, .; li a0, 0 (control leaves first)", 16,
	  { W(0x00000517), W(0x09050593), W(0x00058063), W(0x00000513) }, PAIR(144, LIVE) },
	{ "auipc s0; addi a1, s0, 144; c.add a1, s0", 10,
	  { W(0x00000417), W(0x09040593), H(0x95a2) }, PAIR(144, LIVE) },
	{ "auipc a0; sd a1, 144(a0); jr a1", 12,
	  { W(0x00000517), W(0x08b53823), W(0x00058067) }, PAIR(144, LIVE) },
	{ "auipc a5; addi a1, a5, 144; c.jr a1", 10,
	  { W(0x00000797), W(0x09078593), H(0x8582) }, PAIR(144, LIVE) },
	{ "auipc a5; addi a1, a5, 144; c.beqz a1, .", 10,
	  { W(0x00000797), W(0x09078593), H(0xc181) }, PAIR(144, LIVE) },
	{ "auipc a0; sd a1, 144(a0); 7 c.nop; li a0, 0", 26,
	  { W(0x00000517), W(0x08b53823), H(0x0001), H(0x0001), H(0x0001), H(0x0001),
	    H(0x0001), H(0x0001), H(0x0001), W(0x00000513) }, PAIR(144, 0) },
	{ "auipc a0; sd a1, 144(a0); 8 c.nop; li a0, 0 (past the 8 looked at)", 28,
	  { W(0x00000517), W(0x08b53823), H(0x0001), H(0x0001), H(0x0001), H(0x0001),
	    H(0x0001), H(0x0001), H(0x0001), H(0x0001), W(0x00000513) }, PAIR(144, LIVE) },
	/* the scan starts after the use: a jalr use that links elsewhere is not followed */
	{ "auipc t5; jalr ra, 52(t5); li t5, 0", 12,
	  { W(0x00000f17), W(0x034f00e7), W(0x00000f13) }, PAIR(52, 0) },

	/* auipc without its use next to it */
	{ "auipc t0; c.nop (range.S LONE_AUIPC)", 6, { W(0x00000297), H(0x0001) }, UNPAIRED },
	{ "auipc a5; c.ld a5, 160(a5): a compressed use", 6, { W(0x00000797), H(0x73dc) },
	  UNPAIRED },
	{ "auipc t1 alone", 4, { W(0x00000317) }, UNPAIRED },
	{ "auipc t1; half of addi t1", 6, { W(0x00000317), W(0x09030313) }, UNPAIRED },
	{ "auipc zero; li zero, 16", 8, { W(0x00000017), W(0x01000013) }, UNPAIRED },
	{ "auipc t1; addi t2, t2, 16: another register", 8, { W(0x00000317), W(0x01038393) },
	  UNPAIRED },
	{ "auipc t1; add t1, t1, t2: not a %pcrel_lo form", 8,
	  { W(0x00000317), W(0x00730333) }, UNPAIRED },

	/* not PC-relative */
	{ "c.nop", 2, { H(0x0001) }, NONE },
	{ "nop", 4, { W(0x00000013) }, NONE },
	{ "ret", 2, { H(0x8082) }, NONE },
	{ "jr a1", 4, { W(0x00058067) }, NONE },
	{ "lui a4, 1", 4, { W(0x00001737) }, NONE },
	{ "48-bit format", 6, { H(0x001f), H(0), H(0) }, NONE },
	{ "half of beq", 2, { W(0x04b50063) }, NONE },
	{ "one byte", 1, { 0x01 }, NONE },
	{ "empty buffer", 0, { 0 }, NONE },
};

START_TEST(test_pcrel_decode)
{
	const struct pdec_case *c = &pdec_cases[_i];
	uint8_t *buf = dup_exact(c->bytes, c->len);
	struct arch_pcrel pc;
	int ret;

	memset(&pc, 0x5a, sizeof(pc));
	ret = ops->pcrel_decode(buf, c->len, &pc);
	ck_assert_msg(ret == c->ret, "%s: ret %d, want %d", c->what, ret, c->ret);
	if (ret != ARCH_PCREL_NONE) {
		ck_assert_str_eq(pc.name, c->name);
		ck_assert_uint_eq(pc.len, c->plen);
	}
	if (ret == ARCH_PCREL_OK) {
		ck_assert_msg(pc.disp == c->disp, "%s: disp %lld, want %lld", c->what,
			      (long long)pc.disp, (long long)c->disp);
		ck_assert_int_eq(pc.min, c->min);
		ck_assert_int_eq(pc.max, c->max);
		ck_assert_uint_eq(pc.step, c->step);
		ck_assert_uint_eq(pc.lo_off, c->plen == 8 ? 4 : 0);
		ck_assert_msg(pc.flags == c->flags, "%s: flags %#x, want %#x", c->what,
			      pc.flags, c->flags);
	}
	free(buf);
}
END_TEST

/* --- PC-relative references: re-encode for a new displacement --- */

struct penc_case {
	const char *what;		/* from -> to, each as assembled */
	size_t len;
	uint8_t from[8];
	int64_t disp;
	int ret;
	uint8_t want[8];
};

static const struct penc_case penc_cases[] = {
	{ "beq a0, a1, .+64 -> .+70", 4, { W(0x04b50063) }, 70, 0, { W(0x04b50363) } },
	{ "beq a0, a1, .+64 -> .+4094", 4, { W(0x04b50063) }, RV_B_MAX, 0, { W(0x7eb50fe3) } },
	{ "beq a0, a1, .+64 -> .-4096", 4, { W(0x04b50063) }, RV_B_MIN, 0, { W(0x80b50063) } },
	{ "beq: .+4096 is out of range", 4, { W(0x04b50063) }, RV_B_MAX + 2, -ERANGE, { 0 } },
	{ "beq: .-4098 is out of range", 4, { W(0x04b50063) }, RV_B_MIN - 2, -ERANGE, { 0 } },
	{ "beq: .+3 is odd", 4, { W(0x04b50063) }, 3, -ERANGE, { 0 } },
	{ "bne a2, a3, .-32 -> .-26", 4, { W(0xfed610e3) }, -26, 0, { W(0xfed613e3) } },
	{ "jal ra, .+156 -> .+162", 4, { W(0x09c000ef) }, 162, 0, { W(0x0a2000ef) } },
	{ "jal ra, .+156 -> .+0xffffe", 4, { W(0x09c000ef) }, RV_J_MAX, 0, { W(0x7ffff0ef) } },
	{ "jal ra, .+156 -> .-0x100000", 4, { W(0x09c000ef) }, RV_J_MIN, 0, { W(0x800000ef) } },
	{ "jal: .+0x100000 is out of range", 4, { W(0x09c000ef) }, RV_J_MAX + 2, -ERANGE, { 0 } },
	{ "jal: .-0x100002 is out of range", 4, { W(0x09c000ef) }, RV_J_MIN - 2, -ERANGE, { 0 } },
	{ "c.j .+74 -> .+80", 2, { H(0xa0a9) }, 80, 0, { H(0xa881) } },
	{ "c.j .+74 -> .+2046", 2, { H(0xa0a9) }, RV_CJ_MAX, 0, { H(0xaffd) } },
	{ "c.j .+74 -> .-2048", 2, { H(0xa0a9) }, RV_CJ_MIN, 0, { H(0xb001) } },
	{ "c.j: .+2048 is out of range", 2, { H(0xa0a9) }, RV_CJ_MAX + 2, -ERANGE, { 0 } },
	{ "c.j: .-2050 is out of range", 2, { H(0xa0a9) }, RV_CJ_MIN - 2, -ERANGE, { 0 } },
	{ "c.beqz a0, .+32 -> .+38", 2, { H(0xc105) }, 38, 0, { H(0xc11d) } },
	{ "c.beqz a0, .+32 -> .+254", 2, { H(0xc105) }, RV_CB_MAX, 0, { H(0xcd7d) } },
	{ "c.beqz a0, .+32 -> .-256", 2, { H(0xc105) }, RV_CB_MIN, 0, { H(0xd101) } },
	{ "c.beqz: .+256 is out of range", 2, { H(0xc105) }, RV_CB_MAX + 2, -ERANGE, { 0 } },
	{ "c.beqz: .-258 is out of range", 2, { H(0xc105) }, RV_CB_MIN - 2, -ERANGE, { 0 } },
	{ "c.bnez s1, .-64 -> .-58", 2, { H(0xf0e1) }, -58, 0, { H(0xf0f9) } },
	{ "auipc t1; addi t1, t1, 144 -> 150", 8, { W(0x00000317), W(0x09030313) }, 150, 0,
	  { W(0x00000317), W(0x09630313) } },
	{ "auipc t1; addi t1, t1, 144 -> 2047", 8, { W(0x00000317), W(0x09030313) }, 2047, 0,
	  { W(0x00000317), W(0x7ff30313) } },
	{ "auipc t1; addi t1, t1, 144 -> 2048 (hi20 rounds up)", 8,
	  { W(0x00000317), W(0x09030313) }, 2048, 0, { W(0x00001317), W(0x80030313) } },
	{ "auipc t1; addi t1, t1, 144 -> -2048", 8, { W(0x00000317), W(0x09030313) }, -2048, 0,
	  { W(0x00000317), W(0x80030313) } },
	{ "auipc t1; addi t1, t1, 144 -> -2049", 8, { W(0x00000317), W(0x09030313) }, -2049, 0,
	  { W(0xfffff317), W(0x7ff30313) } },
	{ "auipc t1; addi t1, t1, 144 -> 0x7ffff7ff (largest)", 8,
	  { W(0x00000317), W(0x09030313) }, RV_P_MAX, 0, { W(0x7ffff317), W(0x7ff30313) } },
	{ "auipc t1; addi t1, t1, 144 -> -0x80000800 (smallest)", 8,
	  { W(0x00000317), W(0x09030313) }, RV_P_MIN, 0, { W(0x80000317), W(0x80030313) } },
	{ "auipc pair: 0x7ffff800 is out of range", 8, { W(0x00000317), W(0x09030313) },
	  RV_P_MAX + 1, -ERANGE, { 0 } },
	{ "auipc pair: -0x80000801 is out of range", 8, { W(0x00000317), W(0x09030313) },
	  RV_P_MIN - 1, -ERANGE, { 0 } },
	{ "auipc a5; ld a5, 154(a5) -> 160", 8, { W(0x00000797), W(0x09a7b783) }, 160, 0,
	  { W(0x00000797), W(0x0a07b783) } },
	{ "auipc a4; lw a3, 126(a4) -> -4096", 8, { W(0x00000717), W(0x07e72683) }, -4096, 0,
	  { W(0xfffff717), W(0x00072683) } },
	{ "auipc t5; jalr t5, 52(t5) -> 0x12345", 8, { W(0x00000f17), W(0x034f0f67) }, 0x12345, 0,
	  { W(0x00012f17), W(0x345f0f67) } },
	{ "auipc s1; sd a0, 110(s1) -> 116", 8, { W(0x00000497), W(0x06a4b723) }, 116, 0,
	  { W(0x00000497), W(0x06a4ba23) } },
	{ "auipc s1; sd a0, 110(s1) -> 0x7ffff7ff", 8, { W(0x00000497), W(0x06a4b723) },
	  RV_P_MAX, 0, { W(0x7ffff497), W(0x7ea4bfa3) } },
	{ "auipc s1; sd a0, 110(s1) -> -0x80000800", 8, { W(0x00000497), W(0x06a4b723) },
	  RV_P_MIN, 0, { W(0x80000497), W(0x80a4b023) } },
	{ "auipc s1; sd: 0x7ffff800 is out of range", 8, { W(0x00000497), W(0x06a4b723) },
	  RV_P_MAX + 1, -ERANGE, { 0 } },
	{ "auipc t3; fsd fa0, 92(t3) -> -92", 8, { W(0x00000e17), W(0x04ae3e27) }, -92, 0,
	  { W(0x00000e17), W(0xfaae3227) } },
};

START_TEST(test_pcrel_encode)
{
	const struct penc_case *c = &penc_cases[_i];
	uint8_t out[12], untouched[12];
	struct arch_pcrel pc, again;

	ck_assert_int_eq(ops->pcrel_decode(c->from, c->len, &pc), ARCH_PCREL_OK);
	ck_assert_uint_eq(pc.len, c->len);
	memset(out, 0xaa, sizeof(out));
	memset(untouched, 0xaa, sizeof(untouched));
	ck_assert_msg(ops->pcrel_encode(&pc, c->disp, out) == c->ret, "%s", c->what);
	if (c->ret) {
		ck_assert_mem_eq(out, untouched, sizeof(out));
		/* the limits decode reports say the same */
		ck_assert(c->disp < pc.min || c->disp > pc.max || c->disp % pc.step);
		return;
	}
	ck_assert_mem_eq(out, c->want, c->len);
	ck_assert_mem_eq(out + c->len, untouched, sizeof(out) - c->len);	/* exactly pc.len */
	ck_assert(c->disp >= pc.min && c->disp <= pc.max && c->disp % pc.step == 0);
	ck_assert_int_eq(ops->pcrel_decode(out, c->len, &again), ARCH_PCREL_OK);
	ck_assert_str_eq(again.name, pc.name);
	ck_assert_int_eq(again.disp, c->disp);
}
END_TEST

/* Any reference re-encoded to its own displacement gives back the same bytes. */
START_TEST(test_pcrel_identity)
{
	uint32_t x = 0x7f4a7c15u + (uint32_t)_i;

	for (int n = 0; n < 20000; n++) {
		uint8_t in[8], out[8];
		struct arch_pcrel pc;

		for (int b = 0; b < 8; b++) {
			x = x * 1664525u + 1013904223u;
			in[b] = (uint8_t)(x >> 24);
		}
		/* make pairs common: auipc, then a %pcrel_lo form reading its rd */
		if (n % 2 == 0) {
			static const uint32_t lo_ops[] = { 0x13, 0x03, 0x07, 0x67, 0x23, 0x27 };
			uint32_t w0 = (uint32_t)in[0] | (uint32_t)in[1] << 8 |
				      (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;
			uint32_t w1 = (uint32_t)in[4] | (uint32_t)in[5] << 8 |
				      (uint32_t)in[6] << 16 | (uint32_t)in[7] << 24;

			w0 = (w0 & ~0x7fu) | 0x17;
			w1 = (w1 & ~(0x7fu | 0x1fu << 15)) | lo_ops[x % 6] | (w0 >> 7 & 0x1f) << 15;
			if ((w1 & 0x7f) == 0x13 || (w1 & 0x7f) == 0x67)
				w1 &= ~(7u << 12);	/* addi, jalr: funct3 0 */
			for (int b = 0; b < 4; b++) {
				in[b] = (uint8_t)(w0 >> 8 * b);
				in[4 + b] = (uint8_t)(w1 >> 8 * b);
			}
		}
		if (ops->pcrel_decode(in, 8, &pc) == ARCH_PCREL_OK) {
			ck_assert_int_eq(ops->pcrel_encode(&pc, pc.disp, out), 0);
			ck_assert_mem_eq(out, in, pc.len);
		}
	}
}
END_TEST

static const struct {
	uint8_t bytes[4];
	size_t len;
	unsigned int want;
} len_cases[] = {
	{ { H(0x0001) }, 2, 2 },		/* c.nop */
	{ { H(0x8082) }, 2, 2 },		/* ret */
	{ { W(0x00000013) }, 4, 4 },		/* nop */
	{ { W(0x00000013) }, 2, 4 },		/* told from the first halfword */
	{ { H(0x001f), H(0) }, 4, 0 },		/* 48-bit format */
	{ { H(0x007f), H(0) }, 4, 0 },		/* 64-bit format */
	{ { 0x13 }, 1, 0 },
	{ { 0 }, 0, 0 },
};

START_TEST(test_insn_len)
{
	uint8_t *buf = dup_exact(len_cases[_i].bytes, len_cases[_i].len);

	ck_assert_uint_eq(ops->insn_len(buf, len_cases[_i].len), len_cases[_i].want);
	free(buf);
}
END_TEST

/* GCC and GNU as pad with c.nop exactly when e_flags has EF_RISCV_RVC. */
START_TEST(test_nop_unit)
{
	ck_assert_uint_eq(ops->nop_unit(0), 4);
	ck_assert_uint_eq(ops->nop_unit(EF_RISCV_FLOAT_ABI_DOUBLE), 4);
	ck_assert_uint_eq(ops->nop_unit(EF_RISCV_RVC), 2);
	ck_assert_uint_eq(ops->nop_unit(EF_RISCV_RVC | EF_RISCV_FLOAT_ABI_DOUBLE), 2);
}
END_TEST

/*
 * The NOP unit a unit's -march selects, as GCC writes it in DW_AT_producer
 * ("-march=rv64imac_zicsr_zifencei" for a kernel with RISCV_ISA_C): C among
 * the single-letter extensions means c.nop; a 'c' in a multi-letter one
 * after '_' does not; an -march for another target says nothing.
 */
static const struct {
	const char *march;
	unsigned int unit;
} march_cases[] = {
	{ "rv64imac_zicsr_zifencei", 2 },
	{ "rv64gc", 2 },
	{ "rv64imafdc_zicsr_zifencei_zihintpause", 2 },
	{ "rv64ima_zicsr_zifencei", 4 },
	{ "rv64imafd_zicbom_zicboz", 4 },	/* the c of zicbom is no C extension */
	{ "rv64g", 4 },
	{ "rv64i -mabi=lp64", 4 },		/* the token ends at a space */
	{ "rv32imc", 2 },
	{ "armv8-a", 0 },
	{ "", 0 },
};

START_TEST(test_nop_unit_march)
{
	ck_assert_uint_eq(ops->nop_unit_march(march_cases[_i].march), march_cases[_i].unit);
	if (march_cases[_i].unit)
		ck_assert_str_eq(ops->nop_name(march_cases[_i].unit),
				 march_cases[_i].unit == 2 ? "c.nop" : "nop");
}
END_TEST

static const struct {
	uint64_t offset;
	int64_t addend;
	int ret;
	uint64_t to, align;
} align_cases[] = {
	{ 0x2, 6, 0, 0x8, 8 },		/* .balign 8 with RVC after a c.nop */
	{ 0x4, 4, 0, 0x8, 8 },		/* .balign 8 without RVC after a nop */
	{ 0x2, 14, 0, 0x10, 16 },	/* .balign 16 with RVC */
	{ 0x4, 12, 0, 0x10, 16 },	/* .balign 16 without RVC */
	{ 0x2, 2, 0, 0x4, 4 },		/* .balign 4 with RVC */
	{ 0x106, 6, 0, 0x10c, 8 },	/* where an object's padding ends is not aligned yet */
	{ 0x10, 7, 0, 0x17, 8 },
	{ 0x10, 8, 0, 0x18, 16 },
	{ 0x10, 1, 0, 0x11, 2 },
	{ 0x10, 0, 0, 0x10, 2 },	/* pads nothing: counted from 2 */
	{ 0x10, (1 << 20) - 1, 0, 0x10 + (1 << 20) - 1, 1 << 20 },
	{ 0x10, 1 << 20, -1, 0, 0 },	/* no assembler pads 1 MiB */
	{ 0x10, -1, -1, 0, 0 },
	{ 0x10, INT64_MIN, -1, 0, 0 },
};

START_TEST(test_align_target)
{
	uint64_t to = 0xdead, align = 0xbeef;
	int ret = ops->align_target(align_cases[_i].offset, align_cases[_i].addend, &to, &align);

	ck_assert_int_eq(ret, align_cases[_i].ret);
	if (ret)
		return;
	ck_assert_uint_eq(to, align_cases[_i].to);
	ck_assert_uint_eq(align, align_cases[_i].align);
}
END_TEST

static const struct {
	unsigned int e_flags;
	uint64_t align;
	int ret;
	uint64_t size;
} pad_cases[] = {
	{ EF_RISCV_RVC | EF_RISCV_FLOAT_ABI_DOUBLE, 8, 0, 6 },	/* -march=rv64gc .balign 8 */
	{ EF_RISCV_FLOAT_ABI_DOUBLE, 8, 0, 4 },			/* -march=rv64g */
	{ EF_RISCV_RVC, 16, 0, 14 },
	{ 0, 16, 0, 12 },
	{ EF_RISCV_RVC, 4, 0, 2 },
	{ 0, 4, -1, 0 },		/* GNU as emits nothing: 4 is every instruction's */
	{ EF_RISCV_RVC, 2, -1, 0 },
	{ EF_RISCV_RVC, 12, -1, 0 },	/* not a power of two */
	{ EF_RISCV_RVC, 0, -1, 0 },
};

START_TEST(test_align_padding)
{
	struct arch_align_pad pad;

	memset(&pad, 0x5a, sizeof(pad));
	ck_assert_int_eq(ops->align_padding(pad_cases[_i].e_flags, pad_cases[_i].align, &pad),
			 pad_cases[_i].ret);
	if (pad_cases[_i].ret)
		return;
	ck_assert_uint_eq(pad.size, pad_cases[_i].size);
	ck_assert_uint_eq(pad.type, R_RISCV_ALIGN);
	ck_assert_int_eq(pad.addend, (int64_t)pad_cases[_i].size);
	/* and align_target reads back the alignment it asks for */
	{
		uint64_t to, al;

		ck_assert_int_eq(ops->align_target(0x100 + ops->nop_unit(pad_cases[_i].e_flags),
						   pad.addend, &to, &al), 0);
		ck_assert_uint_eq(al, pad_cases[_i].align);
		ck_assert_uint_eq(to % pad_cases[_i].align, 0);
	}
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

	tc = tcase_create("pcrel");
	tcase_add_loop_test(tc, test_pcrel_decode, 0, ARRAY_SIZE(pdec_cases));
	tcase_add_loop_test(tc, test_pcrel_encode, 0, ARRAY_SIZE(penc_cases));
	tcase_add_loop_test(tc, test_pcrel_identity, 0, 4);
	tcase_add_loop_test(tc, test_insn_len, 0, ARRAY_SIZE(len_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("align");
	tcase_add_test(tc, test_nop_unit);
	tcase_add_loop_test(tc, test_nop_unit_march, 0, ARRAY_SIZE(march_cases));
	tcase_add_loop_test(tc, test_align_target, 0, ARRAY_SIZE(align_cases));
	tcase_add_loop_test(tc, test_align_padding, 0, ARRAY_SIZE(pad_cases));
	suite_add_tcase(s, tc);
	return s;
}
