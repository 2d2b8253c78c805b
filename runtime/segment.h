/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * segment.h - the layout of the segment `patchsite embed` adds to a
 * program, read by the runtime's core (callops.c) and written by the tool
 * (rewriter/embed.c): one definition for both sides and every architecture.
 *
 * The segment starts with struct ps_seg_header, then count struct ps_site
 * entries sorted by func, then the trampoline blob (its layout is the
 * architecture's: arch/<arch>.c of the tool writes it, runtime/patcher/<arch>.c
 * calls it).  Every field is a little-endian 64-bit word, so the tool can
 * write it on any host.
 */
#ifndef PATCHSITE_SEGMENT_H
#define PATCHSITE_SEGMENT_H

#include <stdint.h>

/*
 * All addresses in the segment are link-time addresses: the runtime adds the
 * load bias of the object that holds it (0 for ET_EXEC; a PIE or a shared
 * library has its own).  A literal holds the address of
 * its ops minus that bias; the trampoline adds the bias back, computed
 * PC-relatively.  So a PIE needs no relocation and no writable text.
 * The sites' bytes (literal and call slot) never overlap, and sorting by
 * func sorts them by address.
 */
#define PS_SEG_MAGIC	0x31504f534c4c4143ull	/* "CALLSOP1" little-endian */

struct ps_site {
	uint64_t func;		/* function entry (symbol address) */
	uint64_t literal;	/* the 8-aligned ops literal (arm64: func - 8); 0: none
				   (x86_64) */
	uint64_t call;		/* the idle call slot the runtime turns into a call
				   (arm64: the NOP that becomes BL trampoline; x86_64:
				   the 5-byte NOP at func, or func + 4 after ENDBR64,
				   that becomes CALL rel32) */
	uint64_t reserved;
};

struct ps_seg_header {
	uint64_t magic;		/* PS_SEG_MAGIC */
	uint64_t self;		/* link-time address of this header (the segment's p_vaddr) */
	uint64_t count;		/* entries in sites[], sorted by func */
	uint64_t sites;		/* link-time address of the first struct ps_site */
	uint64_t tramp;		/* arm64: the shared trampoline's entry (the BL target);
				   x86_64: the trampoline room, page-aligned, zero-filled,
				   R+X, that the runtime carves trampolines from */
	uint64_t default_ops;	/* the no-op ops every idle literal holds (x86_64: 0) */
	uint64_t tramp_size;	/* x86_64: bytes of the trampoline room (arm64: 0) */
	uint64_t reserved;
};

/* The tool writes these by offset: their sizes are part of the format. */
_Static_assert(sizeof(struct ps_site) == 32, "struct ps_site is 32 bytes");
_Static_assert(sizeof(struct ps_seg_header) == 64, "struct ps_seg_header is 64 bytes");

#endif /* PATCHSITE_SEGMENT_H */
