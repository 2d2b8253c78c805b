// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_arch.c - one architecture's decoder, PLT recogniser and encoders on
 * raw bytes.  Built once per architecture with -DFUZZ_ARCH=arch_x86_64
 * (arch_arm64, arch_riscv64).
 *
 * The input is copied into a heap buffer of exactly its size and decoded at
 * every instruction-aligned offset, so a read one byte past the end is an
 * ASan report.  Beyond memory safety the harness checks the contract of
 * arch.h:
 *  - a decoded instruction has 0 < len <= the bytes given (x86: <= 15;
 *    arm64: 4; riscv64: 2, 4 or 8 for a fused pair), and a call's
 *    displacement field lies inside it;
 *  - decoding depends only on the instruction's own bytes: the same bytes
 *    cut to exactly `len` decode to the same length, kind and target;
 *  - plt_slot never reads past the buffer;
 *  - what encode_nops writes decodes as NOPs covering exactly that length,
 *    and what encode_call writes decodes as a call to the requested target.
 */
#include <stdbool.h>

#include "arch.h"
#include "fuzz_common.h"

#ifndef FUZZ_ARCH
#error "build with -DFUZZ_ARCH=arch_x86_64|arch_arm64|arch_riscv64"
#endif

static const struct arch_ops *const A = &FUZZ_ARCH;

static uint64_t le64(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < 8 && i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void check_decode(const uint8_t *buf, size_t n, uint64_t addr)
{
	struct arch_insn in, again;
	int r;

	memset(&in, 0xa5, sizeof(in));
	r = A->decode(buf, n, addr, &in);
	FUZZ_CHECK(r == ARCH_DECODE_OK || r == ARCH_DECODE_BAD || r == ARCH_DECODE_TRUNC,
		   "decode returned %d", r);
	if (r != ARCH_DECODE_OK)
		return;
	FUZZ_CHECK(in.len > 0 && in.len <= n, "len %u with %zu bytes", in.len, n);
	if (A->machine == 62)		/* EM_X86_64 */
		FUZZ_CHECK(in.len <= 15, "x86 len %u", in.len);
	else if (A->machine == 183)	/* EM_AARCH64 */
		FUZZ_CHECK(in.len == 4, "arm64 len %u", in.len);
	else
		FUZZ_CHECK(in.len == 2 || in.len == 4 || in.len == 8, "riscv len %u", in.len);
	FUZZ_CHECK(in.kind >= INSN_OTHER && in.kind <= INSN_BRANCH, "kind %d", (int)in.kind);
	if (in.kind == INSN_CALL || in.kind == INSN_CALL_MEM)
		FUZZ_CHECK(in.disp_off < in.len, "disp_off %u len %u", in.disp_off, in.len);

	/* the same bytes, cut to the instruction: same answer */
	uint8_t *cut = malloc(in.len);
	FUZZ_CHECK(cut != NULL, "malloc");
	memcpy(cut, buf, in.len);
	memset(&again, 0x5a, sizeof(again));
	r = A->decode(cut, in.len, addr, &again);
	FUZZ_CHECK(r == ARCH_DECODE_OK && again.len == in.len && again.kind == in.kind &&
		   again.target == in.target && again.disp_off == in.disp_off,
		   "cut to %u bytes: r=%d len=%u kind=%d (was %d)", in.len, r, again.len,
		   (int)again.kind, (int)in.kind);
	free(cut);
}

static void check_encoders(const uint8_t *data, size_t size)
{
	uint8_t buf[64];
	struct arch_insn in;
	uint64_t from = le64(data, size), to = size > 8 ? le64(data + 8, size - 8) : 0;
	size_t k = size ? data[0] % 33 : 0;

	/* NOP areas of every length the arch can encode */
	k -= k % A->insn_align;
	if (k && A->encode_nops(buf, k) == 0) {
		size_t off = 0;
		while (off < k) {
			int r = A->decode(buf + off, k - off, from + off, &in);
			FUZZ_CHECK(r == ARCH_DECODE_OK && in.kind == INSN_NOP,
				   "encoded %zu NOP bytes, offset %zu decodes as r=%d kind=%d", k, off,
				   r, (int)in.kind);
			off += in.len;
		}
		FUZZ_CHECK(off == k, "NOPs overrun: %zu != %zu", off, k);
	}

	/* the entry call */
	from -= from % A->insn_align;
	if (A->encode_call(buf, from, to) == 0) {
		int r = A->decode(buf, A->call_len, from, &in);
		FUZZ_CHECK(r == ARCH_DECODE_OK && in.kind == INSN_CALL && in.len == A->call_len &&
			   in.target == to,
			   "encode_call(0x%llx -> 0x%llx) decodes as r=%d kind=%d len=%u target=0x%llx",
			   (unsigned long long)from, (unsigned long long)to, r, (int)in.kind, in.len,
			   (unsigned long long)in.target);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* address of the first byte: from the input, so targets wrap at the edges */
	uint64_t base = size >= 8 ? le64(data, 8) : 0x401000;
	uint8_t *buf = malloc(size ? size : 1);

	FUZZ_CHECK(buf != NULL, "malloc");
	memcpy(buf, data, size);
	base -= base % A->insn_align;

	for (size_t off = 0; off < size; off += A->insn_align) {
		uint64_t slot;
		check_decode(buf + off, size - off, base + off);
		A->plt_slot(buf + off, size - off, base + off, &slot);
	}
	/* and a linear sweep, as recordsites does over text */
	for (size_t off = 0; off < size;) {
		struct arch_insn in;
		int r = A->decode(buf + off, size - off, base + off, &in);
		if (r == ARCH_DECODE_TRUNC)
			break;
		off += r == ARCH_DECODE_OK ? in.len : A->insn_align;
	}
	for (unsigned int i = 0; i < 64; i++)
		A->call_reloc_back(i);
	check_encoders(data, size);
	free(buf);
	return 0;
}
