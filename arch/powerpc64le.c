// SPDX-License-Identifier: GPL-2.0-only
/*
 * powerpc64le.c - 64-bit little-endian Power (ELFv2) instruction knowledge
 * for patch-site discovery: record, audit and record --in-place.
 *
 * What the sites look like (from Linux 6.12's arch/powerpc, read for facts):
 *
 *  - Every function that needs its TOC pointer has two entry points.  The
 *    global entry (the symbol) sets r2 from r12, which holds its own
 *    address (`addis r2,r12,HI; addi r2,r2,LO`); the local entry follows,
 *    at the offset the symbol's st_other gives (STO_PPC64_LOCAL, bits 5-7:
 *    1 << v bytes for v = 2..6).  Calls from code with the same TOC land
 *    at the local entry (local_entry below; recordsites looks for an entry
 *    area there too, and takes a target's local entry as a target).
 *
 *  - -pg -mprofile-kernel (the kernel's choice when the compiler fails
 *    arch/powerpc/tools/gcc-check-fpatchable-function-entry.sh, as Debian's
 *    GCC 12 does): `mflr r0; bl _mcount` at the local entry (older GCCs:
 *    `mflr r0; std r0,16(r1); bl _mcount`), before any stack frame.  The
 *    table entry is the `bl` (MCOUNT_INSN_SIZE 4); the kernel checks the
 *    `mflr r0` (and `std`) before it and writes a NOP over the `bl`.  The
 *    call is not followed by a TOC restore: _mcount must not need one.
 *
 *  - -pg alone: `bl _mcount` after the stack frame is set up, followed by
 *    `nop` or, once linked against glibc's _mcount through a PLT call
 *    stub, `ld r2,24(r1)`.  Either way the site is the `bl`.
 *
 *  - -fpatchable-function-entry=2 (CONFIG_ARCH_USING_PATCHABLE_FUNCTION_
 *    ENTRY, compilers that pass the check): two `nop`s at the local entry,
 *    after the TOC setup; __patchable_function_entries holds the first,
 *    and ftrace_call_adjust adds 4: the kernel patches the second into
 *    `bl ftrace_caller` and the first into `mflr r0`.  The table keeps the
 *    compiler's address (the first NOP), which is what is recorded.  GCC
 *    12 puts the NOPs before the global entry's TOC setup instead (which
 *    is why it fails the check); both are found, at the symbol or at the
 *    local entry.
 *
 *  - User programs reach glibc's _mcount through a PLT call stub the
 *    linker puts among the code: `std r2,24(r1); [addis r12,r2,HI;] ld
 *    r12,LO(r2|r12); mtctr r12; bctr`, the slot (in .plt, R_PPC64_JMP_SLOT)
 *    addressed from the TOC pointer, which the ABI puts 0x8000 past the
 *    start of .got (text_plt_slot).  A static link calls _mcount's local
 *    entry directly.
 *
 *  - A relocatable kernel (CONFIG_RELOCATABLE, which pseries selects) is
 *    linked -pie: its table's values are also R_PPC64_RELATIVE addends in
 *    .rela.dyn, one per slot, and ld writes them in place as well (it has
 *    no --no-apply-dynamic-relocs on ppc64): record --in-place writes both,
 *    a cleared table included (ARCH_POLICY_RELATIVE_APPLIED).  The table is
 *    objtool's (or recordmcount's) per-object order, unsorted: powerpc has
 *    no HAVE_BUILDTIME_MCOUNT_SORT, ftrace_process_locs sorts it at boot
 *    (ARCH_POLICY_SORTED_AT_BOOT), and it keeps the sites of overridden
 *    weak functions, which the kernel drops at boot as more than
 *    FTRACE_MCOUNT_MAX_OFFSET (16) bytes into the function kallsyms finds.
 *    In objects the calls carry R_PPC64_REL24 (R_PPC64_REL24_NOTOC in
 *    pc-relative code) on the `bl`.
 *
 * CALL_OPS, later (Linux 6.13+, CONFIG_PPC_FTRACE_OUT_OF_LINE with
 * DYNAMIC_FTRACE_WITH_CALL_OPS): the site stays one patchable NOP in the
 * function, turned into a `b` to an out-of-line stub per site, which holds
 * the ops pointer and `mflr r0; bl ftrace_caller; mtlr r0; b func+4`.  The
 * stubs live in reserved arrays in .text (ftrace_ool_stub_text,
 * ftrace_ool_stub_text_end, ftrace_ool_stub_inittext, placed in
 * `.text.ftrace_ool`), sized at build time by counting the sites of
 * vmlinux.o (arch/powerpc/tools/ftrace-gen-ool-stubs.sh); the kernel hands
 * them out in table order at boot (ftrace_init_ool_stub) and warns when it
 * runs out.  So, unlike arm64, the literal is not before the function
 * (literal_size stays 0) and nothing needs aligning; what a post-link tool
 * must add is a check that each stub array has room for the sites of the
 * text it serves: an arch hook naming the arrays' symbols and the stub
 * size (ops pointer + 4 instructions), and an audit finding when a link
 * has more sites than stubs.  The decoder here already knows the NOP and
 * `b`; the stub shape would be a table like text_plt_slot's.
 *
 * Big-endian ppc64 (ELFv1, function descriptors in .opd) is refused by
 * elfio before an architecture is chosen: every input here is ELFDATA2LSB.
 *
 * Decoding: every instruction is one little-endian 32-bit word, except
 * Power10's prefixed instructions (primary opcode 1), which are two.  A
 * few exact words and one mask pick out what ftrace cares about; the rest
 * is INSN_OTHER.  The all-zero word is what padding and traceback tables
 * begin with and is no instruction (decode reports it as bad, and the
 * sweep resynchronises at the next word).
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

#ifndef R_PPC64_REL24_NOTOC
#define R_PPC64_REL24_NOTOC	116
#endif

#define PPC_INSN_SIZE		4
#define PPC_PREFIX_SIZE		8
#define PPC_NOP			0x60000000u	/* ori r0,r0,0 */
#define PPC_BRANCH_MASK		0xfc000003u	/* primary opcode, AA, LK */
#define PPC_B			0x48000000u	/* b: I-form, AA=0, LK=0 */
#define PPC_BL			0x48000001u	/* bl: LK=1 */
#define PPC_LI_MASK		0x03fffffcu
#define PPC_PREFIX_OPCODE	1u

/* The words of a PLT call stub (ELFv2 ld): registers fixed, displacement masked off. */
#define PPC_STD_R2_24_R1	0xf8410018u	/* std r2,24(r1): the caller's TOC saved */
#define PPC_ADDIS_R12_R2	0x3d820000u	/* addis r12,r2,HI */
#define PPC_LD_R12_R2		0xe9820000u	/* ld r12,DS(r2) */
#define PPC_LD_R12_R12		0xe98c0000u	/* ld r12,DS(r12) */
#define PPC_MTCTR_R12		0x7d8903a6u
#define PPC_BCTR		0x4e800420u
#define PPC_HI16		0xffff0000u
#define PPC_DS_MASK		0x0000fffcu	/* DS-form: low two bits are the XO */
#define PPC_DS_XO		0x00000003u

/* The entry of a -mprofile-kernel function: TOC setup, then the link register saved. */
#define PPC_ADDIS_R2_R12	0x3c4c0000u	/* addis r2,r12,HI */
#define PPC_LIS_R2		0x3c400000u	/* lis r2,HI: ld's form of it in a static
						   non-PIE link (the TOC's address is known) */
#define PPC_ADDI_R2_R2		0x38420000u	/* addi r2,r2,LO */
#define PPC_MFLR_R0		0x7c0802a6u
#define PPC_STD_R0_16_R1	0xf8010010u	/* std r0,16(r1) */

/* The TOC pointer is this far past the start of .got (ELFv2 ABI, GNU ld). */
#define PPC_TOC_BIAS		0x8000u

static uint32_t ppc_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Sign-extend the low `bits` of v, in unsigned arithmetic. */
static uint64_t ppc_sext(uint64_t v, unsigned int bits)
{
	uint64_t sign = UINT64_C(1) << (bits - 1);

	v &= (sign << 1) - 1;
	return (v ^ sign) - sign;
}

static int ppc_decode(const uint8_t *buf, size_t len, uint64_t addr, struct arch_insn *insn)
{
	uint32_t w;

	if (len < PPC_INSN_SIZE)
		return ARCH_DECODE_TRUNC;
	w = ppc_get32(buf);
	insn->len = PPC_INSN_SIZE;
	insn->kind = INSN_OTHER;
	insn->target = 0;
	insn->disp_off = 0;

	if (w == 0)
		return ARCH_DECODE_BAD;
	if (w == PPC_NOP) {
		insn->kind = INSN_NOP;
	} else if ((w & PPC_BRANCH_MASK) == PPC_BL || (w & PPC_BRANCH_MASK) == PPC_B) {
		insn->kind = (w & 1) ? INSN_CALL : INSN_BRANCH;
		insn->target = addr + ppc_sext(w & PPC_LI_MASK, 26);
	} else if (w >> 26 == PPC_PREFIX_OPCODE) {
		/* Power10 prefixed instruction: the prefix and its suffix word */
		if (len < PPC_PREFIX_SIZE)
			return ARCH_DECODE_TRUNC;
		insn->len = PPC_PREFIX_SIZE;
	}
	return ARCH_DECODE_OK;
}

static unsigned int ppc_patch_nop_at(const uint8_t *buf, size_t len)
{
	return len >= PPC_INSN_SIZE && ppc_get32(buf) == PPC_NOP ? PPC_INSN_SIZE : 0;
}

/* -pg calls are relocated on the `bl` itself (REL24; REL24_NOTOC without a TOC). */
static int ppc_call_reloc_back(unsigned int type)
{
	return type == R_PPC64_REL24 || type == R_PPC64_REL24_NOTOC ? 0 : -1;
}

/*
 * A PLT call stub: [std r2,24(r1)] [addis r12,r2,HI] ld r12,LO(base)
 * mtctr r12; bctr, where base is r12 after the addis and r2 without it.
 * The slot is TOC + (HI << 16) + LO, both halves signed.
 */
static int ppc_text_plt_slot(const uint8_t *buf, size_t len, uint64_t addr, uint64_t got,
			     uint64_t *slot)
{
	size_t at = 0;
	uint64_t off = 0;
	uint32_t w;

	(void)addr;
	if (!got)
		return -ENOENT;
	if (len >= PPC_INSN_SIZE && ppc_get32(buf) == PPC_STD_R2_24_R1)
		at += PPC_INSN_SIZE;
	if (len < at + 3 * PPC_INSN_SIZE)
		return -ENOENT;
	w = ppc_get32(buf + at);
	if ((w & PPC_HI16) == PPC_ADDIS_R12_R2) {
		off = ppc_sext(w & 0xffffu, 16) << 16;
		at += PPC_INSN_SIZE;
		if (len < at + 3 * PPC_INSN_SIZE)
			return -ENOENT;
		w = ppc_get32(buf + at);
		if ((w & PPC_HI16) != PPC_LD_R12_R12)
			return -ENOENT;
	} else if ((w & PPC_HI16) != PPC_LD_R12_R2) {
		return -ENOENT;
	}
	if (w & PPC_DS_XO)		/* ldu, lwa: not a plain ld */
		return -ENOENT;
	off += ppc_sext(w & PPC_DS_MASK, 16);
	if (ppc_get32(buf + at + PPC_INSN_SIZE) != PPC_MTCTR_R12 ||
	    ppc_get32(buf + at + 2 * PPC_INSN_SIZE) != PPC_BCTR)
		return -ENOENT;
	*slot = got + PPC_TOC_BIAS + off;
	return 0;
}

/* STO_PPC64_LOCAL: 0 and 1 mean one entry point; 2..6 an offset of 1 << v bytes. */
static unsigned int ppc_local_entry(unsigned int st_other)
{
	unsigned int v = (st_other >> 5) & 7;

	return v >= 2 && v <= 6 ? 1u << v : 0;
}

/*
 * -mprofile-kernel's call from the code at the symbol: [addis r2,r12,HI (or
 * lis r2,HI); addi r2,r2,LO] (the global entry's TOC setup, local entry
 * +8), `mflr
 * r0`, [`std r0,16(r1)`: older GCCs], then the `bl`: at +4, +8, +12 or
 * +16, the sequence ftrace_init_nop checks before the site
 * (arch/powerpc/kernel/trace/ftrace.c) and within FTRACE_MCOUNT_MAX_OFFSET
 * (16), past which the kernel ignores an entry as a weak leftover.
 */
static unsigned int ppc_entry_call_offset(const uint8_t *buf, size_t len)
{
	unsigned int at = 0;

	uint32_t w = len >= PPC_INSN_SIZE ? ppc_get32(buf) & PPC_HI16 : 0;

	if ((w == PPC_ADDIS_R2_R12 || w == PPC_LIS_R2) && len >= 2 * PPC_INSN_SIZE &&
	    (ppc_get32(buf + 4) & PPC_HI16) == PPC_ADDI_R2_R2)
		at = 2 * PPC_INSN_SIZE;
	if (len < at + 2 * PPC_INSN_SIZE || ppc_get32(buf + at) != PPC_MFLR_R0)
		return 0;
	at += PPC_INSN_SIZE;
	if (ppc_get32(buf + at) == PPC_STD_R0_16_R1)
		at += PPC_INSN_SIZE;
	return at;
}

/* GCC and GNU as pad with `nop` whatever the flags say. */
static unsigned int ppc_nop_unit(unsigned int e_flags)
{
	(void)e_flags;
	return PPC_INSN_SIZE;
}

static const char *ppc_nop_name(unsigned int len)
{
	(void)len;
	return "nop";
}

const struct arch_ops arch_powerpc64le = {
	.name			= "powerpc64le",
	.caps			= ARCH_CAN(ARCH_CAP_RECORD) | ARCH_CAN(ARCH_CAP_AUDIT) |
				  ARCH_CAN(ARCH_CAP_IN_PLACE),
	/* no HAVE_BUILDTIME_MCOUNT_SORT; ld writes RELATIVE values in place */
	.policy			= ARCH_POLICY_SORTED_AT_BOOT | ARCH_POLICY_RELATIVE_APPLIED,
	.machine		= EM_PPC64,
	.insn_align		= PPC_INSN_SIZE,
	.call_len		= PPC_INSN_SIZE,
	.patch_nop_sizes	= 1u << PPC_INSN_SIZE,
	.patch_nop_at		= ppc_patch_nop_at,
	.abs64_reloc		= R_PPC64_ADDR64,
	.relative_reloc		= R_PPC64_RELATIVE,
	.jump_slot_reloc	= R_PPC64_JMP_SLOT,
	.glob_dat_reloc		= R_PPC64_GLOB_DAT,
	.none_reloc		= R_PPC64_NONE,
	.decode			= ppc_decode,
	.call_reloc_back	= ppc_call_reloc_back,
	/* PLT code is call stubs among the text, not .plt entries: plt_slot stays NULL */
	.text_plt_slot		= ppc_text_plt_slot,
	.local_entry		= ppc_local_entry,
	.entry_call_offset	= ppc_entry_call_offset,
	.nop_unit		= ppc_nop_unit,
	.nop_name		= ppc_nop_name,
	/* record, audit and in-place only (caps): the rewriting hooks stay NULL */
};
