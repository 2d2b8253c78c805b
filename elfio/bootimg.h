/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bootimg.h - kernels as they ship: boot images (x86_64 bzImage, arm64 and
 * riscv64 Image, Image.gz, EFI zboot, a stripped powerpc64le vmlinux), their
 * bounded decompression, the kallsyms tables inside them and System.map
 * files beside them, turned into an ELF image in memory that the rest of
 * patchsite reads unchanged.
 */
#ifndef PATCHSITE_BOOTIMG_H
#define PATCHSITE_BOOTIMG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elfio/decompress.h"

/* --- kallsyms.c: the kernel's own symbol tables ------------------------ */

struct ksym {
	const char *name;	/* without the type letter (in the pool) */
	uint64_t addr;		/* set by kallsyms_resolve */
	uint32_t raw;		/* kallsyms_offsets[i] */
	char type;		/* 'T', 't', 'W', 'D', ... */
};

struct kallsyms {
	size_t count;
	struct ksym *syms;	/* in the table's order (by address); one spare slot past count */
	char *pool;		/* the names */
	/* where the tables lie in the blob decoded (byte offsets) */
	size_t num_syms_at, names_at, markers_at, token_table_at, token_index_at;
	size_t offsets_at, relative_base_at, seqs_at;	/* seqs_at 0: none */
	uint64_t relative_base;	/* the PTR as the blob holds it (0 where a relocation sets it) */
	bool abs_percpu;	/* CONFIG_KALLSYMS_ABSOLUTE_PERCPU's encoding */
	int layout;		/* 1: offsets first (6.1..6.9), 2: num_syms first (6.10+) */
};

/*
 * Find and decode the tables in buf (len bytes, buf's first byte aligned as
 * the kernel aligned it, to 8 at least): the token table by its digits,
 * the token index after it, then num_syms, names and markers checked
 * against each other, then the offsets and the relative base.  0, or
 * -ENOENT (no tables: *why says what was not found) or -EINVAL (tables
 * that do not decode: *why says where).  kallsyms_free after success.
 */
int kallsyms_decode(const uint8_t *buf, size_t len, struct kallsyms *out, const char **why);
/* Every symbol's address from the relative base `base` (the blob's, or one a relocation gives). */
void kallsyms_resolve(struct kallsyms *k, uint64_t base);
/* The index of the first symbol named name, or -1. */
long kallsyms_lookup(const struct kallsyms *k, const char *name);
void kallsyms_free(struct kallsyms *k);

/* --- bootimg.c --------------------------------------------------------- */

/* Bounds of every decompression of a boot image's payload. */
#define BOOTIMG_MAX_RATIO	64ULL		/* output at most this many times the input */
#define BOOTIMG_MAX_OUT		(1ULL << 30)	/* and at most 1 GiB */

/* Options from the command line (patchsite.c): NULL for none. */
void bootimg_set_system_map(const char *path);
void bootimg_set_config(const char *path);
/*
 * Does the kernel's build sort its ftrace table (CONFIG_BUILDTIME_MCOUNT_SORT)?
 * From --config=FILE, else config-VERSION beside IMAGE (vmlinuz-VERSION,
 * vmlinux-VERSION), else the image's IKCONFIG: 1 yes, 0 no (the kernel
 * sorts it at boot), -1 no config to be had.  *from: which one said.
 */
int bootimg_config_sorted(const char *path, const uint8_t *img, size_t len, const char **from);

/*
 * Which ftrace layout the kernel's build gave its compiler, from the same
 * config: 1 known (*ft), 0 a config that does not say (no DYNAMIC_FTRACE,
 * or options this reader does not know), -1 no config to be had.
 */
enum bootimg_ftrace_kind { BFT_UNKNOWN, BFT_CALLS, BFT_NOP5, BFT_AREA };
struct bootimg_ftrace {
	enum bootimg_ftrace_kind kind;
	int n, m;		/* BFT_AREA: -fpatchable-function-entry=N,M */
	char why[96];		/* the options that chose it */
};
int bootimg_config_ftrace(const char *path, const uint8_t *img, size_t len, uint16_t machine,
			  struct bootimg_ftrace *ft, const char **from);

/*
 * buf (len bytes, the file `path` or its decompressed copy) is not ELF, or
 * an ELF64 that may be a stripped vmlinux: if it is a boot image, make the
 * ELF image patchsite reads from it and return 0 with *out (elfio_alloc'd)
 * and *outlen.  1 if it is not one (the caller reads the ELF, or says "not
 * an ELF file"); a negative errno after one
 * line on stderr (quiet: none) if it is one that cannot be read.
 */
int bootimg_to_elf(const char *path, const uint8_t *buf, size_t len, bool quiet, uint8_t **out,
		   size_t *outlen);
/*
 * The same, where buf is the whole file open as fd (mapped from it): an
 * Image's bytes in the ELF image are then the file's pages, mapped, not
 * copied (elfio_map_file).  fd -1: bootimg_to_elf.
 */
int bootimg_to_elf_fd(const char *path, int fd, const uint8_t *buf, size_t len, bool quiet,
		      uint8_t **out, size_t *outlen);

/*
 * The decompressor family's older names (elfio/decompress.h), kept for
 * tests/check_bootimg.c and fuzz/fuzz_bootimg.c: bootimg_inflate is
 * elfio_z_inflate without a size hint.
 */
#define bootimg_z	elfio_z
#define BZ_NONE		ELFIO_Z_NONE
#define BZ_GZIP		ELFIO_Z_GZIP
#define BZ_XZ		ELFIO_Z_XZ
#define BZ_LZMA		ELFIO_Z_LZMA
#define BZ_ZSTD		ELFIO_Z_ZSTD
#define BZ_BZIP2	ELFIO_Z_BZIP2
#define BZ_LZ4		ELFIO_Z_LZ4
#define BZ_LZO		ELFIO_Z_LZO
#define bootimg_sniff	elfio_z_sniff
#define bootimg_z_name	elfio_z_name

static inline int bootimg_inflate(enum elfio_z z, const uint8_t *in, size_t inlen,
				  uint64_t limit, uint8_t **out, size_t *outlen)
{
	return elfio_z_inflate(z, in, inlen, limit, 0, out, outlen);
}

#endif
