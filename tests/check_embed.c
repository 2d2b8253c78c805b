// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_embed.c - elfio's program- and section-header reader and embed's
 * planning step.
 *
 * Strategy: elfgen writes an x86_64 program with no program headers; the
 * test appends a program-header table by hand (its bytes written here from
 * <elf.h>'s Elf64_Phdr, not by patchsite) and points e_phoff at it.  The
 * reader must return exactly those fields; embed's plan must refuse each
 * image it cannot take with -EINVAL before writing anything: a relocatable
 * object, no program headers, no PT_NOTE to turn into the new PT_LOAD, a
 * PT_LOAD that wraps the address space, and an image without entry sites.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check_suites.h"
#include "tests/elfgen.h"
#include "elfio/elfio.h"
#include "rewriter/rewriter.h"

static const uint8_t ret_bytes[16] = { 0xc3 };

/* An x86_64 file of type `type` with .text at 0x401000 and one function. */
static char *make_prog(uint16_t type)
{
	char *p = eg_tmpname("prog");
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x401000, 16, ret_bytes, 16 },
	};
	struct eg_sym syms[] = {
		{ "f", 0x401000, 1, 1, STT_FUNC, STB_GLOBAL },
	};
	ck_assert_int_eq(eg_write(p, type, EM_X86_64, secs, 1, syms, 1), 0);
	return p;
}

/* Append phdrs to the file at p and point its ELF header at them. */
static void add_phdrs(const char *p, const Elf64_Phdr *ph, size_t n)
{
	uint8_t *b;
	long len = eg_slurp(p, &b);
	size_t off = ((size_t)len + 7) & ~(size_t)7;
	uint8_t *nb = calloc(1, off + n * sizeof(*ph));
	Elf64_Ehdr eh;
	FILE *f;

	ck_assert_int_gt(len, 0);
	ck_assert_ptr_nonnull(nb);
	memcpy(nb, b, (size_t)len);
	memcpy(&eh, nb, sizeof(eh));
	eh.e_phoff = off;
	eh.e_phnum = (uint16_t)n;
	eh.e_phentsize = sizeof(Elf64_Phdr);
	memcpy(nb, &eh, sizeof(eh));
	memcpy(nb + off, ph, n * sizeof(*ph));
	f = fopen(p, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(nb, 1, off + n * sizeof(*ph), f), off + n * sizeof(*ph));
	fclose(f);
	free(nb);
	free(b);
}

static const Elf64_Phdr load = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
				 .p_vaddr = 0x400000, .p_paddr = 0x400000, .p_filesz = 0x1000,
				 .p_memsz = 0x2000, .p_align = 0x1000 };
static const Elf64_Phdr note = { .p_type = PT_NOTE, .p_flags = PF_R, .p_offset = 0x40,
				 .p_vaddr = 0x400040, .p_paddr = 0x400040, .p_filesz = 0x20,
				 .p_memsz = 0x20, .p_align = 4 };

START_TEST(phdr_read_fields)
{
	char *p = make_prog(ET_EXEC);
	Elf64_Phdr in[2] = { load, note };
	struct elfio_phdr ph;
	Elf64_Shdr sh;
	struct elfio *e;

	add_phdrs(p, in, 2);
	e = elfio_open(p, ELFIO_QUIET);
	ck_assert_ptr_nonnull(e);
	ck_assert(elfio_header_tables_inside(e));
	ck_assert_int_eq(elfio_phdr_read(e, 0, &ph), 0);
	ck_assert_uint_eq(ph.type, PT_LOAD);
	ck_assert_uint_eq(ph.flags, PF_R | PF_X);
	ck_assert_uint_eq(ph.offset, 0);
	ck_assert_uint_eq(ph.vaddr, 0x400000);
	ck_assert_uint_eq(ph.paddr, 0x400000);
	ck_assert_uint_eq(ph.filesz, 0x1000);
	ck_assert_uint_eq(ph.memsz, 0x2000);
	ck_assert_uint_eq(ph.align, 0x1000);
	ck_assert_int_eq(elfio_phdr_read(e, 1, &ph), 0);
	ck_assert_uint_eq(ph.type, PT_NOTE);
	ck_assert_uint_eq(ph.offset, 0x40);
	ck_assert_uint_eq(ph.filesz, 0x20);
	/* past the table's last entry: the bytes there are not a header */
	ck_assert_int_eq(elfio_phdr_read(e, 1000000, &ph), -EINVAL);
	/* .shstrtab as the file holds it, the same as libelf's view */
	ck_assert_int_eq(elfio_shdr_read(e, elfio_ehdr(e)->e_shstrndx, &sh), 0);
	ck_assert_uint_eq(sh.sh_type, SHT_STRTAB);
	ck_assert_int_eq(elfio_shdr_read(e, 1, &sh), 0);
	ck_assert_uint_eq(sh.sh_type, SHT_PROGBITS);
	ck_assert_uint_eq(sh.sh_addr, 0x401000);
	ck_assert_uint_eq(sh.sh_flags, SHF_ALLOC | SHF_EXECINSTR);
	ck_assert_int_eq(elfio_shdr_read(e, elfio_ehdr(e)->e_shnum + 100000, &sh), -EINVAL);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/* embed refuses with -EINVAL and writes no output. */
static void expect_refused(const char *p)
{
	char *out = eg_tmpname("embed-out");
	struct embed_report rep;

	unlink(out);
	rep.sites = 99;
	ck_assert_int_eq(embed_image(p, out, &rep), -EINVAL);
	ck_assert_uint_eq(rep.sites, 0);
	ck_assert_int_eq(access(out, F_OK), -1);
	free(out);
}

START_TEST(plan_refuses_rel)
{
	char *p = make_prog(ET_REL);

	expect_refused(p);
	unlink(p);
	free(p);
}
END_TEST

START_TEST(plan_refuses_no_phdrs)
{
	char *p = make_prog(ET_EXEC);

	expect_refused(p);
	unlink(p);
	free(p);
}
END_TEST

START_TEST(plan_refuses_no_note)
{
	char *p = make_prog(ET_EXEC);

	add_phdrs(p, &load, 1);
	expect_refused(p);
	unlink(p);
	free(p);
}
END_TEST

START_TEST(plan_refuses_wrapping_load)
{
	char *p = make_prog(ET_EXEC);
	Elf64_Phdr in[2] = { load, note };

	in[0].p_vaddr = UINT64_MAX - 0x1000;
	add_phdrs(p, in, 2);
	expect_refused(p);
	unlink(p);
	free(p);
}
END_TEST

/* the plan passes; the sites step finds no entry site in a bare `ret` */
START_TEST(sites_refuses_none)
{
	char *p = make_prog(ET_EXEC);
	Elf64_Phdr in[2] = { load, note };

	add_phdrs(p, in, 2);
	expect_refused(p);
	unlink(p);
	free(p);
}
END_TEST

Suite *embed_suite(void)
{
	Suite *s = suite_create("embed");
	TCase *tc = tcase_create("headers");

	tcase_add_test(tc, phdr_read_fields);
	suite_add_tcase(s, tc);

	tc = tcase_create("planning");
	tcase_add_test(tc, plan_refuses_rel);
	tcase_add_test(tc, plan_refuses_no_phdrs);
	tcase_add_test(tc, plan_refuses_no_note);
	tcase_add_test(tc, plan_refuses_wrapping_load);
	tcase_add_test(tc, sites_refuses_none);
	suite_add_tcase(s, tc);
	return s;
}
