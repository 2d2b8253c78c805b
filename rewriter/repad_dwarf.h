/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * repad_dwarf.h - private interface between repad.c and repad_dwarf.c: the
 * DWARF values that the assembler resolved without a relocation.
 */
#ifndef PATCHSITE_REPAD_DWARF_H
#define PATCHSITE_REPAD_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One relocation of a debug section, as repad resolves it. */
struct repad_dw_rel {
	uint64_t offset;	/* r_offset in the debug section */
	size_t sec;		/* section of the target (0: none, an absolute value) */
	int64_t old;		/* offset of the target in `sec` before repad */
	int64_t new;		/* ... and after */
};

/* What repad_dwarf_*() need from repad.c. */
struct repad_dw {
	const char *path;
	const char *name;			/* the debug section's name, for messages */
	const struct repad_dw_rel *rel;		/* its relocations, sorted by offset */
	size_t nrel;
	const void *ctx;
	/* new offset of old offset x of section sec; end: x ends a range */
	int64_t (*map)(const void *ctx, size_t sec, int64_t x, bool end);
	/* whether section sec grows (has insertion points) */
	bool (*grows)(const void *ctx, size_t sec);
	size_t units;				/* .debug_info units (repad_dwarf_info) */
	struct repad_dw_rel cu_low;		/* the last one's DW_AT_low_pc relocation */
	size_t loc_sec;				/* .debug_loclists' index, 0: none */
	uint64_t *loc_starts;			/* out: its lists named by DIEs (elfio_free) */
	size_t nloc_starts, caploc_starts;
	bool loc_bad;				/* out: DIEs not understood, lists unknown */
	size_t untouched;			/* out: units left as they were, see .c */
	size_t fixed;				/* out: values or rows corrected */
};

/* A new section: contents, and the bytes inserted at old offsets. */
struct repad_dw_out {
	uint8_t *buf;		/* elfio_free()d, NULL if unchanged */
	size_t size;
	uint64_t *points;	/* increasing old offsets */
	uint64_t *pads;		/* bytes inserted at each */
	size_t n, cap, pads_cap;
};

void repad_dw_out_free(struct repad_dw_out *o);

/*
 * .debug_line: re-encode the address advances of every line program whose
 * sequence starts (DW_LNE_set_address) in a section that grows.  The new
 * section may be longer; out->points/pads say where bytes were inserted.
 */
int repad_dwarf_line(struct repad_dw *dw, const uint8_t *d, size_t size,
		     struct repad_dw_out *out);

/*
 * .debug_info (with its .debug_abbrev): the DW_AT_high_pc length of each
 * unit's DIE whose DW_AT_low_pc lies in a section that grows; patched in
 * place in `d` (a copy of ours).
 */
int repad_dwarf_info(struct repad_dw *dw, uint8_t *d, size_t size, const uint8_t *abbrev,
		     size_t abbrev_size, size_t abbrev_sec);

/* .debug_aranges: the lengths of address ranges in sections that grow, in place. */
int repad_dwarf_aranges(struct repad_dw *dw, uint8_t *d, size_t size);

/*
 * .debug_rnglists: DW_RLE_offset_pair from a relocated base (the unit's
 * DW_AT_low_pc, or a base_address entry) in a section that grows, and
 * start_length lengths.  Only for an object
 * with one unit (dw->units, dw->cu_low from repad_dwarf_info()); ULEBs
 * that need more bytes grow the section (out->points/pads).
 */
int repad_dwarf_rnglists(struct repad_dw *dw, const uint8_t *d, size_t size,
			 struct repad_dw_out *out);

/*
 * .debug_loclists: DW_LLE_offset_pair and DW_LLE_start_length of the lists
 * that the DIEs name (dw->loc_starts, from repad_dwarf_info() with
 * dw->loc_sec set), in an object with one unit.
 */
int repad_dwarf_loclists(struct repad_dw *dw, const uint8_t *d, size_t size,
			 struct repad_dw_out *out);

#endif
