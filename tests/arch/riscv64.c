// SPDX-License-Identifier: GPL-2.0-only
/*
 * tests/arch/riscv64.c - the riscv64 tests that are not single decode cases
 * (those, with pcrel_decode and insn_len, are tests/arch/riscv64.cases):
 * the arch_ops fields, every first halfword, random windows, the PLT
 * reader, the encoders, pcrel_encode, the NOP unit and the R_RISCV_ALIGN
 * hooks.  Run in the "arch" suite from the table tests/arch/gen.py writes
 * (tests/check_arch.c).
 *
 * Strategy: every case is a row in a table; the hooks other architectures
 * share (PLT slot, encoders, call relocations, pcrel_encode and its round
 * trip, -march NOP unit, alignment) run their rows through the one body of
 * tests/arch/harness.c (arch_add_X), the rest are the tests below; bytes
 * are copied into a heap buffer of exactly the stated length so that
 * ASan catches any read past the end.  The encodings were taken from
 * riscv64-linux-gnu-objdump -d of code built by riscv64-linux-gnu-gcc/as
 * (-pg with and without linker relaxation, -fpatchable-function-entry,
 * `call t0, sym`, `tail`) and the PLT of a small dynamic program, so the
 * expectations are the toolchain's.
 *
 * The pcrel_encode rows come from LLVM's
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

#include "tests/arch/harness.h"
#include "base/base.h"

void arch_tests_riscv64(Suite *s);

static const struct arch_ops *const ops = &arch_riscv64;
#define dup_exact arch_dup_exact

static uint64_t rv_sext64(uint64_t v, unsigned int bits)
{
	uint64_t sign = UINT64_C(1) << (bits - 1);

	v &= (sign << 1) - 1;
	return (v ^ sign) - sign;
}

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

static const struct arch_plt_case plt_cases[] = {
	{ "PLT0", 0x620, 32,
	  { W(0x00002397), W(0x41c30333), W(0x9e83be03), W(0xfd430313),
	    W(0x9e838293), W(0x00135313), W(0x0082b283), W(0x000e0067) }, -ENOENT, 0 },
	{ "PLT0 first 16 bytes", 0x620, 16,
	  { W(0x00002397), W(0x41c30333), W(0x9e83be03), W(0xfd430313) }, -ENOENT, 0 },
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
	{ "short buffer", 0x660, 8, { W(0x00002e17), W(0x9c8e3e03) }, -ENOENT, 0 },
	{ "lw instead of ld (RV32 PLT)", 0x660, 16,
	  { W(0x00002e17), W(0x9c8e2e03), W(0x000e0367), W(0x00000013) }, -ENOENT, 0 },
	{ "jalr ra instead of t1", 0x660, 16,
	  { W(0x00002e17), W(0x9c8e3e03), W(0x000e00e7), W(0x00000013) }, -ENOENT, 0 },
	{ "nop padding", 0x690, 16,
	  { W(0x00000013), W(0x00000013), W(0x00000013), W(0x00000013) }, -ENOENT, 0 },
	{ "empty buffer", 0x660, 0, { 0 }, -ENOENT, 0 },
};

static const struct arch_nops_case nops_cases[] = {
	{ 0, 0, { 0 }, 0 },
	{ 2, 0, { H(0x0001) }, 1 },
	{ 4, 0, { W(0x00000013) }, 1 },
	{ 6, 0, { W(0x00000013), H(0x0001) }, 2 },
	{ 8, 0, { W(0x00000013), W(0x00000013) }, 2 },
	{ 14, 0, { W(0x00000013), W(0x00000013), W(0x00000013), H(0x0001) }, 4 },
	{ 16, 0, { W(0x00000013), W(0x00000013), W(0x00000013), W(0x00000013) }, 4 },
	{ 1, -EINVAL, { 0 }, 0 },
	{ 7, -EINVAL, { 0 }, 0 },
};

static const struct arch_call_case call_cases[] = {
	{ "call _mcount (as assembled)", 0x80001000, 0x80002158, 0,
	  { W(0x00001097), W(0x158080e7) } },
	{ "lo12 negative rounds hi20 up (as assembled)", 0x8000102c, 0x9234582c, 0,
	  { W(0x12345097), W(0x800080e7) } },
	{ "call to itself", 0x1000, 0x1000, 0, { W(0x00000097), W(0x000080e7) } },
	{ "backwards", 0x80001000, 0x80000000, 0, { W(0xfffff097), W(0x000080e7) } },
	{ "largest forward reach", 0x10000000, 0x10000000ull + 0x7ffff7fe, 0,
	  { W(0x7ffff097), W(0x7fe080e7) } },
	{ "one step too far forward", 0x10000000, 0x10000000ull + 0x7ffff800, -ERANGE, { 0 } },
	{ "largest backward reach", 0x90000000, 0x90000000ull - 0x80000800, 0,
	  { W(0x80000097), W(0x800080e7) } },
	{ "one step too far back", 0x90000000, 0x90000000ull - 0x80000802, -ERANGE, { 0 } },
	{ "kernel to user distance", 0xffffffff80000000, 0x1000, -ERANGE, { 0 } },
	{ "wraps below zero", 0, 0xfffffffffffffff0, 0, { W(0x00000097), W(0xff0080e7) } },
	{ "odd target", 0x1000, 0x1001, -ERANGE, { 0 } },
};

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

/* --- PC-relative references: re-encode for a new displacement --- */

static const struct arch_penc_case penc_cases[] = {
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

/*
 * Random 8 bytes for the pcrel round trip (harness.c's test_pcrel_identity);
 * every other round a pair: auipc, then a %pcrel_lo form reading its rd.
 */
static void pcrel_fill(uint8_t *in, uint32_t *x, int n)
{
	for (int b = 0; b < 8; b++) {
		*x = *x * 1664525u + 1013904223u;
		in[b] = (uint8_t)(*x >> 24);
	}
	if (n % 2 == 0) {
		static const uint32_t lo_ops[] = { 0x13, 0x03, 0x07, 0x67, 0x23, 0x27 };
		uint32_t w0 = (uint32_t)in[0] | (uint32_t)in[1] << 8 |
			      (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;
		uint32_t w1 = (uint32_t)in[4] | (uint32_t)in[5] << 8 |
			      (uint32_t)in[6] << 16 | (uint32_t)in[7] << 24;

		w0 = (w0 & ~0x7fu) | 0x17;
		w1 = (w1 & ~(0x7fu | 0x1fu << 15)) | lo_ops[*x % 6] | (w0 >> 7 & 0x1f) << 15;
		if ((w1 & 0x7f) == 0x13 || (w1 & 0x7f) == 0x67)
			w1 &= ~(7u << 12);	/* addi, jalr: funct3 0 */
		for (int b = 0; b < 4; b++) {
			in[b] = (uint8_t)(w0 >> 8 * b);
			in[4 + b] = (uint8_t)(w1 >> 8 * b);
		}
	}
}

static const struct arch_pcrel_gen pcrel_gen = { 0x7f4a7c15u, 8, 20000, pcrel_fill };

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
static const struct arch_march_case march_cases[] = {
	{ "rv64imac_zicsr_zifencei", 2, "c.nop" },
	{ "rv64gc", 2, "c.nop" },
	{ "rv64imafdc_zicsr_zifencei_zihintpause", 2, "c.nop" },
	{ "rv64ima_zicsr_zifencei", 4, "nop" },
	{ "rv64imafd_zicbom_zicboz", 4, "nop" },	/* the c of zicbom is no C extension */
	{ "rv64g", 4, "nop" },
	{ "rv64i -mabi=lp64", 4, "nop" },		/* the token ends at a space */
	{ "rv32imc", 2, "c.nop" },
	{ "armv8-a", 0, NULL },
	{ "", 0, NULL },
};

static const struct arch_align_case align_cases[] = {
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
	{ 0x10, 1 << 20, -ERANGE, 0, 0 },	/* no assembler pads 1 MiB */
	{ 0x10, -1, -ERANGE, 0, 0 },
	{ 0x10, INT64_MIN, -ERANGE, 0, 0 },
};

static const struct arch_pad_case pad_cases[] = {
	{ EF_RISCV_RVC | EF_RISCV_FLOAT_ABI_DOUBLE, 8, 0, 6 },	/* -march=rv64gc .balign 8 */
	{ EF_RISCV_FLOAT_ABI_DOUBLE, 8, 0, 4 },			/* -march=rv64g */
	{ EF_RISCV_RVC, 16, 0, 14 },
	{ 0, 16, 0, 12 },
	{ EF_RISCV_RVC, 4, 0, 2 },
	{ 0, 4, -EINVAL, 0 },		/* GNU as emits nothing: 4 is every instruction's */
	{ EF_RISCV_RVC, 2, -EINVAL, 0 },
	{ EF_RISCV_RVC, 12, -EINVAL, 0 },	/* not a power of two */
	{ EF_RISCV_RVC, 0, -EINVAL, 0 },
};

static const struct arch_reloc_case reloc_cases[] = {
	{ R_RISCV_CALL, 0 },
	{ R_RISCV_CALL_PLT, 0 },
	{ R_RISCV_JAL, 0 },
	{ R_RISCV_RVC_JUMP, -1 },
	{ R_RISCV_PCREL_HI20, -1 },
	{ R_RISCV_RELAX, -1 },
	{ R_RISCV_64, -1 },
	{ R_RISCV_NONE, -1 },
};

static const struct arch_ops_want fields = {
	.name = "riscv64", .machine = EM_RISCV, .insn_align = 2, .call_len = 8,
	.literal_size = 8, .abs64_reloc = R_RISCV_64, .relative_reloc = R_RISCV_RELATIVE,
	.jump_slot_reloc = R_RISCV_JUMP_SLOT, .glob_dat_reloc = 0, .plt_entry_size = 16, .plt_stride = 8,
	.align_reloc = R_RISCV_ALIGN,
};

START_TEST(test_ops_fields)
{
	arch_check_ops_fields(ops, &fields);
}
END_TEST
/*
 * embed (arch/riscv64.c's callops).  The site rows are the 16 bytes from a
 * function's literal on, from riscv64-linux-gnu-objdump -d of objects
 * riscv64-linux-gnu-gcc 12.2 built -O2 -fpatchable-function-entry=8,4
 * (four c.nop each side: 0001) and -march=rv64g =4,2 (two nop each side:
 * 00000013).  The idle form's words are GNU as 2.40's for `auipc t0,
 * 0x10; nop` and the other immediates (0x11, 0xfffff, 0x7ffff):
 *
 *	printf '\t.option norvc\n\tauipc t0, 0x10\n\tnop\n\tauipc t0, 0x11\n...' > d.s
 *	riscv64-linux-gnu-as d.s -o d.o && riscv64-linux-gnu-objdump -d d.o
 *	   0:	00010297	auipc	t0,0x10
 *	   4:	00000013	nop
 *	   8:	00011297	auipc	t0,0x11
 *	   c:	fffff297	auipc	t0,0xfffff
 *	  14:	7ffff297	auipc	t0,0x7ffff
 *
 * The trampoline blob is checked against the listing beside
 * rv_callops_tramp_words in arch/riscv64.c, assembled by GNU as 2.40 with
 * `.option norvc` (riscv64-linux-gnu-as tb.S; riscv64-linux-gnu-ld
 * -Ttext=0x10000; objdump -d), and its PC-relative words against its labels.
 */
#define C4	H(0x0001), H(0x0001), H(0x0001), H(0x0001)
#define N2	W(0x00000013), W(0x00000013)

static const struct rv_site_case {
	uint8_t bytes[16];
	size_t len;
	uint64_t literal;
	int ret;
} rv_site_cases[] = {
	{ { C4, C4 }, 16, 0x10680, ARCH_CALLOPS_OK },		/* =8,4 with C */
	{ { N2, N2 }, 16, 0x106b8, ARCH_CALLOPS_OK },		/* =4,2 without */
	{ { C4, N2 }, 16, 0x10700, ARCH_CALLOPS_OK },		/* a mix is still 8+8 bytes */
	{ { C4, C4 }, 16, 0x10684, ARCH_CALLOPS_MISALIGNED },	/* literal 4 mod 8 */
	{ { C4, C4 }, 16, 0x10682, ARCH_CALLOPS_MISALIGNED },	/* 2 mod 8 (2-aligned C code) */
	{ { C4, C4 }, 15, 0x10680, ARCH_CALLOPS_NONE },		/* short */
	/* the entry already `auipc t0; nop` (embedded), or a body (-pg's function) */
	{ { C4, W(0x00010297), W(0x00000013) }, 16, 0x10680, ARCH_CALLOPS_NONE },
	{ { C4, H(0x0001), H(0x0001), H(0x0001), H(0x9d2d) }, 16, 0x10680, ARCH_CALLOPS_NONE },
	/* 8 bytes that end inside a nop: no literal */
	{ { H(0x0001), H(0x0001), H(0x0001), W(0x00000013), H(0x0001), H(0x0001), H(0x0001) },
	  16, 0x10680, ARCH_CALLOPS_NONE },
};

START_TEST(test_callops_site)
{
	const struct rv_site_case *c = &rv_site_cases[_i];
	uint8_t *buf = dup_exact(c->bytes, c->len);
	struct arch_callops_site site;

	ck_assert_int_eq(ops->callops_site(buf, c->len, c->literal, &site), c->ret);
	if (c->ret == ARCH_CALLOPS_OK) {
		ck_assert_uint_eq(site.entry_off, 8);
		ck_assert_uint_eq(site.call_off, 4);
		ck_assert_uint_eq(site.disabled_off, 0);
		ck_assert_uint_eq(site.disabled_len, 8);
	}
	free(buf);
}
END_TEST

static const struct rv_disabled_case {
	size_t len;
	uint64_t at, tramp;
	int ret;
	uint32_t auipc;
} rv_disabled_cases[] = {
	{ 8, 0x10000, 0x20028, 0, 0x00010297 },		/* lo12 +0x028: hi 0x10 */
	{ 8, 0x10000, 0x20828, 0, 0x00011297 },		/* lo12 -0x7d8: hi rounded up to 0x11 */
	{ 8, 0x20000, 0x1f028, 0, 0xfffff297 },		/* backwards */
	{ 8, 0x10000, 0x10000 + UINT64_C(0x7ffff7fe), 0, 0x7ffff297 },	/* the farthest forward */
	{ 8, 0x10000, 0x10000 + UINT64_C(0x7ffff800), -ERANGE, 0 },	/* hi20 would be 0x80000: backwards */
	{ 8, UINT64_C(0x80010000), UINT64_C(0x80010000) - UINT64_C(0x80000800), 0, 0x80000297 },	/* the farthest back */
	{ 8, UINT64_C(0x80010000), UINT64_C(0x80010000) - UINT64_C(0x80000802), -ERANGE, 0 },
	{ 8, 0x10000, 0x20029, -ERANGE, 0 },			/* an odd target */
	{ 4, 0x10000, 0x20028, -EINVAL, 0 },
	{ 16, 0x10000, 0x20028, -EINVAL, 0 },
};

START_TEST(test_callops_disabled)
{
	const struct rv_disabled_case *c = &rv_disabled_cases[_i];
	uint8_t buf[24], untouched[24];

	memset(buf, 0xaa, sizeof(buf));
	memset(untouched, 0xaa, sizeof(untouched));
	ck_assert_int_eq(ops->callops_disabled(buf, c->len, c->at, c->tramp), c->ret);
	if (c->ret) {
		ck_assert_mem_eq(buf, untouched, sizeof(buf));
		return;
	}
	ck_assert_uint_eq(get_le32(buf), c->auipc);
	ck_assert_uint_eq(get_le32(buf + 4), 0x00000013);
	ck_assert_mem_eq(buf + 8, untouched, sizeof(buf) - 8);
	/* and the jalr the runtime writes completes it: auipc + lo12 = tramp */
	ck_assert_uint_eq(c->at + rv_sext64(c->auipc & 0xfffff000u, 32) +
			  rv_sext64((c->tramp - c->at) & 0xfff, 12), c->tramp);
}
END_TEST

#define TB_ANCHOR	0x00
#define TB_DOPS		0x08
#define TB_NOOP		0x20
#define TB_ENTRY	0x28
#define TB_FAST		0x120
#define TB_DIRECT	0x124
#define TB_SIZE		0x128

/* objdump -d of the linked listing: every code word, from noop on */
static const uint32_t tramp_as[] = {
	0x00008067, 0x00000013, 0xff02b303, 0x00000e17, 0xfd4e0e13, 0x000e3e83, 0x41de0eb3,
	0x01d30333, 0x008e0e93, 0x0dd30e63, 0x01033e83, 0x0c0e9c63, 0xf5010113, 0x00a13023,
	0x00b13423, 0x00c13823, 0x00d13c23, 0x02e13023, 0x02f13423, 0x03013823, 0x03113c23,
	0x04113023, 0x04813423, 0x04513823, 0x04713c23, 0x06a13027, 0x06b13427, 0x06c13827,
	0x06d13c27, 0x08e13027, 0x08f13427, 0x09013827, 0x09113c27, 0x0a813023, 0x0a513423,
	0x0b010413, 0xff828513, 0x00008593, 0x00030613, 0x00010693, 0x00033303, 0x000300e7,
	0x06013507, 0x06813587, 0x07013607, 0x07813687, 0x08013707, 0x08813787, 0x09013807,
	0x09813887, 0x00013503, 0x00813583, 0x01013603, 0x01813683, 0x02013703, 0x02813783,
	0x03013803, 0x03813883, 0x04013083, 0x04813403, 0x05813383, 0x05013283, 0x0b010113,
	0x00028067, 0x00028067, 0x000e8067,
};

/* the PC-relative words and where they go: the anchor, fast, direct */
static const struct {
	unsigned int off, target;
	const char *name;
} tramp_pcrel[] = {
	{ 0x2c, TB_ANCHOR, "auipc" }, { 0x44, TB_FAST, "branch" }, { 0x4c, TB_DIRECT, "branch" },
};

static const uint64_t rv_tramp_addrs[] = { 0x10000, 0x3230, 0x2aaaaaab3230, 0xfffffffffffff000 };

START_TEST(test_callops_tramp)
{
	uint64_t addr = rv_tramp_addrs[_i];
	uint8_t *buf = malloc(TB_SIZE + 8);
	unsigned int k = 0;

	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(ops->callops->tramp_size, TB_SIZE);
	ck_assert_uint_eq(ops->callops->tramp_entry, TB_ENTRY);
	ck_assert_uint_eq(ops->callops->tramp_default_ops, TB_DOPS);
	ck_assert_uint_eq(ops->callops->tramp_noop, TB_NOOP);
	ck_assert_uint_eq(ops->callops->tramp_anchor, TB_ANCHOR);
	memset(buf, 0xaa, TB_SIZE + 8);
	ck_assert_int_eq(ops->callops_tramp(buf, TB_SIZE, addr), 0);
	ck_assert_uint_eq(get_le64(buf + TB_ANCHOR), addr + TB_ANCHOR);
	ck_assert_uint_eq(get_le64(buf + TB_DOPS), addr + TB_NOOP);
	ck_assert_uint_eq(get_le64(buf + TB_DOPS + 8), 0);
	ck_assert_uint_eq(get_le64(buf + TB_DOPS + 16), 0);
	ck_assert_uint_eq(TB_NOOP + 4 * ARRAY_SIZE(tramp_as), TB_SIZE);
	for (size_t i = 0; i < ARRAY_SIZE(tramp_as); i++)
		ck_assert_msg(get_le32(buf + TB_NOOP + 4 * i) == tramp_as[i],
			      "blob word at 0x%zx: %08x, as made %08x", TB_NOOP + 4 * i,
			      get_le32(buf + TB_NOOP + 4 * i), tramp_as[i]);
	for (unsigned int off = TB_SIZE; off < TB_SIZE + 8; off++)
		ck_assert_uint_eq(buf[off], 0xaa);
	for (unsigned int off = TB_NOOP; off < TB_SIZE; off += 4) {
		struct arch_pcrel pc;
		int ret = ops->pcrel_decode(buf + off, TB_SIZE - off, &pc);

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
	free(buf);
}
END_TEST

START_TEST(test_callops_tramp_bad)
{
	static const struct {
		size_t len;
		uint64_t addr;
	} bad[] = {
		{ TB_SIZE - 4, 0x1000 }, { TB_SIZE + 4, 0x1000 }, { 0, 0x1000 },
		{ TB_SIZE, 0x1004 }, { TB_SIZE, 0x1002 },
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

void arch_tests_riscv64(Suite *s)
{
	TCase *tc = tcase_create("riscv64 core");

	tcase_add_test(tc, test_ops_fields);
	tcase_add_loop_test(tc, test_decode_every_halfword, 0, 16);
	tcase_add_loop_test(tc, test_decode_random_windows, 0, 4);
	arch_add_plt_cases(tc, ops, plt_cases, ARRAY_SIZE(plt_cases));
	arch_add_nops_cases(tc, ops, nops_cases, ARRAY_SIZE(nops_cases));
	arch_add_call_cases(tc, ops, call_cases, ARRAY_SIZE(call_cases));
	arch_add_reloc_cases(tc, ops, reloc_cases, ARRAY_SIZE(reloc_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("riscv64 pcrel");
	arch_add_penc_cases(tc, ops, penc_cases, ARRAY_SIZE(penc_cases));
	arch_add_pcrel_identity(tc, ops, &pcrel_gen, 4);
	suite_add_tcase(s, tc);

	tc = tcase_create("riscv64 align");
	tcase_add_test(tc, test_nop_unit);
	arch_add_march_cases(tc, ops, march_cases, ARRAY_SIZE(march_cases));
	arch_add_align_cases(tc, ops, align_cases, ARRAY_SIZE(align_cases));
	arch_add_pad_cases(tc, ops, pad_cases, ARRAY_SIZE(pad_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("riscv64 callops");
	tcase_add_loop_test(tc, test_callops_site, 0, ARRAY_SIZE(rv_site_cases));
	tcase_add_loop_test(tc, test_callops_disabled, 0, ARRAY_SIZE(rv_disabled_cases));
	tcase_add_loop_test(tc, test_callops_tramp, 0, ARRAY_SIZE(rv_tramp_addrs));
	tcase_add_test(tc, test_callops_tramp_bad);
	suite_add_tcase(s, tc);
}
