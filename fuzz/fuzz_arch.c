// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_arch.c - every registered architecture's decoder, PLT recognisers,
 * PC-relative references, CALL_OPS site reader and encoders on raw bytes.
 * One harness for all of them: the architecture comes from the input, so a
 * new architecture in arch.c's table is fuzzed with no change here.
 *
 * Input: a 16-bit little-endian ELF e_machine, then the bytes.  The
 * architecture is arch_by_machine(e_machine), or, for a machine patchsite
 * does not know, arch_at(e_machine % arch_count()): every value reaches an
 * architecture, and a seed keeps reaching the same one however the table
 * grows (mkseeds.py writes the machine of the image the bytes come from).
 * The bytes after it start with the address of their first byte (64-bit
 * little-endian, so targets wrap at the edges) and are decoded as a whole,
 * those eight bytes included.
 *
 * The bytes are copied into a heap buffer of exactly their size and
 * decoded at every instruction-aligned offset, so a read one byte past the
 * end is an ASan report.  Beyond memory safety the harness checks the
 * contract of arch.h, for every architecture alike:
 *  - a decoded instruction has 0 < len <= the bytes given, len <= 15 (the
 *    longest x86 instruction; a fused riscv call pair is 8) and a multiple
 *    of insn_align, and a call's displacement field lies inside it;
 *  - decoding depends only on the instruction's own bytes: the same bytes
 *    cut to exactly `len` decode to the same length, kind and target;
 *  - patch_nop_at gives what decode gives for a NOP of a patch_nop_sizes
 *    length, and 0 for anything else;
 *  - plt_slot and text_plt_slot never read past the buffer;
 *  - insn_len (where there is one) is a multiple of insn_align, and no
 *    longer than what decode takes (decode may fuse a pair);
 *  - a PC-relative reference pcrel_decode reads lies in the bytes given,
 *    its displacement is in [min, max] and a multiple of step, and
 *    pcrel_encode with that displacement writes the same bytes back;
 *  - callops_site never reads past the buffer and places the call and the
 *    idle form inside the site; callops_disabled and callops_tramp write
 *    what they are asked for;
 *  - what encode_nops writes decodes as NOPs covering exactly that length,
 *    and what encode_call writes decodes as a call to the requested target;
 *  - the hooks on numbers and names, with values from the input: nop_unit
 *    is a patch_nop_sizes length with a nop_name; what align_padding says
 *    the assembler emits for `.balign N` (N less the NOP unit, addend the
 *    same, align_reloc) is what align_target reads back as padding up to N;
 *    mapping_symbol and nop_unit_march take any string.
 * A hook an architecture leaves NULL (arch.h: the ones only an undeclared
 * capability needs) is not called.
 */
#include <stdbool.h>

#include "arch/arch.h"
#include "base/base.h"
#include "fuzz/fuzz_common.h"

/* The most bytes one decoded instruction takes on any architecture (x86) */
#define MAX_INSN	15

static const struct arch_ops *A;

static void check_decode(const uint8_t *buf, size_t n, uint64_t addr)
{
	struct arch_insn in, again;
	unsigned int nop;
	int r;

	memset(&in, 0xa5, sizeof(in));
	r = A->decode(buf, n, addr, &in);
	FUZZ_CHECK(r == ARCH_DECODE_OK || r == ARCH_DECODE_BAD || r == ARCH_DECODE_TRUNC,
		   "%s: decode returned %d", A->name, r);
	nop = A->patch_nop_at(buf, n);
	if (r != ARCH_DECODE_OK) {
		FUZZ_CHECK(nop == 0, "%s: patch_nop_at %u where decode fails (%d)", A->name, nop,
			   r);
		return;
	}
	FUZZ_CHECK(in.len > 0 && in.len <= n, "%s: len %u with %zu bytes", A->name, in.len, n);
	FUZZ_CHECK(in.len <= MAX_INSN && in.len % A->insn_align == 0,
		   "%s: len %u (insn_align %u)", A->name, in.len, A->insn_align);
	FUZZ_CHECK(in.kind >= INSN_OTHER && in.kind <= INSN_BRANCH, "%s: kind %d", A->name,
		   (int)in.kind);
	if (in.kind == INSN_CALL || in.kind == INSN_CALL_MEM)
		FUZZ_CHECK(in.disp_off < in.len, "%s: disp_off %u len %u", A->name, in.disp_off,
			   in.len);
	if (in.kind == INSN_NOP && (A->patch_nop_sizes >> in.len & 1))
		FUZZ_CHECK(nop == in.len, "%s: patch_nop_at %u, decode a %u-byte NOP", A->name,
			   nop, in.len);
	else
		FUZZ_CHECK(nop == 0, "%s: patch_nop_at %u, decode kind %d len %u", A->name, nop,
			   (int)in.kind, in.len);
	if (A->insn_len) {
		unsigned int l = A->insn_len(buf, n);
		FUZZ_CHECK(l && l % A->insn_align == 0 && l <= in.len,
			   "%s: insn_len %u, decode len %u", A->name, l, in.len);
	}

	/* the same bytes, cut to the instruction: same answer */
	uint8_t *cut = malloc(in.len);
	FUZZ_CHECK(cut != NULL, "malloc");
	memcpy(cut, buf, in.len);
	memset(&again, 0x5a, sizeof(again));
	r = A->decode(cut, in.len, addr, &again);
	FUZZ_CHECK(r == ARCH_DECODE_OK && again.len == in.len && again.kind == in.kind &&
		   again.target == in.target && again.disp_off == in.disp_off,
		   "%s: cut to %u bytes: r=%d len=%u kind=%d (was %d)", A->name, in.len, r,
		   again.len, (int)again.kind, (int)in.kind);
	free(cut);
}

static void check_pcrel(const uint8_t *buf, size_t n)
{
	struct arch_pcrel pc;
	uint8_t out[16];
	int r;

	memset(&pc, 0, sizeof(pc));
	r = A->pcrel_decode(buf, n, &pc);
	FUZZ_CHECK(r == ARCH_PCREL_OK || r == ARCH_PCREL_NONE || r == ARCH_PCREL_PAGE ||
		   r == ARCH_PCREL_UNPAIRED, "%s: pcrel_decode returned %d", A->name, r);
	if (r == ARCH_PCREL_NONE)
		return;
	FUZZ_CHECK(pc.name != NULL && pc.len > 0 && pc.len <= n && pc.len <= sizeof(out),
		   "%s: pcrel %s len %u with %zu bytes", A->name, pc.name ? pc.name : "(null)",
		   pc.len, n);
	if (r != ARCH_PCREL_OK)
		return;
	FUZZ_CHECK(pc.lo_off < pc.len && pc.step > 0 && pc.min <= pc.disp && pc.disp <= pc.max &&
		   pc.disp % (int64_t)pc.step == 0,
		   "%s: %s lo_off %u len %u disp %lld in [%lld, %lld] step %u", A->name, pc.name,
		   pc.lo_off, pc.len, (long long)pc.disp, (long long)pc.min, (long long)pc.max,
		   pc.step);
	memset(out, 0xee, sizeof(out));
	r = A->pcrel_encode(&pc, pc.disp, out);
	FUZZ_CHECK(r == 0 && memcmp(out, buf, pc.len) == 0,
		   "%s: %s re-encoded with its own disp %lld: r=%d, bytes differ", A->name,
		   pc.name, (long long)pc.disp, r);
	if (pc.max < INT64_MAX) {
		memset(out, 0xee, sizeof(out));
		r = A->pcrel_encode(&pc, pc.max + 1, out);
		FUZZ_CHECK(r != 0 && out[0] == 0xee, "%s: %s encoded past max: r=%d", A->name,
			   pc.name, r);
	}
}

static void check_callops(const uint8_t *buf, size_t n, uint64_t literal)
{
	const struct arch_callops *c = A->callops;
	struct arch_callops_site site;
	uint8_t out[ARCH_CALLOPS_SITE_MAX];
	int r;

	FUZZ_CHECK(c->site_len <= ARCH_CALLOPS_SITE_MAX, "%s: site_len %u", A->name, c->site_len);
	r = A->callops_site(buf, n, literal, &site);
	FUZZ_CHECK(r == ARCH_CALLOPS_OK || r == ARCH_CALLOPS_NONE || r == ARCH_CALLOPS_MISALIGNED,
		   "%s: callops_site returned %d", A->name, r);
	if (r == ARCH_CALLOPS_MISALIGNED)
		FUZZ_CHECK(literal % A->literal_size != 0, "%s: literal 0x%llx misaligned?",
			   A->name, (unsigned long long)literal);
	if (r != ARCH_CALLOPS_OK)
		return;
	FUZZ_CHECK(n >= site.entry_off + site.disabled_off + site.disabled_len &&
		   c->call_slot > 0 &&
		   site.entry_off + site.call_off + c->call_slot <= c->site_len &&
		   site.entry_off + site.disabled_off + site.disabled_len <= c->site_len &&
		   site.call_off >= site.disabled_off &&
		   site.call_off + c->call_slot <= site.disabled_off + site.disabled_len &&
		   site.disabled_len <= sizeof(out),
		   "%s: site entry %u call_off %u disabled %u+%u in %u bytes", A->name,
		   site.entry_off, site.call_off, site.disabled_off, site.disabled_len, c->site_len);
	uint64_t idle = literal + site.entry_off + site.disabled_off;	/* literal: buf[0] */
	FUZZ_CHECK(A->callops_disabled(out, site.disabled_len, idle, (idle & ~4095ull) + 4096) == 0,
		   "%s: callops_disabled(%u)", A->name, site.disabled_len);
	FUZZ_CHECK(A->callops_disabled(out, c->site_len + 1, idle, (idle & ~4095ull) + 4096) != 0,
		   "%s: callops_disabled(%u) accepted", A->name, c->site_len + 1);
}

static void check_encoders(const uint8_t *data, size_t size)
{
	uint8_t buf[64];
	struct arch_insn in;
	uint64_t from = get_le(data, size < 8 ? size : 8);
	uint64_t to = size > 8 ? get_le(data + 8, size - 8 < 8 ? size - 8 : 8) : 0;
	size_t k = size ? data[0] % 33 : 0;

	/* NOP areas of every length the arch can encode */
	k -= k % A->insn_align;
	if (A->encode_nops && k && A->encode_nops(buf, k) == 0) {
		size_t off = 0;
		while (off < k) {
			int r = A->decode(buf + off, k - off, from + off, &in);
			FUZZ_CHECK(r == ARCH_DECODE_OK && in.kind == INSN_NOP,
				   "%s: encoded %zu NOP bytes, offset %zu decodes as r=%d kind=%d",
				   A->name, k, off, r, (int)in.kind);
			off += in.len;
		}
		FUZZ_CHECK(off == k, "%s: NOPs overrun: %zu != %zu", A->name, off, k);
	}

	/* the entry call */
	from -= from % A->insn_align;
	if (A->encode_call && A->encode_call(buf, from, to) == 0) {
		int r = A->decode(buf, A->call_len, from, &in);
		FUZZ_CHECK(r == ARCH_DECODE_OK && in.kind == INSN_CALL && in.len == A->call_len &&
			   in.target == to,
			   "%s: encode_call(0x%llx -> 0x%llx) decodes as r=%d kind=%d len=%u "
			   "target=0x%llx", A->name, (unsigned long long)from,
			   (unsigned long long)to, r, (int)in.kind, in.len,
			   (unsigned long long)in.target);
	}

	/* the trampoline blob, at an 8-aligned address and a misaligned one */
	if (A->callops_tramp) {
		size_t t = A->callops->tramp_size;
		uint8_t *blob = malloc(t + 1);
		FUZZ_CHECK(blob != NULL, "malloc");
		FUZZ_CHECK(A->callops_tramp(blob, t, to & ~7ull) == 0, "%s: callops_tramp",
			   A->name);
		FUZZ_CHECK(get_le64(blob + A->callops->tramp_anchor) == (to & ~7ull),
			   "%s: trampoline anchor", A->name);
		FUZZ_CHECK(A->callops_tramp(blob, t + 1, to & ~7ull) != 0 &&
			   A->callops_tramp(blob, t, (to & ~7ull) | 4) != 0,
			   "%s: callops_tramp accepted a bad size or address", A->name);
		free(blob);
	}
}

static void check_numbers(const uint8_t *data, size_t size)
{
	uint8_t b[8] = { 0 };
	unsigned int e_flags, unit;

	memcpy(b, data, size < 8 ? size : 8);
	e_flags = get_le32(b);
	unit = A->nop_unit(e_flags);
	FUZZ_CHECK(unit && unit < 32 && (A->patch_nop_sizes >> unit & 1) && A->nop_name(unit),
		   "%s: nop_unit(0x%x) = %u", A->name, e_flags, unit);
	if (A->align_padding && A->align_target) {
		/* up to 1 MiB: align_target refuses addends from 1 MiB (arch.h) */
		uint64_t align = 1ull << (b[4] % 21), offset = get_le16(b + 5), to, al;
		struct arch_align_pad pad;

		if (A->align_padding(e_flags, align, &pad) == 0) {
			FUZZ_CHECK(pad.size == align - unit && pad.addend == (int64_t)pad.size &&
				   pad.type == A->align_reloc,
				   "%s: .balign %llu, unit %u: %llu bytes, addend %lld, type %u",
				   A->name, (unsigned long long)align, unit,
				   (unsigned long long)pad.size, (long long)pad.addend, pad.type);
			FUZZ_CHECK(A->align_target(offset, pad.addend, &to, &al) == 0 &&
				   to == offset + pad.size && al == align,
				   "%s: .balign %llu read back as %llu", A->name,
				   (unsigned long long)align, (unsigned long long)al);
		}
		A->align_target(offset, (int64_t)get_le64(b), &to, &al);
	}
	if (A->mapping_symbol || A->nop_unit_march) {
		char *str = malloc(size + 1);
		FUZZ_CHECK(str != NULL, "malloc");
		memcpy(str, data, size);
		str[size] = 0;
		if (A->mapping_symbol) {
			int m = A->mapping_symbol(str);
			FUZZ_CHECK(m == ARCH_MAP_NONE || m == ARCH_MAP_CODE || m == ARCH_MAP_DATA,
				   "%s: mapping_symbol returned %d", A->name, m);
		}
		if (A->nop_unit_march) {
			unsigned int u = A->nop_unit_march(str);
			FUZZ_CHECK(u == 0 || (u < 32 && (A->patch_nop_sizes >> u & 1)),
				   "%s: nop_unit_march gave %u", A->name, u);
		}
		free(str);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int machine;

	if (size < 2)
		return -1;		/* no architecture: not an input (kept out of the corpus) */
	machine = get_le16(data);
	A = arch_by_machine(machine);
	if (!A)
		A = arch_at(machine % arch_count());
	FUZZ_CHECK(A && A->decode && A->patch_nop_at && A->call_reloc_back && A->nop_unit &&
		   A->nop_name && A->insn_align,
		   "machine %u: no architecture, or one without decode", machine);
	data += 2;
	size -= 2;

	/* address of the first byte: from the input, so targets wrap at the edges */
	uint64_t base = size >= 8 ? get_le64(data) : 0x401000;
	uint64_t got = size >= 16 ? get_le64(data + 8) : 0x10000000;
	uint8_t *buf = malloc(size ? size : 1);

	FUZZ_CHECK(buf != NULL, "malloc");
	memcpy(buf, data, size);
	base -= base % A->insn_align;

	for (size_t off = 0; off < size; off += A->insn_align) {
		uint64_t slot;
		check_decode(buf + off, size - off, base + off);
		if (A->plt_slot)
			A->plt_slot(buf + off, size - off, base + off, &slot);
		if (A->text_plt_slot)
			A->text_plt_slot(buf + off, size - off, base + off, got, &slot);
		if (A->pcrel_decode && A->pcrel_encode)
			check_pcrel(buf + off, size - off);
		if (A->callops && A->callops_site && A->callops_disabled)
			check_callops(buf + off, size - off, base + off);
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
	if (A->local_entry)
		for (unsigned int o = 0; o < 256; o++) {
			unsigned int l = A->local_entry(o);
			FUZZ_CHECK(l % A->insn_align == 0, "%s: local_entry(%u) = %u", A->name, o, l);
		}
	check_encoders(data, size);
	check_numbers(data, size);
	free(buf);
	return 0;
}
