/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * elfgen.h - build small ELF64 files for unit tests, byte by byte, so the
 * tests know exactly what is in them and depend on no compiler.
 */
#ifndef PATCHSITE_ELFGEN_H
#define PATCHSITE_ELFGEN_H

#include <stddef.h>
#include <stdint.h>

struct eg_sec {
	const char *name;
	uint32_t type;
	uint64_t flags, addr, align;
	const void *data;
	size_t size;
	uint32_t link, info;	/* EG_SYMTAB for "the generated .symtab" */
	uint64_t entsize;
};

struct eg_sym {
	const char *name;
	uint64_t value, size;
	unsigned int sec;	/* 1-based index into the secs array; 0 = undefined */
	unsigned char type, bind;
};

#define EG_SYMTAB 0xffffffffu

/*
 * Write an ELF64 LE file: section 0, the given sections (index i+1), then
 * .symtab (with a null symbol first, locals before globals as given),
 * .strtab and .shstrtab.  Returns 0 or -1.
 */
int eg_write(const char *path, uint16_t e_type, uint16_t machine, const struct eg_sec *secs,
	     size_t nsec, const struct eg_sym *syms, size_t nsym);
/* Index the generated .symtab will have. */
static inline uint32_t eg_symtab_index(size_t nsec) { return (uint32_t)nsec + 1; }

/* A fresh temporary file name under $TMPDIR (caller frees). */
char *eg_tmpname(const char *tag);
/* Read a whole file (caller frees); -1 on error. */
long eg_slurp(const char *path, uint8_t **buf);

#endif
