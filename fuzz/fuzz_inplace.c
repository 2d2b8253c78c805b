// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_inplace.c - `patchsite record --in-place -o OUT IMAGE` on the input
 * (a memfd; the writer reopens it by its /proc/self/fd path and copies it).
 *
 * Checks, beyond memory safety:
 *  - success: OUT has the input's size and differs from it only in the
 *    chosen table's slots and in the SHF_ALLOC SHT_RELA sections (the
 *    .rela.dyn entries that cover them): "patchsite only rewrites what is
 *    there";
 *  - failure: OUT does not exist;
 *  - either way: no .patchsite.* temporary is left in OUT's directory.
 * With FUZZ_INPLACE_IDEMPOTENT=1 in the environment it also runs the step
 * again on OUT and requires that the second run changes nothing.
 */
#include <gelf.h>

#include "elfio/elfio.h"
#include "recordsites/recordsites.h"
#include "fuzz/fuzz_common.h"

static bool idempotent;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	idempotent = getenv("FUZZ_INPLACE_IDEMPOTENT") && *getenv("FUZZ_INPLACE_IDEMPOTENT") == '1';
	return 0;
}

static const struct site_table *chosen_table(struct record *r)
{
	static const enum table_kind order[] = { TABLE_REGION, TABLE_MCOUNT_LOC, TABLE_PFE };

	for (size_t k = 0; k < 3; k++)
		for (size_t t = 0; t < r->ntables; t++)
			if (r->tables[t].kind == order[k])
				return &r->tables[t];
	return NULL;
}

/* Bytes the in-place writer may change: the table's slots and .rela.dyn-like sections. */
static uint8_t *allowed_bytes(struct record *r, size_t size)
{
	uint8_t *ok = calloc(size ? size : 1, 1);
	const struct site_table *tb = chosen_table(r);

	FUZZ_CHECK(ok != NULL, "calloc");
	FUZZ_CHECK(tb != NULL, "in-place succeeded without a table");
	for (size_t i = 0; i < tb->count; i++) {
		uint64_t off;
		if (elfio_addr_to_offset(r->e, tb->start + 8 * i, &off))
			continue;
		for (uint64_t b = off; b < off + 8 && b < size; b++)
			ok[b] = 1;
	}
	for (size_t i = 1; i < elfio_nsections(r->e); i++) {
		struct elfio_section *s = elfio_section(r->e, i);
		if (s->shdr.sh_type != SHT_RELA || !(s->shdr.sh_flags & SHF_ALLOC))
			continue;
		for (uint64_t b = s->shdr.sh_offset; b < s->shdr.sh_offset + s->shdr.sh_size && b < size; b++)
			ok[b] = 1;
	}
	return ok;
}

static void second_run(const char *out, const char *out2, const struct inplace_options *io)
{
	struct elfio *e = elfio_open(out, ELFIO_QUIET);
	struct record_options o;
	struct record *r = NULL;
	struct inplace_report rep;

	FUZZ_CHECK(e != NULL, "the written image does not open");
	record_options_init(&o);
	FUZZ_CHECK(record_scan(e, &o, &r) == 0, "the written image does not scan");
	FUZZ_CHECK(record_write_in_place(r, io, out2, &rep) == 0, "second in-place failed");
	FUZZ_CHECK(!rep.changed, "second in-place changed the image again");
	record_free(r);
	elfio_close(e);
	unlink(out2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], out[512], out2[512];
	int fd = fuzz_memfd(data, size, path, sizeof(path));
	struct record_options o;
	struct record *r = NULL;
	struct inplace_options io = { .keep_misaligned = size % 2 };
	struct inplace_report rep;
	struct elfio *e = elfio_open(path, ELFIO_QUIET);

	if (!e)
		goto done;
	snprintf(out, sizeof(out), "%s/out.elf", fuzz_scratch());
	snprintf(out2, sizeof(out2), "%s/out2.elf", fuzz_scratch());
	unlink(out);
	record_options_init(&o);
	if (record_scan(e, &o, &r) == 0) {
		int ret = record_write_in_place(r, &io, out, &rep);
		size_t olen = 0;
		uint8_t *obuf = fuzz_slurp(out, &olen);

		if (ret == 0) {
			FUZZ_CHECK(obuf != NULL, "in-place succeeded but wrote nothing");
			FUZZ_CHECK(olen == size, "output has %zu bytes, input %zu", olen, size);
			uint8_t *ok = allowed_bytes(r, size);
			for (size_t i = 0; i < size; i++)
				FUZZ_CHECK(obuf[i] == data[i] || ok[i],
					   "byte 0x%zx changed outside the table and .rela.dyn", i);
			free(ok);
			FUZZ_CHECK(rep.used <= rep.slots, "%zu of %zu slots", rep.used, rep.slots);
		} else {
			FUZZ_CHECK(obuf == NULL, "in-place failed (%d) but wrote %s", ret, out);
		}
		FUZZ_CHECK(fuzz_count_prefix(fuzz_scratch(), ".patchsite.") == 0,
			   "temporary file left behind");
		record_free(r);
		r = NULL;
		elfio_close(e);
		e = NULL;
		if (ret == 0 && idempotent)
			second_run(out, out2, &io);
		free(obuf);
		unlink(out);
	}
	elfio_close(e);
done:
	close(fd);
	return 0;
}
