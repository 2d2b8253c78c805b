/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * elfio.h - ELF access for patchsite, on libelf.
 *
 * This layer knows ELF and nothing of instructions.  It opens an image
 * (transparently decompressing .gz/.xz/.zst modules and SHF_COMPRESSED
 * sections), validates it one step at a time, and presents:
 *
 *  - sections with an address each.  In a linked image that is sh_addr.  In
 *    a relocatable object (ET_REL) every SHF_ALLOC section is given a
 *    synthetic, non-overlapping base, so that the layers above can treat
 *    "section + offset" as one flat 64-bit address and sort by it;
 *    elfio_addr_to_sec() maps it back for printing ("SECTION+0xOFF").
 *  - symbols with absolute (or synthetic) addresses, and the sized
 *    function symbols sorted by address for lookups;
 *  - relocation sections (SHT_RELA and SHT_REL) checked whole and decoded
 *    by one reader, kept in arrays or read where they lie;
 *  - images held in memory (an archive's members), and archives;
 *  - one writer for a changed image (elfio_rw, rewrite.c): byte patches,
 *    new section contents and headers, a new segment, all on the image
 *    already open, committed once to a temporary file beside the target,
 *    fsync'd, optionally read back, and renamed over it; the edit list
 *    below is its byte-patch layer.
 *
 * Errors are printed once, where they happen, as
 * "patchsite: FILE: what is wrong"; functions return 0 or a negative errno,
 * constructors NULL with errno set.
 */
#ifndef PATCHSITE_ELFIO_H
#define PATCHSITE_ELFIO_H

#include <elf.h>
#include <inttypes.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"

struct elfio_section {
	size_t index;
	const char *name;
	Elf64_Shdr shdr;
	uint64_t addr;		/* sh_addr, or synthetic base in ET_REL (0 if !ALLOC) */
	struct Elf_Scn *scn;
	/* Section bytes, decompressed.  Owned by libelf (d_buf of the section's
	   Elf_Data); valid until elfio_close().  NULL until elfio_section_data(). */
	const uint8_t *data;
	size_t size;
	bool loaded;
	/* SHT_RELA/SHT_REL: the entries, decoded once (ours, elfio_calloc'd); NULL
	   until elfio_relas() */
	struct elfio_rela *relas;
	size_t nrelas;
	bool relocs_checked;	/* entry size and symbol indexes checked (elfio_relocs) */
};

struct elfio_symbol {
	const char *name;	/* points into the string table (libelf's) */
	uint64_t addr;		/* absolute, or synthetic in ET_REL; 0 if undefined */
	uint64_t size;
	uint32_t shndx;		/* resolved through SHT_SYMTAB_SHNDX when needed */
	unsigned char type;	/* STT_* */
	unsigned char bind;	/* STB_* */
	unsigned char other;	/* st_other: visibility, and arch bits (ppc64's local entry) */
	bool in_section;	/* defined in section shndx: not UNDEF/ABS/COMMON (a
				   resolved index can equal SHN_ABS in a big object) */
};

struct elfio_symtab {
	size_t shndx;		/* section index of the table */
	size_t count;
	struct elfio_symbol *syms;
};

/* One relocation, whatever its section's kind: SHT_REL's addend is 0 (it lies in the bytes
   it relocates, which the caller reads). */
struct elfio_rela {
	uint64_t offset;	/* r_offset */
	uint32_t type;
	uint32_t sym;		/* checked: an index into the section's sh_link table */
	int64_t addend;
};

struct elfio;

/* Flags for elfio_open */
#define ELFIO_QUIET	0x1	/* do not print errors (used by probes) */

struct elfio *elfio_open(const char *path, unsigned int flags);
/*
 * An image held in memory (an archive's member), copied: errors name it
 * `name`.  Not decompressed, never written in place; a rewrite of it is
 * committed to memory (elfio_rw_commit_memory).
 */
struct elfio *elfio_open_memory(const char *name, const void *buf, size_t len,
				unsigned int flags);
void elfio_close(struct elfio *e);
/* Whether paths a and b name one file (the same path, or the same inode). */
bool elfio_same_file(const char *a, const char *b);

const char *elfio_path(const struct elfio *e);
const Elf64_Ehdr *elfio_ehdr(const struct elfio *e);
bool elfio_is_rel(const struct elfio *e);
/* True if the image was decompressed from .gz/.xz/.zst (cannot be written in place). */
bool elfio_was_compressed(const struct elfio *e);
/* True if the image was made from a kernel's boot image (vmlinuz: elfio/bootimg.c). */
bool elfio_is_boot_image(const struct elfio *e);
uint64_t elfio_file_size(const struct elfio *e);
/* The input's permission bits (what a rewrite of it keeps). */
mode_t elfio_mode(const struct elfio *e);
/* The whole image's bytes (mapped, or the decompressed copy), read-only. */
const uint8_t *elfio_raw(struct elfio *e, size_t *len);

size_t elfio_nsections(const struct elfio *e);
struct elfio_section *elfio_section(struct elfio *e, size_t index);
struct elfio_section *elfio_find_section_by_name(struct elfio *e, const char *name);
#define for_each_section(e, s)							\
	for (size_t __i = 1; __i < elfio_nsections(e) && ((s) = elfio_section(e, __i)); __i++)

/* Load (and decompress) a section's bytes; NOBITS gives data NULL, size 0. */
int elfio_section_data(struct elfio *e, struct elfio_section *s);
/*
 * Section s's bytes as a rewrite of the object keeps them, not loaded
 * (libelf's, valid until elfio_close): a section of symbols or
 * relocations only when its size is a whole number of entries, an
 * SHF_COMPRESSED one as the file holds it unless something inflated it in
 * place (elfio_section_data, libdw).  false when there are none.
 */
bool elfio_section_bytes(struct elfio *e, const struct elfio_section *s, const uint8_t **data,
			 size_t *size);
bool is_text_section(const struct elfio_section *s);
/*
 * Done with a section's bytes for a while: the pages of it that lie in the
 * mapped file leave this process (a later read maps them again from the
 * page cache, unchanged), so that what is resident at once is what is in
 * use.  Pointers into it stay valid.  A no-op for bytes that are not the
 * file's mapping (a decompressed image or section).
 */
void elfio_section_release(struct elfio *e, const struct elfio_section *s);

/* Section containing address addr (ALLOC sections, not NOBITS unless allow_nobits). */
struct elfio_section *elfio_addr_to_sec(struct elfio *e, uint64_t addr);

/*
 * The main symbol table: .symtab, or .dynsym when there is none, or NULL
 * when the image has neither.  Loaded on first use; errors are fatal.
 */
int elfio_symbols(struct elfio *e, const struct elfio_symtab **out);
/* Any symbol table by section index (for relocations' sh_link). */
int elfio_symtab_by_index(struct elfio *e, size_t shndx, const struct elfio_symtab **out);

/*
 * A symbol table read where it lies, with nothing loaded (an image's table
 * is megabytes; a pass over it for a few names needs none of that): checked
 * whole on first use, with the errors elfio_symtab_by_index gives, then
 * read one symbol at a time.  0 and the count, or a negative errno.
 */
int elfio_symtab_check(struct elfio *e, size_t shndx, size_t *count);
/* Of a checked table: symbol i's name, or all of it decoded. */
const char *elfio_symtab_name(struct elfio *e, size_t shndx, size_t i);
void elfio_symtab_get(struct elfio *e, size_t shndx, size_t i, struct elfio_symbol *out);
/* The section index of the main table (see elfio_symbols), 0 if none. */
size_t elfio_main_symtab(const struct elfio *e);

/*
 * Sized STT_FUNC (and STT_GNU_IFUNC) symbols of the main table, sorted by
 * address then name, aliases kept.  count 0 when the image has no symbols.
 */
int elfio_functions(struct elfio *e, const struct elfio_symbol *const **out, size_t *count);
/* Innermost sized function containing [addr - before, ...): see recordsites. */
const struct elfio_symbol *elfio_function_at(struct elfio *e, uint64_t addr, uint64_t before);

/*
 * A symbol's st_value as the file has it (in ET_REL, its offset in its
 * section, not the synthetic address), for a symbol in a section or
 * SHN_ABS.
 */
uint64_t elfio_symbol_value(struct elfio *e, const struct elfio_symbol *s);
/*
 * In a copy of a symbol table's bytes (elfio_section_bytes), symbol i's
 * st_value and st_size set.
 */
void elfio_symbol_put(uint8_t *table, size_t i, uint64_t value, uint64_t size);

/*
 * The one relocation reader.  A SHT_RELA or SHT_REL section (ELF64, as
 * elfio_open takes only ELF64; inflated first if SHF_COMPRESSED) is checked
 * whole on first use, each fault with its own message: the kind, the entry
 * size, the bytes, and every entry's symbol index against the table
 * sh_link names (a section that links to none may only use symbol 0).
 * Then its entries are decoded one
 * way, into struct elfio_rela, by elfio_relas (all of them, kept: elfio
 * owns them until elfio_close) or elfio_relocs (where they lie, for one
 * pass over a large table with no copy kept: entry i is
 * elfio_relocs_get(&r, i)).
 */
int elfio_relas(struct elfio *e, struct elfio_section *rel, const struct elfio_rela **out,
		size_t *count);

struct elfio_relocs {
	const uint8_t *raw;	/* the entries (libelf's, valid until elfio_close) */
	size_t count;
	size_t entsize;		/* sizeof(Elf64_Rela), or sizeof(Elf64_Rel): no addend */
	uint64_t file_off;	/* of the first entry in the file (sh_offset) */
};
int elfio_relocs(struct elfio *e, struct elfio_section *rel, struct elfio_relocs *out);

static inline struct elfio_rela elfio_relocs_get(const struct elfio_relocs *r, size_t i)
{
	/* the image is ELF64 LSB (checked at open) and so is every host we build for */
	if (r->entsize == sizeof(Elf64_Rela)) {
		Elf64_Rela a;

		memcpy(&a, r->raw + i * sizeof(a), sizeof(a));
		return (struct elfio_rela){ a.r_offset, (uint32_t)ELF64_R_TYPE(a.r_info),
					    (uint32_t)ELF64_R_SYM(a.r_info), a.r_addend };
	}
	Elf64_Rel b;

	memcpy(&b, r->raw + i * sizeof(b), sizeof(b));
	return (struct elfio_rela){ b.r_offset, (uint32_t)ELF64_R_TYPE(b.r_info),
				    (uint32_t)ELF64_R_SYM(b.r_info), 0 };
}

/*
 * Entry i of checked relocation section rel: where it lies in the file,
 * and its bytes for v (ELF64 LSB: r_offset, r_info, and for SHT_RELA
 * r_addend) in out[0..entsize), entsize returned.  For byte patches and
 * copies that the caller writes.
 */
static inline uint64_t elfio_reloc_file_offset(const struct elfio_section *rel, size_t i)
{
	return rel->shdr.sh_offset + i * rel->shdr.sh_entsize;
}
size_t elfio_reloc_encode(const struct elfio_section *rel, const struct elfio_rela *v,
			  uint8_t *out);
/* The other way: one entry of rel's kind, as it was read back from a file. */
static inline struct elfio_rela elfio_reloc_decode(const struct elfio_section *rel,
						   const uint8_t *entry)
{
	const struct elfio_relocs r = {
		.raw = entry, .count = 1,
		.entsize = rel->shdr.sh_type == SHT_RELA ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel),
	};

	return elfio_relocs_get(&r, 0);
}
/* The same, into a copy of the section's bytes at entry i. */
static inline void elfio_reloc_put(const struct elfio_section *rel, uint8_t *table, size_t i,
				   const struct elfio_rela *v)
{
	elfio_reloc_encode(rel, v, table + i * rel->shdr.sh_entsize);
}

/* Read a little-endian 64-bit value at address addr; -ERANGE if not mapped. */
int elfio_read_u64(struct elfio *e, uint64_t addr, uint64_t *val);
/* File offset of address addr (PROGBITS-like sections only); -ERANGE if none. */
int elfio_addr_to_offset(struct elfio *e, uint64_t addr, uint64_t *off);
/*
 * The one section whose file bytes hold [addr, addr + len), for a writer:
 * 0 with *sec; -ERANGE if no section with bytes in the file holds all of
 * it; -EEXIST if a second loaded section claims any of those addresses
 * (*other: a hostile header's overlap, where a write by address would
 * change bytes the reader never decoded as the range's).
 */
int elfio_addr_owner(struct elfio *e, uint64_t addr, uint64_t len, struct elfio_section **sec,
		     struct elfio_section **other);

/* Formatting of an address for humans: "0x401136" or ".text+0x1a4". */
void elfio_format_addr(struct elfio *e, uint64_t addr, char *buf, size_t len);

/* --- Memory: elfio_calloc, elfio_free, elfio_grow are base/'s (base/base.h) --- */

/* --- Errors -------------------------------------------------------------- */

/* Print "patchsite: PATH: message" once (the git/objtool style). */
void elfio_error(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* How many error lines elfio_error/elfio_err have printed so far. */
unsigned long elfio_errors_reported(void);
/* Same, but for the image e (honours ELFIO_QUIET). */
void elfio_err(const struct elfio *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * After a libelf call failed (errno cleared before it): "out of memory for
 * WHAT" and -ENOMEM if an allocation failed (errno ENOMEM; libelf's own
 * message does not say what the memory was for), else "FMT...: libelf's
 * reason" and -EINVAL.
 */
int elfio_elf_err(const struct elfio *e, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* --- Writing ------------------------------------------------------------- */

/*
 * An edit list on the input file: byte ranges replaced at file offsets.
 * Later edits of the same bytes win.  An edit that starts where the last
 * one ends extends it (a table's 43,000 slots are one edit, not 43,000
 * allocations).  Owned by the caller.
 */
struct elfio_edits {
	struct elfio_edit {
		uint64_t off;
		size_t len;
		uint8_t *bytes;	/* owned by the list (elfio_grow, elfio_free) */
		size_t cap;	/* bytes allocated */
	} *v;
	size_t n, cap;
};

void elfio_edits_init(struct elfio_edits *ed);
void elfio_edits_free(struct elfio_edits *ed);
int elfio_edits_add(struct elfio_edits *ed, uint64_t off, const void *bytes, size_t len);

/*
 * A read-back check for the atomic writers: check(tmp_path, ctx) runs on
 * the complete, fsync'd temporary file and returns 0 to go on, or a
 * negative errno (having printed why) to throw it away and leave out_path
 * untouched.
 */
struct elfio_write_check {
	int (*check)(const char *tmp_path, void *ctx);
	void *ctx;
};

/*
 * Write the input file with the edits applied to out_path, atomically:
 * temporary file in the same directory, same mode, fsync, rename.  On
 * any failure the temporary is removed and out_path is untouched.
 * Returns 0 or negative errno; prints the error.
 */
int elfio_write_edited(struct elfio *e, const struct elfio_edits *ed, const char *out_path);

int elfio_write_edited_check(struct elfio *e, const struct elfio_edits *ed, const char *out_path,
			     const struct elfio_write_check *chk);

/*
 * A file read back after it was written, for a read-back check: through a
 * window of 64 KiB, refilled where a read falls outside it (a table read in
 * order costs a read per window).  NULL with errno set; a read 0, or a
 * negative errno (-EIO past the end).
 */
struct elfio_readback;
struct elfio_readback *elfio_readback_open(const char *path);
int elfio_readback_read(struct elfio_readback *rb, uint64_t off, void *out, size_t len);
void elfio_readback_close(struct elfio_readback *rb);

/*
 * Generic atomic write of a buffer produced by the caller: same rules.
 * mode is used when out_path does not exist yet.
 */
int elfio_write_file_atomic(const char *out_path, const void *buf, size_t len, mode_t mode);
int elfio_write_file_atomic_check(const char *out_path, const void *buf, size_t len, mode_t mode,
				  const struct elfio_write_check *chk);

/* --- Editing an image where it lies (journal.c) ---------------------------- */

/*
 * Write the edits into the open image itself, never a copy: an undo
 * journal PATH.patchsite-journal (offset, old and new bytes of each range,
 * a CRC-32) is written whole before the first byte of the image changes,
 * the ranges are written and read back, chk->check(PATH) runs on the
 * edited image, and removing the journal commits.  A failure rolls the
 * old bytes back.  A SIGKILL at any point leaves the image as it was, or
 * a journal that the next elfio_open of it rolls back.  With ELFIO_FSYNC
 * the journal is durable before the image changes and the image before
 * the journal goes (a power cut then leaves the input or the output too).
 * *written: the bytes written into the image (0 if it already held them).
 */
#define ELFIO_FSYNC	0x1
int elfio_write_in_place(struct elfio *e, const struct elfio_edits *ed, unsigned int flags,
			 const struct elfio_write_check *chk, size_t *written);
/*
 * Run by elfio_open before it reads PATH: a journal beside it is rolled
 * back (complete), or removed (torn: the image was not touched yet; or
 * stale: the image was replaced since).  0 when there was none or it was
 * handled; else a negative errno, the error printed unless quiet.
 */
int elfio_journal_recover(const char *path, bool quiet);
/* PATH.patchsite-journal, malloc'd (NULL when out of memory). */
char *elfio_journal_path(const char *path);

/* --- Rewriting the open image (rewrite.c) ----------------------------------- */

/*
 * The one way a command writes a changed image: a model of the image elfio
 * has open (never the file opened again), changed by the calls below and
 * committed once, atomically, with the optional read-back check.  Byte
 * patches keep the layout; new section contents or headers (relocatable
 * objects only) have libelf lay the object out anew; an added segment
 * (linked images only) goes after the last byte with its sections, a grown
 * .shstrtab and a new section header table, nothing loaded moving.  Every
 * function prints its error once and returns 0 or a negative errno.
 */
/*
 * Program headers and section headers as the file holds them (ELF64,
 * little-endian), read from the open image's bytes, not through libelf: the
 * segment writer and embed's planning check the headers libelf would refuse
 * to describe.  elfio_phdr_read/elfio_shdr_read return -EINVAL when the
 * entry lies outside the file; the caller checks the table's bounds first
 * (elfio_header_tables) and says what is wrong in its own words.
 */
struct elfio_phdr {
	uint32_t type, flags;
	uint64_t offset, vaddr, paddr, filesz, memsz, align;
};
/* true when e_phoff..+phnum and e_shoff..+shnum entries lie inside the file */
bool elfio_header_tables_inside(struct elfio *e);
int elfio_phdr_read(struct elfio *e, size_t i, struct elfio_phdr *ph);
int elfio_shdr_read(struct elfio *e, size_t i, Elf64_Shdr *sh);

struct elfio_rw;

struct elfio_rw *elfio_rw_new(struct elfio *e);
void elfio_rw_free(struct elfio_rw *w);
int elfio_rw_patch(struct elfio_rw *w, uint64_t file_off, const void *bytes, size_t len);
int elfio_rw_patch_addr(struct elfio_rw *w, uint64_t addr, const void *bytes, size_t len);
/* ET_REL: a section's header as it will be written, and a new one */
const Elf64_Shdr *elfio_rw_shdr(struct elfio_rw *w, size_t idx);
int elfio_rw_set_shdr(struct elfio_rw *w, size_t idx, const Elf64_Shdr *sh);
/* ET_REL: new contents for a section; data stays the caller's until commit */
int elfio_rw_set_data(struct elfio_rw *w, size_t idx, const void *data, size_t size);
/*
 * Linked images: place a new PT_LOAD of `size` bytes after the last byte of
 * the file (offset aligned to 16) at an address at or above min_addr,
 * congruent to the offset modulo `align`; returns both.  Then the data (the
 * caller's until commit), and sections inside it (sh_offset from the
 * segment's start, sh_addr its address there).
 */
int elfio_rw_place_segment(struct elfio_rw *w, uint64_t size, uint64_t align, uint64_t min_addr,
			   uint64_t *off, uint64_t *addr);
int elfio_rw_add_segment(struct elfio_rw *w, uint32_t flags, const void *data);
int elfio_rw_add_section(struct elfio_rw *w, const char *name, const Elf64_Shdr *sh);
/* Anything to write? */
bool elfio_rw_changes(const struct elfio_rw *w);
int elfio_rw_commit(struct elfio_rw *w, const char *out_path,
		    const struct elfio_write_check *chk);
/*
 * The same rewrite (new section contents, byte patches; not a new segment)
 * into memory: *buf malloc'd, the caller's.
 */
int elfio_rw_commit_memory(struct elfio_rw *w, uint8_t **buf, size_t *len);
/*
 * Byte patches only: write them into the open image where it lies
 * (elfio_write_in_place); chk->check gets the image's own path.
 */
int elfio_rw_commit_in_place(struct elfio_rw *w, unsigned int flags,
			     const struct elfio_write_check *chk, size_t *written);

/* --- DWARF: the compilation units ------------------------------------------ */

/*
 * Each unit's first DIE: DW_AT_producer and its address ranges (and, for an
 * address, DW_AT_name too), read without loading the rest of the DWARF
 * (dwarf.c says how).
 */
struct elfio_dwarf;

struct elfio_dwarf_unit {
	uint64_t offset;	/* of the unit's header in .debug_info */
	const char *producer;	/* DW_AT_producer, or NULL; valid until the next call */
	bool same_producer;	/* the producer is the last one given (same bytes) */
};

/*
 * NULL with errno ENODATA when the image has no .debug_info (not an
 * error), or ENOMEM (error printed).
 */
struct elfio_dwarf *elfio_dwarf_open(struct elfio *e);
void elfio_dwarf_close(struct elfio_dwarf *d);
/*
 * The next unit, in .debug_info order: 1 and *u, 0 after the last one (or
 * at a header that makes no sense: malformed DWARF says nothing more), or
 * negative errno (error printed).
 */
int elfio_dwarf_next_unit(struct elfio_dwarf *d, struct elfio_dwarf_unit *u);
/*
 * The address ranges [lo, hi) of the unit elfio_dwarf_next_unit() gave
 * last, as libdw's dwarf_ranges() gives them: fn(ctx, lo, hi) for each.
 * 0, fn's non-zero return (which stops it), or negative errno.
 */
int elfio_dwarf_unit_ranges(struct elfio_dwarf *d, int (*fn)(void *ctx, uint64_t lo, uint64_t hi),
			    void *ctx);
/*
 * The compilation unit holding addr (through .debug_aranges, as libdw's
 * dwarf_addrdie; in ET_REL the object's only unit): its DW_AT_name and
 * DW_AT_producer (the compiler and its flags), owned by d.  0 found, 1
 * unknown, negative errno (error printed).
 */
int elfio_dwarf_cu(struct elfio_dwarf *d, struct elfio *e, uint64_t addr, const char **name,
		   const char **producer);

/*
 * DWARF bytes already in memory (a section of an object, ours to read),
 * read by the rules of the reader above: one LEB128 decoder, one table of
 * form sizes, one abbreviation walk.  repad (rewriter/repad_dwarf.c) reads
 * and corrects an object's DWARF with these.
 *
 * A cursor over [p, end): every read past end sets bad, which sticks (later
 * reads return 0 and do not move).  A read of n fixed bytes that does not
 * fit leaves p where it was; a LEB128 that runs off end, or is longer than
 * the 10 bytes a 64-bit value needs, leaves p after the bytes it read.
 */
struct elfio_dw_cur {
	const uint8_t *p, *end;
	bool bad;
};

/* n (1..8) bytes, little-endian */
uint64_t elfio_dw_fixed(struct elfio_dw_cur *c, unsigned int n);
uint64_t elfio_dw_uleb(struct elfio_dw_cur *c);
int64_t elfio_dw_sleb(struct elfio_dw_cur *c);
void elfio_dw_skip(struct elfio_dw_cur *c, uint64_t n);
/*
 * A unit's initial length: 32-bit, or 0xffffffff and 64-bit (*offsz 4 or
 * 8).  Values 0xfffffff0-0xfffffffe are returned as they are: the caller
 * says what a reserved length means to it.
 */
uint64_t elfio_dw_initial_length(struct elfio_dw_cur *c, unsigned int *offsz);
/*
 * A ULEB128 of v in buf (16 bytes), at least min bytes long (redundant
 * continuation bytes: a value rewritten in place keeps its size); its length.
 */
size_t elfio_dw_uleb_encode(uint8_t *buf, uint64_t v, size_t min);

/* A .debug_info unit's header, after its initial length. */
struct elfio_dw_cu {
	unsigned int version, unit_type, addr_size;
	uint64_t abbrev;		/* debug_abbrev_offset */
	const uint8_t *abbrev_at;	/* where that field lies (an object relocates it) */
};

/*
 * Read it at c, offsz from the initial length, for DWARF 2-5 (a DWARF 5
 * skeleton or type unit's extra fields too; before 5 the type is
 * DW_UT_compile): c at the unit's first DIE.  false for another version,
 * whose layout is not known.  A header cut short sets c->bad.
 */
bool elfio_dw_cu_header(struct elfio_dw_cur *c, unsigned int offsz, struct elfio_dw_cu *h);

/* What sizes a form's value: its unit's version, address and offset sizes. */
struct elfio_dw_sizes {
	unsigned int version, addr_size, offset_size;
};

/*
 * Bytes the value of form takes when they do not depend on the value (0 for
 * DW_FORM_flag_present and DW_FORM_implicit_const, whose value is in the
 * abbreviation), or -1 (a LEB128, a string, a block, or a form not known).
 * DW_FORM_ref_addr is address-sized in DWARF 2, offset-sized after.
 */
int elfio_dw_form_size(const struct elfio_dw_sizes *s, unsigned int form);
/*
 * Step c over one value of form; false (c->bad set) for a form not known
 * (DW_FORM_indirect among them) or a value that runs past c->end.
 */
bool elfio_dw_skip_form(const struct elfio_dw_sizes *s, unsigned int form, struct elfio_dw_cur *c);

/*
 * The abbreviation with code in the table at offset table of the
 * .debug_abbrev bytes [abbrev, abbrev + size), walked entry by entry:
 * true and *attrs at its (attribute, form) list (*tag its DW_TAG_*, may be
 * NULL), false if the table ends (code 0) or runs out first.
 */
bool elfio_dw_abbrev_find(const uint8_t *abbrev, size_t size, uint64_t table, uint64_t code,
			  struct elfio_dw_cur *attrs, uint64_t *tag);

/* One attribute of a DIE as elfio_dw_die_attr() gives it. */
struct elfio_dw_attr {
	uint64_t name;		/* DW_AT_* */
	uint64_t form;		/* DW_FORM_* */
	int64_t implicit;	/* DW_FORM_implicit_const: its value */
	const uint8_t *val;	/* where the value starts in the DIE */
};

/*
 * The next attribute of a DIE, c at its value, attrs the rest of its
 * abbreviation's list (from elfio_dw_abbrev_find()): 1 and *a with c past
 * the value; 0 at the end of the list (c after the DIE's last value); -EINVAL
 * when the list or the value cannot be read (the form is unknown, or runs
 * past the end).
 */
int elfio_dw_die_attr(const struct elfio_dw_sizes *s, struct elfio_dw_cur *attrs,
		      struct elfio_dw_cur *c, struct elfio_dw_attr *a);

/* --- Archives (archive.c) ------------------------------------------------------ */

/* What the file at path is: an archive of either kind, or not one (unreadable included). */
enum elfio_ar_kind { ELFIO_AR_NONE, ELFIO_AR_THIN, ELFIO_AR_REGULAR };
enum elfio_ar_kind elfio_archive_kind(const char *path);
/* True if the file starts like an ar archive. */
bool elfio_is_archive(const char *path);

/*
 * The member paths of a thin archive (resolved against the archive's
 * directory): strings and their array from the allocator family (each freed
 * with elfio_free).  Regular
 * archives are refused (their members are inline).  0 or negative errno, error printed.
 */
int elfio_thin_archive_members(const char *path, char ***names, size_t *count);

/*
 * A regular archive, read whole: each ELF member can be opened as an image
 * (from memory, named "ARCHIVE(MEMBER)" in errors), replaced, and the
 * archive written again atomically (write.c's temporary, fsync, rename),
 * with the input's mode and its symbol index's member offsets rewritten for
 * the new sizes.  Errors printed; 0 or a negative errno.
 */
struct elfio_ar;
int elfio_ar_read(const char *path, struct elfio_ar **out);
void elfio_ar_free(struct elfio_ar *ar);
size_t elfio_ar_count(const struct elfio_ar *ar);
/* Member i's bytes; true if it is an ELF object (not the index or names). */
bool elfio_ar_is_object(const struct elfio_ar *ar, size_t i, const uint8_t **data, size_t *size);
/*
 * Member i opened with elfio_open_memory: 0 and *out (elfio_close it), 0
 * and *out NULL when the member is no ELF object, or a negative errno.
 */
int elfio_ar_open_member(struct elfio_ar *ar, size_t i, unsigned int flags, struct elfio **out);
/*
 * Replace member i's bytes with data (now the archive's).  Member bytes are
 * malloc'd, not from the allocator family: this contract is older than the
 * family and callers (tests/check_elfio.c, repad_member) hand over malloc.
 */
int elfio_ar_replace(struct elfio_ar *ar, size_t i, uint8_t *data, size_t size);
int elfio_ar_write(struct elfio_ar *ar, const char *out_path);

/* --- Building a small relocatable object ------------------------------- */

/*
 * One 8-byte slot of a table object: an absolute value, or (secname != NULL)
 * a relocation against the section of that name at `value` bytes in.
 */
struct elfio_table_ref {
	const char *secname;
	uint64_t sec_flags;	/* the referenced section's sh_flags */
	uint64_t value;
};

/*
 * Build an ET_REL object holding section `table` (SHF_ALLOC, 8-aligned)
 * with one 8-byte slot per ref.  References to sections become abs64
 * relocations against empty sections of the same name and flags, so that
 * when this object is linked first (ld -r -o out.o THIS.o input.o) each
 * input section starts at offset 0 of the output section of that name.
 * *buf is malloc'd.  Deterministic: no dates, no paths.
 */
int elfio_build_table_object(unsigned int machine, unsigned int e_flags, unsigned int abs64_type,
			     const char *table, const struct elfio_table_ref *refs, size_t n,
			     uint8_t **buf, size_t *len);

/* --- Dynamic symbols by name (dynsym.c) --- */

/*
 * The values of the defined functions NAMES[0..n) in PATH's .dynsym
 * (VALS[k], 0 for one not found) and its first PT_LOAD's address, page-
 * aligned down (FIRST_LOAD).  0, -ENOENT if any name is missing or PATH is
 * not ELF, -errno if it cannot be opened.
 */
int elfio_dynsym_lookup(const char *path, const char *const *names, uint64_t *vals, int n,
			uint64_t *first_load);

/* elfutils' name for an ELF machine (the message arch_for writes), or NULL. */
const char *elfio_machine_name(unsigned int machine);

#endif /* PATCHSITE_ELFIO_H */
