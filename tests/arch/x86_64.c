// SPDX-License-Identifier: GPL-2.0-only
/*
 * tests/arch/x86_64.c - the x86-64 tests that are not single decode cases
 * (those are tests/arch/x86_64.cases): the arch_ops fields, the call
 * relocations, NOP runs, linear walks of real .text, a decode fuzz, the
 * PLT reader and the encoders.  Run in the "arch" suite from the table
 * tests/arch/gen.py writes (tests/check_arch.c).
 *
 * Strategy: every test is a row in a static table run through
 * tcase_add_loop_test, so a new case is one line of data.  Byte sequences
 * come from `objdump -d` of real binaries (/usr/bin/ls, libc.so.6, small
 * programs linked with -pg/-mfentry, -fcf-protection, -no-pie and -pie);
 * the few hand-made ones say so.  Each decode runs on an exactly sized heap
 * copy so that ASan reports any read past `len`.  Two contiguous slices of
 * real .text are walked linearly and must land on every one of objdump's
 * instruction boundaries, and a fuzz loop checks that lengths never depend
 * on bytes past the end.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/harness.h"

void arch_tests_x86_64(Suite *s);

/* Decode from an exactly sized heap copy: any over-read is an ASan error. */
static int decode_exact(const void *bytes, size_t len, uint64_t addr, struct arch_insn *insn)
{
	uint8_t *copy = arch_dup_exact(bytes, len);
	int ret = arch_x86_64.decode(copy, len, addr, insn);

	free(copy);
	return ret;
}

static int plt_slot_exact(const void *bytes, size_t len, uint64_t addr, uint64_t *slot)
{
	uint8_t *copy = arch_dup_exact(bytes, len);
	int ret = arch_x86_64.plt_slot(copy, len, addr, slot);

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

#define B(s) s, sizeof(s) - 1

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

void arch_tests_x86_64(Suite *s)
{
	TCase *tc;

	tc = tcase_create("x86_64 ops");
	tcase_add_test(tc, test_ops_fields);
	tcase_add_loop_test(tc, test_call_reloc_back, 0, ARRAY_SIZE(reloc_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("x86_64 decode");
	tcase_add_loop_test(tc, test_nop_run, 1, 17);
	tcase_add_loop_test(tc, test_text_walk, 0, ARRAY_SIZE(text_cases));
	tcase_add_loop_test(tc, test_text_truncation, 0, ARRAY_SIZE(text_cases));
	tcase_add_loop_test(tc, test_fuzz_consistency, 0, 8);
	suite_add_tcase(s, tc);

	tc = tcase_create("x86_64 plt");
	tcase_add_loop_test(tc, test_plt_slot, 0, ARRAY_SIZE(plt_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("x86_64 encode");
	tcase_add_loop_test(tc, test_encode_nops, 0, 65);
	tcase_add_test(tc, test_encode_nop5);
	tcase_add_loop_test(tc, test_encode_call, 0, ARRAY_SIZE(call_cases));
	suite_add_tcase(s, tc);
}
