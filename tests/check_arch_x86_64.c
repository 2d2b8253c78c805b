// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_arch_x86_64.c - unit tests for the x86-64 decoder, PLT reader and
 * encoders.
 *
 * Strategy: every test is a row in a static table run through
 * tcase_add_loop_test, so a new case is one line of data.  Byte sequences
 * come from `objdump -d` of real binaries (/usr/bin/ls, libc.so.6, small
 * programs linked with -pg/-mfentry, -fcf-protection, -no-pie and -pie);
 * the few hand-made ones say so.  Each decode runs on an exactly sized heap
 * copy so that ASan reports any read past `len`.  Besides single
 * instructions, two contiguous slices of real .text are walked linearly
 * and must land on every one of objdump's instruction boundaries, and a
 * fuzz loop checks that lengths never depend on bytes past the end.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "check_suites.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Decode from an exactly sized heap copy: any over-read is an ASan error. */
static int decode_exact(const void *bytes, size_t len, uint64_t addr, struct arch_insn *insn)
{
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	ck_assert_ptr_nonnull(copy);
	if (len)
		memcpy(copy, bytes, len);
	ret = arch_x86_64.decode(copy, len, addr, insn);
	free(copy);
	return ret;
}

static int plt_slot_exact(const void *bytes, size_t len, uint64_t addr, uint64_t *slot)
{
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	ck_assert_ptr_nonnull(copy);
	if (len)
		memcpy(copy, bytes, len);
	ret = arch_x86_64.plt_slot(copy, len, addr, slot);
	free(copy);
	return ret;
}

START_TEST(test_ops_fields)
{
	const struct arch_ops *a = &arch_x86_64;

	ck_assert_str_eq(a->name, "x86_64");
	ck_assert_uint_eq(a->machine, EM_X86_64);
	ck_assert_uint_eq(a->insn_align, 1);
	ck_assert_uint_eq(a->call_len, 5);
	ck_assert_uint_eq(a->literal_size, 0);
	ck_assert_uint_eq(a->abs64_reloc, R_X86_64_64);
	ck_assert_uint_eq(a->relative_reloc, R_X86_64_RELATIVE);
	ck_assert_uint_eq(a->jump_slot_reloc, R_X86_64_JUMP_SLOT);
	ck_assert_uint_eq(a->glob_dat_reloc, R_X86_64_GLOB_DAT);
	ck_assert_uint_eq(a->plt_entry_size, 16);
	ck_assert_uint_eq(a->align_reloc, 0);
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

/*
 * Classified instructions: every flavour of patch site and its near misses.
 * `bytes` may be longer than `len` when a case checks that decoding stops
 * at the right place; `buflen` is how many bytes the decoder is given.
 */
struct kind_case {
	const char *what;
	const char *bytes;
	size_t buflen;
	uint64_t addr;
	int ret;
	unsigned int len;
	enum arch_insn_kind kind;
	uint64_t target;
	unsigned int disp_off;
};

#define B(s) s, sizeof(s) - 1

static const struct kind_case kind_cases[] = {
	/* -pg -mfentry -fno-pic, linked -no-pie: f2 at 0x401130 calls __fentry__ at 0x401160 */
	{ "fentry call", B("\xe8\x2b\x00\x00\x00"), 0x401130,
	  ARCH_DECODE_OK, 5, INSN_CALL, 0x401160, 1 },
	/* same with -fcf-protection: ENDBR64 first, then the call */
	{ "endbr64", B("\xf3\x0f\x1e\xfa"), 0x401130,
	  ARCH_DECODE_OK, 4, INSN_LANDING, 0, 0 },
	{ "fentry call after endbr64", B("\xe8\x27\x00\x00\x00"), 0x401134,
	  ARCH_DECODE_OK, 5, INSN_CALL, 0x401160, 1 },
	/* -mnop-mcount: the site is already a 5-byte NOP */
	{ "nop5 site", B("\x0f\x1f\x44\x00\x00"), 0x1000,
	  ARCH_DECODE_OK, 5, INSN_NOP, 0, 0 },
	/* -fno-plt (and Debian's PIC -pg): call *__fentry__@GOTPCREL(%rip), from s2.o */
	{ "gotpcrel call, unrelocated", B("\xff\x15\x00\x00\x00\x00"), 0x4,
	  ARCH_DECODE_OK, 6, INSN_CALL_MEM, 0xa, 2 },
	{ "gotpcrel call, forward slot", B("\xff\x15\x12\x34\x00\x00"), 0x1000,
	  ARCH_DECODE_OK, 6, INSN_CALL_MEM, 0x4418, 2 },
	{ "gotpcrel call, backward slot", B("\xff\x15\xf0\xff\xff\xff"), 0x2000,
	  ARCH_DECODE_OK, 6, INSN_CALL_MEM, 0x1ff6, 2 },
	/* notrack call *disp(%rip) (hand-made): the prefix moves the displacement */
	{ "notrack gotpcrel call", B("\x3e\xff\x15\x10\x00\x00\x00"), 0x1000,
	  ARCH_DECODE_OK, 7, INSN_CALL_MEM, 0x1017, 3 },
	/* addr32 call *disp(%eip) (hand-made): the slot address is 32-bit */
	{ "addr32 call *disp(%eip)", B("\x67\xff\x15\x00\x00\x00\x80"), 0x1000,
	  ARCH_DECODE_OK, 7, INSN_CALL_MEM, 0x80001007, 3 },
	/* the same call relaxed by ld to `addr32 call`: -no-pie f2 at 0x401160 */
	{ "addr32 call (no-pie)", B("\x67\xe8\xe6\xff\xff\xff"), 0x401164,
	  ARCH_DECODE_OK, 6, INSN_CALL, 0x401150, 2 },
	{ "addr32 call (pie)", B("\x67\xe8\x26\x00\x00\x00"), 0x1164,
	  ARCH_DECODE_OK, 6, INSN_CALL, 0x1190, 2 },
	/* bnd call (MPX-era glibc, hand-made) */
	{ "bnd call", B("\xf2\xe8\x00\x01\x00\x00"), 0x1000,
	  ARCH_DECODE_OK, 6, INSN_CALL, 0x1106, 2 },
	/* a call to itself: rel32 = -5 */
	{ "call to self", B("\xe8\xfb\xff\xff\xff"), 0x1000,
	  ARCH_DECODE_OK, 5, INSN_CALL, 0x1000, 1 },
	/* -fpatchable-function-entry: runs of single-byte NOPs */
	{ "nop", B("\x90"), 0x1000, ARCH_DECODE_OK, 1, INSN_NOP, 0, 0 },
	{ "nop, more bytes follow", B("\x90\x90\x90"), 0x1000,
	  ARCH_DECODE_OK, 1, INSN_NOP, 0, 0 },
	{ "xchg %ax,%ax", B("\x66\x90"), 0x1000, ARCH_DECODE_OK, 2, INSN_NOP, 0, 0 },
	{ "rex.W nop", B("\x48\x90"), 0x1000, ARCH_DECODE_OK, 2, INSN_NOP, 0, 0 },
	{ "nopl (%rax)", B("\x0f\x1f\x00"), 0x1000, ARCH_DECODE_OK, 3, INSN_NOP, 0, 0 },
	{ "nopl 0(%rax)", B("\x0f\x1f\x40\x00"), 0x1000, ARCH_DECODE_OK, 4, INSN_NOP, 0, 0 },
	{ "nopw 0(%rax,%rax)", B("\x66\x0f\x1f\x44\x00\x00"), 0x1000,
	  ARCH_DECODE_OK, 6, INSN_NOP, 0, 0 },
	{ "nopl 0L(%rax)", B("\x0f\x1f\x80\x00\x00\x00\x00"), 0x1000,
	  ARCH_DECODE_OK, 7, INSN_NOP, 0, 0 },
	{ "nopl 0L(%rax,%rax)", B("\x0f\x1f\x84\x00\x00\x00\x00\x00"), 0x1000,
	  ARCH_DECODE_OK, 8, INSN_NOP, 0, 0 },
	{ "cs nopw (ls)", B("\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00"), 0x4726,
	  ARCH_DECODE_OK, 10, INSN_NOP, 0, 0 },
	{ "data16 cs nopw", B("\x66\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00"), 0x1000,
	  ARCH_DECODE_OK, 11, INSN_NOP, 0, 0 },
	{ "nop %eax (register form)", B("\x0f\x1f\xc0"), 0x1000,
	  ARCH_DECODE_OK, 3, INSN_NOP, 0, 0 },
	/* 15 bytes: the longest legal NOP */
	{ "15-byte nop", B("\x66\x66\x66\x66\x66\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00"),
	  0x1000, ARCH_DECODE_OK, 15, INSN_NOP, 0, 0 },
	/* direct jumps */
	{ "jmp rel32", B("\xe9\xe0\xff\xff\xff"), 0x40103b,
	  ARCH_DECODE_OK, 5, INSN_BRANCH, 0x401020, 1 },
	{ "jmp rel8 forward", B("\xeb\x1b"), 0x16d756,
	  ARCH_DECODE_OK, 2, INSN_BRANCH, 0x16d773, 1 },
	{ "jmp rel8 to self", B("\xeb\xfe"), 0x1000, ARCH_DECODE_OK, 2, INSN_BRANCH, 0x1000, 1 },
	{ "jmp rel8 backward", B("\xeb\x80"), 0x1000, ARCH_DECODE_OK, 2, INSN_BRANCH, 0xf82, 1 },

	/* near misses */
	{ "call elsewhere", B("\xe8\x0d\x00\x00\x00"), 0x40113e,
	  ARCH_DECODE_OK, 5, INSN_CALL, 0x401150, 1 },
	{ "xchg %eax,%r8d is no nop", B("\x41\x90"), 0x1000, ARCH_DECODE_OK, 2, INSN_OTHER, 0, 0 },
	{ "pause is no nop", B("\xf3\x90"), 0x1000, ARCH_DECODE_OK, 2, INSN_OTHER, 0, 0 },
	{ "nopl /1 is a hint, not NOP", B("\x0f\x1f\x48\x00"), 0x1000,
	  ARCH_DECODE_OK, 4, INSN_OTHER, 0, 0 },
	{ "endbr32 is no landing pad", B("\xf3\x0f\x1e\xfb"), 0x1000,
	  ARCH_DECODE_OK, 4, INSN_OTHER, 0, 0 },
	{ "endbr64 without F3", B("\x0f\x1e\xfa"), 0x1000, ARCH_DECODE_OK, 3, INSN_OTHER, 0, 0 },
	{ "jmp *disp(%rip) is no call", B("\xff\x25\xca\x2f\x00\x00"), 0x401030,
	  ARCH_DECODE_OK, 6, INSN_OTHER, 0, 0 },
	{ "call *abs32 is no rip call", B("\xff\x14\x25\x00\x10\x00\x00"), 0x1000,
	  ARCH_DECODE_OK, 7, INSN_OTHER, 0, 0 },
	{ "call *%rax", B("\xff\xd0"), 0x1000, ARCH_DECODE_OK, 2, INSN_OTHER, 0, 0 },
	{ "push *disp(%rip) (PLT0)", B("\xff\x35\xca\x2f\x00\x00"), 0x401020,
	  ARCH_DECODE_OK, 6, INSN_OTHER, 0, 0 },
	{ "jcc is not a branch site", B("\x0f\x84\x00\x01\x00\x00"), 0x1000,
	  ARCH_DECODE_OK, 6, INSN_OTHER, 0, 0 },
	{ "call truncated by one byte", B("\xe8\x00\x00\x00"), 0x1000,
	  ARCH_DECODE_TRUNC, 0, INSN_OTHER, 0, 0 },
	{ "call opcode alone", B("\xe8"), 0x1000, ARCH_DECODE_TRUNC, 0, INSN_OTHER, 0, 0 },
	{ "addr32 call truncated", B("\x67\xe8\x00"), 0x1000,
	  ARCH_DECODE_TRUNC, 0, INSN_OTHER, 0, 0 },
	{ "gotpcrel call truncated", B("\xff\x15\x00\x00"), 0x1000,
	  ARCH_DECODE_TRUNC, 0, INSN_OTHER, 0, 0 },
	{ "nop5 truncated", B("\x0f\x1f\x44\x00"), 0x1000, ARCH_DECODE_TRUNC, 0, INSN_OTHER, 0, 0 },
	{ "prefix only", B("\x66"), 0x1000, ARCH_DECODE_TRUNC, 0, INSN_OTHER, 0, 0 },
	{ "empty buffer", "", 0, 0x1000, ARCH_DECODE_TRUNC, 0, INSN_OTHER, 0, 0 },
};

START_TEST(test_kind)
{
	const struct kind_case *c = &kind_cases[_i];
	struct arch_insn insn;
	int ret = decode_exact(c->bytes, c->buflen, c->addr, &insn);

	ck_assert_msg(ret == c->ret, "%s: ret %d, want %d", c->what, ret, c->ret);
	if (ret != ARCH_DECODE_OK)
		return;
	ck_assert_msg(insn.len == c->len, "%s: len %u, want %u", c->what, insn.len, c->len);
	ck_assert_msg(insn.kind == c->kind, "%s: kind %d, want %d", c->what, insn.kind, c->kind);
	if (c->kind == INSN_CALL || c->kind == INSN_CALL_MEM || c->kind == INSN_BRANCH) {
		ck_assert_msg(insn.target == c->target, "%s: target %#llx, want %#llx", c->what,
			      (unsigned long long)insn.target, (unsigned long long)c->target);
		ck_assert_msg(insn.disp_off == c->disp_off, "%s: disp_off %u, want %u", c->what,
			      insn.disp_off, c->disp_off);
	}
}
END_TEST

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
 * Lengths under the special rules: group 3 immediates, moffs, imm64,
 * ENTER, 66 vs REX.W, ModRM/SIB/displacement forms, VEX/EVEX/XOP escapes,
 * and the 15-byte limit.  Hand-assembled and checked against objdump -d,
 * which agrees except where marked: it prints a REX that a legacy prefix
 * cancels as an instruction of its own, follows AMD for 66 on near
 * branches (rel16; Intel and this decoder keep rel32), and decodes VEX and
 * EVEX after 66/F2/F3/REX, which #UD.
 */
struct len_rule_case {
	const char *what;
	const char *bytes;
	size_t buflen;
	int ret;
	unsigned int len;
};

static const struct len_rule_case len_rule_cases[] = {
	{ "test $1,%al (F6 /0 ib)", B("\xf6\xc0\x01"), ARCH_DECODE_OK, 3 },
	{ "test $1,5(%rax) (F6 /1 alias)", B("\xf6\x48\x05\x01"), ARCH_DECODE_OK, 4 },
	{ "not %al (F6 /2, no imm)", B("\xf6\xd0"), ARCH_DECODE_OK, 2 },
	{ "test $imm32,%eax (F7 /0 id)", B("\xf7\xc0\x01\x00\x00\x00"), ARCH_DECODE_OK, 6 },
	{ "test $imm16,%ax (66 F7 /0 iw)", B("\x66\xf7\xc0\x01\x00"), ARCH_DECODE_OK, 5 },
	{ "test $imm32,%rax (REX.W F7)", B("\x48\xf7\xc0\x01\x00\x00\x00"), ARCH_DECODE_OK, 7 },
	{ "neg %eax (F7 /3)", B("\xf7\xd8"), ARCH_DECODE_OK, 2 },
	{ "movabs 0x..,%al (A0 moffs64)", B("\xa0\x88\x77\x66\x55\x44\x33\x22\x11"),
	  ARCH_DECODE_OK, 9 },
	{ "movabs %rax,0x.. (48 A3)", B("\x48\xa3\x88\x77\x66\x55\x44\x33\x22\x11"),
	  ARCH_DECODE_OK, 10 },
	{ "addr32 mov 0x..,%al (67 A0 moffs32)", B("\x67\xa0\x44\x33\x22\x11"), ARCH_DECODE_OK, 6 },
	{ "movabs $imm64,%rax", B("\x48\xb8\x88\x77\x66\x55\x44\x33\x22\x11"), ARCH_DECODE_OK, 10 },
	{ "mov $imm32,%eax", B("\xb8\x01\x00\x00\x00"), ARCH_DECODE_OK, 5 },
	{ "mov $imm16,%ax", B("\x66\xb8\x01\x00"), ARCH_DECODE_OK, 4 },
	{ "mov $imm32,%r8d (REX.B only)", B("\x41\xb8\x01\x00\x00\x00"), ARCH_DECODE_OK, 6 },
	{ "enter $16,$0", B("\xc8\x10\x00\x00"), ARCH_DECODE_OK, 4 },
	{ "ret $8", B("\xc2\x08\x00"), ARCH_DECODE_OK, 3 },
	{ "pushw $imm16", B("\x66\x68\x34\x12"), ARCH_DECODE_OK, 4 },
	{ "push $imm32", B("\x68\x00\x00\x00\x00"), ARCH_DECODE_OK, 5 },
	{ "REX.W beats 66: add $imm32,%rax", B("\x66\x48\x81\xc0\x01\x00\x00\x00"),
	  ARCH_DECODE_OK, 8 },
	/* objdump: differs */
	{ "REX before 66 is ignored: add $imm16,%ax", B("\x48\x66\x81\xc0\x01\x00"),
	  ARCH_DECODE_OK, 6 },
	{ "mov (%rsp),%eax (SIB)", B("\x8b\x04\x24"), ARCH_DECODE_OK, 3 },
	{ "mov 8(%rsp),%eax (SIB disp8)", B("\x8b\x44\x24\x08"), ARCH_DECODE_OK, 4 },
	{ "mov 0x100(%rsp),%eax (SIB disp32)", B("\x8b\x84\x24\x00\x01\x00\x00"),
	  ARCH_DECODE_OK, 7 },
	{ "mov abs32,%eax (SIB, no base)", B("\x8b\x04\x25\x00\x10\x00\x00"), ARCH_DECODE_OK, 7 },
	{ "mov 0(,%rax,8),%rax", B("\x48\x8b\x04\xc5\x00\x10\x00\x00"), ARCH_DECODE_OK, 8 },
	{ "mov 0(%rbp),%eax (disp8)", B("\x8b\x45\x00"), ARCH_DECODE_OK, 3 },
	{ "mov 0(%rip),%eax", B("\x8b\x05\x00\x00\x00\x00"), ARCH_DECODE_OK, 6 },
	{ "mov 0(%eip),%eax", B("\x67\x8b\x05\x00\x00\x00\x00"), ARCH_DECODE_OK, 7 },
	{ "mov %cr0,%rax", B("\x0f\x20\xc0"), ARCH_DECODE_OK, 3 },
	{ "mov %cr0,%rax (mod bits ignored)", B("\x0f\x20\x05"), ARCH_DECODE_OK, 3 },
	{ "pop %rax (8F /0)", B("\x8f\xc0"), ARCH_DECODE_OK, 2 },
	{ "pop (%rax)", B("\x8f\x00"), ARCH_DECODE_OK, 2 },
	{ "xop map 9: blcfill", B("\x8f\xe9\x78\x01\xc8"), ARCH_DECODE_OK, 5 },
	{ "xop map 8: vprotb $5", B("\x8f\xe8\x78\xc0\xc1\x05"), ARCH_DECODE_OK, 6 },
	{ "xop map A: bextr $imm32", B("\x8f\xea\x78\x10\xc0\x01\x02\x00\x00"), ARCH_DECODE_OK, 9 },
	{ "xop map B does not exist", B("\x8f\xeb\x78\x10\xc0\x00"), ARCH_DECODE_BAD, 0 },
	{ "extrq $1,$2,%xmm0 (66 0F 78 ib ib)", B("\x66\x0f\x78\xc0\x01\x02"), ARCH_DECODE_OK, 6 },
	{ "vmread %rax,%rax (0F 78)", B("\x0f\x78\xc0"), ARCH_DECODE_OK, 3 },
	{ "xbegin rel32", B("\xc7\xf8\x00\x00\x00\x00"), ARCH_DECODE_OK, 6 },
	{ "xabort $1", B("\xc6\xf8\x01"), ARCH_DECODE_OK, 3 },
	{ "bt $1,%eax (0F BA /4)", B("\x0f\xba\xe0\x01"), ARCH_DECODE_OK, 4 },
	{ "push 8(%rax) (FF /6)", B("\xff\x70\x08"), ARCH_DECODE_OK, 3 },
	{ "dec %al (FE /1)", B("\xfe\xc8"), ARCH_DECODE_OK, 2 },
	{ "pfadd %mm1,%mm0 (3DNow!)", B("\x0f\x0f\xc1\x9e"), ARCH_DECODE_OK, 4 },
	{ "pavgusb %mm0,%mm7 (libpostproc 3234)", B("\x0f\x0f\xf8\xbf"), ARCH_DECODE_OK, 4 },
	{ "pfmul -0x26(%eax),%mm5 (3DNow!)", B("\x67\x0f\x0f\x68\xda\xb4"), ARCH_DECODE_OK, 6 },
	{ "palignr $8,%mm1,%mm0 (0F 3A ib)", B("\x0f\x3a\x0f\xc1\x08"), ARCH_DECODE_OK, 5 },
	{ "crc32q %rcx,%rax (0F 38)", B("\xf2\x48\x0f\x38\xf1\xc1"), ARCH_DECODE_OK, 6 },
	/* objdump: differs (AMD) */
	{ "66 on jcc rel32 is ignored", B("\x66\x0f\x84\x00\x00\x00\x00"), ARCH_DECODE_OK, 7 },
	{ "66 on jmp rel32 is ignored", B("\x66\xe9\x00\x00\x00\x00"), ARCH_DECODE_OK, 6 },
	{ "vzeroupper (VEX 77, no ModRM)", B("\xc5\xf8\x77"), ARCH_DECODE_OK, 3 },
	{ "vpshufd $0,%ymm0,%ymm0 (VEX imm8)", B("\xc5\xfd\x70\xc0\x00"), ARCH_DECODE_OK, 5 },
	{ "vpermq $0x4e (VEX 0F3A)", B("\xc4\xe3\xfd\x00\xc0\x4e"), ARCH_DECODE_OK, 6 },
	{ "vmovdqu64 disp8*N (EVEX)", B("\x62\xe1\xfe\x48\x6f\x6e\x01"), ARCH_DECODE_OK, 7 },
	{ "vaddph (EVEX map 5)", B("\x62\xf5\x74\x48\x58\xc2"), ARCH_DECODE_OK, 6 },
	{ "vfmadd132ph (EVEX map 6)", B("\x62\xf6\x75\x48\x98\xc2"), ARCH_DECODE_OK, 6 },
	{ "vcvtudq2pd (EVEX 0F 7A)", B("\x62\xf1\x7e\x48\x7a\xc1"), ARCH_DECODE_OK, 6 },
	{ "vcvttps2udq (EVEX 0F 78, no imm)", B("\x62\xf1\x7c\x48\x78\xc1"), ARCH_DECODE_OK, 6 },
	{ "vcvtusi2sd (EVEX 0F 7B)", B("\x62\xf1\x7f\x08\x7b\xc0"), ARCH_DECODE_OK, 6 },
	{ "segment prefix before VEX", B("\x64\xc5\xfa\x6f\x00"), ARCH_DECODE_OK, 5 },

	/* invalid in 64-bit mode */
	{ "push %es", B("\x06"), ARCH_DECODE_BAD, 0 },
	{ "pop %es", B("\x07"), ARCH_DECODE_BAD, 0 },
	{ "push %cs", B("\x0e"), ARCH_DECODE_BAD, 0 },
	{ "push %ss", B("\x16"), ARCH_DECODE_BAD, 0 },
	{ "pop %ss", B("\x17"), ARCH_DECODE_BAD, 0 },
	{ "push %ds", B("\x1e"), ARCH_DECODE_BAD, 0 },
	{ "pop %ds", B("\x1f"), ARCH_DECODE_BAD, 0 },
	{ "daa", B("\x27"), ARCH_DECODE_BAD, 0 },
	{ "das", B("\x2f"), ARCH_DECODE_BAD, 0 },
	{ "aaa", B("\x37"), ARCH_DECODE_BAD, 0 },
	{ "aas", B("\x3f"), ARCH_DECODE_BAD, 0 },
	{ "pusha", B("\x60"), ARCH_DECODE_BAD, 0 },
	{ "popa", B("\x61"), ARCH_DECODE_BAD, 0 },
	{ "82 /0 ib", B("\x82\xc0\x01"), ARCH_DECODE_BAD, 0 },
	{ "lcall ptr16:32", B("\x9a\x00\x00\x00\x00\x00\x00"), ARCH_DECODE_BAD, 0 },
	{ "into", B("\xce"), ARCH_DECODE_BAD, 0 },
	{ "aam", B("\xd4\x0a"), ARCH_DECODE_BAD, 0 },
	{ "aad", B("\xd5\x0a"), ARCH_DECODE_BAD, 0 },
	{ "salc", B("\xd6"), ARCH_DECODE_BAD, 0 },
	{ "ljmp ptr16:32", B("\xea\x00\x00\x00\x00\x00\x00"), ARCH_DECODE_BAD, 0 },
	{ "0F 04", B("\x0f\x04"), ARCH_DECODE_BAD, 0 },
	{ "mov imm8 is C6 /0 only", B("\xc6\x48\x00\x00"), ARCH_DECODE_BAD, 0 },
	{ "C7 /1", B("\xc7\xc8\x00\x00\x00\x00"), ARCH_DECODE_BAD, 0 },
	{ "C7 /7 other than xbegin", B("\xc7\xf9\x00\x00\x00\x00"), ARCH_DECODE_BAD, 0 },
	{ "FE /2", B("\xfe\xd0"), ARCH_DECODE_BAD, 0 },
	{ "FF /7", B("\xff\xf8"), ARCH_DECODE_BAD, 0 },
	{ "8F /4 (not XOP)", B("\x8f\xe0"), ARCH_DECODE_BAD, 0 },
	{ "0F BA /0", B("\x0f\xba\xc0\x01"), ARCH_DECODE_BAD, 0 },
	{ "0F 0A", B("\x0f\x0a"), ARCH_DECODE_BAD, 0 },
	{ "mov %tr,%eax", B("\x0f\x24\xc0"), ARCH_DECODE_BAD, 0 },
	{ "0F 7A", B("\x0f\x7a\xc0"), ARCH_DECODE_BAD, 0 },
	/* objdump: differs for the next three */
	{ "VEX after REX", B("\x48\xc5\xf8\x77"), ARCH_DECODE_BAD, 0 },
	{ "VEX after 66", B("\x66\xc5\xf9\x6f\xc1"), ARCH_DECODE_BAD, 0 },
	{ "EVEX after F3", B("\xf3\x62\xe1\xfe\x48\x6f\x06"), ARCH_DECODE_BAD, 0 },
	{ "VEX3 map 0", B("\xc4\xe0\x7d\x6f\xc1"), ARCH_DECODE_BAD, 0 },
	{ "VEX3 map 4", B("\xc4\xe4\x7d\x6f\xc1"), ARCH_DECODE_BAD, 0 },
	{ "VEX jcc", B("\xc5\xf8\x84\x00\x00\x00\x00"), ARCH_DECODE_BAD, 0 },
	{ "EVEX map 0", B("\x62\xf0\x7c\x48\x10\xc1"), ARCH_DECODE_BAD, 0 },
	{ "EVEX map 4 (APX)", B("\x62\xf4\x7c\x08\x01\xc1"), ARCH_DECODE_BAD, 0 },
	{ "EVEX map 7", B("\x62\xf7\x7c\x08\x01\xc1"), ARCH_DECODE_BAD, 0 },
	{ "EVEX vzeroupper", B("\x62\xf1\x7c\x48\x77\xc0"), ARCH_DECODE_BAD, 0 },
	{ "16 bytes", B("\x66\x66\x66\x66\x66\x66\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00"),
	  ARCH_DECODE_BAD, 0 },
	{ "15 prefixes", B("\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x90"),
	  ARCH_DECODE_BAD, 0 },
	/* too long already decides, even though the buffer ends first */
	{ "over 15 bytes beats truncation",
	  B("\x66\x66\x66\x66\x66\x66\x66\x66\x66\x2e\x0f\x1f\x84\x00"),
	  ARCH_DECODE_BAD, 0 },

	/* truncated in each part of the instruction */
	{ "trunc in VEX3 prefix", B("\xc4\xe3"), ARCH_DECODE_TRUNC, 0 },
	{ "trunc in EVEX prefix", B("\x62\xf1\x7c"), ARCH_DECODE_TRUNC, 0 },
	{ "trunc after 0F", B("\x0f"), ARCH_DECODE_TRUNC, 0 },
	{ "trunc after 0F 38", B("\x0f\x38"), ARCH_DECODE_TRUNC, 0 },
	{ "trunc before ModRM", B("\x48\x8b"), ARCH_DECODE_TRUNC, 0 },
	{ "trunc before SIB", B("\x8b\x04"), ARCH_DECODE_TRUNC, 0 },
	{ "trunc in disp32", B("\x8b\x05\x00\x00"), ARCH_DECODE_TRUNC, 0 },
	{ "trunc in imm64", B("\x48\xb8\x00\x00\x00\x00\x00\x00\x00"), ARCH_DECODE_TRUNC, 0 },
	{ "trunc in ENTER", B("\xc8\x10\x00"), ARCH_DECODE_TRUNC, 0 },
	{ "trunc before F7 imm", B("\xf7\xc0\x00\x00\x00"), ARCH_DECODE_TRUNC, 0 },
};

START_TEST(test_len_rules)
{
	const struct len_rule_case *c = &len_rule_cases[_i];
	struct arch_insn insn;
	int ret = decode_exact(c->bytes, c->buflen, 0x1000, &insn);

	ck_assert_msg(ret == c->ret, "%s: ret %d, want %d", c->what, ret, c->ret);
	if (ret == ARCH_DECODE_OK)
		ck_assert_msg(insn.len == c->len, "%s: len %u, want %u", c->what, insn.len, c->len);
}
END_TEST

/*
 * Instruction lengths straight from objdump -d of /usr/bin/ls and
 * /usr/lib/x86_64-linux-gnu/libc.so.6 (Debian 12): one instruction per
 * distinct mnemonic/prefix/operand shape, legacy, VEX and EVEX.
 */
struct len_case {
	const char *bytes;
	unsigned int len;
	const char *what;
};

static const struct len_case len_cases[] = {
	{ "\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00", 10, "ls 4726: cs nopw 0x0(%rax,%rax,1)" },
	{ "\x89\x04\x24", 3, "ls 487b: mov %eax,(%rsp)" },
	{ "\x22\x05\x33\x0c\x02\x00", 6, "ls 4a1f: and 0x20c33(%rip),%al" },
	{ "\x41\x5c", 2, "ls 4d11: pop %r12" },
	{ "\x90", 1, "ls 4dff: nop" },
	{ "\x0f\x16\x05\x10\x06\x02\x00", 7, "ls 5009: movhps 0x20610(%rip),%xmm0" },
	{ "\x48\xb9\xff\xff\xff\xff\xff\xff\xff\x7f", 10,
	  "ls 534b: movabs $0x7fffffffffffffff,%rcx" },
	{ "\x48\x0f\x44\xf0", 4, "ls 54c1: cmove %rax,%rsi" },
	{ "\x0f\x89\x00\xec\xff\xff", 6, "ls 5cce: jns 48d4" },
	{ "\x48\x8d\x6c\x05\x01", 5, "ls 5d46: lea 0x1(%rbp,%rax,1),%rbp" },
	{ "\x0f\x1f\x00", 3, "ls 62a5: nopl (%rax)" },
	{ "\x66\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00", 11,
	  "ls 6301: data16 cs nopw 0x0(%rax,%rax,1)" },
	{ "\xc1\xe7\x04", 3, "ls 6387: shl $0x4,%edi" },
	{ "\x66\x41\xc1\xe8\x0b", 5, "ls 68c9: shr $0xb,%r8w" },
	{ "\x66\x0f\x6e\xc1", 4, "ls 6bcb: movd %ecx,%xmm0" },
	{ "\x66\x0f\x62\xc2", 4, "ls 6bdd: punpckldq %xmm2,%xmm0" },
	{ "\x0f\x29\x46\x10", 4, "ls 6f74: movaps %xmm0,0x10(%rsi)" },
	{ "\x48\x83\x3c\x24\x01", 5, "ls 7131: cmpq $0x1,(%rsp)" },
	{ "\x48\xf7\xe2", 3, "ls 7b3e: mul %rdx" },
	{ "\xf3\x48\xab", 3, "ls 9058: rep stos %rax,%es:(%rdi)" },
	{ "\x48\xd1\x25\xf0\xbe\x01\x00", 7, "ls 9801: shlq 0x1bef0(%rip)" },
	{ "\x40\x0f\x9f\xc7", 4, "ls a04b: setg %dil" },
	{ "\x48\x19\xc9", 3, "ls b8f6: sbb %rcx,%rcx" },
	{ "\x41\x0f\x49\xc6", 4, "ls c74a: cmovns %r14d,%eax" },
	{ "\x66\x0f\xc6\xc0\x01", 5, "ls cf41: shufpd $0x1,%xmm0,%xmm0" },
	{ "\x48\x0f\x46\xce", 4, "ls dece: cmovbe %rsi,%rcx" },
	{ "\x7f\x3f", 2, "ls f4df: jg f520" },
	{ "\xf3\x48\x0f\x2c\xf9", 5, "ls fd7f: cvttss2si %xmm1,%rdi" },
	{ "\x48\x0f\xba\xff\x3f", 5, "ls fd84: btc $0x3f,%rdi" },
	{ "\xf3\x0f\x58\xc9", 4, "ls fe5c: addss %xmm1,%xmm1" },
	{ "\xf2\x0f\x5e\xc1", 4, "ls 101a3: divsd %xmm1,%xmm0" },
	{ "\xf3\x0f\x59\xc4", 4, "ls 10941: mulss %xmm4,%xmm0" },
	{ "\x4c\x0f\x47\xf0", 4, "ls 10e10: cmova %rax,%r14" },
	{ "\xdb\x44\x24\x44", 4, "ls 10e8f: fildl 0x44(%rsp)" },
	{ "\xd9\xca", 2, "ls 10ea2: fxch %st(2)" },
	{ "\xde\xf1", 2, "ls 10ec4: fdivp %st,%st(1)" },
	{ "\xdb\x6c\x24\x30", 4, "ls 10f36: fldt 0x30(%rsp)" },
	{ "\xd9\x7c\x24\x4e", 4, "ls 110c3: fnstcw 0x4e(%rsp)" },
	{ "\x0f\x9a\xc2", 3, "ls 11110: setp %dl" },
	{ "\xdc\xe2", 2, "ls 11734: fsub %st,%st(2)" },
	{ "\x49\xf7\xe9", 3, "ls 11f4a: imul %r9" },
	{ "\x41\x0f\xbe\x75\x01", 5, "ls 12c92: movsbl 0x1(%r13),%esi" },
	{ "\x48\x63\x50\x14", 4, "ls 13612: movslq 0x14(%rax),%rdx" },
	{ "\x0f\x94\x44\x24\x30", 5, "ls 13a90: sete 0x30(%rsp)" },
	{ "\x83\x64\x24\x70\xfd", 5, "ls 15097: andl $0xfffffffd,0x70(%rsp)" },
	{ "\x73\x05", 2, "ls 15ef5: jae 15efc" },
	{ "\x0f\xa3\xce", 3, "ls 16aff: bt %ecx,%esi" },
	{ "\x0f\x97\xc2", 3, "ls 181f8: seta %dl" },
	{ "\x0f\x80\x8a\x00\x00\x00", 6, "ls 18261: jo 182f1" },
	{ "\x49\xf7\xf8", 3, "ls 182ca: idiv %r8" },
	{ "\x0f\x0b", 2, "libc 26ddc: ud2" },
	{ "\x0f\x43\xc6", 3, "libc 3108c: cmovae %esi,%eax" },
	{ "\x35\x15\x11\x03\x20", 5, "libc 330b3: xor $0x20031115,%eax" },
	{ "\x89\x54\xc3\x38", 4, "libc 332f1: mov %edx,0x38(%rbx,%rax,8)" },
	{ "\x41\x0f\x93\xc4", 4, "libc 35a49: setae %r12b" },
	{ "\xd9\xfd", 2, "libc 3aecc: fscale" },
	{ "\xd8\xc0", 2, "libc 3af72: fadd %st(0),%st" },
	{ "\xdb\xe9", 2, "libc 3afac: fucomi %st(1),%st" },
	{ "\x0f\x55\xc3", 3, "libc 3b451: andnps %xmm3,%xmm0" },
	{ "\xf3\x0f\x59\x05\x30\x63\x16\x00", 8, "libc 3b4d0: mulss 0x166330(%rip),%xmm0" },
	{ "\xdb\x28", 2, "libc 42050: fldt (%rax)" },
	{ "\x0f\x57\x05\x40\x97\x15\x00", 7, "libc 475b9: xorps 0x159740(%rip),%xmm0" },
	{ "\xde\xc1", 2, "libc 49320: faddp %st,%st(1)" },
	{ "\x4c\x0f\xa5\xd0", 4, "libc 4ceaa: shld %cl,%r10,%rax" },
	{ "\x83\x74\x24\x28\x01", 5, "libc 4d742: xorl $0x1,0x28(%rsp)" },
	{ "\x48\x0f\x45\x8d\x18\xff\xff\xff", 8, "libc 52e96: cmovne -0xe8(%rbp),%rcx" },
	{ "\x66\x44\x0f\x50\xe0", 5, "libc 53148: movmskpd %xmm0,%r12d" },
	{ "\xd8\xf1", 2, "libc 57774: fdiv %st(1),%st" },
	{ "\x48\xf7\xa5\x98\xf7\xff\xff", 7, "libc 5a0f7: mulq -0x868(%rbp)" },
	{ "\x0f\x80\x5b\x01\x00\x00", 6, "libc 5b40e: jo 5b56f" },
	{ "\x0f\x44\x85\xe4\xf9\xff\xff", 7, "libc 65a25: cmove -0x61c(%rbp),%eax" },
	{ "\xf3\xa4", 2, "libc 66315: rep movsb %ds:(%rsi),%es:(%rdi)" },
	{ "\x66\x0f\x60\xc0", 4, "libc 77246: punpcklbw %xmm0,%xmm0" },
	{ "\x64\x48\xc7\x45\x00\x00\x00\x00\x00", 9, "libc 84f80: movq $0x0,%fs:0x0(%rbp)" },
	{ "\xf0\x0f\xba\xaf\x08\x03\x00\x00\x05", 9, "libc 86580: lock btsl $0x5,0x308(%rdi)" },
	{ "\x49\x83\x66\x08\xfe", 5, "libc 96345: andq $0xfffffffffffffffe,0x8(%r14)" },
	{ "\x0f\xc6\x44\x24\x30\x88", 6, "libc 99ecb: shufps $0x88,0x30(%rsp),%xmm0" },
	{ "\x80\x72\xff\x2a", 4, "libc 9bf94: xorb $0x2a,-0x1(%rdx)" },
	{ "\x66\x0f\xde\xd8", 4, "libc a266d: pmaxub %xmm0,%xmm3" },
	{ "\x0f\x10\x06", 3, "libc a28a5: movups (%rsi),%xmm0" },
	{ "\xfd", 1, "libc a2d38: std" },
	{ "\xf3\x42\x0f\x6f\x14\x10", 6, "libc a956a: movdqu (%rax,%r10,1),%xmm2" },
	{ "\xc4\xe2\xa0\xf5\xda", 5, "libc afef1: bzhi %r11,%rdx,%rbx" },
	{ "\xc4\xe1\xfb\x92\xcb", 5, "libc afef6: kmovq %rbx,%k1" },
	{ "\x62\xf2\x76\x49\x26\xe1", 6, "libc aff01: vptestnmb %zmm1,%zmm1,%k4{%k1}" },
	{ "\xc4\xe2\xa0\xf3\xd2", 5, "libc aff0c: blsmsk %rdx,%r11" },
	{ "\x62\xf3\x5d\x4a\x3f\xc1\x04", 7, "libc affb1: vpcmpneqb %zmm1,%zmm4,%k0{%k2}" },
	{ "\xc4\xe1\xf8\x98\xc0", 5, "libc affb8: kortestq %k0,%k0" },
	{ "\xc4\xe1\xec\x46\xd2", 5, "libc b0178: kxnorq %k2,%k2,%k2" },
	{ "\xde\xe9", 2, "libc c3702: fsubrp %st,%st(1)" },
	{ "\x66\x0f\xdb\x04\x31", 5, "libc e52d4: pand (%rcx,%rsi,1),%xmm0" },
	{ "\x0f\x29\x9c\x04\x90\x28\x00\x00", 8, "libc e54f4: movaps %xmm3,0x2890(%rsp,%rax,1)" },
	{ "\x0f\x4e\x44\x24\x70", 5, "libc e5ef0: cmovle 0x70(%rsp),%eax" },
	{ "\xe8\xb6\xfc\xff\xff", 5, "libc ee8a5: call ee560" },
	{ "\x0f\xbe\x4c\x01\x01", 5, "libc f1fe5: movsbl 0x1(%rcx,%rax,1),%ecx" },
	{ "\x66\x83\x4b\x64\x01", 5, "libc fbd7c: orw $0x1,0x64(%rbx)" },
	{ "\x0f\x8a\xf6\x00\x00\x00", 6, "libc 102014: jp 102110" },
	{ "\xdd\x05\x8a\xed\x09\x00", 6, "libc 102418: fldl 0x9ed8a(%rip)" },
	{ "\x0f\x01\xef", 3, "libc 109352: wrpkru" },
	{ "\xf3\x0f\x2c\xc0", 4, "libc 10bda6: cvttss2si %xmm0,%eax" },
	{ "\xc4\xe2\x7d\x78\xc0", 5, "libc 152089: vpbroadcastb %xmm0,%ymm0" },
	{ "\xc5\xfd\xd7\xc1", 4, "libc 1520a4: vpmovmskb %ymm1,%eax" },
	{ "\xc5\xed\xeb\xe9", 4, "libc 152194: vpor %ymm1,%ymm2,%ymm5" },
	{ "\xc5\xfd\x74\x8f\x81\x00\x00\x00", 8, "libc 152260: vpcmpeqb 0x81(%rdi),%ymm0,%ymm1" },
	{ "\xc4\xe2\x42\xf7\xc0", 5, "libc 1522f7: sarx %edi,%eax,%eax" },
	{ "\xc5\xed\xdb\xe9", 4, "libc 1523d7: vpand %ymm1,%ymm2,%ymm5" },
	{ "\xc5\xfd\x7f\x0f", 4, "libc 152c37: vmovdqa %ymm1,(%rdi)" },
	{ "\xc5\xfd\xe7\x07", 4, "libc 152e84: vmovntdq %ymm0,(%rdi)" },
	{ "\xc4\xe2\x39\xf7\xc9", 5, "libc 153227: shlx %r8d,%ecx,%ecx" },
	{ "\xc5\xf9\x7e\x44\x17\xfc", 6, "libc 1535a4: vmovd %xmm0,-0x4(%rdi,%rdx,1)" },
	{ "\xc5\xdd\xda\xd5", 4, "libc 153863: vpminub %ymm5,%ymm4,%ymm2" },
	{ "\xc4\x41\x01\xef\xff", 5, "libc 15448a: vpxor %xmm15,%xmm15,%xmm15" },
	{ "\xc4\x41\x7d\xfc\xc2", 5, "libc 1544c1: vpaddb %ymm10,%ymm0,%ymm8" },
	{ "\xc4\x41\x3d\x64\xc3", 5, "libc 1544cb: vpcmpgtb %ymm11,%ymm8,%ymm8" },
	{ "\xc5\xed\xdf\xc9", 4, "libc 1544f1: vpandn %ymm1,%ymm2,%ymm1" },
	{ "\xc5\xfc\x28\x20", 4, "libc 155080: vmovaps (%rax),%ymm4" },
	{ "\xc4\xe2\x43\xf7\xc9", 5, "libc 158db9: shrx %edi,%ecx,%ecx" },
	{ "\xc5\xfd\x76\xda", 4, "libc 158e23: vpcmpeqd %ymm2,%ymm0,%ymm3" },
	{ "\xc4\xe2\x4d\x3b\xd2", 5, "libc 158f42: vpminud %ymm2,%ymm6,%ymm2" },
	{ "\xc5\xfc\x77", 3, "libc 15aac1: vzeroall" },
	{ "\x62\xe2\x7d\x28\x7a\xc6", 6, "libc 163685: vpbroadcastb %esi,%ymm16" },
	{ "\xc5\xfb\x93\xc0", 4, "libc 1636a0: kmovd %k0,%eax" },
	{ "\x62\xe1\x7f\x2a\x6f\x16", 6, "libc 163954: vmovdqu8 (%rsi),%ymm18{%k2}" },
	{ "\x62\xf3\x75\x20\x3e\x0f\x04", 7, "libc 163986: vpcmpnequb (%rdi),%ymm17,%k1" },
	{ "\x62\xe1\xfe\x28\x6f\x4c\x16\xfc", 8,
	  "libc 163a0a: vmovdqu64 -0x80(%rsi,%rdx,1),%ymm17" },
	{ "\x62\xe3\x75\x20\x25\x67\x03\xde", 8,
	  "libc 163a46: vpternlogd $0xde,0x60(%rdi),%ymm17,%ymm20" },
	{ "\x62\xb2\x5d\x20\x26\xcc", 6, "libc 163a55: vptestmb %ymm20,%ymm20,%k1" },
	{ "\x62\xe1\xf5\x20\xef\x4c\x17\xfe", 8,
	  "libc 163e1b: vpxorq -0x40(%rdi,%rdx,1),%ymm17,%ymm17" },
	{ "\x62\xe1\xfd\x28\x7f\x0f", 6, "libc 1640df: vmovdqa64 %ymm17,(%rdi)" },
	{ "\x62\xe1\x7d\x28\xe7\xa7\x00\x10\x00\x00", 10,
	  "libc 16436f: vmovntdq %ymm20,0x1000(%rdi)" },
	{ "\x62\xe2\x7d\x28\x7c\xc6", 6, "libc 164954: vpbroadcastd %esi,%ymm16" },
	{ "\x62\xe1\xfd\x08\x7e\xc1", 6, "libc 164ab5: vmovq %xmm16,%rcx" },
	{ "\x62\x01\x75\x20\xf8\xdd", 6, "libc 165bac: vpsubb %ymm29,%ymm17,%ymm27" },
	{ "\x62\x93\x25\x20\x3e\xee\x01", 7, "libc 165bb8: vpcmpltub %ymm30,%ymm27,%k5" },
	{ "\x62\xa1\x05\x25\xfc\xc9", 6, "libc 165bc6: vpaddb %ymm17,%ymm31,%ymm17{%k5}" },
	{ "\x62\xe1\x75\x20\xda\x48\x01", 7, "libc 16679d: vpminub 0x20(%rax),%ymm17,%ymm17" },
	{ "\xc4\xe1\xf9\x99\xc0", 5, "libc 1667be: ktestd %k0,%k0" },
	{ "\xc4\xe1\xf5\x45\xc0", 5, "libc 166f40: kord %k0,%k1,%k0" },
	{ "\x62\xf3\x75\x22\x3f\x0c\x16\x00", 8,
	  "libc 1674a4: vpcmpeqb (%rsi,%rdx,1),%ymm17,%k1{%k2}" },
	{ "\x62\x01\x75\x20\xef\xc8", 6, "libc 16a7b5: vpxord %ymm24,%ymm17,%ymm25" },
	{ "\x62\xb2\x66\x20\x27\xc3", 6, "libc 16a96a: vptestnmd %ymm19,%ymm19,%k0" },
	{ "\x62\xa2\x65\xa2\x3b\xda", 6, "libc 16aac2: vpminud %ymm18,%ymm19,%ymm19{%k2}{z}" },
	{ "\x62\xb2\x75\x20\x27\xd1", 6, "libc 16abb8: vptestmd %ymm17,%ymm17,%k2" },
	{ "\x62\xf3\x7d\x20\x1f\x07\x00", 7, "libc 16b158: vpcmpeqd (%rdi),%ymm16,%k0" },
	{ "\xc5\xf5\x4b\xc0", 4, "libc 16b277: kunpckbw %k0,%k1,%k0" },
	{ "\x62\xe1\x7e\x2a\x6f\x16", 6, "libc 16c254: vmovdqu32 (%rsi),%ymm18{%k2}" },
	{ "\x62\xf3\x6d\x20\x1f\x4f\x01\x04", 8, "libc 16c2b6: vpcmpneqd 0x20(%rdi),%ymm18,%k1" },
	{ "\x62\xf1\x7c\x48\x11\x4f\x01", 7, "libc 16cdc8: vmovups %zmm1,0x40(%rdi)" },
	{ "\xc4\xe2\x71\x00\xc0", 5, "libc 16d4bf: vpshufb %xmm0,%xmm1,%xmm0" },
	{ "\x62\xf2\x7d\x48\x18\xd0", 6, "libc 16d4d5: vbroadcastss %xmm0,%zmm2" },
	{ "\x62\xf1\x7c\x48\x29\x57\x01", 7, "libc 16d646: vmovaps %zmm2,0x40(%rdi)" },
	{ "\x66\x0f\x38\x3b\x40\x50", 6, "libc 175645: pminud 0x50(%rax),%xmm0" },
	{ "\xf3\x0f\x5e\x05\xd4\x78\x02\x00", 8, "libc 17a224: divss 0x278d4(%rip),%xmm0" },
};

START_TEST(test_len_table)
{
	const struct len_case *c = &len_cases[_i];
	uint8_t padded[32];
	struct arch_insn insn;
	int ret;

	/* exactly the instruction */
	ret = decode_exact(c->bytes, c->len, 0x1000, &insn);
	ck_assert_msg(ret == ARCH_DECODE_OK, "%s: ret %d", c->what, ret);
	ck_assert_msg(insn.len == c->len, "%s: len %u, want %u", c->what, insn.len, c->len);

	/* followed by other bytes: the length must not change */
	memset(padded, 0xcc, sizeof(padded));
	memcpy(padded, c->bytes, c->len);
	ret = decode_exact(padded, sizeof(padded), 0x1000, &insn);
	ck_assert_msg(ret == ARCH_DECODE_OK && insn.len == c->len, "%s: padded ret %d len %u",
		      c->what, ret, insn.len);

	/* one byte short */
	ret = decode_exact(c->bytes, c->len - 1, 0x1000, &insn);
	ck_assert_msg(ret == ARCH_DECODE_TRUNC, "%s: short ret %d", c->what, ret);
}
END_TEST

/*
 * Contiguous slices of real .text with objdump's instruction lengths: the
 * start of /usr/bin/ls's .text (calls into .plt) and the AVX-512
 * memmove of libc.so.6 (EVEX throughout).
 */
/* /usr/bin/ls, 0x46b0..0x4aae */
static const char ls_text_bytes[] =
	"\x50\xe8\xda\xf9\xff\xff\xe8\xd5\xf9\xff\xff\xe8\xd0\xf9\xff\xff"
	"\xe8\xcb\xf9\xff\xff\xe8\xc6\xf9\xff\xff\x50\xe8\xc0\xf9\xff\xff"
	"\xe8\xbb\xf9\xff\xff\xe8\xb6\xf9\xff\xff\xe8\xb1\xf9\xff\xff\xe8"
	"\xac\xf9\xff\xff\xe8\xa7\xf9\xff\xff\xe8\xa2\xf9\xff\xff\x50\xe8"
	"\x9c\xf9\xff\xff\xe8\x97\xf9\xff\xff\xe8\x92\xf9\xff\xff\xe8\x8d"
	"\xf9\xff\xff\xe8\x88\xf9\xff\xff\xe8\x83\xf9\xff\xff\xe8\x7e\xf9"
	"\xff\xff\xe8\x79\xf9\xff\xff\xe8\x74\xf9\xff\xff\xe8\x6f\xf9\xff"
	"\xff\xe8\x6a\xf9\xff\xff\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00"
	"\x41\x57\x4c\x8d\x3d\x8f\x98\x01\x00\x41\x56\x4c\x8d\x35\xde\xee"
	"\x01\x00\x41\x55\x41\x54\x4c\x8d\x25\xaf\x74\x01\x00\x55\x89\xfd"
	"\x53\x48\x89\xf3\x48\x83\xec\x68\x48\x8b\x3e\x64\x48\x8b\x04\x25"
	"\x28\x00\x00\x00\x48\x89\x44\x24\x58\x31\xc0\x4c\x8d\x6c\x24\x40"
	"\xe8\x9b\x03\x01\x00\x48\x8d\x35\x98\x73\x01\x00\xbf\x06\x00\x00"
	"\x00\xe8\x4a\xfd\xff\xff\x48\x8d\x35\xa1\x74\x01\x00\x4c\x89\xe7"
	"\xe8\x4b\xfa\xff\xff\x4c\x89\xe7\x4c\x8d\x25\xf1\x59\x01\x00\xe8"
	"\xfc\xf9\xff\xff\x48\x8d\x3d\x05\xa7\x00\x00\xc7\x05\x83\xfd\x01"
	"\x00\x02\x00\x00\x00\xe8\x86\x4f\x01\x00\x66\x0f\x6f\x05\x4e\x9a"
	"\x01\x00\xc7\x05\x84\x0d\x02\x00\x00\x00\x00\x00\xc6\x05\x25\x0e"
	"\x02\x00\x01\x48\xc7\x05\xe2\x0e\x02\x00\x00\x00\x00\x00\x48\xc7"
	"\x44\x24\x18\xff\xff\xff\xff\x48\xc7\x44\x24\x20\xff\xff\xff\xff"
	"\xc7\x44\x24\x08\xff\xff\xff\xff\xc7\x44\x24\x0c\xff\xff\xff\xff"
	"\xc7\x44\x24\x28\xff\xff\xff\xff\xc7\x04\x24\xff\xff\xff\xff\xc6"
	"\x44\x24\x2f\x00\x48\xc7\x44\x24\x10\x00\x00\x00\x00\x0f\x29\x05"
	"\x8c\x0e\x02\x00\x0f\x1f\x40\x00\x4d\x89\xe8\x4c\x89\xf1\x4c\x89"
	"\xfa\x48\x89\xde\x89\xef\xc7\x44\x24\x40\xff\xff\xff\xff\xe8\xed"
	"\xf9\xff\xff\x83\xf8\xff\x74\x53\x05\x83\x00\x00\x00\x3d\x14\x01"
	"\x00\x00\x0f\x87\xd2\x15\x00\x00\x49\x63\x04\x84\x4c\x01\xe0\xff"
	"\xe0\x31\xc0\x83\x3c\x24\x00\xc6\x05\xeb\xfa\x01\x00\x00\x0f\x95"
	"\xc0\x45\x31\xc9\xc6\x05\xd7\x0d\x02\x00\x00\x89\x04\x24\x44\x89"
	"\x4c\x24\x0c\xc7\x44\x24\x28\x00\x00\x00\x00\xeb\x9b\xc6\x05\xd5"
	"\xfa\x01\x00\x00\x31\xc0\x89\x04\x24\xeb\x8d\x48\x83\x3d\xbd\x0d"
	"\x02\x00\x00\x0f\x84\xa7\x0d\x00\x00\x83\x3c\x24\x00\x0f\x88\x67"
	"\x04\x00\x00\x8b\x04\x24\x89\x05\xbc\x0d\x02\x00\x83\xe8\x02\x83"
	"\xf8\x02\x0f\x87\x72\x04\x00\x00\x48\x83\x7c\x24\x18\xff\x0f\x84"
	"\x94\x13\x00\x00\x48\x8b\x44\x24\x18\x31\xd2\xb9\x03\x00\x00\x00"
	"\x48\x89\x05\x09\x0d\x02\x00\x48\xf7\xf1\x48\x83\xfa\x01\x48\x83"
	"\xd8\xff\x48\x89\x05\x47\x0c\x02\x00\x8b\x05\x79\x0d\x02\x00\x83"
	"\xe8\x02\x83\xf8\x02\x77\x15\x48\x8b\x44\x24\x20\x48\x85\xc0\x0f"
	"\x88\x28\x0f\x00\x00\x48\x89\x05\xe4\x0c\x02\x00\x8b\x4c\x24\x28"
	"\x89\xc8\x83\xe0\x01\x83\xc1\x01\x0f\x84\x0b\x0d\x00\x00\x83\x7c"
	"\x24\x0c\x00\x88\x05\xdf\x0c\x02\x00\x0f\x88\x7f\x0c\x00\x00\x8b"
	"\x74\x24\x0c\x31\xff\xe8\xb6\x1b\x01\x00\x31\xff\xe8\x8f\x1b\x01"
	"\x00\x41\x89\xc4\x8b\x05\x1e\x0d\x02\x00\x85\xc0\x0f\x84\xcd\x0b"
	"\x00\x00\x83\xe8\x02\x83\xf8\x01\x0f\x86\xb3\x0b\x00\x00\x31\xff"
	"\xc6\x05\x71\x0d\x02\x00\x00\xe8\x24\x1b\x01\x00\x48\x89\x05\x8d"
	"\x0c\x02\x00\x41\x83\xfc\x07\x75\x12\xba\x01\x00\x00\x00\xbe\x20"
	"\x00\x00\x00\x48\x89\xc7\xe8\x85\x1b\x01\x00\x8b\x05\xb3\x0c\x02"
	"\x00\x83\xf8\x01\x76\x3b\x83\xe8\x02\x48\x8d\x15\x67\x73\x01\x00"
	"\x4c\x8d\x24\x10\x0f\xb6\x04\x02\x84\xc0\x74\x25\x0f\x1f\x40\x00"
	"\x48\x8b\x3d\x49\x0c\x02\x00\x0f\xbe\xf0\xba\x01\x00\x00\x00\x49"
	"\x83\xc4\x01\xe8\x48\x1b\x01\x00\x41\x0f\xb6\x04\x24\x84\xc0\x75"
	"\xdf\x31\xff\xe8\xb8\x1a\x01\x00\xba\x01\x00\x00\x00\xbe\x3a\x00"
	"\x00\x00\x48\x89\xc7\x48\x89\x05\x0c\x0c\x02\x00\xe8\x1f\x1b\x01"
	"\x00\x8b\x15\x71\x0c\x02\x00\x0f\xb6\x05\x43\x0c\x02\x00\x83\xf0"
	"\x01\x85\xd2\x0f\x94\xc1\x21\xc8\x0f\xbe\x0d\x3a\xf9\x01\x00\x22"
	"\x05\x33\x0c\x02\x00\x88\x05\x2d\x0c\x02\x00\x0f\xb6\xc0\x39\xc8"
	"\x0f\x8f\x33\x17\x00\x00\x83\x7c\x24\x08\x00\x0f\x88\x94\x03\x00"
	"\x00\x8b\x44\x24\x08\x89\x05\x25\x0c\x02\x00\x85\xd2\x0f\x84\x92"
	"\x03\x00\x00\x80\x3d\xf8\x0b\x02\x00\x00\x4c\x63\x25\x6f\xfb\x01"
	"\x00\x0f\x85\x93\x0e\x00\x00\x80\x3d\xc6\x0b\x02\x00\x00\x0f\x85"
	"\x55\x03\x00\x00\x83\x3d\xbd\x0b\x02\x00\x00\x75\x18\x80\x3d\xb1"
	"\x0b\x02\x00\x00\xb8\x01\x00\x00\x00\x0f\x84\x01\x0d\x00\x00\x89"
	"\x05\xa3\x0b\x02\x00\x80\x3d\x9a\x0b\x02\x00\x00\x74\x4f\x4c\x8d"
	"\x05\xeb\x1b\x00\x00\x48\x8d\x0d\x24\x18\x00\x00\x31\xf6";
static const uint8_t ls_text_lens[] = {
	1, 5, 5, 5, 5, 5, 1, 5, 5, 5, 5, 5, 5, 5, 1, 5, 5, 5, 5, 5, 5, 5, 5, 5,
	5, 5, 10, 2, 7, 2, 7, 2, 2, 7, 1, 2, 1, 3, 4, 3, 9, 5, 2, 5, 5, 7, 5, 5,
	7, 3, 5, 3, 7, 5, 7, 10, 5, 8, 10, 7, 11, 9, 9, 8, 8, 8, 7, 5, 9, 7, 4, 3,
	3, 3, 3, 2, 8, 5, 3, 2, 5, 5, 6, 4, 3, 2, 2, 4, 7, 3, 3, 7, 3, 5, 8, 2,
	7, 2, 3, 2, 8, 6, 4, 6, 3, 6, 3, 3, 6, 6, 6, 5, 2, 5, 7, 3, 4, 4, 7, 6,
	3, 3, 2, 5, 3, 6, 7, 4, 2, 3, 3, 6, 5, 6, 6, 4, 2, 5, 2, 5, 3, 6, 2, 6,
	3, 3, 6, 2, 7, 5, 7, 4, 2, 5, 5, 3, 5, 6, 3, 2, 3, 7, 4, 4, 2, 2, 4, 7,
	3, 5, 4, 5, 5, 2, 2, 2, 5, 5, 5, 3, 7, 5, 6, 7, 3, 2, 3, 2, 7, 6, 6, 3,
	2, 6, 5, 6, 4, 6, 2, 6, 7, 7, 6, 7, 6, 7, 2, 7, 5, 6, 6, 7, 2, 7, 7, 2,
};

/* /usr/lib/x86_64-linux-gnu/libc.so.6, 0x16d740..0x16db3f */
static const char libc_evex_bytes[] =
	"\x48\x39\xd1\x0f\x82\xc7\x95\xfa\xff\x0f\x1f\x80\x00\x00\x00\x00"
	"\x48\x89\xf8\x48\x01\xd0\xeb\x1b\x0f\x1f\x84\x00\x00\x00\x00\x00"
	"\x48\x39\xd1\x0f\x82\xa7\x95\xfa\xff\x0f\x1f\x80\x00\x00\x00\x00"
	"\x48\x89\xf8\x48\x83\xfa\x40\x0f\x82\xc3\x00\x00\x00\x62\xe1\xfe"
	"\x48\x6f\x06\x48\x81\xfa\x80\x00\x00\x00\x0f\x87\x6d\x01\x00\x00"
	"\x62\xe1\xfe\x48\x6f\x4c\x16\xff\x62\xe1\xfe\x48\x7f\x07\x62\xe1"
	"\xfe\x48\x7f\x4c\x17\xff\xc3\x66\x0f\x1f\x84\x00\x00\x00\x00\x00"
	"\x48\x39\xd1\x0f\x82\x57\x95\xfa\xff\x0f\x1f\x80\x00\x00\x00\x00"
	"\x48\x89\xf8\x48\x01\xd0\xeb\x3b\x0f\x1f\x84\x00\x00\x00\x00\x00"
	"\x48\x39\xd1\x0f\x82\x37\x95\xfa\xff\x66\x66\x2e\x0f\x1f\x84\x00"
	"\x00\x00\x00\x00\x66\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00\x66"
	"\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00\x66\x0f\x1f\x44\x00\x00"
	"\x48\x89\xf8\x48\x83\xfa\x40\x72\x37\x62\xe1\xfe\x48\x6f\x06\x48"
	"\x81\xfa\x80\x00\x00\x00\x0f\x87\xd4\x00\x00\x00\x62\xe1\xfe\x48"
	"\x6f\x4c\x16\xff\x62\xe1\xfe\x48\x7f\x07\x62\xe1\xfe\x48\x7f\x4c"
	"\x17\xff\xc3\x8b\x0e\x8b\x34\x16\x89\x0f\x89\x34\x17\xc3\x66\x90"
	"\x83\xfa\x20\x73\x40\x83\xfa\x10\x73\x26\x83\xfa\x08\x73\x53\x48"
	"\x83\xea\x04\x73\xde\x83\xfa\xfd\x7c\x10\x8a\x0e\x74\x0a\x0f\xb7"
	"\x74\x16\x02\x66\x89\x74\x17\x02\x88\x0f\xc3\x0f\x1f\x44\x00\x00"
	"\xc5\xfa\x6f\x06\xc5\xfa\x6f\x4c\x16\xf0\xc5\xfa\x7f\x07\xc5\xfa"
	"\x7f\x4c\x17\xf0\xc3\x62\xe1\xfe\x28\x6f\x06\x62\xe1\xfe\x28\x6f"
	"\x4c\x16\xff\x62\xe1\xfe\x28\x7f\x07\x62\xe1\xfe\x28\x7f\x4c\x17"
	"\xff\xc3\x48\x8b\x4c\x16\xf8\x48\x8b\x36\x48\x89\x37\x48\x89\x4c"
	"\x17\xf8\xc3\x62\xe1\xfe\x48\x6f\x54\x16\xff\x62\xe1\xfe\x48\x6f"
	"\x5c\x16\xfe\x62\xe1\xfe\x48\x7f\x07\x62\xe1\xfe\x48\x7f\x4f\x01"
	"\x62\xe1\xfe\x48\x7f\x54\x17\xff\x62\xe1\xfe\x48\x7f\x5c\x17\xfe"
	"\xc3\x66\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00\x0f\x1f\x40\x00"
	"\x48\x3b\x15\xe1\x5a\x06\x00\x0f\x87\x33\x02\x00\x00\x48\x81\xfa"
	"\x00\x02\x00\x00\x77\x7a\x62\xe1\xfe\x48\x6f\x4e\x01\x48\x81\xfa"
	"\x00\x01\x00\x00\x76\x9d\x62\xe1\xfe\x48\x6f\x56\x02\x62\xe1\xfe"
	"\x48\x6f\x5e\x03\x62\xe1\xfe\x48\x6f\x64\x16\xff\x62\xe1\xfe\x48"
	"\x6f\x6c\x16\xfe\x62\xe1\xfe\x48\x6f\x74\x16\xfd\x62\xe1\xfe\x48"
	"\x6f\x7c\x16\xfc\x62\xe1\xfe\x48\x7f\x07\x62\xe1\xfe\x48\x7f\x4f"
	"\x01\x62\xe1\xfe\x48\x7f\x57\x02\x62\xe1\xfe\x48\x7f\x5f\x03\x62"
	"\xe1\xfe\x48\x7f\x64\x17\xff\x62\xe1\xfe\x48\x7f\x6c\x17\xfe\x62"
	"\xe1\xfe\x48\x7f\x74\x17\xfd\x62\xe1\xfe\x48\x7f\x7c\x17\xfc\xc3"
	"\x48\x89\xf9\x48\x29\xf1\x48\x39\xd1\x0f\x82\xd1\x00\x00\x00\x48"
	"\x3b\x15\xba\xcb\x06\x00\x0f\x87\xe4\x01\x00\x00\x4c\x8d\x04\x11"
	"\x49\x31\xc8\x49\xc1\xe8\x3f\x81\xe1\x00\x0f\x00\x00\x44\x01\xc1"
	"\x0f\x84\xaf\x00\x00\x00\x62\xe1\xfe\x48\x6f\x6c\x16\xff\x62\xe1"
	"\xfe\x48\x6f\x74\x16\xfe\x48\x89\xf9\x48\x83\xcf\x3f\x62\xe1\xfe"
	"\x48\x6f\x7c\x16\xfd\x62\x61\xfe\x48\x6f\x44\x16\xfc\x48\x29\xce"
	"\x48\xff\xc7\x48\x01\xfe\x48\x8d\x94\x11\x00\xff\xff\xff\x66\x90"
	"\x62\xe1\xfe\x48\x6f\x0e\x62\xe1\xfe\x48\x6f\x56\x01\x62\xe1\xfe"
	"\x48\x6f\x5e\x02\x62\xe1\xfe\x48\x6f\x66\x03\x48\x81\xee\x00\xff"
	"\xff\xff\x62\xe1\xfd\x48\x7f\x0f\x62\xe1\xfd\x48\x7f\x57\x01\x62"
	"\xe1\xfd\x48\x7f\x5f\x02\x62\xe1\xfd\x48\x7f\x67\x03\x48\x81\xef"
	"\x00\xff\xff\xff\x48\x39\xfa\x77\xb7\x62\xe1\xfe\x48\x7f\x6a\x03"
	"\x62\xe1\xfe\x48\x7f\x72\x02\x62\xe1\xfe\x48\x7f\x7a\x01\x62\x61"
	"\xfe\x48\x7f\x02\x62\xe1\xfe\x48\x7f\x01\xc3\x0f\x1f\x44\x00\x00"
	"\x48\x85\xc9\x74\xf5\x62\xe1\xfe\x48\x6f\x6e\x01\x62\xe1\xfe\x48"
	"\x6f\x76\x02\x48\x8d\x8c\x17\xff\xfe\xff\xff\x62\xe1\xfe\x48\x6f"
	"\x7e\x03\x62\x61\xfe\x48\x6f\x44\x16\xff\x48\x29\xfe\x48\x83\xe1"
	"\xc0\x48\x01\xce\x62\xe1\xfe\x48\x6f\x4e\x03\x62\xe1\xfe\x48\x6f"
	"\x56\x02\x62\xe1\xfe\x48\x6f\x5e\x01\x62\xe1\xfe\x48\x6f\x26\x48"
	"\x81\xc6\x00\xff\xff\xff\x62\xe1\xfd\x48\x7f\x49\x03\x62\xe1\xfd"
	"\x48\x7f\x51\x02\x62\xe1\xfd\x48\x7f\x59\x01\x62\xe1\xfd\x48\x7f"
	"\x21\x48\x81\xc1\x00\xff\xff\xff\x48\x39\xcf\x72\xb7\x62\xe1\xfe"
	"\x48\x7f\x07\x62\xe1\xfe\x48\x7f\x6f\x01\x62\xe1\xfe\x48\x7f\x77"
	"\x02\x62\xe1\xfe\x48\x7f\x7f\x03\x62\x61\xfe\x48\x7f\x44\x3a\xff"
	"\xc3\xf7\xc1\x00\x0e\x00\x00\x75\x57\x49\x89\xc9\x48\x8d\x4c\x16"
	"\xff\x48\x83\xce\x3f\x4a\x8d\x7c\x0e\x01\x48\x29\xf1\x48\xff\xc6"
	"\xf3\xa4\x62\xc1\xfe\x48\x7f\x00\xc3\x0f\x1f\x80\x00\x00\x00\x00"
	"\x48\x89\xf9\x48\x29\xf1\x48\x39\xd1\x0f\x82\x21\xff\xff\xff";
static const uint8_t libc_evex_lens[] = {
	3, 6, 7, 3, 3, 2, 8, 3, 6, 7, 3, 4, 6, 6, 7, 6, 8, 6, 8, 1, 9, 3, 6, 7,
	3, 3, 2, 8, 3, 6, 11, 11, 11, 6, 3, 4, 2, 6, 7, 6, 8, 6, 8, 1, 2, 3, 2, 3,
	1, 2, 3, 2, 3, 2, 3, 2, 4, 2, 3, 2, 2, 2, 5, 5, 2, 1, 5, 4, 6, 4, 6, 1,
	6, 8, 6, 8, 1, 5, 3, 3, 5, 1, 8, 8, 6, 7, 8, 8, 1, 11, 4, 7, 6, 7, 2, 7,
	7, 2, 7, 7, 8, 8, 8, 8, 6, 7, 7, 7, 8, 8, 8, 8, 1, 3, 3, 3, 6, 7, 6, 4,
	3, 4, 6, 3, 6, 8, 8, 3, 4, 8, 8, 3, 3, 3, 8, 2, 6, 7, 7, 7, 7, 6, 7, 7,
	7, 7, 3, 2, 7, 7, 7, 6, 6, 1, 5, 3, 2, 7, 7, 8, 7, 8, 3, 4, 3, 7, 7, 7,
	6, 7, 7, 7, 7, 6, 7, 3, 2, 6, 7, 7, 7, 8, 1, 6, 2, 3, 5, 4, 5, 3, 3, 2,
	6, 1, 7, 3, 3, 3, 6,
};

struct text_case {
	const char *name;
	const char *bytes;
	size_t size;
	uint64_t addr;
	const uint8_t *lens;
	size_t nlens;
	/* objdump's count of `call <addr>`, `jmp <addr>` and NOPs in the slice */
	unsigned int calls, branches, nops;
	uint64_t first_call, first_branch;
};

static const struct text_case text_cases[] = {
	{ "ls", ls_text_bytes, sizeof(ls_text_bytes) - 1, 0x46b0,
	  ls_text_lens, ARRAY_SIZE(ls_text_lens), 36, 2, 3, 0x4090, 0x4828 },
	{ "libc memmove-evex", libc_evex_bytes, sizeof(libc_evex_bytes) - 1, 0x16d740,
	  libc_evex_lens, ARRAY_SIZE(libc_evex_lens), 0, 2, 17, 0, 0x16d773 },
};

/* Walk linearly from the start: every boundary must be objdump's. */
START_TEST(test_text_walk)
{
	const struct text_case *t = &text_cases[_i];
	const uint8_t *buf = (const uint8_t *)t->bytes;
	unsigned int calls = 0, branches = 0, nops = 0;
	uint64_t first_call = 0, first_branch = 0;
	size_t off = 0, n = 0;
	struct arch_insn insn;

	while (off < t->size) {
		int ret = arch_x86_64.decode(buf + off, t->size - off, t->addr + off, &insn);

		ck_assert_msg(ret == ARCH_DECODE_OK, "%s+%#zx: ret %d", t->name, off, ret);
		ck_assert_msg(n < t->nlens, "%s: more instructions than objdump", t->name);
		ck_assert_msg(insn.len == t->lens[n], "%s+%#zx: len %u, objdump %u", t->name, off,
			      insn.len, t->lens[n]);
		if (insn.kind == INSN_CALL && !calls++)
			first_call = insn.target;
		if (insn.kind == INSN_BRANCH && !branches++)
			first_branch = insn.target;
		nops += insn.kind == INSN_NOP;
		off += insn.len;
		n++;
	}
	ck_assert_uint_eq(off, t->size);
	ck_assert_uint_eq(n, t->nlens);
	ck_assert_uint_eq(calls, t->calls);
	ck_assert_uint_eq(branches, t->branches);
	ck_assert_uint_eq(nops, t->nops);
	ck_assert_uint_eq(first_call, t->first_call);
	ck_assert_uint_eq(first_branch, t->first_branch);
}
END_TEST

/*
 * At every boundary of the slices: with k < len bytes available the
 * decoder says TRUNC, with exactly len it agrees with the full decode.
 */
START_TEST(test_text_truncation)
{
	const struct text_case *t = &text_cases[_i];
	size_t off = 0;

	for (size_t n = 0; n < t->nlens; n++) {
		const char *p = t->bytes + off;
		struct arch_insn full, part;
		unsigned int len = t->lens[n];

		ck_assert_int_eq(decode_exact(p, len, t->addr + off, &full), ARCH_DECODE_OK);
		for (unsigned int k = 0; k < len; k++)
			ck_assert_msg(decode_exact(p, k, t->addr + off, &part) == ARCH_DECODE_TRUNC,
				      "%s+%#zx: %u of %u bytes not TRUNC", t->name, off, k, len);
		off += len;
	}
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

struct reloc_case {
	unsigned int type;
	int back;
};

static const struct reloc_case reloc_cases[] = {
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

START_TEST(test_call_reloc_back)
{
	const struct reloc_case *c = &reloc_cases[_i];

	ck_assert_int_eq(arch_x86_64.call_reloc_back(c->type), c->back);
}
END_TEST

/*
 * PLT entries, 16 bytes each unless noted, from objdump -d of small
 * programs linked by GNU ld 2.40 (-no-pie; -pie -fcf-protection -z ibtplt)
 * and of /usr/bin/ls.  The BND forms are made by hand after the layout
 * older ld emitted for -z bndplt.
 */
struct plt_case {
	const char *what;
	const char *bytes;
	size_t len;
	uint64_t addr;
	int ret;
	uint64_t slot;
};

static const struct plt_case plt_cases[] = {
	{ "no-pie PLT0",
	  B("\xff\x35\xca\x2f\x00\x00\xff\x25\xcc\x2f\x00\x00\x0f\x1f\x40\x00"),
	  0x401020, -1, 0 },
	{ "no-pie lazy puts@plt",
	  B("\xff\x25\xca\x2f\x00\x00\x68\x00\x00\x00\x00\xe9\xe0\xff\xff\xff"),
	  0x401030, 0, 0x404000 },
	{ "no-pie lazy exit@plt",
	  B("\xff\x25\xb2\x2f\x00\x00\x68\x03\x00\x00\x00\xe9\xb0\xff\xff\xff"),
	  0x401060, 0, 0x404018 },
	{ "ls lazy __ctype_toupper_loc@plt",
	  B("\xff\x25\xca\xff\x01\x00\x68\x00\x00\x00\x00\xe9\xe0\xff\xff\xff"),
	  0x4030, 0, 0x24000 },
	{ "ls .plt.got free@plt (8 bytes)",
	  B("\xff\x25\x02\xf9\x01\x00\x66\x90"),
	  0x4680, 0, 0x23f88 },
	{ "ibt PLT0",
	  B("\xff\x35\xca\x2f\x00\x00\xff\x25\xcc\x2f\x00\x00\x0f\x1f\x40\x00"),
	  0x1020, -1, 0 },
	{ "ibt lazy stub",
	  B("\xf3\x0f\x1e\xfa\x68\x00\x00\x00\x00\xe9\xe2\xff\xff\xff\x66\x90"),
	  0x1030, -1, 0 },
	{ "ibt .plt.sec puts@plt",
	  B("\xf3\x0f\x1e\xfa\xff\x25\x76\x2f\x00\x00\x66\x0f\x1f\x44\x00\x00"),
	  0x1080, 0, 0x4000 },
	{ "ibt .plt.sec exit@plt",
	  B("\xf3\x0f\x1e\xfa\xff\x25\x5e\x2f\x00\x00\x66\x0f\x1f\x44\x00\x00"),
	  0x10b0, 0, 0x4018 },
	{ "ibt .plt.got __cxa_finalize@plt",
	  B("\xf3\x0f\x1e\xfa\xff\x25\x66\x2f\x00\x00\x66\x0f\x1f\x44\x00\x00"),
	  0x1070, 0, 0x3fe0 },
	{ "bnd+ibt .plt.sec (hand-made)",
	  B("\xf3\x0f\x1e\xfa\xf2\xff\x25\x75\x2f\x00\x00\x0f\x1f\x44\x00\x00"),
	  0x1080, 0, 0x4000 },
	{ "bnd+ibt lazy stub (hand-made)",
	  B("\xf3\x0f\x1e\xfa\x68\x00\x00\x00\x00\xf2\xe9\xe1\xff\xff\xff\x90"),
	  0x1030, -1, 0 },
	{ "bnd .plt.bnd, 8 bytes (hand-made)",
	  B("\xf2\xff\x25\x00\x10\x00\x00\x90"),
	  0x2000, 0, 0x3007 },
	{ "slot behind the entry", B("\xff\x25\x00\xff\xff\xff"), 0x2000, 0, 0x1f06 },
	{ "jmp truncated", B("\xff\x25\x00\x10\x00"), 0x2000, -1, 0 },
	{ "endbr64 only", B("\xf3\x0f\x1e\xfa"), 0x2000, -1, 0 },
	{ "empty", "", 0, 0x2000, -1, 0 },
	{ "padding",
	  B("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
	  0x2000, -1, 0 },
	{ "call *disp(%rip) is no PLT jump", B("\xff\x15\x00\x10\x00\x00\x66\x90"), 0x2000, -1, 0 },
};

START_TEST(test_plt_slot)
{
	const struct plt_case *c = &plt_cases[_i];
	uint64_t slot = 0;
	int ret = plt_slot_exact(c->bytes, c->len, c->addr, &slot);

	ck_assert_msg(ret == c->ret, "%s: ret %d, want %d", c->what, ret, c->ret);
	if (ret == 0)
		ck_assert_msg(slot == c->slot, "%s: slot %#llx, want %#llx", c->what,
			      (unsigned long long)slot, (unsigned long long)c->slot);
}
END_TEST

/* encode_nops(len) decodes as NOPs covering exactly len bytes; _i is len. */
START_TEST(test_encode_nops)
{
	size_t len = (size_t)_i;
	uint8_t *buf = malloc(len ? len : 1);
	unsigned int count = 0;
	size_t off = 0;

	ck_assert_ptr_nonnull(buf);
	memset(buf, 0xcc, len);
	ck_assert_int_eq(arch_x86_64.encode_nops(buf, len), 0);
	while (off < len) {
		struct arch_insn insn;

		ck_assert_int_eq(arch_x86_64.decode(buf + off, len - off, 0x1000 + off, &insn),
				 ARCH_DECODE_OK);
		ck_assert_int_eq(insn.kind, INSN_NOP);
		off += insn.len;
		count++;
	}
	ck_assert_uint_eq(off, len);
	/* largest first: at most one piece shorter than 8 bytes */
	ck_assert_uint_eq(count, len / 8 + (len % 8 != 0));
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

struct call_case {
	uint64_t from, to;
	int ret;
	const char *bytes;	/* expected encoding when ret == 0 */
};

static const struct call_case call_cases[] = {
	{ 0x401130, 0x401160, 0, "\xe8\x2b\x00\x00\x00" },
	{ 0x401160, 0x401130, 0, "\xe8\xcb\xff\xff\xff" },
	{ 0x1000, 0x1005, 0, "\xe8\x00\x00\x00\x00" },
	{ 0x1000, 0x1000, 0, "\xe8\xfb\xff\xff\xff" },
	{ 0x1000, 0x1005 + 0x7fffffffull, 0, "\xe8\xff\xff\xff\x7f" },
	{ 0x1000, 0x1005 + 0x80000000ull, -1, NULL },
	{ 0x80001000ull, 0x80001005ull - 0x80000000ull, 0, "\xe8\x00\x00\x00\x80" },
	{ 0x80001000ull, 0x80001004ull - 0x80000000ull, -1, NULL },
	{ 0xffffffff81000000ull, 0xffffffff81e00000ull, 0, "\xe8\xfb\xff\xdf\x00" },
	{ 0x1000, 0xffffffff00000000ull, -1, NULL },
	{ 0xffffffff81000000ull, 0x100000000ull, -1, NULL },
	/* the displacement adds modulo 2^64, as in the CPU */
	{ 0x10, 0xfffffffffffffff0ull, 0, "\xe8\xdb\xff\xff\xff" },
};

START_TEST(test_encode_call)
{
	const struct call_case *c = &call_cases[_i];
	uint8_t buf[5] = { 0 };
	struct arch_insn insn;

	ck_assert_int_eq(arch_x86_64.encode_call(buf, c->from, c->to), c->ret);
	if (c->ret)
		return;
	ck_assert_mem_eq(buf, c->bytes, 5);
	ck_assert_int_eq(decode_exact(buf, sizeof(buf), c->from, &insn), ARCH_DECODE_OK);
	ck_assert_uint_eq(insn.len, 5);
	ck_assert_int_eq(insn.kind, INSN_CALL);
	ck_assert_uint_eq(insn.target, c->to);
	ck_assert_uint_eq(insn.disp_off, 1);
}
END_TEST

Suite *arch_x86_64_suite(void)
{
	Suite *s = suite_create("arch_x86_64");
	TCase *tc;

	tc = tcase_create("ops");
	tcase_add_test(tc, test_ops_fields);
	tcase_add_loop_test(tc, test_call_reloc_back, 0, ARRAY_SIZE(reloc_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("decode");
	tcase_add_loop_test(tc, test_kind, 0, ARRAY_SIZE(kind_cases));
	tcase_add_loop_test(tc, test_nop_run, 1, 17);
	tcase_add_loop_test(tc, test_len_rules, 0, ARRAY_SIZE(len_rule_cases));
	tcase_add_loop_test(tc, test_len_table, 0, ARRAY_SIZE(len_cases));
	tcase_add_loop_test(tc, test_text_walk, 0, ARRAY_SIZE(text_cases));
	tcase_add_loop_test(tc, test_text_truncation, 0, ARRAY_SIZE(text_cases));
	tcase_add_loop_test(tc, test_fuzz_consistency, 0, 8);
	suite_add_tcase(s, tc);

	tc = tcase_create("plt");
	tcase_add_loop_test(tc, test_plt_slot, 0, ARRAY_SIZE(plt_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("encode");
	tcase_add_loop_test(tc, test_encode_nops, 0, 65);
	tcase_add_test(tc, test_encode_nop5);
	tcase_add_loop_test(tc, test_encode_call, 0, ARRAY_SIZE(call_cases));
	suite_add_tcase(s, tc);

	return s;
}
