// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_elf.c - every reader of elfio/ on one input file.
 *
 * The input is the file patchsite would open: a plain ELF image, or a
 * .gz/.xz/.zst compressed module (elfio_open sniffs the magic), written to
 * a memfd.  If it opens, every section is loaded (SHF_COMPRESSED ones are
 * inflated by libelf), every symbol table and SHT_RELA section (.rela.dyn
 * included) decoded, the function index built and queried at the edges of
 * every function and section, and the DWARF unit of every function looked
 * up.  Each loaded section's bytes are read end to end so that a wrong
 * (pointer, size) pair shows up under ASan or as a SEGV.
 */
#include <gelf.h>

#include "elfio/elfio.h"
#include "fuzz/fuzz_common.h"

static volatile uint8_t sink;

static void touch(const uint8_t *p, size_t n)
{
	uint8_t x = 0;

	for (size_t i = 0; i < n; i++)
		x ^= p[i];
	sink ^= x;
}

/*
 * Reference model of elfio_function_at: the plain walk back over every
 * function (the original O(n) algorithm), on the public sorted list.
 */
static const struct elfio_symbol *ref_function_at(struct elfio *e, uint64_t addr, uint64_t before)
{
	const struct elfio_symbol *const *f;
	const struct elfio_symbol *body = NULL, *pre = NULL;
	size_t n;

	if (elfio_functions(e, &f, &n) || !n)
		return NULL;
	uint64_t key = addr + before < addr ? UINT64_MAX : addr + before;
	for (size_t i = n; i-- > 0;) {
		const struct elfio_symbol *s = f[i];
		if (s->addr > key)
			continue;
		/* elfio clamps a wrapping end to 2^64-1 ("clamp, never wrap") */
		uint64_t end = s->addr + s->size < s->addr ? UINT64_MAX : s->addr + s->size;
		if (addr >= s->addr && addr < end)
			body = s;	/* walking down: the lowest index wins */
		else if (addr < s->addr && s->addr - addr <= before)
			pre = s;
	}
	return body ? body : pre;
}

static void check_function_at(struct elfio *e, uint64_t addr, uint64_t before)
{
	const struct elfio_symbol *got = elfio_function_at(e, addr, before);
	const struct elfio_symbol *want = ref_function_at(e, addr, before);

	FUZZ_CHECK(got == want, "function_at(0x%llx, %llu): %s, the model says %s",
		   (unsigned long long)addr, (unsigned long long)before, got ? got->name : "none",
		   want ? want->name : "none");
}

static size_t model_checks;	/* the model is O(n): bound its use per input */

static void probe_addr(struct elfio *e, uint64_t addr)
{
	char buf[256];
	uint64_t v;

	elfio_addr_to_sec(e, addr);
	elfio_read_u64(e, addr, &v);
	elfio_addr_to_offset(e, addr, &v);
	elfio_format_addr(e, addr, buf, sizeof(buf));
	FUZZ_CHECK(memchr(buf, 0, sizeof(buf)) != NULL, "format_addr not terminated");
	if (model_checks < 2048) {
		model_checks += 2;
		check_function_at(e, addr, 0);
		check_function_at(e, addr, 8);
	} else {
		elfio_function_at(e, addr, 0);
		elfio_function_at(e, addr, 8);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_memfd(data, size, path, sizeof(path));
	struct elfio *e = elfio_open(path, ELFIO_QUIET);

	model_checks = 0;
	if (!e)
		goto out;

	FUZZ_CHECK(elfio_nsections(e) > 0, "opened with no sections");
	for (size_t i = 1; i < elfio_nsections(e); i++) {
		struct elfio_section *s = elfio_section(e, i);

		FUZZ_CHECK(s && s->name, "section %zu has no name", i);
		if (elfio_section_data(e, s) == 0 && s->data)
			touch(s->data, s->size);
		probe_addr(e, s->addr);
		probe_addr(e, s->addr + s->shdr.sh_size);
		probe_addr(e, s->addr + s->shdr.sh_size - 1);
		probe_addr(e, s->addr + s->shdr.sh_size - 8);
	}
	for (size_t i = 1; i < elfio_nsections(e); i++) {
		struct elfio_section *s = elfio_section(e, i);
		const struct elfio_symtab *t;

		if (s->shdr.sh_type == SHT_SYMTAB || s->shdr.sh_type == SHT_DYNSYM) {
			if (elfio_symtab_by_index(e, i, &t) == 0) {
				FUZZ_CHECK(t->count == 0 || t->syms, "symtab without symbols");
				for (size_t k = 0; k < t->count; k++)
					touch((const uint8_t *)t->syms[k].name,
					      strlen(t->syms[k].name));
			}
		}
		if (s->shdr.sh_type == SHT_RELA) {
			const struct elfio_rela *v = NULL;
			size_t n = 0;
			if (elfio_relas(e, s, &v, &n) == 0) {
				for (size_t k = 0; k < n; k++)
					probe_addr(e, v[k].offset);
			}
			/* the sh_link / sh_info targets, as the record code uses them */
			elfio_symtab_by_index(e, s->shdr.sh_link, &t);
			elfio_section(e, s->shdr.sh_info);
		}
	}

	const struct elfio_symbol *const *f = NULL;
	size_t nf = 0;
	if (elfio_functions(e, &f, &nf) == 0) {
		for (size_t i = 1; i < nf; i++)
			FUZZ_CHECK(f[i - 1]->addr <= f[i]->addr, "functions not sorted");
		for (size_t i = 0; i < nf && i < 4096; i++) {
			probe_addr(e, f[i]->addr);
			probe_addr(e, f[i]->addr + f[i]->size - 1);
			probe_addr(e, f[i]->addr - 8);
			probe_addr(e, f[i]->addr + f[i]->size);
			const struct elfio_symbol *g = elfio_function_at(e, f[i]->addr, 0);
			FUZZ_CHECK(g != NULL, "function_at(%s) found nothing", f[i]->name);
		}
	}

	struct elfio_dwarf *dw = elfio_dwarf_open(e);
	if (dw) {
		const char *name, *prod;
		for (size_t i = 0; f && i < nf && i < 256; i++)
			if (elfio_dwarf_cu(dw, e, f[i]->addr, &name, &prod) == 0) {
				if (name)
					touch((const uint8_t *)name, strlen(name));
				if (prod)
					touch((const uint8_t *)prod, strlen(prod));
			}
		elfio_dwarf_close(dw);
	}
	elfio_close(e);
out:
	close(fd);
	return 0;
}
