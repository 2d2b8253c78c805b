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

#include "arch/harness.h"

void arch_tests_riscv64(Suite *s);

static const struct arch_ops *const ops = &arch_riscv64;
#define dup_exact arch_dup_exact

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

static const struct arch_nops_case nops_cases[] = {
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

static const struct arch_call_case call_cases[] = {
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
	{ 0x10, 1 << 20, -1, 0, 0 },	/* no assembler pads 1 MiB */
	{ 0x10, -1, -1, 0, 0 },
	{ 0x10, INT64_MIN, -1, 0, 0 },
};

static const struct arch_pad_case pad_cases[] = {
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
	.jump_slot_reloc = R_RISCV_JUMP_SLOT, .glob_dat_reloc = 0, .plt_entry_size = 16,
	.align_reloc = R_RISCV_ALIGN,
};

START_TEST(test_ops_fields)
{
	arch_check_ops_fields(ops, &fields);
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
}
