/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * recordsites.h - find, verify and tabulate ftrace patch sites.
 *
 * Given an opened image (elfio) this layer works out which flavours of
 * patch site the image uses, gathers candidates from every source
 * (function symbols, the image's own tables, a scan for calls to the
 * mcount/fentry target), verifies each by decoding it through the
 * architecture's decoder, and keeps the ones that decode.  The result is
 * sorted and deduplicated, with the image's existing tables kept for audit.
 */
#ifndef PATCHSITE_RECORDSITES_H
#define PATCHSITE_RECORDSITES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "arch/arch.h"
#include "elfio/elfio.h"

enum site_flavour {
	FLAVOUR_FENTRY,		/* call __fentry__ at entry (x86 -mfentry) */
	FLAVOUR_ENTRY_NOP,	/* a NOP as long as the architecture's call (call_len) at
				   entry, where the compiler left the call out: x86's
				   5-byte NOP of -mnop-mcount (ARCH_POLICY_NOP_MCOUNT);
				   printed "fentry-nop" */
	FLAVOUR_MCOUNT,		/* call mcount/_mcount in the prologue (-pg) */
	FLAVOUR_PATCHABLE,	/* -fpatchable-function-entry NOPs */
	FLAVOUR_CALL_OPS,	/* patchable, with the 8-byte ops literal before the symbol */
	FLAVOUR_COUNT
};

const char *site_flavour_name(enum site_flavour f);
int site_flavour_parse(const char *name, enum site_flavour *f);

/* Where a candidate came from (bitmask). */
#define SRC_SYMBOL	0x1
#define SRC_TABLE	0x2
#define SRC_SCAN	0x4

struct site {
	uint64_t addr;			/* recorded address (synthetic in ET_REL) */
	const struct elfio_symbol *func;	/* containing function, NULL without symbols */
	enum site_flavour flavour;
	unsigned int sources;
	bool misaligned;		/* CALL_OPS literal not naturally aligned */
};

enum table_kind {
	TABLE_PFE,		/* __patchable_function_entries (the compiler's) */
	TABLE_MCOUNT_LOC,	/* a __mcount_loc section */
	TABLE_REGION,		/* between __start_mcount_loc and __stop_mcount_loc */
};

struct table_entry {
	uint64_t slot;		/* address of the 8-byte slot */
	uint64_t value;		/* what it says (0 = zeroed by the build) */
	bool from_rela;		/* value came from a .rela.dyn RELATIVE addend */
	bool has_rela;		/* a RELATIVE relocation covers the slot */
	bool has_reloc;		/* ET_REL: a relocation fills the slot */
};

struct site_table {
	enum table_kind kind;
	const char *name;	/* section name, or "__start_mcount_loc" for a region */
	uint64_t start, end;	/* slot addresses [start, end) */
	struct table_entry *entries;
	size_t count;
};

/*
 * What the sites look like in a part of the image.  The layout comes from
 * evidence that is independent of the table under test (evidence.c).
 */
enum layout_kind {
	LAYOUT_NONE,		/* no sites */
	LAYOUT_CALLS,		/* calls to mcount/_mcount/__fentry__ (-pg, -mfentry) */
	LAYOUT_ENTRY_NOP,	/* a call_len-byte NOP at entry (-mnop-mcount: x86's 5-byte
				   NOP; only where the arch sets ARCH_POLICY_NOP_MCOUNT) */
	LAYOUT_AREA,		/* -fpatchable-function-entry NOP area */
};

struct layout {
	enum layout_kind kind;
	unsigned int unit;	/* AREA: bytes of one NOP (x86 1, arm64 4, riscv 2 or 4) */
	unsigned int pre;	/* AREA: NOP bytes before the symbol (the M of N,M) */
	unsigned int post;	/* AREA: NOP bytes after the symbol and its landing pad */
};

/* Where the main layout was established. */
enum evidence_source {
	EVIDENCE_NOTHING,	/* no function has a site's shape, no call to a target */
	EVIDENCE_STATED,	/* --patchable / --nop-mcount */
	EVIDENCE_DWARF,		/* the units' DW_AT_producer flags */
	EVIDENCE_CODE,		/* a vote of the functions' shapes */
	EVIDENCE_OBJECT,	/* ET_REL: the compiler's own relocations and tables */
	EVIDENCE_TABLE,		/* a table that is not the one under test */
	EVIDENCE_UNDER_TEST,	/* nothing independent (no symbols): the table itself */
};

struct evidence {
	enum evidence_source source;
	struct layout main;		/* the layout of most sites */
	size_t functions;		/* code vote: the functions that voted */
	size_t carriers;		/* ... that carry the main layout's shape */
	size_t pre_agree;		/* ... and of those, with the NOPs before the symbol */
	size_t units_stated;		/* DWARF: units whose producer names their flags */
	size_t units_main;		/* ... that name the main layout */
	size_t nlayouts;		/* distinct layouts with sites (> 1: mixed) */
	const char *table;		/* EVIDENCE_TABLE/_OBJECT: the table used */
};

struct record_options {
	int patchable_n, patchable_m;	/* -1: infer from the image */
	unsigned int patchable_unit;	/* 0: _n and _m count the image's NOP unit; else
					   bytes, and the area may mix NOP sizes (embed,
					   arch_callops.area_unit) */
	bool force_nop_mcount;		/* x86 -mnop-mcount without a table to show it */
	bool force_calls;		/* the sites are calls to the mcount target (-pg, -mfentry) */
	unsigned int align;		/* CALL_OPS literal alignment (0: 8) */
	enum arch_cap cap;		/* the command scanning: the image's architecture
					   must support it (init: ARCH_CAP_RECORD) */
	char stated_by[160];		/* "": the command line stated it; else the
					   build's config that did (a boot image's) */
};

struct record {
	struct elfio *e;
	struct record_options opts;	/* as scanned (a read-back scans the same way) */
	const struct arch_ops *arch;
	bool has_symbols;

	/* What the image shows: how, and the main layout in short */
	struct evidence ev;
	bool has_calls;			/* calls to an mcount/fentry target are sites */
	bool patchable;			/* -fpatchable-function-entry layout in use */
	unsigned int pre_bytes, post_bytes;	/* patch area around the symbol */
	bool post_known;
	bool nop_mcount;
	unsigned int align;

	struct site *sites;		/* verified, sorted by addr, unique */
	size_t nsites;

	struct site_table *tables;	/* the image's own tables, for audit */
	size_t ntables;

	/* private state */
	struct record_priv *priv;
};

void record_options_init(struct record_options *o);
/* Does o state the layout (--patchable, --nop-mcount, --calls)? */
bool record_options_stated(const struct record_options *o);
/* Find and verify every site.  Returns 0 or negative errno (error printed). */
int record_scan(struct elfio *e, const struct record_options *o, struct record **out);
void record_free(struct record *r);

/*
 * Verify one address as a site of the image's flavours; fills *s and
 * returns true if it decodes as one.  Used by audit for table entries.
 */
bool record_verify(struct record *r, uint64_t addr, struct site *s);
/*
 * Is addr, in f's extent, a call to an mcount target that cannot be f's (a
 * boot image, whose symbols have no sizes: the code of an overridden weak
 * function, which vmlinux's sizes leave outside every function)?
 */
bool record_unnamed_code(struct record *r, uint64_t addr, const struct elfio_symbol *f);
/* Index of site at addr, or -1. */
long record_find(const struct record *r, uint64_t addr);
/* The table a kernel reads and `record --in-place` writes, or NULL. */
const struct site_table *record_table_under_test(const struct record *r);
/* The layout that applies to the function at func_addr. */
const struct layout *record_layout_at(const struct record *r, uint64_t func_addr);
/* "call-ops, 8 bytes before the symbol and 8 after" and the like. */
void record_describe_layout(const struct record *r, const struct layout *l, char *buf,
			    size_t len);
/*
 * One line for people: how the layout was established, and whether the
 * table under test agrees with the sites (no trailing newline).
 */
int record_describe(struct record *r, char *buf, size_t len);	/* 0 or -ENOMEM, said */

/* --- Output ------------------------------------------------------------- */

enum out_format { OUT_LIST, OUT_SYMBOLIZE, OUT_JSON, OUT_ASM, OUT_ELF };

/*
 * The version of the JSON that record, audit and a batch audit print
 * (documented field by field in doc/patchsite.1, JSON OUTPUT); a field
 * removed or changed in meaning is a new version, a field added is not.
 */
#define RECORD_JSON_SCHEMA	1

/* Write the table in `fmt` to `path` (atomic) or to stdout when path is NULL. */
int record_output(struct record *r, enum out_format fmt, const char *path);
/* A JSON string (or null for NULL), escaped. */
void record_json_string(FILE *o, const char *s);
/* Escape a name from the image for a line of text output (\xNN). */
void record_text_name(char *buf, size_t len, const char *s);
void record_text_str(char *buf, size_t len, const char *s);	/* spaces kept */
/* An address for text output: 0x... or, in an object, escaped section+0x... */
void record_text_addr(struct record *r, uint64_t addr, char *buf, size_t len);
/* "func+0xoff" or "?" */
void record_symbolize(struct record *r, uint64_t addr, const struct elfio_symbol *f, char *buf,
		      size_t len);

/* --- Audit ---------------------------------------------------------------- */

enum finding_kind {
	FIND_MISALIGNED,	/* CALL_OPS literal slot not naturally aligned */
	FIND_STALE,		/* a table entry that is not a patch site */
	FIND_MISSING,		/* a patch site the table lacks */
	FIND_DUPLICATE,		/* a table entry listed more than once */
	FIND_SHORT,		/* a trampoline patch point the link made shorter than
				   what ftrace writes there (riscv relaxed jal) */
	FIND_UNSORTED,		/* a table the kernel would binary-search is not sorted */
	FIND_SHIFTED,		/* a table whose entries are consistently off from the sites
				   (recorded for another patch-area layout) */
	FIND_COUNT
};

const char *finding_kind_name(enum finding_kind k);

struct finding {
	enum finding_kind kind;
	uint64_t addr;
	const struct elfio_symbol *func;
	const char *table;		/* the table the entry is in (stale, duplicate) */
	char msg[400];
	const char *cu, *producer;	/* from DWARF, or NULL */
};

/* --ignore: kinds of finding that do not count, and "weak" (stale entries
   outside every sized function: the leftovers of overridden weak functions) */
#define AUDIT_IGNORE_WEAK	(1u << FIND_COUNT)
/* 0, or -EINVAL for a kind it does not know. */
int audit_ignore_parse(const char *list, unsigned int *mask);

struct audit {
	struct finding *v;
	size_t n, cap;
	size_t count[FIND_COUNT];
	size_t ignored[FIND_COUNT];	/* left out by audit_ignore */
	size_t ignored_weak;		/* ... of them, weak leftovers */
	bool has_dwarf;
	struct elfio_dwarf *dw;		/* owns the cu/producer strings */
};

/* Audit r's image.  Returns 0 or negative errno. */
int audit_run(struct record *r, struct audit *a);
void audit_free(struct audit *a);
/* Leave out the findings that mask ignores, counting them in a->ignored. */
void audit_ignore(struct audit *a, unsigned int mask);
/* Text for people (json false) or JSON for CI, to stdout. */
int audit_print(struct record *r, const struct audit *a, bool json, FILE *out);

/* --- Writing the table into the image -------------------------------------- */

struct inplace_options {
	bool keep_misaligned;		/* list misaligned CALL_OPS sites too */
	bool fsync;			/* in place: durable before the journal goes */
};

struct inplace_report {
	const char *table;		/* which table was written */
	size_t slots, used, relocs;	/* slots in it, sites written, .rela.dyn entries updated */
	size_t left_out;		/* misaligned sites left out */
	bool changed;			/* false when the image already held this table */
};

/*
 * Write the sorted table into the image's own reserved table (the
 * __start/__stop_mcount_loc region, else __mcount_loc, else
 * __patchable_function_entries), zeroing unused slots, and the addends of
 * the R_*_RELATIVE relocations that cover its slots.  When out_path is the
 * input's file, into the image where it lies under an undo journal (see
 * elfio_write_in_place; o->fsync makes it durable); otherwise to a copy
 * renamed over out_path.  Returns 0 or negative errno.
 */
int record_write_in_place(struct record *r, const struct inplace_options *o, const char *out_path,
			  struct inplace_report *rep);

#endif /* PATCHSITE_RECORDSITES_H */
