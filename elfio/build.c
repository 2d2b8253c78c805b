// SPDX-License-Identifier: GPL-2.0-only
/*
 * build.c - write a small relocatable object holding one table section.
 *
 * Strategy: the object is tiny and its layout fixed, so it is laid out by
 * hand into a buffer (header, table, relocations, symbols, strings, section
 * headers) and handed to the atomic writer; no libelf state to clean up and
 * the bytes depend on nothing but the input.  readelf, eu-elflint and ld
 * are the checks on it (tests/e2e).
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfio/elfio_priv.h"

struct strtab {
	char *buf;
	size_t len, cap;
};

static int str_add(struct strtab *t, const char *s, uint32_t *off)
{
	size_t n = strlen(s) + 1;

	if (elfio_grow(&t->buf, &t->cap, t->len + n, 1))
		return -ENOMEM;
	memcpy(t->buf + t->len, s, n);
	*off = (uint32_t)t->len;
	t->len += n;
	return 0;
}

/* References by section name, then by position (ctx: the refs). */
static int cmp_ref_name(const void *a, const void *b, void *ctx)
{
	const struct elfio_table_ref *refs = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(refs[i].secname, refs[j].secname);

	return c ? c : i < j ? -1 : i > j;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

static size_t align8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

int elfio_build_table_object(unsigned int machine, unsigned int e_flags, unsigned int abs64_type,
			     const char *table, const struct elfio_table_ref *refs, size_t n,
			     uint8_t **buf, size_t *len)
{
	struct strtab shstr = { 0 }, str = { 0 };
	const char **ph = NULL;		/* placeholder section names, in first-use order */
	uint64_t *phflags = NULL;
	size_t *order = NULL, *first = NULL, *lead = NULL, *rank = NULL;
	size_t nph = 0, nrel = 0;
	uint8_t *out = NULL;
	int ret = -ENOMEM;
	uint32_t off;

	ph = elfio_calloc(n + 1, sizeof(*ph));
	phflags = elfio_calloc(n + 1, sizeof(*phflags));
	order = elfio_calloc(n + 1, sizeof(*order));
	first = elfio_calloc(n + 1, sizeof(*first));
	lead = elfio_calloc(n + 1, sizeof(*lead));
	rank = elfio_calloc(n + 1, sizeof(*rank));
	if (!ph || !phflags || !order || !first || !lead || !rank)
		goto out;
	/*
	 * One placeholder per distinct section name, numbered in order of first
	 * use.  Sorting the references by (name, position) groups them; a
	 * linear search per reference was quadratic for an object with a
	 * section per function.  first[i]: the first use of reference i's name;
	 * rank[that]: its placeholder.
	 */
	for (size_t i = 0; i < n; i++)
		if (refs[i].secname)
			order[nrel++] = i;
	if (nrel)
		qsort_r(order, nrel, sizeof(*order), cmp_ref_name, (void *)refs);
	for (size_t k = 0, g = 0; k < nrel; k++) {
		if (!k || strcmp(refs[order[k]].secname, refs[order[k - 1]].secname)) {
			g = order[k];
			lead[nph++] = g;
		}
		first[order[k]] = g;
	}
	if (nph)
		qsort(lead, nph, sizeof(*lead), cmp_size);
	for (size_t j = 0; j < nph; j++) {
		ph[j] = refs[lead[j]].secname;
		phflags[j] = refs[lead[j]].sec_flags;
		rank[lead[j]] = j;
	}

	/* section indexes: 0 null, 1..nph placeholders, then the rest */
	size_t i_table = 1 + nph;
	size_t i_rela = nrel ? i_table + 1 : 0;
	size_t i_symtab = (nrel ? i_rela : i_table) + 1;
	size_t i_strtab = i_symtab + 1;
	size_t i_shstr = i_strtab + 1;
	size_t nsec = i_shstr + 1;
	Elf64_Shdr *sh = elfio_calloc(nsec, sizeof(*sh));
	if (!sh)
		goto out;

	if (str_add(&shstr, "", &off) || str_add(&str, "", &off))
		goto out_sh;
	for (size_t j = 0; j < nph; j++) {
		if (str_add(&shstr, ph[j], &sh[1 + j].sh_name))
			goto out_sh;
		sh[1 + j].sh_type = SHT_PROGBITS;
		sh[1 + j].sh_flags = phflags[j] & (SHF_ALLOC | SHF_EXECINSTR | SHF_WRITE);
		sh[1 + j].sh_addralign = 1;
	}
	char relname[512];
	if (str_add(&shstr, table, &sh[i_table].sh_name))
		goto out_sh;
	snprintf(relname, sizeof(relname), ".rela%s", table);
	if (nrel && str_add(&shstr, relname, &sh[i_rela].sh_name))
		goto out_sh;
	if (str_add(&shstr, ".symtab", &sh[i_symtab].sh_name) ||
	    str_add(&shstr, ".strtab", &sh[i_strtab].sh_name) ||
	    str_add(&shstr, ".shstrtab", &sh[i_shstr].sh_name))
		goto out_sh;

	size_t nsym = 1 + nph;
	size_t o = sizeof(Elf64_Ehdr);
	o = align8(o);
	size_t o_table = o;
	o += 8 * n;
	size_t o_rela = align8(o);
	o = o_rela + nrel * sizeof(Elf64_Rela);
	size_t o_sym = align8(o);
	o = o_sym + nsym * sizeof(Elf64_Sym);
	size_t o_str = o;
	o += str.len;
	size_t o_shstr = o;
	o += shstr.len;
	size_t o_sh = align8(o);
	size_t total = o_sh + nsec * sizeof(Elf64_Shdr);

	out = calloc(1, total);		/* malloc'd: *buf's contract, the caller frees it */
	if (!out)
		goto out_sh;

	Elf64_Ehdr eh = { 0 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh.e_type = ET_REL;
	eh.e_machine = (Elf64_Half)machine;
	eh.e_version = EV_CURRENT;
	eh.e_flags = e_flags;
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (Elf64_Half)nsec;
	eh.e_shstrndx = (Elf64_Half)i_shstr;
	eh.e_shoff = o_sh;
	memcpy(out, &eh, sizeof(eh));	/* host is little-endian (checked at build) */

	size_t r = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t v = refs[i].secname ? 0 : refs[i].value;
		for (int b = 0; b < 8; b++)
			out[o_table + 8 * i + (size_t)b] = (uint8_t)(v >> (8 * b));
		if (!refs[i].secname)
			continue;
		size_t j = rank[first[i]];
		Elf64_Rela rel = {
			.r_offset = 8 * i,
			.r_info = ELF64_R_INFO(1 + j, abs64_type),
			.r_addend = (Elf64_Sxword)refs[i].value,
		};
		memcpy(out + o_rela + r * sizeof(rel), &rel, sizeof(rel));
		r++;
	}
	for (size_t j = 0; j < nph; j++) {
		Elf64_Sym s = { 0 };
		s.st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
		s.st_shndx = (Elf64_Half)(1 + j);
		memcpy(out + o_sym + (1 + j) * sizeof(s), &s, sizeof(s));
	}
	memcpy(out + o_str, str.buf, str.len);
	memcpy(out + o_shstr, shstr.buf, shstr.len);

	sh[i_table].sh_type = SHT_PROGBITS;
	sh[i_table].sh_flags = SHF_ALLOC;
	sh[i_table].sh_offset = o_table;
	sh[i_table].sh_size = 8 * n;
	sh[i_table].sh_addralign = 8;
	for (size_t j = 0; j < nph; j++)
		sh[1 + j].sh_offset = o_table;
	if (nrel) {
		sh[i_rela].sh_type = SHT_RELA;
		sh[i_rela].sh_flags = SHF_INFO_LINK;
		sh[i_rela].sh_offset = o_rela;
		sh[i_rela].sh_size = nrel * sizeof(Elf64_Rela);
		sh[i_rela].sh_link = (Elf64_Word)i_symtab;
		sh[i_rela].sh_info = (Elf64_Word)i_table;
		sh[i_rela].sh_addralign = 8;
		sh[i_rela].sh_entsize = sizeof(Elf64_Rela);
	}
	sh[i_symtab].sh_type = SHT_SYMTAB;
	sh[i_symtab].sh_offset = o_sym;
	sh[i_symtab].sh_size = nsym * sizeof(Elf64_Sym);
	sh[i_symtab].sh_link = (Elf64_Word)i_strtab;
	sh[i_symtab].sh_info = (Elf64_Word)nsym;	/* all local */
	sh[i_symtab].sh_addralign = 8;
	sh[i_symtab].sh_entsize = sizeof(Elf64_Sym);
	sh[i_strtab].sh_type = SHT_STRTAB;
	sh[i_strtab].sh_offset = o_str;
	sh[i_strtab].sh_size = str.len;
	sh[i_strtab].sh_addralign = 1;
	sh[i_shstr].sh_type = SHT_STRTAB;
	sh[i_shstr].sh_offset = o_shstr;
	sh[i_shstr].sh_size = shstr.len;
	sh[i_shstr].sh_addralign = 1;
	memcpy(out + o_sh, sh, nsec * sizeof(*sh));

	*buf = out;
	*len = total;
	out = NULL;
	ret = 0;
out_sh:
	elfio_free(sh);
out:
	free(out);
	elfio_free(ph);
	elfio_free(phflags);
	elfio_free(order);
	elfio_free(first);
	elfio_free(lead);
	elfio_free(rank);
	elfio_free(str.buf);
	elfio_free(shstr.buf);
	return ret;
}
