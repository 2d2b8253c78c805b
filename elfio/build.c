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

/* The object being made: its placeholders, sections and layout. */
struct tobj {
	const char **ph;	/* placeholder section names, in first-use order */
	uint64_t *phflags;	/* their flags */
	size_t *first;		/* reference i -> the first reference of its section name */
	size_t *rank;		/* that first reference -> its placeholder */
	size_t nph, nrel;
	/* section indexes: 0 null, 1..nph placeholders, then the rest */
	size_t i_table, i_rela, i_symtab, i_strtab, i_shstr, nsec;
	/* file offsets */
	size_t o_table, o_rela, o_sym, o_str, o_shstr, o_sh, total, nsym;
	Elf64_Shdr *sh;
	struct strtab shstr, str;
};

static void tobj_free(struct tobj *t)
{
	elfio_free(t->ph);
	elfio_free(t->phflags);
	elfio_free(t->first);
	elfio_free(t->rank);
	elfio_free(t->sh);
	elfio_free(t->str.buf);
	elfio_free(t->shstr.buf);
}

/*
 * One placeholder per distinct section name, numbered in order of first
 * use.  Sorting the references by (name, position) groups them; a linear
 * search per reference was quadratic for an object with a section per
 * function.  first[i]: the first use of reference i's name; rank[that]:
 * its placeholder.  0 or -ENOMEM.
 */
static int plan_placeholders(struct tobj *t, const struct elfio_table_ref *refs, size_t n)
{
	size_t *order = elfio_calloc(n + 1, sizeof(*order));
	size_t *lead = elfio_calloc(n + 1, sizeof(*lead));
	int ret = -ENOMEM;

	t->ph = elfio_calloc(n + 1, sizeof(*t->ph));
	t->phflags = elfio_calloc(n + 1, sizeof(*t->phflags));
	t->first = elfio_calloc(n + 1, sizeof(*t->first));
	t->rank = elfio_calloc(n + 1, sizeof(*t->rank));
	if (!t->ph || !t->phflags || !order || !t->first || !lead || !t->rank)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (refs[i].secname)
			order[t->nrel++] = i;
	if (t->nrel)
		qsort_r(order, t->nrel, sizeof(*order), cmp_ref_name, (void *)refs);
	for (size_t k = 0, g = 0; k < t->nrel; k++) {
		if (!k || strcmp(refs[order[k]].secname, refs[order[k - 1]].secname)) {
			g = order[k];
			lead[t->nph++] = g;
		}
		t->first[order[k]] = g;
	}
	if (t->nph)
		qsort(lead, t->nph, sizeof(*lead), cmp_size);
	for (size_t j = 0; j < t->nph; j++) {
		t->ph[j] = refs[lead[j]].secname;
		t->phflags[j] = refs[lead[j]].sec_flags;
		t->rank[lead[j]] = j;
	}
	ret = 0;
out:
	elfio_free(order);
	elfio_free(lead);
	return ret;
}

/* The section indexes, headers and names (placeholders first).  0 or -ENOMEM. */
static int name_sections(struct tobj *t, const char *table)
{
	char relname[512];
	uint32_t off;

	t->i_table = 1 + t->nph;
	t->i_rela = t->nrel ? t->i_table + 1 : 0;
	t->i_symtab = (t->nrel ? t->i_rela : t->i_table) + 1;
	t->i_strtab = t->i_symtab + 1;
	t->i_shstr = t->i_strtab + 1;
	t->nsec = t->i_shstr + 1;
	t->sh = elfio_calloc(t->nsec, sizeof(*t->sh));
	if (!t->sh)
		return -ENOMEM;

	if (str_add(&t->shstr, "", &off) || str_add(&t->str, "", &off))
		return -ENOMEM;
	for (size_t j = 0; j < t->nph; j++) {
		if (str_add(&t->shstr, t->ph[j], &t->sh[1 + j].sh_name))
			return -ENOMEM;
		t->sh[1 + j].sh_type = SHT_PROGBITS;
		t->sh[1 + j].sh_flags = t->phflags[j] & (SHF_ALLOC | SHF_EXECINSTR | SHF_WRITE);
		t->sh[1 + j].sh_addralign = 1;
	}
	if (str_add(&t->shstr, table, &t->sh[t->i_table].sh_name))
		return -ENOMEM;
	snprintf(relname, sizeof(relname), ".rela%s", table);
	if (t->nrel && str_add(&t->shstr, relname, &t->sh[t->i_rela].sh_name))
		return -ENOMEM;
	if (str_add(&t->shstr, ".symtab", &t->sh[t->i_symtab].sh_name) ||
	    str_add(&t->shstr, ".strtab", &t->sh[t->i_strtab].sh_name) ||
	    str_add(&t->shstr, ".shstrtab", &t->sh[t->i_shstr].sh_name))
		return -ENOMEM;
	return 0;
}

/* Where each part goes: header, table, relocations, symbols, strings, section headers. */
static void lay_out(struct tobj *t, size_t n)
{
	size_t o = align8(sizeof(Elf64_Ehdr));

	t->nsym = 1 + t->nph;
	t->o_table = o;
	o += 8 * n;
	t->o_rela = align8(o);
	o = t->o_rela + t->nrel * sizeof(Elf64_Rela);
	t->o_sym = align8(o);
	o = t->o_sym + t->nsym * sizeof(Elf64_Sym);
	t->o_str = o;
	o += t->str.len;
	t->o_shstr = o;
	o += t->shstr.len;
	t->o_sh = align8(o);
	t->total = t->o_sh + t->nsec * sizeof(Elf64_Shdr);
}

static void write_header(const struct tobj *t, unsigned int machine, unsigned int e_flags,
			 uint8_t *out)
{
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
	eh.e_shnum = (Elf64_Half)t->nsec;
	eh.e_shstrndx = (Elf64_Half)t->i_shstr;
	eh.e_shoff = t->o_sh;
	memcpy(out, &eh, sizeof(eh));	/* host is little-endian (checked at build) */
}

/* The table's slots, a relocation for each that names a section, the section symbols, strings. */
static void write_contents(const struct tobj *t, unsigned int abs64_type,
			   const struct elfio_table_ref *refs, size_t n, uint8_t *out)
{
	size_t r = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t v = refs[i].secname ? 0 : refs[i].value;
		for (int b = 0; b < 8; b++)
			out[t->o_table + 8 * i + (size_t)b] = (uint8_t)(v >> (8 * b));
		if (!refs[i].secname)
			continue;
		size_t j = t->rank[t->first[i]];
		Elf64_Rela rel = {
			.r_offset = 8 * i,
			.r_info = ELF64_R_INFO(1 + j, abs64_type),
			.r_addend = (Elf64_Sxword)refs[i].value,
		};
		memcpy(out + t->o_rela + r * sizeof(rel), &rel, sizeof(rel));
		r++;
	}
	for (size_t j = 0; j < t->nph; j++) {
		Elf64_Sym s = { 0 };
		s.st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
		s.st_shndx = (Elf64_Half)(1 + j);
		memcpy(out + t->o_sym + (1 + j) * sizeof(s), &s, sizeof(s));
	}
	memcpy(out + t->o_str, t->str.buf, t->str.len);
	memcpy(out + t->o_shstr, t->shstr.buf, t->shstr.len);
}

/* The section headers, now that the offsets are known. */
static void write_section_headers(struct tobj *t, size_t n, uint8_t *out)
{
	Elf64_Shdr *sh = t->sh;

	sh[t->i_table].sh_type = SHT_PROGBITS;
	sh[t->i_table].sh_flags = SHF_ALLOC;
	sh[t->i_table].sh_offset = t->o_table;
	sh[t->i_table].sh_size = 8 * n;
	sh[t->i_table].sh_addralign = 8;
	for (size_t j = 0; j < t->nph; j++)
		sh[1 + j].sh_offset = t->o_table;
	if (t->nrel) {
		sh[t->i_rela].sh_type = SHT_RELA;
		sh[t->i_rela].sh_flags = SHF_INFO_LINK;
		sh[t->i_rela].sh_offset = t->o_rela;
		sh[t->i_rela].sh_size = t->nrel * sizeof(Elf64_Rela);
		sh[t->i_rela].sh_link = (Elf64_Word)t->i_symtab;
		sh[t->i_rela].sh_info = (Elf64_Word)t->i_table;
		sh[t->i_rela].sh_addralign = 8;
		sh[t->i_rela].sh_entsize = sizeof(Elf64_Rela);
	}
	sh[t->i_symtab].sh_type = SHT_SYMTAB;
	sh[t->i_symtab].sh_offset = t->o_sym;
	sh[t->i_symtab].sh_size = t->nsym * sizeof(Elf64_Sym);
	sh[t->i_symtab].sh_link = (Elf64_Word)t->i_strtab;
	sh[t->i_symtab].sh_info = (Elf64_Word)t->nsym;	/* all local */
	sh[t->i_symtab].sh_addralign = 8;
	sh[t->i_symtab].sh_entsize = sizeof(Elf64_Sym);
	sh[t->i_strtab].sh_type = SHT_STRTAB;
	sh[t->i_strtab].sh_offset = t->o_str;
	sh[t->i_strtab].sh_size = t->str.len;
	sh[t->i_strtab].sh_addralign = 1;
	sh[t->i_shstr].sh_type = SHT_STRTAB;
	sh[t->i_shstr].sh_offset = t->o_shstr;
	sh[t->i_shstr].sh_size = t->shstr.len;
	sh[t->i_shstr].sh_addralign = 1;
	memcpy(out + t->o_sh, sh, t->nsec * sizeof(*sh));
}

int elfio_build_table_object(unsigned int machine, unsigned int e_flags, unsigned int abs64_type,
			     const char *table, const struct elfio_table_ref *refs, size_t n,
			     uint8_t **buf, size_t *len)
{
	struct tobj t = { 0 };
	uint8_t *out;
	int ret;

	if ((ret = plan_placeholders(&t, refs, n)) || (ret = name_sections(&t, table)))
		goto out;
	lay_out(&t, n);
	out = calloc(1, t.total);	/* malloc'd: *buf's contract, the caller frees it */
	if (!out) {
		ret = -ENOMEM;
		goto out;
	}
	write_header(&t, machine, e_flags, out);
	write_contents(&t, abs64_type, refs, n, out);
	write_section_headers(&t, n, out);
	*buf = out;
	*len = t.total;
out:
	tobj_free(&t);
	return ret;
}
