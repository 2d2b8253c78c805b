/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arch.h - instruction knowledge, per architecture, chosen at run time.
 *
 * Strategy: every architecture provides one `const struct arch_ops` in
 * arch/<name>.c.  Generic code (recordsites/) never looks at instruction
 * bytes: it asks the architecture to decode one instruction at a time and
 * gets back an arch-neutral `struct arch_insn` (kind, length, branch target).
 * Encodings live in static const tables inside each arch file.
 *
 * The rewriting commands move code, so the architecture also reads and
 * re-encodes the PC-relative instructions the assembler resolved in place
 * (struct arch_pcrel), and says what NOP unit and what alignment
 * relocation an object's linker works with: generic code only moves
 * offsets and asks.
 *
 * embed, which prepares CALL_OPS sites for a run-time tracer, asks the
 * architecture what an undisturbed site looks like (struct
 * arch_callops_site), what an idle one holds, and for the trampoline the
 * sites call, as one blob with the offsets of its parts (struct
 * arch_callops): it places bytes and fills in addresses, nothing more.
 *
 * This layer knows nothing of ELF files: it sees byte buffers, the address
 * the first byte would have in the image, and the numbers (e_flags,
 * relocation types and addends) generic code reads out of the file.
 */
#ifndef PATCHSITE_ARCH_H
#define PATCHSITE_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

enum arch_insn_kind {
	INSN_OTHER = 0,		/* decoded, nothing we care about */
	INSN_NOP,		/* an architectural NOP of any length */
	INSN_LANDING,		/* branch-target landing pad: ENDBR64, BTI C/JC */
	INSN_CALL,		/* direct call; target = destination */
	INSN_CALL_MEM,		/* call through memory; target = address of the slot */
	INSN_BRANCH,		/* direct jump (no link); target = destination */
};

/*
 * One decoded instruction.  For riscv64 the decoder fuses the call pair
 * `auipc ra,hi; jalr ra,lo(ra)` (and `auipc t0/t1; jalr ..`) into one
 * INSN_CALL of length 8 at the auipc, so generic code sees one call.
 */
struct arch_insn {
	unsigned int len;		/* bytes, > 0 when decode succeeded */
	enum arch_insn_kind kind;
	uint64_t target;		/* CALL/BRANCH: destination; CALL_MEM: slot */
	unsigned int disp_off;		/* CALL*: byte offset of the displacement field
					   within the instruction (x86 E8: 1, 67 E8: 2,
					   FF 15: 2; arm64/riscv: 0) */
};

/* Return values of arch_ops.decode */
#define ARCH_DECODE_OK		0
#define ARCH_DECODE_BAD		(-1)	/* not a valid instruction */
#define ARCH_DECODE_TRUNC	(-2)	/* instruction runs past the end of the buffer */

/*
 * A PC-relative reference that the assembler resolved in place, with no
 * relocation: arm64 B, BL, B.cond, CBZ/CBNZ, TBZ/TBNZ, ADR, LDR literal;
 * riscv64 branches, jal, c.j, c.beqz/c.bnez, and `auipc rX` together with
 * its %pcrel_lo use in the next instruction (one reference of 8 bytes).
 * Filled by arch_ops.pcrel_decode, read back by arch_ops.pcrel_encode.
 */
struct arch_pcrel {
	const char *name;	/* mnemonic for messages: "b.cond", "tbz/tbnz", "c.beqz", "auipc" */
	unsigned int len;	/* bytes it spans: the instruction, or auipc + its use (8) */
	unsigned int lo_off;	/* a pair: offset of the instruction completing it (4); else 0 */
	unsigned int flags;	/* ARCH_PCREL_LIVE */
	int64_t disp;		/* target minus the address of the first byte */
	int64_t min, max;	/* the displacements pcrel_encode accepts: min <= d <= max ... */
	unsigned int step;	/* ... and d a multiple of step (arm64 4, ADR 1; riscv 2, pair 1) */
	/* the architecture's own: which encoding, and the words pcrel_decode read */
	unsigned int form;
	uint32_t word[2];
};

/* Return values of arch_ops.pcrel_decode */
#define ARCH_PCREL_OK		0	/* *pc describes the reference */
#define ARCH_PCREL_NONE		(-1)	/* not a PC-relative instruction: nothing to move */
#define ARCH_PCREL_PAGE		(-2)	/* page-relative (arm64 ADRP): only a relocation moves it */
#define ARCH_PCREL_UNPAIRED	(-3)	/* riscv auipc whose %pcrel_lo use is not next to it */

/*
 * arch_pcrel.flags: the value the reference computes (riscv: the auipc's
 * register) may be read again after it, so moving its target would change
 * what later instructions see, which re-encoding cannot follow.  The
 * analysis errs towards set.
 */
#define ARCH_PCREL_LIVE		0x1

/*
 * `.balign` where the linker relaxes, as the assembler emits it
 * (arch_ops.align_padding).
 */
struct arch_align_pad {
	uint64_t size;		/* NOP bytes: the alignment less the NOP unit, the most the
				   link can need */
	unsigned int type;	/* relocation at the first of them, symbol 0 (align_reloc) */
	int64_t addend;		/* its addend: the number of NOP bytes it covers (size) */
};

/*
 * An entry site as the compiler and linker left it (arch_ops.callops_site):
 * arm64 CALL_OPS (-fpatchable-function-entry=4,2 with the functions
 * aligned to literal_size): an ops literal of NOPs before the function, an
 * optional landing pad, and the patch NOPs at the entry; x86_64: an
 * optional ENDBR64, then a call to __fentry__, a 5-byte NOP or five 1-byte
 * NOPs.  entry_off is the function entry from the first byte the hook
 * was given; the other offsets are from the function entry.
 */
struct arch_callops_site {
	unsigned int entry_off;		/* the function entry (arm64: literal_size; x86_64:
					   0 after ENDBR64, else callops->site_back) */
	unsigned int call_off;		/* the NOP the runtime turns into the call to the
					   trampoline (arm64: 4; 8 after BTI C/JC; x86_64: 0;
					   4 after ENDBR64) */
	unsigned int disabled_off;	/* where the idle form goes (callops_disabled) ...
					   (arm64: 0; 4 after BTI C/JC; x86_64: call_off) */
	unsigned int disabled_len;	/* ... and its length (arm64: 8; x86_64: 5, or 6 over
					   a 6-byte call through the GOT) */
};

/* Return values of arch_ops.callops_site */
#define ARCH_CALLOPS_OK		0	/* the undisturbed area: *site filled */
#define ARCH_CALLOPS_NONE	(-1)	/* other bytes, or fewer than callops->site_len */
#define ARCH_CALLOPS_MISALIGNED	(-2)	/* the literal is not literal_size aligned: its
					   ops cannot be swapped with one store */

/*
 * The fixed sizes and offsets embed works with (arch_ops.callops).  The
 * trampoline blob (callops_tramp; none when tramp_size is 0) holds, at the
 * offsets below, an anchor word, the default ops, a no-op function and the
 * trampoline's entry.  An architecture whose runtime writes its own
 * trampolines asks instead for a zero-filled room of room_size bytes,
 * aligned to max_page_size, that every site's call reaches (x86_64: the
 * runtime carves 16-byte trampoline slots from it).
 *
 * Which sites embed takes: record scans the image once per layout stated
 * here (the -fpatchable-function-entry=area_n,area_m area when area_n is
 * not 0, calls to the fentry target at the entry when entry_calls, one
 * call_len-byte NOP at the entry when entry_nop), and every site found is
 * judged by callops_site.  Several scans are probes: a layout the image does
 * not use is no error, only no site from anywhere is.
 */
struct arch_callops {
	unsigned int site_len;		/* bytes callops_site reads, from site_back before
					   the recorded site address (arm64 the literal) on */
	unsigned int site_back;		/* bytes before the recorded site callops_site sees
					   (x86_64 4: an ENDBR64); those before the site's
					   section read as zero */
	unsigned int tramp_size;	/* bytes of the blob, a multiple of 8 (0: none) */
	unsigned int tramp_anchor;	/* a 64-bit word holding its own link-time
					   address: the code tells the load bias by it */
	unsigned int tramp_default_ops;	/* the ops every idle literal points at
					   (runtime/callops.h struct ps_ops) */
	unsigned int tramp_noop;	/* the function the default ops' func points at */
	unsigned int tramp_entry;	/* the trampoline: where every site's call goes */
	unsigned int call_slot;		/* bytes the runtime toggles at a site's call_off
					   (runtime ps_arch_call_size: arm64 4 BL, riscv64 4
					   jalr after the auipc embed wrote, x86_64 5 CALL) */
	uint64_t room_size;		/* bytes of the zero-filled trampoline room (0: none) */
	int area_n, area_m;		/* the stated patch area (0, 0: none) */
	unsigned int area_unit;		/* 0: area_n and area_m count the image's NOP unit
					   (nop_unit of its e_flags); else they count this
					   many bytes and the area's NOPs may be of any patch
					   NOP size (riscv64 2: CALL_OPS is 8 bytes before and
					   8 at the entry, four c.nop each with C (=8,4), two
					   nop without (=4,2), and a program whose own code is
					   built without C still links glibc's, so e_flags
					   cannot tell) */
	bool entry_calls;		/* calls to __fentry__ at the entry are sites */
	bool entry_nop;			/* a call_len-byte NOP at the entry is a site */
	const char *site_desc;		/* for "FUNC at ADDR is not ..." */
	const char *no_sites;		/* the refusal when there is no site: what to build with */
	const char *reach;		/* the call's reach: "BL range (128 MiB)" */
};

/*
 * What an architecture supports, command by command (arch_ops.caps, a mask
 * of ARCH_CAN() bits).  Nothing is supported unless declared: a command
 * asks arch_for() and refuses an architecture without its capability in
 * one line.  A declared capability promises the hooks and fields it needs
 * (arch_lacks() says which, and tests/check_arch_caps.c holds every
 * architecture to it); the hooks only an undeclared command uses may stay
 * NULL.
 *
 *   RECORD    record: find and verify the sites (decode, patch_nop_at,
 *             call_reloc_back, plt_slot with plt_entry_size and plt_stride, or
 *             text_plt_slot, nop_unit, nop_name; align_target
 *             where there is an align_reloc; patch_point_len with
 *             patch_points)
 *   AUDIT     audit: the same scan, checked against the image's tables
 *   IN_PLACE  record --in-place: the table written into the image
 *             (relative_reloc, abs64_reloc)
 *   REPAD     repad: ops literals aligned before the final link.  An
 *             architecture without an ops literal (literal_size 0) that
 *             declares it has nothing to pad: repad leaves its objects byte
 *             for byte, so that a build which repads every object works
 *             there too.  With a literal: insn_len, pcrel_decode,
 *             pcrel_encode, encode_nops, mapping_symbol; with relaxation
 *             (align_reloc or relax_reloc) both of them, align_target and
 *             align_padding.
 *   PIN       pin: calls kept fixed-size through the link's relaxation
 *             (relax_reloc, patch_points, patch_point_len, call_reloc_back,
 *             decode)
 *   EMBED     embed: the CALL_OPS trampoline, or the trampoline room, added
 *             to a program (callops, callops_site, callops_disabled,
 *             callops_tramp with a blob, encode_call, max_page_size)
 *   RUNTIME   runtime/: libpatchsite-callops attaches to embedded programs
 *             (needs EMBED; no hooks here, the runtime has its own patcher)
 */
enum arch_cap {
	ARCH_CAP_RECORD,
	ARCH_CAP_AUDIT,
	ARCH_CAP_IN_PLACE,
	ARCH_CAP_REPAD,
	ARCH_CAP_PIN,
	ARCH_CAP_EMBED,
	ARCH_CAP_RUNTIME,
	ARCH_CAP_COUNT
};
#define ARCH_CAN(cap)	(1u << (cap))

/* Return values of arch_ops.mapping_symbol */
#define ARCH_MAP_NONE	0	/* not a mapping symbol */
#define ARCH_MAP_CODE	1	/* instructions from here on (`$x`) */
#define ARCH_MAP_DATA	2	/* data from here on (`$d`) */

/* The most bytes arch_ops.callops_site reads (arch_callops.site_len) */
#define ARCH_CALLOPS_SITE_MAX	64

/* Flavour policy bits (arch_ops.policy) */
#define ARCH_POLICY_NOP_MCOUNT		0x1	/* a call_len-byte NOP at entry can be a site
						   (x86 -mnop-mcount, objtool --mnop) */
#define ARCH_POLICY_PFE_IS_PADDING	0x2	/* beside entry calls, __patchable_function_entries
						   is call padding, not ftrace's (x86 kernels) */
#define ARCH_POLICY_SORTED_AT_BOOT	0x4	/* the kernel sorts its table at boot: no
						   HAVE_BUILDTIME_MCOUNT_SORT (ppc64), so an
						   unsorted table is no finding */
#define ARCH_POLICY_RELATIVE_APPLIED	0x8	/* the linker always writes R_*_RELATIVE values in
						   place too (ppc64 ld has no
						   --no-apply-dynamic-relocs): a table that shows
						   neither convention (cleared) gets them in place */

struct arch_ops {
	const char *name;		/* "x86_64", "arm64", "riscv64" */
	unsigned int caps;		/* ARCH_CAN(ARCH_CAP_*) of what it supports */
	unsigned int policy;		/* ARCH_POLICY_* */
	unsigned int machine;		/* EM_X86_64, EM_AARCH64, EM_RISCV */
	unsigned int insn_align;	/* minimum instruction alignment: 1, 4, 2 */
	unsigned int call_len;		/* length of the entry call that ftrace patches:
					   x86 5 (E8 rel32), arm64 4 (BL), riscv 8 */
	unsigned int literal_size;	/* CALL_OPS literal before the function: 8 (0: none) */
	unsigned int patch_nop_sizes;	/* bit n set: an n-byte NOP can be a unit of a
					   -fpatchable-function-entry area (x86 0x90: 1;
					   arm64: 4; riscv c.nop or nop: 2, 4) */
	unsigned int abs64_reloc;	/* R_X86_64_64 / R_AARCH64_ABS64 / R_RISCV_64 */
	unsigned int relative_reloc;	/* R_*_RELATIVE */
	unsigned int jump_slot_reloc;	/* R_*_JUMP_SLOT */
	unsigned int glob_dat_reloc;	/* R_*_GLOB_DAT (0 when the arch has none) */
	unsigned int plt_entry_size;	/* 16 on all three (arm64 BTI/PAC PLTs: 24) */
	unsigned int plt_stride;	/* step between offsets in .plt/.iplt where
					   plt_slot is tried: the gcd of every entry
					   size and PLT header the arch's linkers emit
					   (x86 .plt.got without IBT 8; arm64 24) */
	unsigned int align_reloc;	/* R_RISCV_ALIGN: alignment the final link will
					   establish in an object (0: none) */
	unsigned int relax_reloc;	/* R_RISCV_RELAX: lets the link shrink the
					   instruction it sits on (0: none) */
	unsigned int none_reloc;	/* R_*_NONE */

	/*
	 * Trampoline patch points: labels at call sequences that ftrace
	 * rewrites in place with a fixed-size sequence of patch_point_len
	 * bytes (riscv: ftrace_call etc., 8 bytes of auipc+jalr).  NULL when
	 * the architecture's link cannot change their size.
	 */
	const char *const *patch_points;
	unsigned int patch_point_len;

	/*
	 * repad: data in a text section (under a data mapping symbol) keeps
	 * the alignment its offset had, up to this, where no alignment
	 * relocation tells the linker about it (riscv 8: a `.balign` before
	 * data leaves nothing else behind); 0: not checked.
	 */
	unsigned int data_align;

	/*
	 * embed: the largest page the architecture's kernels map (arm64
	 * 64 KiB).  The segment embed adds is aligned to it, so that it loads
	 * under every page size.
	 */
	uint64_t max_page_size;

	/*
	 * Decode one instruction at buf[0..len) which sits at address addr.
	 * Returns ARCH_DECODE_OK and fills *insn, or ARCH_DECODE_BAD /
	 * ARCH_DECODE_TRUNC.  Never reads past buf[len-1].
	 */
	int (*decode)(const uint8_t *buf, size_t len, uint64_t addr, struct arch_insn *insn);

	/*
	 * The length of the NOP unit of a patch area at buf[0..len) (x86 0x90,
	 * arm64 NOP, riscv c.nop or nop), or 0.  The same answer as decode()
	 * giving INSN_NOP of a patch_nop_sizes length, without the decode: the
	 * hot loops that measure NOP runs at every function entry use it.
	 */
	unsigned int (*patch_nop_at)(const uint8_t *buf, size_t len);

	/*
	 * Relocation of type `type` at offset r in an ET_REL text section:
	 * if it is the kind the compiler emits for a call to mcount/fentry,
	 * return how many bytes before r the call instruction starts
	 * (x86 PLT32/PC32: 1, GOTPCRELX: 2; arm64 CALL26/JUMP26: 0;
	 * riscv CALL/CALL_PLT: 0), else -1 (not an errno: a count or none,
	 * the one place arch/ returns -1).
	 */
	int (*call_reloc_back)(unsigned int type);

	/*
	 * Decode one PLT entry at buf[0..len) (address addr).  On success
	 * store the address of the GOT slot it jumps through in *slot and
	 * return 0; return -ENOENT if these bytes are not a PLT entry (PLT0, padding).
	 * NULL where there is no PLT code in .plt (see text_plt_slot).
	 */
	int (*plt_slot)(const uint8_t *buf, size_t len, uint64_t addr, uint64_t *slot);

	/*
	 * PLT call stubs that the linker puts among the code of text sections
	 * (ppc64: `std r2,24(r1); [addis r12,r2,HI;] ld r12,LO(r2|r12); mtctr
	 * r12; bctr`), where other architectures have .plt entries for
	 * plt_slot.  The stub at buf[0..len) (address addr) addresses its slot
	 * from a base the ABI fixes relative to the image's .got, whose address
	 * is `got`: store the slot in *slot and return 0, or return -ENOENT if
	 * these bytes are not such a stub.  NULL where PLT entries are in .plt.
	 */
	int (*text_plt_slot)(const uint8_t *buf, size_t len, uint64_t addr, uint64_t got,
			     uint64_t *slot);

	/*
	 * Bytes from a function's symbol to its local entry point, told from
	 * the symbol's st_other (ppc64 ELFv2: STO_PPC64_LOCAL; the global
	 * entry sets up the TOC pointer first), 0 when the two are one.  Calls
	 * from code that shares the TOC land at the local entry, and an entry
	 * call or patch area may sit there.  NULL: every symbol is its one
	 * entry point.
	 */
	unsigned int (*local_entry)(unsigned int st_other);

	/*
	 * Where an entry-profiling call (ppc64 -mprofile-kernel: `mflr r0;
	 * [std r0,16(r1);] bl _mcount` at the local entry, after the global
	 * entry's TOC setup) sits from a function's symbol, told from the code
	 * at the symbol (buf, len bytes; len may be short): 0 when no such
	 * call belongs there.  Used where the symbols have no sizes (a
	 * kernel's kallsyms or System.map, whose extents run to the next
	 * symbol and so take in the code of an overridden weak function that
	 * has no symbol): a call elsewhere in the extent is not a site.  NULL:
	 * the call's place is not fixed (mcount calls after the prologue).
	 */
	unsigned int (*entry_call_offset)(const uint8_t *buf, size_t len);

	/*
	 * Encoders, used by the rewriting commands.  Each writes exactly len
	 * bytes (len a multiple of insn_align) and returns 0, or -EINVAL (len not
	 * representable) or -ERANGE (target out of range).
	 */
	int (*encode_nops)(uint8_t *buf, size_t len);
	int (*encode_call)(uint8_t *buf, uint64_t from, uint64_t to);	/* call_len bytes */

	/*
	 * The NOP unit of code built with these ELF header flags: the NOP
	 * the toolchain pads with (x86 1, arm64 4, riscv c.nop 2 with
	 * EF_RISCV_RVC, else nop 4).
	 */
	unsigned int (*nop_unit)(unsigned int e_flags);

	/*
	 * The NOP unit a compiler's -march=ARCH string selects (riscv: c.nop
	 * with the C extension, else nop), or 0 when the string says nothing
	 * about it (NULL: the arch has one unit).  DW_AT_producer names
	 * -march, so a unit's flags tell its NOP unit in a mixed link.
	 */
	unsigned int (*nop_unit_march)(const char *march);
	/* A name for the NOP of `len` bytes, for people ("c.nop", "NOP", "0x90"). */
	const char *(*nop_name)(unsigned int len);

	/*
	 * The rewriting hooks below are NULL where not needed (enum
	 * arch_cap): x86_64 for all of them (it has no ops literal to pad),
	 * arm64 for the alignment relocation pair (it has none).
	 *
	 * insn_len: the length of the instruction that starts at buf[0],
	 * told from its first insn_align bytes (it may exceed len); 0 when
	 * fewer than insn_align bytes are given or the format is one the
	 * architecture does not decode (riscv: 48 bits and longer).
	 */
	unsigned int (*insn_len)(const uint8_t *buf, size_t len);

	/*
	 * The PC-relative reference at buf[0..len) (the rest of the section:
	 * a riscv auipc looks at the instructions after it).  ARCH_PCREL_OK
	 * with *pc filled; ARCH_PCREL_PAGE and ARCH_PCREL_UNPAIRED fill
	 * pc->name and pc->len, so the caller can say which instruction it
	 * refuses; ARCH_PCREL_NONE otherwise.  Never reads past buf[len-1].
	 */
	int (*pcrel_decode)(const uint8_t *buf, size_t len, struct arch_pcrel *pc);

	/*
	 * Write the pc->len bytes of *pc re-encoded for displacement disp to
	 * out: 0, or -ERANGE (out untouched) when disp is outside
	 * [pc->min, pc->max] or not a multiple of pc->step; -EINVAL for a *pc
	 * that pcrel_decode did not fill with ARCH_PCREL_OK.
	 */
	int (*pcrel_encode)(const struct arch_pcrel *pc, int64_t disp, uint8_t *out);

	/*
	 * An alignment relocation (align_reloc) at offset with addend: the
	 * offset it pads up to, which is where its NOP bytes end (*to), and
	 * the alignment the linker establishes there (*align).  0, or -ERANGE
	 * for an addend no assembler emits (negative, 1 MiB or more).
	 */
	int (*align_target)(uint64_t offset, int64_t addend, uint64_t *to, uint64_t *align);

	/*
	 * `.balign align` in code built with e_flags that the linker relaxes:
	 * the NOP bytes and the relocation the assembler emits (*pad).  0, or
	 * -EINVAL when align is not a power of two larger than the NOP unit.
	 */
	int (*align_padding)(unsigned int e_flags, uint64_t align, struct arch_align_pad *pad);

	/*
	 * Is `name` a mapping symbol, and of which kind: ARCH_MAP_CODE,
	 * ARCH_MAP_DATA or ARCH_MAP_NONE.  AAELF64's `$x` and `$d`, with an
	 * optional `.suffix`, are arch_mapping_symbol(); an architecture adds
	 * its own forms (riscv: `$x` followed by the ISA string).
	 */
	int (*mapping_symbol)(const char *name);

	/*
	 * embed: entry sites and the trampoline they call (ARCH_CAP_EMBED;
	 * NULL elsewhere).
	 *
	 * callops_site: buf[0..len) holds the bytes from `addr`, callops->
	 * site_back before a recorded site (arm64: the site is the function's
	 * literal, literal_size before the entry; x86_64: the call or NOPs, 4
	 * bytes before them where an ENDBR64 may be), on.  The alignment is
	 * judged first, from `addr` alone: ARCH_CALLOPS_MISALIGNED whatever buf
	 * holds (x86_64: never).  Then ARCH_CALLOPS_OK, with *site filled, when
	 * the bytes are an undisturbed site (arm64: NOP NOP, [BTI C or BTI JC],
	 * NOP NOP; x86_64: [ENDBR64] then a 5-byte call, a 6-byte call through
	 * the GOT or its addr32 relaxation, a 5-byte NOP or five 0x90), else
	 * ARCH_CALLOPS_NONE.  Never reads past buf[len-1].
	 */
	const struct arch_callops *callops;
	int (*callops_site)(const uint8_t *buf, size_t len, uint64_t literal,
			    struct arch_callops_site *site);

	/*
	 * callops_disabled: the idle form of a site, written over its patch
	 * area at site.disabled_off, which is address `at`, for a call to
	 * `tramp` (the trampoline, or the room's first byte) (arm64 `MOV X9,
	 * X30; NOP`: the caller's LR saved for the trampoline, and the NOP that
	 * the runtime turns into the call; x86_64 the 5-byte NOP 0f 1f 44 00 00
	 * the runtime turns into CALL rel32, and after a 6-byte call one 0x90
	 * more; riscv64 `auipc t0, hi20(tramp - at); nop`: the upper half of
	 * the call, written once, and the NOP the runtime turns into `jalr t0,
	 * lo12(t0)`).  Writes exactly len bytes: 0, or (buf untouched) -EINVAL
	 * when len is not a disabled_len callops_site gives, -ERANGE when tramp
	 * is out of the call's reach from at.
	 */
	int (*callops_disabled)(uint8_t *buf, size_t len, uint64_t at, uint64_t tramp);

	/*
	 * callops_tramp: the trampoline blob for link-time address addr, with
	 * the anchor (addr + tramp_anchor) and the default ops' func (addr +
	 * tramp_noop) filled in and the default ops' other fields zero.
	 * Writes exactly len bytes: 0, or -EINVAL (buf untouched) when len is
	 * not callops->tramp_size or addr is not 8-byte aligned.  NULL without a
	 * blob (tramp_size 0).
	 */
	int (*callops_tramp)(uint8_t *buf, size_t len, uint64_t addr);
};

extern const struct arch_ops arch_x86_64;
extern const struct arch_ops arch_arm64;
extern const struct arch_ops arch_riscv64;
extern const struct arch_ops arch_powerpc64le;

/* Look up by ELF e_machine; NULL if unsupported. */
const struct arch_ops *arch_by_machine(unsigned int machine);

/* The registered architectures, in arch.c's table order: i < arch_count(). */
size_t arch_count(void);
const struct arch_ops *arch_at(size_t i);

/* Does a support cap? */
bool arch_can(const struct arch_ops *a, enum arch_cap cap);
/* The capability's name as `patchsite arches` heads its column: "in-place" */
const char *arch_cap_name(enum arch_cap cap);
/* ... and the command that needs it, for messages: "record --in-place" */
const char *arch_cap_command(enum arch_cap cap);

/*
 * The architecture of e_machine `machine` when it supports cap.  Else
 * NULL, with the one line that says why in why[0..len) (never truncated
 * short of a terminated string): "unsupported machine NAME (e_machine N);
 * patchsite handles x86_64, arm64 and riscv64" (the list from the table,
 * MACHINE_NAME: the name elfutils gives the machine, elfio_machine_name;
 * NULL: "unknown"), or "embed is not
 * supported on riscv64 (patchsite arches lists what each architecture
 * supports)".
 */
const struct arch_ops *arch_for(unsigned int machine, const char *machine_name, enum arch_cap cap,
				char *why, size_t len);

/*
 * What a declares for cap but lacks: the name of the first hook or field
 * the capability needs that a does not fill in, NULL when it has them all
 * (or does not declare cap).
 */
const char *arch_lacks(const struct arch_ops *a, enum arch_cap cap);

/* Is `name` one of a's patch_points (none: false)? */
bool arch_is_patch_point(const struct arch_ops *a, const char *name);

/* AAELF64 mapping symbols: `$x`, `$d`, either with `.suffix` (arch_ops.mapping_symbol) */
int arch_mapping_symbol(const char *name);

/* Names of the profiling call targets, NULL-terminated (shared by all arches). */
extern const char *const arch_mcount_names[];
/* True if `name` must be called at function entry (__fentry__), not in the prologue. */
bool arch_mcount_is_entry(const char *name);
/* True if `name` is one of arch_mcount_names. */
bool arch_is_mcount_name(const char *name);

#endif /* PATCHSITE_ARCH_H */
