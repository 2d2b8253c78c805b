// SPDX-License-Identifier: GPL-2.0-only
/*
 * elfgen.c - see elfgen.h.  Layout: header, section data in order (each
 * aligned as asked), symtab, strtab, shstrtab, section headers.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/elfgen.h"

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static size_t put(struct buf *b, const void *d, size_t n, size_t align)
{
	size_t at = (b->len + align - 1) / align * align;

	if (at + n > b->cap) {
		b->cap = (at + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
	}
	memset(b->p + b->len, 0, at - b->len);
	if (n)
		memcpy(b->p + at, d, n);
	b->len = at + n;
	return at;
}

static uint32_t str(struct buf *b, const char *s)
{
	return (uint32_t)put(b, s, strlen(s) + 1, 1);
}

int eg_write(const char *path, uint16_t e_type, uint16_t machine, const struct eg_sec *secs,
	     size_t nsec, const struct eg_sym *syms, size_t nsym)
{
	struct buf f = { 0 }, st = { 0 }, sh = { 0 }, sy = { 0 };
	size_t total = nsec + 4;
	Elf64_Shdr *hdr = calloc(total, sizeof(*hdr));
	Elf64_Ehdr eh = { 0 };
	int ret = -1;

	put(&f, &eh, sizeof(eh), 1);
	str(&st, "");
	str(&sh, "");
	for (size_t i = 0; i < nsec; i++) {
		const struct eg_sec *s = &secs[i];
		Elf64_Shdr *h = &hdr[i + 1];
		h->sh_name = str(&sh, s->name);
		h->sh_type = s->type;
		h->sh_flags = s->flags;
		h->sh_addr = s->addr;
		h->sh_addralign = s->align ? s->align : 1;
		h->sh_offset = put(&f, s->data, s->type == SHT_NOBITS ? 0 : s->size,
				   h->sh_addralign);
		h->sh_size = s->size;
		h->sh_link = s->link == EG_SYMTAB ? eg_symtab_index(nsec) : s->link;
		h->sh_info = s->info == EG_SYMTAB ? eg_symtab_index(nsec) : s->info;
		h->sh_entsize = s->entsize;
	}
	Elf64_Sym null = { 0 };
	put(&sy, &null, sizeof(null), 1);
	size_t nlocal = 1;
	for (size_t i = 0; i < nsym; i++) {
		Elf64_Sym s = { 0 };
		s.st_name = str(&st, syms[i].name);
		s.st_value = syms[i].value;
		s.st_size = syms[i].size;
		s.st_shndx = (Elf64_Half)syms[i].sec;
		s.st_info = ELF64_ST_INFO(syms[i].bind, syms[i].type);
		if (syms[i].bind == STB_LOCAL)
			nlocal = i + 2;
		put(&sy, &s, sizeof(s), 1);
	}
	Elf64_Shdr *h = &hdr[nsec + 1];
	h->sh_name = str(&sh, ".symtab");
	h->sh_type = SHT_SYMTAB;
	h->sh_offset = put(&f, sy.p, sy.len, 8);
	h->sh_size = sy.len;
	h->sh_link = (Elf64_Word)(nsec + 2);
	h->sh_info = (Elf64_Word)nlocal;
	h->sh_addralign = 8;
	h->sh_entsize = sizeof(Elf64_Sym);
	h = &hdr[nsec + 2];
	h->sh_name = str(&sh, ".strtab");
	h->sh_type = SHT_STRTAB;
	h->sh_offset = put(&f, st.p, st.len, 1);
	h->sh_size = st.len;
	h->sh_addralign = 1;
	h = &hdr[nsec + 3];
	h->sh_name = str(&sh, ".shstrtab");
	h->sh_type = SHT_STRTAB;
	h->sh_offset = put(&f, sh.p, sh.len, 1);
	h->sh_size = sh.len;
	h->sh_addralign = 1;

	size_t shoff = put(&f, hdr, total * sizeof(*hdr), 8);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = e_type;
	eh.e_machine = machine;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (Elf64_Half)total;
	eh.e_shstrndx = (Elf64_Half)(nsec + 3);
	eh.e_shoff = shoff;
	memcpy(f.p, &eh, sizeof(eh));

	FILE *o = fopen(path, "wb");
	if (o && fwrite(f.p, 1, f.len, o) == f.len)
		ret = 0;
	if (o && fclose(o))
		ret = -1;
	free(f.p);
	free(st.p);
	free(sh.p);
	free(sy.p);
	free(hdr);
	return ret;
}

char *eg_tmpname(const char *tag)
{
	static unsigned int seq;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *p = NULL;

	if (asprintf(&p, "%s/patchsite-test-%d-%u-%s", dir, (int)getpid(), seq++, tag) < 0)
		return NULL;
	return p;
}

long eg_slurp(const char *path, uint8_t **buf)
{
	FILE *f = fopen(path, "rb");
	long n;

	*buf = NULL;
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	*buf = malloc(n > 0 ? (size_t)n : 1);
	if (!*buf || fread(*buf, 1, (size_t)n, f) != (size_t)n)
		n = -1;
	fclose(f);
	return n;
}
