// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_audit.c - `patchsite audit`: site finding, the comparison with the
 * image's own tables, and DWARF attribution of each finding through libdw
 * (DW_AT_name / DW_AT_producer of the unit holding the function), printed
 * as text and as JSON.
 *
 * Checks: the per-kind counts add up to the findings, findings are in
 * address order, and every cu/producer string is readable to its end.
 */
#include "elfio/elfio.h"
#include "recordsites/recordsites.h"
#include "fuzz/fuzz_common.h"

static FILE *devnull;
static volatile size_t sink;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	FUZZ_CHECK(devnull != NULL, "/dev/null");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_memfd(data, size, path, sizeof(path));
	struct record_options o;
	struct record *r = NULL;
	struct audit a;
	struct elfio *e = elfio_open(path, ELFIO_QUIET);

	if (!e)
		goto done;
	record_options_init(&o);
	if (size % 2)
		o.align = 16;
	if (record_scan(e, &o, &r) == 0) {
		if (audit_run(r, &a) == 0) {
			size_t sum = 0;
			for (int k = 0; k < FIND_COUNT; k++)
				sum += a.count[k];
			FUZZ_CHECK(sum == a.n, "counts add up to %zu, %zu findings", sum, a.n);
			for (size_t i = 1; i < a.n; i++)
				FUZZ_CHECK(a.v[i - 1].addr <= a.v[i].addr, "findings out of order");
			for (size_t i = 0; i < a.n; i++) {
				FUZZ_CHECK(memchr(a.v[i].msg, 0, sizeof(a.v[i].msg)), "msg");
				if (a.v[i].cu)
					sink += strlen(a.v[i].cu);
				if (a.v[i].producer)
					sink += strlen(a.v[i].producer);
			}
			audit_print(r, &a, false, devnull);
			audit_print(r, &a, true, devnull);
			audit_free(&a);
		}
		record_free(r);
	}
	elfio_close(e);
done:
	close(fd);
	return 0;
}
