/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * record_priv.h - shared between the files of recordsites/, not a public
 * interface: the private state of a record and the functions its files
 * call each other by.  The calls go one way, down a line:
 *
 *   recordsites.c (the scan: targets, tables, candidates, verification)
 *     -> evidence.c (the layout) -> flavour.c (what the tables show)
 *     -> decode.c (bytes and decoding)
 *
 * A file calls only the ones below it; output.c, audit.c and inplace.c
 * use the public interface (recordsites.h).
 */
#ifndef PATCHSITE_RECORD_PRIV_H
#define PATCHSITE_RECORD_PRIV_H

#include "recordsites/recordsites.h"

struct target {
	uint64_t addr;
	bool entry;		/* __fentry__: must be at function entry */
};

/*
 * One function's shape, as decoded once (evidence.c): the votes are made of
 * these, and a function whose shape is its layout's area is a site with no
 * second decode.
 */
struct fshape {
	uint64_t addr;		/* the function's symbol */
	uint64_t size;		/* its st_size */
	uint8_t land;		/* bytes before the entry's first NOP or call: a landing
				   pad (BTI C, ENDBR64), or the way to a local entry
				   point (ppc64's TOC setup) with any pad there */
	uint8_t unit;		/* bytes of the patch-unit NOP at entry, 0: none */
	uint8_t post;		/* bytes of that unit's NOPs from entry */
	uint8_t pre;		/* bytes of that unit's NOPs just before the symbol */
	bool entry_nop;		/* begins with the call-sized NOP (x86 -mnop-mcount) */
	bool call;		/* holds a call to an mcount target */
	bool padding;		/* nothing but NOPs: padding with a name (__pfx_) */
	int stmt;		/* DWARF statement index, -1: none */
	int layout;		/* index into record_priv.layouts, once established */
	const struct elfio_symbol *sym;	/* the first of its aliases (global first) */
};

/* A call to an mcount target, decoded, and the function the decode was in. */
struct call {
	uint64_t addr;
	const struct elfio_symbol *func;	/* NULL: an image without symbols */
	bool entry;				/* the target is __fentry__ */
};

/* A part of the image with its own layout: [lo, hi) -> record_priv.layouts[layout]. */
struct region {
	uint64_t lo, hi;
	unsigned int layout;
};

struct record_priv {
	struct target *targets;		/* sorted by addr */
	size_t ntargets, targets_cap;
	struct target *slots;		/* GOT slots holding a target, sorted */
	size_t nslots, slots_cap;
	struct target *relsites;	/* ET_REL: call insns with an mcount reloc, sorted */
	size_t nrelsites, relsites_cap;
	struct target *alignpts;	/* ET_REL: addresses an R_*_ALIGN pads up to, with
					   .entry = alignment >= the literal's */
	size_t nalignpts, alignpts_cap;
	struct elfio_rela *dynrel;	/* linked: SHF_ALLOC relocations, sorted by offset */
	size_t ndynrel;
	struct elfio_section *cache;	/* last text section touched */
	struct table_key *tset;		/* (start, end) of every table: a hash set */
	size_t tset_cap;		/* its slots, a power of two (0: none yet) */
	size_t tables_cap;		/* room in record.tables */
	bool entry_only;		/* every target is an entry target */
	/* linked: __start_mcount_loc and __stop_mcount_loc, defined, if present */
	struct elfio_symbol region_start, region_stop;
	bool have_start, have_stop;
	unsigned int nop_unit;		/* the NOP unit the ELF flags name */

	/* calls to a target found by decoding (linked images), ascending */
	struct call *calls;
	size_t ncalls, calls_cap;

	/* the layouts (index 0: the default, for addresses in no region) */
	struct layout *layouts;
	size_t nlayouts, layouts_cap;
	struct region *regions;		/* sorted by lo, disjoint */
	size_t nregions;

	/* linked images with symbols: every function's shape, by address */
	struct fshape *shapes;
	size_t nshapes;
};

/* Bytes and decoding (decode.c) */
bool rs_is_padding_symbol(struct record *r, const struct elfio_symbol *f);
int rs_decode_at(struct record *r, uint64_t addr, struct arch_insn *insn);
void rs_prefetch_text(const struct record *r, uint64_t addr);
unsigned int rs_landing_len(struct record *r, uint64_t addr);
/* Bytes from f's symbol to its local entry point (arch.h local_entry), 0 for most. */
unsigned int rs_local_entry(const struct record *r, const struct elfio_symbol *f);
bool rs_is_patch_nop(const struct record *r, const struct arch_insn *in);
/* A call at addr in f's extent (a boot image's: no sizes) that cannot be f's (arch.h
   entry_call_offset): the code of a function with no symbol. */
bool rs_call_outside(struct record *r, const struct elfio_symbol *f, uint64_t addr);
bool rs_is_mcount_call(struct record *r, uint64_t addr, const struct arch_insn *in, bool *entry);
/* NOP bytes from addr in NOPs of exactly `unit` bytes (any patch unit: 0), up to limit. */
unsigned int rs_nop_run(struct record *r, uint64_t addr, unsigned int unit, unsigned int limit);
/* NOP bytes of exactly `unit` bytes each just before addr, not below lo, up to limit. */
unsigned int rs_nops_before(struct record *r, uint64_t addr, uint64_t lo, unsigned int unit,
			    unsigned int limit);
int rs_push_target(struct target **v, size_t *n, size_t *cap, uint64_t addr, bool entry);
const struct target *rs_find_target(const struct target *v, size_t n, uint64_t addr);
int rs_push_call(struct record *r, uint64_t addr, const struct elfio_symbol *func, bool entry);
/*
 * Function entry: the symbol, or just after its landing pad; where the
 * symbol has a local entry point apart from it, that one too.
 */
bool rs_at_entry(struct record *r, const struct elfio_symbol *f, uint64_t addr);
/* Decode NOPs of exactly `unit` bytes from *addr covering exactly `bytes`; advance *addr. */
bool rs_nops_exactly(struct record *r, uint64_t *addr, unsigned int bytes, unsigned int unit);
/* The function at addr (elfio_function_at), past padding symbols. */
const struct elfio_symbol *rs_function_past_padding(struct record *r, uint64_t addr,
						    uint64_t slack);
/* The function starting exactly at addr (the first of its aliases), or NULL. */
const struct elfio_symbol *rs_function_starting(struct record *r, uint64_t addr);

/* The old table-driven inference, for objects and symbol-less images (flavour.c). */
void rs_detect_from_tables(struct record *r, const struct record_options *o,
			   const struct site_table *only);
/* x86 kernels get __patchable_function_entries from call padding: drop that table. */
void rs_drop_call_padding(struct record *r);

/*
 * The layout (evidence.c): fills r->ev, the layouts and regions, and the
 * summary fields (has_calls, patchable, pre_bytes, ...).  Returns 0, or
 * -EINVAL with the error printed when the evidence is not decisive.
 */
int rs_establish_layout(struct record *r, const struct record_options *o);
/* A stated layout checked against the code (0, or -EINVAL with the error printed). */
int rs_check_stated(struct record *r);

/*
 * The site function shape i carries under its layout: true and *s filled,
 * or false.  The NOPs were decoded when the shape was taken.
 */
bool rs_shape_site(struct record *r, size_t i, struct site *s);

#endif /* PATCHSITE_RECORD_PRIV_H */
