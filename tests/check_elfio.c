// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_elfio.c - elfio: validation of bad input step by step, transparent
 * decompression, ET_REL addressing, symbol lookups, relocations, the table
 * object builder and the atomic writers.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "tests/check_suites.h"
#include "tests/elfgen.h"
#include "elfio/elfio.h"

static const uint8_t text_bytes[32] = { 0xc3, 0x90, 0x90, 0x90, 0xc3 };

/* A small x86_64 object: .text (AX), .data (WA), .rela.text; symbols. */
static char *make_rel(void)
{
	char *p = eg_tmpname("rel.o");
	Elf64_Rela rel[2] = {
		{ .r_offset = 1, .r_info = ELF64_R_INFO(3, R_X86_64_PLT32), .r_addend = -4 },
		{ .r_offset = 8, .r_info = ELF64_R_INFO(1, R_X86_64_64), .r_addend = 4 },
	};
	uint8_t data[16] = { 0 };
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0, 16, text_bytes, 32 },
		{ ".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 0, 8, data, 16 },
		{ ".rela.text", SHT_RELA, SHF_INFO_LINK, 0, 8, rel, sizeof(rel), EG_SYMTAB, 1,
		  sizeof(Elf64_Rela) },
	};
	struct eg_sym syms[] = {
		{ ".text", 0, 0, 1, STT_SECTION, STB_LOCAL },
		{ "local_f", 4, 4, 1, STT_FUNC, STB_LOCAL },
		{ "glob_f", 0, 4, 1, STT_FUNC, STB_GLOBAL },
		{ "alias_f", 0, 4, 1, STT_FUNC, STB_WEAK },
		{ "var", 4, 4, 2, STT_OBJECT, STB_GLOBAL },
		{ "undef", 0, 0, 0, STT_NOTYPE, STB_GLOBAL },
	};
	ck_assert_int_eq(eg_write(p, ET_REL, EM_X86_64, secs, 3, syms, 6), 0);
	return p;
}

static void write_bytes(const char *p, const void *b, size_t n)
{
	FILE *f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b, 1, n, f), n);
	fclose(f);
}

/* Open must fail, print one line, and set errno. */
static void expect_reject(const char *p)
{
	errno = 0;
	struct elfio *e = elfio_open(p, ELFIO_QUIET);
	ck_assert_ptr_null(e);
	ck_assert_int_ne(errno, 0);
}

START_TEST(reject_not_elf)
{
	char *p = eg_tmpname("notelf");
	write_bytes(p, "hello world, not an ELF file at all\n", 36);
	expect_reject(p);
	write_bytes(p, "", 0);
	expect_reject(p);
	unlink(p);
	free(p);
}
END_TEST

START_TEST(reject_class_and_endianness)
{
	char *p = make_rel();
	uint8_t *b;
	long n = eg_slurp(p, &b);
	ck_assert_int_gt(n, 64);

	b[EI_CLASS] = ELFCLASS32;
	write_bytes(p, b, (size_t)n);
	expect_reject(p);
	b[EI_CLASS] = ELFCLASS64;
	b[EI_DATA] = ELFDATA2MSB;
	write_bytes(p, b, (size_t)n);
	expect_reject(p);
	b[EI_DATA] = ELFDATA2LSB;
	((Elf64_Ehdr *)b)->e_type = ET_CORE;
	write_bytes(p, b, (size_t)n);
	expect_reject(p);
	free(b);
	unlink(p);
	free(p);
}
END_TEST

/* Truncate at every 8 bytes: never a crash; short files are rejected. */
START_TEST(reject_truncated)
{
	char *p = make_rel();
	char *q = eg_tmpname("trunc");
	uint8_t *b;
	long n = eg_slurp(p, &b);

	for (long cut = 0; cut < n; cut += 8) {
		write_bytes(q, b, (size_t)cut);
		/* the section headers are last: every cut loses some of them */
		expect_reject(q);
	}
	write_bytes(q, b, (size_t)n);
	struct elfio *e = elfio_open(q, ELFIO_QUIET);
	ck_assert_ptr_nonnull(e);
	elfio_close(e);
	free(b);
	unlink(p);
	unlink(q);
	free(p);
	free(q);
}
END_TEST

START_TEST(reject_section_past_eof)
{
	char *p = make_rel();
	uint8_t *b;
	long n = eg_slurp(p, &b);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	Elf64_Shdr *sh = (Elf64_Shdr *)(b + eh->e_shoff);

	sh[1].sh_size = 1u << 30;	/* .text claims a gigabyte */
	write_bytes(p, b, (size_t)n);
	expect_reject(p);
	free(b);
	unlink(p);
	free(p);
}
END_TEST

START_TEST(reject_bad_symbol_name)
{
	char *p = make_rel();
	uint8_t *b;
	long n = eg_slurp(p, &b);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	Elf64_Shdr *sh = (Elf64_Shdr *)(b + eh->e_shoff);
	/* .symtab is section 4 */
	Elf64_Sym *sym = (Elf64_Sym *)(b + sh[4].sh_offset);
	sym[2].st_name = 0x7fffffff;
	write_bytes(p, b, (size_t)n);

	struct elfio *e = elfio_open(p, ELFIO_QUIET);
	ck_assert_ptr_nonnull(e);	/* headers are fine */
	const struct elfio_symtab *t;
	ck_assert_int_eq(elfio_symbols(e, &t), -EINVAL);
	elfio_close(e);
	free(b);
	unlink(p);
	free(p);
}
END_TEST

START_TEST(rel_synthetic_addresses)
{
	char *p = make_rel();
	struct elfio *e = elfio_open(p, 0);
	char buf[64];

	ck_assert_ptr_nonnull(e);
	ck_assert(elfio_is_rel(e));
	struct elfio_section *text = elfio_find_section_by_name(e, ".text");
	struct elfio_section *data = elfio_find_section_by_name(e, ".data");
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(data);
	ck_assert(is_text_section(text));
	ck_assert(!is_text_section(data));
	ck_assert_uint_ne(text->addr, 0);
	ck_assert_uint_gt(data->addr, text->addr + text->shdr.sh_size);
	ck_assert_ptr_eq(elfio_addr_to_sec(e, text->addr + 31), text);
	ck_assert_ptr_null(elfio_addr_to_sec(e, text->addr + 32));
	elfio_format_addr(e, text->addr + 0x1a, buf, sizeof(buf));
	ck_assert_str_eq(buf, ".text+0x1a");
	elfio_format_addr(e, data->addr + 4, buf, sizeof(buf));
	ck_assert_str_eq(buf, ".data+0x4");
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

START_TEST(functions_and_aliases)
{
	char *p = make_rel();
	struct elfio *e = elfio_open(p, 0);
	const struct elfio_symbol *const *f;
	size_t n;

	ck_assert_int_eq(elfio_functions(e, &f, &n), 0);
	ck_assert_uint_eq(n, 3);
	uint64_t base = elfio_find_section_by_name(e, ".text")->addr;
	/* global wins over the weak alias at the same address */
	ck_assert_str_eq(elfio_function_at(e, base + 2, 0)->name, "glob_f");
	ck_assert_str_eq(elfio_function_at(e, base + 4, 0)->name, "local_f");
	ck_assert_ptr_null(elfio_function_at(e, base + 8, 0));
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

START_TEST(relocations)
{
	char *p = make_rel();
	struct elfio *e = elfio_open(p, 0);
	const struct elfio_rela *v;
	size_t n;

	struct elfio_section *rs = elfio_find_section_by_name(e, ".rela.text");
	ck_assert_int_eq(elfio_relas(e, rs, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[0].offset, 1);
	ck_assert_uint_eq(v[0].type, R_X86_64_PLT32);
	ck_assert_uint_eq(v[0].sym, 3);
	ck_assert_int_eq(v[0].addend, -4);
	/* a non-RELA section is refused */
	ck_assert_int_eq(elfio_relas(e, elfio_find_section_by_name(e, ".text"), &v, &n), -EINVAL);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/*
 * The one relocation reader: SHT_REL (no addend) as well as SHT_RELA, the
 * entries encoded back to the file's bytes, and every symbol index checked
 * against the table the section links to.
 */
static char *make_rel_kinds(uint32_t rela_sym, uint32_t rel_link)
{
	char *p = eg_tmpname("kinds.o");
	Elf64_Rela rela[2] = {
		{ .r_offset = 1, .r_info = ELF64_R_INFO(2, R_X86_64_PLT32), .r_addend = -4 },
		{ .r_offset = 9, .r_info = ELF64_R_INFO(rela_sym, R_X86_64_64), .r_addend = 12 },
	};
	Elf64_Rel rel[2] = {
		{ .r_offset = 4, .r_info = ELF64_R_INFO(0, R_X86_64_RELATIVE) },
		{ .r_offset = 12, .r_info = ELF64_R_INFO(1, R_X86_64_32) },
	};
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0, 16, text_bytes, 32 },
		{ ".rela.text", SHT_RELA, SHF_INFO_LINK, 0, 8, rela, sizeof(rela), EG_SYMTAB, 1,
		  sizeof(Elf64_Rela) },
		{ ".rel.text", SHT_REL, SHF_INFO_LINK, 0, 8, rel, sizeof(rel), rel_link, 1,
		  sizeof(Elf64_Rel) },
	};
	struct eg_sym syms[] = {
		{ ".text", 0, 0, 1, STT_SECTION, STB_LOCAL },
		{ "f", 0, 4, 1, STT_FUNC, STB_GLOBAL },
	};
	ck_assert_int_eq(eg_write(p, ET_REL, EM_X86_64, secs, 3, syms, 2), 0);
	return p;
}

START_TEST(relocations_rel_and_rela)
{
	char *p = make_rel_kinds(1, EG_SYMTAB);
	struct elfio *e = elfio_open(p, 0);
	const struct elfio_rela *v;
	struct elfio_relocs rl;
	const uint8_t *raw;
	size_t n, len;
	uint8_t b[24];

	ck_assert_ptr_nonnull(e);
	struct elfio_section *ra = elfio_find_section_by_name(e, ".rela.text");
	struct elfio_section *rs = elfio_find_section_by_name(e, ".rel.text");
	ck_assert_int_eq(elfio_relas(e, rs, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[1].offset, 12);
	ck_assert_uint_eq(v[1].type, R_X86_64_32);
	ck_assert_uint_eq(v[1].sym, 1);
	ck_assert_int_eq(v[1].addend, 0);
	ck_assert_int_eq(elfio_relocs(e, ra, &rl), 0);
	ck_assert_uint_eq(rl.count, 2);
	ck_assert_uint_eq(rl.entsize, sizeof(Elf64_Rela));
	ck_assert_int_eq(elfio_relocs_get(&rl, 1).addend, 12);
	ck_assert_uint_eq(elfio_relocs_get(&rl, 1).sym, 1);
	/* written back, each entry is the file's bytes, of its own size */
	raw = elfio_raw(e, &len);
	for (size_t i = 0; i < 2; i++) {
		struct elfio_rela x = elfio_relocs_get(&rl, i);

		ck_assert_uint_eq(elfio_reloc_encode(ra, &x, b), sizeof(Elf64_Rela));
		ck_assert_mem_eq(b, raw + elfio_reloc_file_offset(ra, i), sizeof(Elf64_Rela));
		ck_assert_uint_eq(elfio_reloc_encode(rs, &v[i], b), sizeof(Elf64_Rel));
		ck_assert_mem_eq(b, raw + elfio_reloc_file_offset(rs, i), sizeof(Elf64_Rel));
		struct elfio_rela y = elfio_reloc_decode(rs, b);
		ck_assert_uint_eq(y.offset, v[i].offset);
		ck_assert_uint_eq(y.type, v[i].type);
		ck_assert_uint_eq(y.sym, v[i].sym);
	}
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

START_TEST(relocations_symbol_checked)
{
	/* the table holds 3 symbols (the null one, .text, f): 3 is past it */
	char *p = make_rel_kinds(3, EG_SYMTAB);
	struct elfio *e = elfio_open(p, 0);
	const struct elfio_rela *v;
	struct elfio_relocs rl;
	size_t n;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(elfio_relas(e, elfio_find_section_by_name(e, ".rela.text"), &v, &n),
			 -EINVAL);
	ck_assert_int_eq(elfio_relocs(e, elfio_find_section_by_name(e, ".rela.text"), &rl),
			 -EINVAL);
	ck_assert_int_eq(elfio_relas(e, elfio_find_section_by_name(e, ".rel.text"), &v, &n), 0);
	elfio_close(e);
	unlink(p);
	free(p);
	/* 2, the last symbol, is in it; a section linked to no table names symbol 1 */
	p = make_rel_kinds(2, 0);
	e = elfio_open(p, 0);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(elfio_relas(e, elfio_find_section_by_name(e, ".rela.text"), &v, &n), 0);
	ck_assert_int_eq(elfio_relas(e, elfio_find_section_by_name(e, ".rel.text"), &v, &n),
			 -EINVAL);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/* A compressed relocation section is read inflated, as any section's bytes are. */
START_TEST(compressed_relocations)
{
	Elf64_Rela rel[2] = {
		{ .r_offset = 1, .r_info = ELF64_R_INFO(2, R_X86_64_PLT32), .r_addend = -4 },
		{ .r_offset = 8, .r_info = ELF64_R_INFO(1, R_X86_64_64), .r_addend = 4 },
	};
	uint8_t packed[512];
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = sizeof(rel), .ch_addralign = 8 };
	uLongf zl = sizeof(packed) - sizeof(ch);
	ck_assert_int_eq(compress(packed + sizeof(ch), &zl, (const Bytef *)rel, sizeof(rel)), Z_OK);
	memcpy(packed, &ch, sizeof(ch));
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0, 16, text_bytes, 32 },
		{ ".rela.text", SHT_RELA, SHF_INFO_LINK | SHF_COMPRESSED, 0, 8, packed,
		  sizeof(ch) + zl, EG_SYMTAB, 1, sizeof(Elf64_Rela) },
	};
	struct eg_sym syms[] = {
		{ ".text", 0, 0, 1, STT_SECTION, STB_LOCAL },
		{ "f", 0, 4, 1, STT_FUNC, STB_GLOBAL },
	};
	char *p = eg_tmpname("zrel.o");
	const struct elfio_rela *v;
	size_t n;

	ck_assert_int_eq(eg_write(p, ET_REL, EM_X86_64, secs, 2, syms, 2), 0);
	struct elfio *e = elfio_open(p, 0);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(elfio_relas(e, elfio_find_section_by_name(e, ".rela.text"), &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[1].offset, 8);
	ck_assert_uint_eq(v[1].sym, 1);
	ck_assert_int_eq(v[1].addend, 4);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/* --- images in memory, archives ------------------------------------------ */

START_TEST(memory_image_commit)
{
	char *p = make_rel();
	char *q = eg_tmpname("relayout.o");
	uint8_t *buf = NULL, *out = NULL, *file = NULL;
	long len = eg_slurp(p, &buf);
	size_t olen;
	const struct elfio_rela *v;
	size_t n;
	static const uint8_t grown[48] = { 0x90, 0x90, 0xc3 };

	ck_assert_int_gt(len, 0);
	struct elfio *e = elfio_open_memory("lib.a(rel.o)", buf, (size_t)len, 0);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(elfio_path(e), "lib.a(rel.o)");
	ck_assert_int_eq(elfio_relas(e, elfio_find_section_by_name(e, ".rela.text"), &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	/* byte patches: the image with them, as elfio_write_edited writes a file */
	struct elfio_rw *w = elfio_rw_new(e);
	uint64_t off = elfio_find_section_by_name(e, ".text")->shdr.sh_offset;
	ck_assert_int_eq(elfio_rw_patch(w, off, "\xcc", 1), 0);
	ck_assert_int_eq(elfio_rw_commit_memory(w, &out, &olen), 0);
	ck_assert_uint_eq(olen, (size_t)len);
	buf[off] = 0xcc;
	ck_assert_mem_eq(out, buf, olen);
	free(out);
	elfio_rw_free(w);
	/* new section contents: the same bytes libelf lays out into a file */
	w = elfio_rw_new(e);
	ck_assert_int_eq(elfio_rw_set_data(w, 1, grown, sizeof(grown)), 0);
	ck_assert_int_eq(elfio_rw_commit_memory(w, &out, &olen), 0);
	ck_assert_int_eq(elfio_rw_commit(w, q, NULL), 0);
	ck_assert_int_eq(eg_slurp(q, &file), (long)olen);
	ck_assert_mem_eq(out, file, olen);
	elfio_rw_free(w);
	elfio_close(e);
	/* not ELF: one line, NULL, errno */
	ck_assert_ptr_null(elfio_open_memory("lib.a(x)", "!<arch>\n", 8, ELFIO_QUIET));
	ck_assert_int_eq(errno, EINVAL);
	free(out);
	free(file);
	free(buf);
	unlink(p);
	unlink(q);
	free(p);
	free(q);
}
END_TEST

/* One member header of a regular archive. */
static size_t ar_member(uint8_t *to, const char *name, const void *data, size_t size)
{
	char h[96];	/* 60 used: room for what the format could print */

	snprintf(h, sizeof(h), "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", name, "0", "0", "0", "644",
		 size);
	memcpy(to, h, 60);
	memcpy(to + 60, data, size);
	if (size & 1)
		to[60 + size++] = '\n';
	return 60 + size;
}

START_TEST(archive_members)
{
	char *p = make_rel();
	char *a = eg_tmpname("lib.a"), *b = eg_tmpname("new.a");
	uint8_t *obj = NULL, *ar, *back = NULL;
	long olen = eg_slurp(p, &obj);
	static const char names[] = "a-member-with-a-long-name.o/\n";	/* 29 bytes, padded */
	struct elfio_ar *x = NULL;
	struct elfio *e = NULL;
	size_t at = 8;

	ck_assert_int_gt(olen, 0);
	ar = calloc(1, 3 * (size_t)olen + 512);
	memcpy(ar, "!<arch>\n", 8);
	at += ar_member(ar + at, "//", names, sizeof(names) - 1);
	at += ar_member(ar + at, "/0", obj, (size_t)olen);
	at += ar_member(ar + at, "short.o/", obj, (size_t)olen);
	at += ar_member(ar + at, "notes.txt/", "text", 4);
	write_bytes(a, ar, at);
	ck_assert_int_eq(elfio_archive_kind(a), ELFIO_AR_REGULAR);
	ck_assert_int_eq(elfio_archive_kind(p), ELFIO_AR_NONE);
	ck_assert_int_eq(elfio_ar_read(a, &x), 0);
	ck_assert_uint_eq(elfio_ar_count(x), 4);
	/* the names table and a member that is no ELF object open as nothing */
	ck_assert_int_eq(elfio_ar_open_member(x, 0, 0, &e), 0);
	ck_assert_ptr_null(e);
	ck_assert_int_eq(elfio_ar_open_member(x, 3, 0, &e), 0);
	ck_assert_ptr_null(e);
	char *want = NULL;
	ck_assert_int_ge(asprintf(&want, "%s(a-member-with-a-long-name.o)", a), 0);
	ck_assert_int_eq(elfio_ar_open_member(x, 1, 0, &e), 0);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(elfio_path(e), want);
	elfio_close(e);
	free(want);
	ck_assert_int_ge(asprintf(&want, "%s(short.o)", a), 0);
	ck_assert_int_eq(elfio_ar_open_member(x, 2, 0, &e), 0);
	ck_assert_str_eq(elfio_path(e), want);
	elfio_close(e);
	free(want);
	/* a member replaced by 3 bytes: the archive written again, padded, the rest kept */
	uint8_t *nb = malloc(3);
	memcpy(nb, "abc", 3);
	ck_assert_int_eq(elfio_ar_replace(x, 2, nb, 3), 0);
	ck_assert_int_eq(elfio_ar_write(x, b), 0);
	elfio_ar_free(x);
	long blen = eg_slurp(b, &back);
	size_t keep = 8 + 60 + sizeof(names) + 60 + (size_t)olen + ((size_t)olen & 1);
	ck_assert_uint_eq((size_t)blen, keep + 64 + 64);
	ck_assert_mem_eq(back, ar, keep);
	ck_assert_mem_eq(back + keep + 48, "3         `\nabc\n", 16);
	free(back);
	free(ar);
	free(obj);
	unlink(a);
	unlink(b);
	unlink(p);
	free(a);
	free(b);
	free(p);
}
END_TEST

/* --- compressed files and sections ------------------------------------- */

static void compressed_roundtrip(int kind)
{
	char *p = make_rel();
	char *q = eg_tmpname("z.ko");
	uint8_t *b, *z;
	long n = eg_slurp(p, &b);
	size_t zl = 0;

	if (kind == 0) {
		gzFile g = gzopen(q, "wb");
		ck_assert_ptr_nonnull(g);
		ck_assert_int_eq(gzwrite(g, b, (unsigned)n), n);
		gzclose(g);
	} else if (kind == 1) {
		z = malloc((size_t)n + 1024);
		ck_assert_int_eq(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, b, (size_t)n, z,
							 &zl, (size_t)n + 1024), LZMA_OK);
		write_bytes(q, z, zl);
		free(z);
	} else {
		size_t cap = ZSTD_compressBound((size_t)n);
		z = malloc(cap);
		zl = ZSTD_compress(z, cap, b, (size_t)n, 3);
		ck_assert(!ZSTD_isError(zl));
		write_bytes(q, z, zl);
		free(z);
	}
	struct elfio *e = elfio_open(q, 0);
	ck_assert_ptr_nonnull(e);
	ck_assert(elfio_was_compressed(e));
	ck_assert_uint_eq(elfio_file_size(e), (uint64_t)n);
	struct elfio_section *t = elfio_find_section_by_name(e, ".text");
	ck_assert_int_eq(elfio_section_data(e, t), 0);
	ck_assert_mem_eq(t->data, text_bytes, sizeof(text_bytes));
	/* writing back into a compressed module is refused, nothing written */
	struct elfio_edits ed;
	elfio_edits_init(&ed);
	char *o = eg_tmpname("out");
	ck_assert_int_eq(elfio_write_edited(e, &ed, o), -ENOTSUP);
	ck_assert_int_ne(access(o, F_OK), 0);
	elfio_close(e);

	/* a truncated stream is an error, not a crash */
	uint8_t *zb;
	long zn = eg_slurp(q, &zb);
	write_bytes(q, zb, (size_t)zn / 2);
	expect_reject(q);
	free(zb);
	free(o);
	free(b);
	unlink(p);
	unlink(q);
	free(p);
	free(q);
}

START_TEST(compressed_gzip) { compressed_roundtrip(0); }
END_TEST
START_TEST(compressed_xz) { compressed_roundtrip(1); }
END_TEST
START_TEST(compressed_zstd) { compressed_roundtrip(2); }
END_TEST

START_TEST(compressed_section)
{
	uint8_t plain[256], packed[512];
	for (size_t i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 7);
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = sizeof(plain),
			  .ch_addralign = 1 };
	uLongf zl = sizeof(packed) - sizeof(ch);
	ck_assert_int_eq(compress(packed + sizeof(ch), &zl, plain, sizeof(plain)), Z_OK);
	memcpy(packed, &ch, sizeof(ch));
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, 16, text_bytes, 32 },
		{ ".debug_info", SHT_PROGBITS, SHF_COMPRESSED, 0, 8, packed, sizeof(ch) + zl },
	};
	char *p = eg_tmpname("zsec");
	ck_assert_int_eq(eg_write(p, ET_EXEC, EM_X86_64, secs, 2, NULL, 0), 0);
	struct elfio *e = elfio_open(p, 0);
	ck_assert_ptr_nonnull(e);
	struct elfio_section *s = elfio_find_section_by_name(e, ".debug_info");
	ck_assert_int_eq(elfio_section_data(e, s), 0);
	ck_assert_uint_eq(s->size, sizeof(plain));
	ck_assert_mem_eq(s->data, plain, sizeof(plain));
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/* --- writers --------------------------------------------------------------- */

struct seen {
	char path[4096];
	long size;
	int verdict;
};

/* A read-back check: remembers what it was shown, says what it was told to. */
static int remember(const char *tmp, void *ctx)
{
	struct seen *s = ctx;
	uint8_t *b;

	snprintf(s->path, sizeof(s->path), "%s", tmp);
	s->size = eg_slurp(tmp, &b);
	if (s->size >= 0)
		free(b);
	return s->verdict;
}

/*
 * The read-back check sees the complete temporary file before anything is
 * replaced; when it refuses, the target keeps its bytes and the temporary
 * is gone.
 */
START_TEST(write_check_refuses)
{
	char *p = make_rel();
	char *o = eg_tmpname("checked");
	struct elfio *e = elfio_open(p, 0);
	struct elfio_edits ed;
	struct seen seen = { .verdict = -EIO };
	struct elfio_write_check chk = { remember, &seen };
	uint8_t *a, *b;

	ck_assert_ptr_nonnull(e);
	FILE *f = fopen(o, "wb");
	ck_assert_ptr_nonnull(f);
	fputs("the old contents", f);
	fclose(f);
	elfio_edits_init(&ed);
	ck_assert_int_eq(elfio_edits_add(&ed, 0x40, "\xcc", 1), 0);
	ck_assert_int_eq(elfio_write_edited_check(e, &ed, o, &chk), -EIO);
	ck_assert_int_eq((int)seen.size, (int)elfio_file_size(e));
	ck_assert_int_ne(access(seen.path, F_OK), 0);	/* the temporary is gone */
	long n = eg_slurp(o, &b);
	ck_assert_int_eq(n, 16);
	ck_assert_mem_eq(b, "the old contents", 16);
	free(b);

	seen.verdict = 0;
	ck_assert_int_eq(elfio_write_edited_check(e, &ed, o, &chk), 0);
	ck_assert_int_eq(eg_slurp(o, &b), eg_slurp(p, &a));
	ck_assert_uint_eq(b[0x40], 0xcc);
	free(a);
	free(b);
	elfio_edits_free(&ed);
	elfio_close(e);
	unlink(p);
	unlink(o);
	free(p);
	free(o);
}
END_TEST

/* What the in-place check saw: the journal beside the image, kept aside. */
struct journal_seen {
	char *keep;		/* copy the journal here, if set */
	bool journal;		/* it existed during the check */
	int verdict;
};

static int journal_check(const char *path, void *ctx)
{
	struct journal_seen *js = ctx;
	char *j = elfio_journal_path(path);
	uint8_t *b;
	long n;

	ck_assert_ptr_nonnull(j);
	n = eg_slurp(j, &b);
	js->journal = n > 0;
	if (n > 0 && js->keep) {
		FILE *f = fopen(js->keep, "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(b, 1, (size_t)n, f), (size_t)n);
		fclose(f);
	}
	if (n >= 0)
		free(b);
	free(j);
	return js->verdict;
}

/* Put a (possibly cut) copy of journal `from` beside image p. */
static void place_journal(const char *from, const char *p, long cut)
{
	char *j = elfio_journal_path(p);
	uint8_t *b;
	long n = eg_slurp(from, &b);
	FILE *f = fopen(j, "wb");

	ck_assert_int_gt(n, cut);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b, 1, (size_t)(n - cut), f), (size_t)(n - cut));
	fclose(f);
	free(b);
	free(j);
}

/*
 * In place: the image itself is edited (same inode), later edits of the
 * same bytes win, contiguous edits are one; the check runs while the
 * journal is there; afterwards the journal is gone.
 */
START_TEST(in_place_edits)
{
	char *p = make_rel();
	char *j = elfio_journal_path(p);
	struct elfio *e = elfio_open(p, 0);
	struct elfio_edits ed;
	struct journal_seen js = { 0 };
	struct elfio_write_check chk = { journal_check, &js };
	struct stat s1, s2;
	uint8_t *a, *b;
	size_t written;

	ck_assert_ptr_nonnull(e);
	long na = eg_slurp(p, &a);
	ck_assert_int_eq(stat(p, &s1), 0);
	elfio_edits_init(&ed);
	ck_assert_int_eq(elfio_edits_add(&ed, 0x40, "\xcc", 1), 0);
	ck_assert_int_eq(elfio_edits_add(&ed, 0x41, "\xdd", 1), 0);
	ck_assert_int_eq((int)ed.n, 1);	/* contiguous: one edit */
	ck_assert_int_eq(elfio_edits_add(&ed, 0x40, "\xee", 1), 0);
	ck_assert_int_eq((int)ed.n, 2);
	ck_assert_int_eq(elfio_write_in_place(e, &ed, 0, &chk, &written), 0);
	ck_assert(js.journal);
	ck_assert_int_ne(access(j, F_OK), 0);
	ck_assert_uint_eq(written, 2);
	ck_assert_int_eq(stat(p, &s2), 0);
	ck_assert_uint_eq(s1.st_ino, s2.st_ino);
	ck_assert_int_eq(eg_slurp(p, &b), na);
	ck_assert_mem_eq(b + 0x40, "\xee\xdd", 2);
	ck_assert_mem_eq(a, b, 0x40);
	ck_assert_mem_eq(a + 0x42, b + 0x42, (size_t)na - 0x42);
	free(b);

	/* again: nothing to write, no journal made */
	js.journal = true;
	ck_assert_int_eq(elfio_write_in_place(e, &ed, ELFIO_FSYNC, &chk, &written), 0);
	ck_assert_uint_eq(written, 0);
	ck_assert(js.journal);	/* the check did not run */
	elfio_edits_free(&ed);
	elfio_close(e);
	unlink(p);
	free(p);
	free(j);
	free(a);
}
END_TEST

/* A check that refuses: the old bytes go back, the journal goes. */
START_TEST(in_place_check_refuses)
{
	char *p = make_rel();
	char *j = elfio_journal_path(p);
	struct elfio *e = elfio_open(p, 0);
	struct elfio_edits ed;
	struct journal_seen js = { .verdict = -EIO };
	struct elfio_write_check chk = { journal_check, &js };
	uint8_t *a, *b;
	size_t written;

	ck_assert_ptr_nonnull(e);
	long na = eg_slurp(p, &a);
	elfio_edits_init(&ed);
	ck_assert_int_eq(elfio_edits_add(&ed, 0x40, "\xcc\xcc", 2), 0);
	ck_assert_int_eq(elfio_write_in_place(e, &ed, ELFIO_FSYNC, &chk, &written), -EIO);
	ck_assert(js.journal);
	ck_assert_int_ne(access(j, F_OK), 0);
	ck_assert_int_eq(eg_slurp(p, &b), na);
	ck_assert_mem_eq(a, b, (size_t)na);
	free(b);
	/* past the end: refused before anything is written */
	elfio_edits_free(&ed);
	elfio_edits_init(&ed);
	ck_assert_int_eq(elfio_edits_add(&ed, (uint64_t)na, "x", 1), 0);
	ck_assert_int_eq(elfio_write_in_place(e, &ed, 0, &chk, &written), -ERANGE);
	ck_assert_int_ne(access(j, F_OK), 0);
	elfio_edits_free(&ed);
	elfio_close(e);
	unlink(p);
	free(p);
	free(j);
	free(a);
}
END_TEST

/*
 * Recovery in elfio_open: a complete journal is rolled back, a torn one
 * and a stale one (the bytes neither old nor new) are removed, the image
 * left as it is.
 */
START_TEST(in_place_recovery)
{
	char *p = make_rel();
	char *j = elfio_journal_path(p);
	char *kept = eg_tmpname("journal");
	struct elfio *e = elfio_open(p, 0);
	struct elfio_edits ed;
	struct journal_seen js = { .keep = kept };
	struct elfio_write_check chk = { journal_check, &js };
	uint8_t *a, *n, *b;
	size_t written;

	ck_assert_ptr_nonnull(e);
	long na = eg_slurp(p, &a);
	elfio_edits_init(&ed);
	ck_assert_int_eq(elfio_edits_add(&ed, 0x40, "\xcc\xcc\xcc", 3), 0);
	ck_assert_int_eq(elfio_write_in_place(e, &ed, 0, &chk, &written), 0);
	elfio_edits_free(&ed);
	elfio_close(e);
	ck_assert_int_eq(eg_slurp(p, &n), na);

	/* as if killed before the journal's unlink: rolled back to the input */
	place_journal(kept, p, 0);
	e = elfio_open(p, 0);
	ck_assert_ptr_nonnull(e);
	elfio_close(e);
	ck_assert_int_ne(access(j, F_OK), 0);
	ck_assert_int_eq(eg_slurp(p, &b), na);
	ck_assert_mem_eq(a, b, (size_t)na);
	free(b);

	/* torn (one byte short): removed, the image as it is */
	place_journal(kept, p, 1);
	ck_assert_int_eq(elfio_journal_recover(p, false), 0);
	ck_assert_int_ne(access(j, F_OK), 0);
	ck_assert_int_eq(eg_slurp(p, &b), na);
	ck_assert_mem_eq(a, b, (size_t)na);
	free(b);

	/* stale: a range holds bytes that are neither old nor new */
	FILE *f = fopen(p, "r+b");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0x41, SEEK_SET), 0);
	ck_assert_int_eq(fputc(0x5a, f), 0x5a);
	fclose(f);
	free(a);
	ck_assert_int_eq(eg_slurp(p, &a), na);	/* the new reference */
	place_journal(kept, p, 0);
	ck_assert_int_eq(elfio_journal_recover(p, false), 0);
	ck_assert_int_ne(access(j, F_OK), 0);
	ck_assert_int_eq(eg_slurp(p, &b), na);
	ck_assert_mem_eq(a, b, (size_t)na);
	free(b);

	unlink(p);
	unlink(kept);
	free(p);
	free(j);
	free(kept);
	free(a);
	free(n);
}
END_TEST

START_TEST(atomic_write_and_edits)
{
	char *p = make_rel();
	char *o = eg_tmpname("edited");
	struct elfio *e = elfio_open(p, 0);
	struct elfio_edits ed;
	uint8_t *a, *b;

	elfio_edits_init(&ed);
	struct elfio_section *t = elfio_find_section_by_name(e, ".text");
	uint64_t off;
	ck_assert_int_eq(elfio_addr_to_offset(e, t->addr + 2, &off), 0);
	ck_assert_uint_eq(off, t->shdr.sh_offset + 2);
	ck_assert_int_eq(elfio_edits_add(&ed, off, "\xcc\xcc", 2), 0);
	ck_assert_int_eq(elfio_write_edited(e, &ed, o), 0);
	long na = eg_slurp(p, &a), nb = eg_slurp(o, &b);
	ck_assert_int_eq(na, nb);
	ck_assert_mem_eq(b + off, "\xcc\xcc", 2);
	ck_assert_mem_eq(a, b, off);
	ck_assert_mem_eq(a + off + 2, b + off + 2, (size_t)(na - (long)off - 2));

	/* an edit past the end fails and leaves the target as it was */
	elfio_edits_free(&ed);
	elfio_edits_init(&ed);
	ck_assert_int_eq(elfio_edits_add(&ed, (uint64_t)na, "x", 1), 0);
	ck_assert_int_eq(elfio_write_edited(e, &ed, o), -ERANGE);
	uint8_t *c;
	ck_assert_int_eq(eg_slurp(o, &c), nb);
	ck_assert_mem_eq(b, c, (size_t)nb);
	elfio_edits_free(&ed);
	elfio_close(e);

	/* a directory that does not exist: error, nothing created */
	ck_assert_int_lt(elfio_write_file_atomic("/nonexistent-dir/x", "a", 1, 0644), 0);
	free(a);
	free(b);
	free(c);
	unlink(p);
	unlink(o);
	free(p);
	free(o);
}
END_TEST

START_TEST(table_object)
{
	struct elfio_table_ref refs[] = {
		{ ".text", SHF_ALLOC | SHF_EXECINSTR, 0x1a4 },
		{ ".text.unlikely", SHF_ALLOC | SHF_EXECINSTR, 0x4 },
		{ ".text", SHF_ALLOC | SHF_EXECINSTR, 0x200 },
	};
	uint8_t *buf;
	size_t len;
	ck_assert_int_eq(elfio_build_table_object(EM_AARCH64, 0, R_AARCH64_ABS64, "__mcount_loc",
						  refs, 3, &buf, &len), 0);
	char *p = eg_tmpname("table.o");
	ck_assert_int_eq(elfio_write_file_atomic(p, buf, len, 0644), 0);
	struct elfio *e = elfio_open(p, 0);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(elfio_ehdr(e)->e_machine, EM_AARCH64);
	struct elfio_section *t = elfio_find_section_by_name(e, "__mcount_loc");
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->shdr.sh_size, 24);
	ck_assert_uint_eq(t->shdr.sh_addralign, 8);
	struct elfio_section *ph = elfio_find_section_by_name(e, ".text.unlikely");
	ck_assert_ptr_nonnull(ph);
	ck_assert_uint_eq(ph->shdr.sh_size, 0);
	ck_assert_uint_eq(ph->shdr.sh_flags, SHF_ALLOC | SHF_EXECINSTR);
	const struct elfio_rela *v;
	size_t n;
	ck_assert_int_eq(elfio_relas(e, elfio_find_section_by_name(e, ".rela__mcount_loc"), &v, &n),
			 0);
	ck_assert_uint_eq(n, 3);
	const struct elfio_symtab *st;
	ck_assert_int_eq(elfio_symbols(e, &st), 0);
	ck_assert_uint_eq(v[1].offset, 8);
	ck_assert_uint_eq(v[1].type, R_AARCH64_ABS64);
	ck_assert_int_eq(v[1].addend, 4);
	ck_assert_uint_eq(st->syms[v[1].sym].shndx, ph->index);
	ck_assert_uint_eq(st->syms[v[1].sym].type, STT_SECTION);
	ck_assert_int_eq(v[2].addend, 0x200);
	elfio_close(e);
	free(buf);

	/* determinism: the same refs give the same bytes */
	uint8_t *b2;
	size_t l2;
	ck_assert_int_eq(elfio_build_table_object(EM_AARCH64, 0, R_AARCH64_ABS64, "__mcount_loc",
						  refs, 3, &buf, &len), 0);
	ck_assert_int_eq(elfio_build_table_object(EM_AARCH64, 0, R_AARCH64_ABS64, "__mcount_loc",
						  refs, 3, &b2, &l2), 0);
	ck_assert_uint_eq(len, l2);
	ck_assert_mem_eq(buf, b2, len);
	free(buf);
	free(b2);
	unlink(p);
	free(p);
}
END_TEST

Suite *elfio_suite(void)
{
	Suite *s = suite_create("elfio");
	TCase *tc = tcase_create("bad input");

	tcase_add_test(tc, reject_not_elf);
	tcase_add_test(tc, reject_class_and_endianness);
	tcase_add_test(tc, reject_truncated);
	tcase_add_test(tc, reject_section_past_eof);
	tcase_add_test(tc, reject_bad_symbol_name);
	suite_add_tcase(s, tc);

	tc = tcase_create("reading");
	tcase_add_test(tc, rel_synthetic_addresses);
	tcase_add_test(tc, functions_and_aliases);
	tcase_add_test(tc, relocations);
	tcase_add_test(tc, relocations_rel_and_rela);
	tcase_add_test(tc, relocations_symbol_checked);
	tcase_add_test(tc, memory_image_commit);
	tcase_add_test(tc, archive_members);
	suite_add_tcase(s, tc);

	tc = tcase_create("compression");
	tcase_add_test(tc, compressed_gzip);
	tcase_add_test(tc, compressed_xz);
	tcase_add_test(tc, compressed_zstd);
	tcase_add_test(tc, compressed_section);
	tcase_add_test(tc, compressed_relocations);
	suite_add_tcase(s, tc);

	tc = tcase_create("writing");
	tcase_add_test(tc, atomic_write_and_edits);
	tcase_add_test(tc, write_check_refuses);
	tcase_add_test(tc, in_place_edits);
	tcase_add_test(tc, in_place_check_refuses);
	tcase_add_test(tc, in_place_recovery);
	tcase_add_test(tc, table_object);
	suite_add_tcase(s, tc);
	return s;
}
