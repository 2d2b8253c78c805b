/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rewriter.h - the commands that rewrite files: pin and repad on
 * relocatable objects before the final link, embed on a linked program.
 * Each reads its input once, through elfio, and writes through elfio's one
 * writer (elfio_rw): a temporary file renamed over the target, so that on
 * any failure the input is left as it was.
 */
#ifndef PATCHSITE_REWRITER_H
#define PATCHSITE_REWRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pin_options {
	const char **extra_points;	/* more patch point names, NULL-terminated */
	bool dry_run;			/* report, write nothing */
	bool pin_mcount;		/* also pin -pg calls to _mcount (default on) */
	bool verbose;			/* a line per patch point (a dry run always) */
};

struct pin_report {
	size_t objects;			/* objects read */
	size_t written;			/* objects rewritten */
	size_t points;			/* patch points pinned now */
	size_t points_already;		/* patch points that were already fixed-size */
	size_t mcount;			/* _mcount calls pinned now */
	size_t mcount_already;
	size_t points_seen_named;	/* named (extra) points found */
};

/*
 * Pin every ftrace patch point in the riscv64 objects `paths` (objects or
 * thin archives) so that linker relaxation cannot shrink it: the
 * R_RISCV_RELAX that accompanies its call relocation becomes R_RISCV_NONE.
 * Prints one line per pinned point.  Returns 0 or negative errno.
 */
int pin_objects(const char *const *paths, size_t n, const struct pin_options *o,
		struct pin_report *rep);

/* --- repad (arm64 and riscv64 CALL_OPS) ----------------------------------- */

struct repad_report {
	size_t sections;		/* text sections realigned or grown */
	size_t functions;		/* functions given NOP padding before their literal */
	size_t bytes;			/* bytes of NOP inserted */
	size_t branches;		/* resolved PC-relative instructions re-encoded */
	size_t relocs;			/* relocations whose offset or addend moved */
	size_t symbols;			/* symbols whose value or size moved */
};

/*
 * Rewrite the arm64 or riscv64 relocatable object `in` into `out` (which
 * may be `in`) so that every CALL_OPS ops literal is 8-byte aligned after
 * the final link: text sections with sites get sh_addralign 8, NOP padding
 * is inserted before each misaligned literal (riscv64 sections the linker
 * relaxes: before each literal it could move, with an R_RISCV_ALIGN), and
 * symbols, relocations and resolved PC-relative instructions behind it are
 * moved.  Atomic: on failure `out` is untouched.  Returns 0 or negative
 * errno (error printed once).
 */
int repad_object(const char *in, const char *out, struct repad_report *rep);

/*
 * The same for an object elfio has open from memory (an archive's member,
 * elfio_ar_open_member), its errors under that image's name: *out the new
 * object (malloc'd, the caller's), or NULL when nothing changes.
 */
struct elfio;
int repad_member(struct elfio *e, uint8_t **out, size_t *len, struct repad_report *rep);

/*
 * repad_object, or for an archive every object in it (repad_archive.c): a
 * thin archive's members in place (out must be in), recursing; a regular
 * archive's members inline, written again to out with its symbol index
 * updated.  The report adds up.
 */
int repad_file(const char *in, const char *out, struct repad_report *rep);

#endif /* PATCHSITE_REWRITER_H */

/* --- embed (arm64 CALL_OPS trampoline and site table) ----------------------- */
#ifndef PATCHSITE_REWRITER_EMBED_H
#define PATCHSITE_REWRITER_EMBED_H

#include <stddef.h>
#include <stdint.h>

struct embed_report {
	size_t sites;			/* sites put in the table, left disabled */
	size_t misaligned;		/* CALL_OPS sites with a misaligned literal, untouched */
	uint64_t tramp;			/* trampoline address (x86_64: the room's) */
	size_t tramp_bytes;		/* trampoline blob size (x86_64: the room's) */
	uint64_t seg_addr;		/* the new PT_LOAD: address, file offset, size */
	uint64_t seg_offset;
	uint64_t seg_size;
};

/*
 * Add a PT_LOAD segment (R+X, congruent modulo the architecture's largest
 * page, above every other) to the program `in` (ET_EXEC or PIE): arm64
 * (-fpatchable-function-entry=4,2) gets the call-ops trampoline, a default
 * no-op ops and the site table, every aligned literal pointed at the
 * default ops and each site in its disabled form `MOV X9, X30; NOP`;
 * x86_64 (-pg -mfentry, -mnop-mcount, -fpatchable-function-entry=5) the
 * site table and a zero-filled trampoline room, each site one 5-byte NOP
 * (layout: runtime/segment.h).  The PT_NOTE program header is reused for
 * the segment.  Misaligned sites are listed on stdout and left untouched.
 * Atomic, to `out` (which may be `in`).  Returns 0 or negative errno (error
 * printed once).
 * CLI: patchsite embed IMAGE -o OUT
 */
int embed_image(const char *in, const char *out, struct embed_report *rep);

#endif /* PATCHSITE_REWRITER_EMBED_H */
