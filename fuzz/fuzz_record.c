// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_record.c - `patchsite record` in every output format, as a library
 * call: open, find and verify sites, print list / --symbolize / json / asm
 * (to /dev/null), build the --format=elf object and read it back.
 *
 * The site-finding options vary with the input's size modulo 8 (so the
 * bytes stay a plain ELF file the other harnesses can share): default,
 * --patchable=2,0 / 4,2 / 8,4, --nop-mcount, --align=16.
 *
 * Checks: sites strictly ascending; with a symbol table every site has a
 * function; the ELF table object opens with elfio and has an 8-byte slot
 * per site in __mcount_loc.
 */
#include <gelf.h>

#include "elfio/elfio.h"
#include "recordsites/recordsites.h"
#include "fuzz/fuzz_common.h"

static void options_for(size_t size, struct record_options *o)
{
	record_options_init(o);
	switch (size % 8) {
	case 1: o->patchable_n = 2; o->patchable_m = 0; break;
	case 2: o->patchable_n = 4; o->patchable_m = 2; break;
	case 3: o->force_nop_mcount = true; break;
	case 4: o->align = 16; break;
	case 5: o->patchable_n = 8; o->patchable_m = 4; break;
	default: break;
	}
}

static void check_table_object(const char *path, size_t nsites)
{
	struct elfio *t = elfio_open(path, 0);

	FUZZ_CHECK(t != NULL, "the --format=elf object does not open");
	struct elfio_section *s = elfio_find_section_by_name(t, "__mcount_loc");
	FUZZ_CHECK(s != NULL, "no __mcount_loc in the table object");
	FUZZ_CHECK(s->shdr.sh_size == 8 * (uint64_t)nsites, "__mcount_loc has %llu bytes for %zu sites",
		   (unsigned long long)s->shdr.sh_size, nsites);
	const struct elfio_symtab *st;
	FUZZ_CHECK(elfio_symbols(t, &st) == 0, "table object symbols");
	for (size_t i = 1; i < elfio_nsections(t); i++) {
		struct elfio_section *r = elfio_section(t, i);
		const struct elfio_rela *v;
		size_t n;
		if (r->shdr.sh_type != SHT_RELA)
			continue;
		FUZZ_CHECK(elfio_relas(t, r, &v, &n) == 0, "table object relocations");
	}
	elfio_close(t);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_stdout();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], out[512];
	int fd = fuzz_memfd(data, size, path, sizeof(path));
	struct record_options o;
	struct record *r = NULL;
	struct elfio *e = elfio_open(path, ELFIO_QUIET);

	if (!e)
		goto done;
	options_for(size, &o);
	if (record_scan(e, &o, &r) == 0) {
		for (size_t i = 1; i < r->nsites; i++)
			FUZZ_CHECK(r->sites[i - 1].addr < r->sites[i].addr, "sites not sorted/unique");
		for (size_t i = 0; i < r->nsites; i++)
			FUZZ_CHECK(!r->has_symbols || r->sites[i].func, "site without a function");
		record_output(r, OUT_LIST, NULL);
		record_output(r, OUT_SYMBOLIZE, NULL);
		record_output(r, OUT_JSON, NULL);
		record_output(r, OUT_ASM, NULL);
		snprintf(out, sizeof(out), "%s/table.o", fuzz_scratch());
		unlink(out);
		if (record_output(r, OUT_ELF, out) == 0)
			check_table_object(out, r->nsites);
		else
			FUZZ_CHECK(access(out, F_OK) != 0, "a failed --format=elf left %s", out);
		FUZZ_CHECK(fuzz_count_prefix(fuzz_scratch(), ".patchsite.") == 0,
			   "temporary file left behind");
		record_free(r);
	}
	elfio_close(e);
done:
	close(fd);
	return 0;
}
