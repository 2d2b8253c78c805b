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

#include "arch.h"
#include "elfio.h"

enum site_flavour {
	FLAVOUR_FENTRY,		/* call __fentry__ at entry (x86 -mfentry) */
	FLAVOUR_FENTRY_NOP,	/* 5-byte NOP at entry (x86 -mnop-mcount) */
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

struct record_options {
	int patchable_n, patchable_m;	/* -1: infer from the image */
	bool force_nop_mcount;		/* x86 -mnop-mcount without a table to show it */
	unsigned int align;		/* CALL_OPS literal alignment (0: 8) */
};

struct record {
	struct elfio *e;
	const struct arch_ops *arch;
	bool has_symbols;

	/* What the image shows */
	bool has_calls;			/* calls to an mcount/fentry target exist */
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
/* Find and verify every site.  Returns 0 or negative errno (error printed). */
int record_scan(struct elfio *e, const struct record_options *o, struct record **out);
void record_free(struct record *r);

/*
 * Verify one address as a site of the image's flavours; fills *s and
 * returns true if it decodes as one.  Used by audit for table entries.
 */
bool record_verify(struct record *r, uint64_t addr, struct site *s);
/* Index of site at addr, or -1. */
long record_find(const struct record *r, uint64_t addr);

/* --- Output ------------------------------------------------------------- */

enum out_format { OUT_LIST, OUT_SYMBOLIZE, OUT_JSON, OUT_ASM, OUT_ELF };

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

struct audit {
	struct finding *v;
	size_t n;
	size_t count[FIND_COUNT];
	bool has_dwarf;
	struct elfio_dwarf *dw;		/* owns the cu/producer strings */
};

/* Audit r's image.  Returns 0 or negative errno. */
int audit_run(struct record *r, struct audit *a);
void audit_free(struct audit *a);
/* Text for people (json false) or JSON for CI, to stdout. */
int audit_print(struct record *r, const struct audit *a, bool json, FILE *out);

/* --- Writing the table into the image -------------------------------------- */

struct inplace_options {
	bool keep_misaligned;		/* list misaligned CALL_OPS sites too */
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
 * the R_*_RELATIVE relocations that cover its slots.  Atomic, to out_path
 * (which may be the input's path).  Returns 0 or negative errno.
 */
int record_write_in_place(struct record *r, const struct inplace_options *o, const char *out_path,
			  struct inplace_report *rep);

#endif /* PATCHSITE_RECORDSITES_H */
