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
 * This layer knows nothing of ELF files: it sees byte buffers and the
 * address the first byte would have in the image.
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

/* Flavour policy bits (arch_ops.policy) */
#define ARCH_POLICY_NOP_MCOUNT		0x1	/* a call_len-byte NOP at entry can be a site
						   (x86 -mnop-mcount, objtool --mnop) */
#define ARCH_POLICY_PFE_IS_PADDING	0x2	/* beside entry calls, __patchable_function_entries
						   is call padding, not ftrace's (x86 kernels) */

struct arch_ops {
	const char *name;		/* "x86_64", "arm64", "riscv64" */
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
	 * riscv CALL/CALL_PLT: 0), else -1.
	 */
	int (*call_reloc_back)(unsigned int type);

	/*
	 * Decode one PLT entry at buf[0..len) (address addr).  On success
	 * store the address of the GOT slot it jumps through in *slot and
	 * return 0; return -1 if these bytes are not a PLT entry (PLT0, padding).
	 */
	int (*plt_slot)(const uint8_t *buf, size_t len, uint64_t addr, uint64_t *slot);

	/*
	 * Encoders, used by the rewriting commands.  Each writes exactly len
	 * bytes (len a multiple of insn_align) and returns 0, or -1 if the
	 * request cannot be encoded (len not representable, target out of range).
	 */
	int (*encode_nops)(uint8_t *buf, size_t len);
	int (*encode_call)(uint8_t *buf, uint64_t from, uint64_t to);	/* call_len bytes */
};

extern const struct arch_ops arch_x86_64;
extern const struct arch_ops arch_arm64;
extern const struct arch_ops arch_riscv64;

/* Look up by ELF e_machine; NULL if unsupported. */
const struct arch_ops *arch_by_machine(unsigned int machine);

/* Names of the profiling call targets, NULL-terminated (shared by all arches). */
extern const char *const arch_mcount_names[];
/* True if `name` must be called at function entry (__fentry__), not in the prologue. */
bool arch_mcount_is_entry(const char *name);
/* True if `name` is one of arch_mcount_names. */
bool arch_is_mcount_name(const char *name);

#endif /* PATCHSITE_ARCH_H */
