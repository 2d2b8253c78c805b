// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_cli.c - the commands as a whole: patchsite.c's main() (built with
 * -Dmain=patchsite_main) on a file in the scratch directory.
 *
 * Input: byte 0 picks the command line, the rest is the image.
 *
 *   0 record              5 audit                     10 record -o OUT
 *   1 record --symbolize  6 audit --format=json       11 audit --align=16 --nop-mcount
 *   2 record json         7 record --in-place IMAGE   12 record --patchable=4,2 --symbolize
 *   3 record asm -o OUT   8 record --in-place -o OUT  13 record --in-place --keep-misaligned
 *   4 record elf -o OUT   9 record json -o OUT        14 record --nop-mcount json
 *
 * and the rewriting commands, on the scratch copy:
 *
 *  15 pin IMAGE           17 repad IMAGE -o OUT       19 embed IMAGE -o OUT
 *  16 pin --dry-run IMAGE 18 repad --in-place IMAGE
 *
 * The contract of the command line is checked on every run:
 *  - exit 0 or 2 (audit: 0, 1 or 2);
 *  - exit 2: exactly one line on stderr, starting "patchsite: "; the image
 *    is byte-identical to the input; no OUT file;
 *  - exit 0: nothing on stderr, except the one summary line of
 *    record (its summary: how the layout was established; pin, repad and
 *    embed report on stdout);
 *  - the image is unchanged unless the command rewrites it in place and
 *    succeeded;
 *  - never a .patchsite.* temporary left beside IMAGE or OUT, nor the
 *    journal of an in-place edit (IMAGE.patchsite-journal).
 * stderr is caught in a memfd while main() runs; sanitizer reports are sent
 * to the real stderr so a crash is still seen.
 */
#include <sanitizer/common_interface_defs.h>

#include "fuzz/fuzz_common.h"

int patchsite_main(int argc, char **argv);

static int real_stderr = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_stdout();
	real_stderr = dup(STDERR_FILENO);
	FUZZ_CHECK(real_stderr >= 0, "dup stderr");
	__sanitizer_set_report_fd((void *)(intptr_t)real_stderr);
	return 0;
}

struct mode {
	const char *argv[8];	/* IMAGE and OUT are filled in */
	bool audit, in_place, out;
	bool rewrites;		/* may change IMAGE on success, reports on stdout */
};

#define IMG "IMAGE"
#define OUT "OUT"
static const struct mode modes[] = {
	{ { "record", IMG } },
	{ { "record", "--symbolize", IMG } },
	{ { "record", "--format=json", IMG } },
	{ { "record", "--format=asm", "-o", OUT, IMG }, .out = true },
	{ { "record", "--format=elf", "-o", OUT, IMG }, .out = true },
	{ { "audit", IMG }, .audit = true },
	{ { "audit", "--format=json", IMG }, .audit = true },
	{ { "record", "--in-place", IMG }, .in_place = true },
	{ { "record", "--in-place", "-o", OUT, IMG }, .in_place = true, .out = true },
	{ { "record", "--format=json", "-o", OUT, IMG }, .out = true },
	{ { "record", "-o", OUT, IMG }, .out = true },
	{ { "audit", "--align=16", "--nop-mcount", IMG }, .audit = true },
	{ { "record", "--patchable=4,2", "--symbolize", IMG } },
	{ { "record", "--in-place", "--keep-misaligned", IMG }, .in_place = true },
	{ { "record", "--nop-mcount", "--format=json", IMG } },
	{ { "pin", IMG }, .rewrites = true },
	{ { "pin", "--dry-run", IMG } },
	{ { "repad", IMG, "-o", OUT }, .out = true },
	{ { "repad", "--in-place", IMG }, .rewrites = true },
	{ { "embed", IMG, "-o", OUT }, .out = true },
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char img[512], out[512], *argv[10];
	int argc = 0;

	if (size < 1)
		return 0;
	const struct mode *m = &modes[data[0] % NMODES];
	data++;
	size--;

	snprintf(img, sizeof(img), "%s/image", fuzz_scratch());
	snprintf(out, sizeof(out), "%s/out", fuzz_scratch());
	unlink(out);
	fuzz_put_file(img, data, size);

	argv[argc++] = (char *)"patchsite";
	for (size_t i = 0; m->argv[i]; i++) {
		const char *a = m->argv[i];
		argv[argc++] = !strcmp(a, IMG) ? img : !strcmp(a, OUT) ? out : (char *)a;
	}
	argv[argc] = NULL;

	/* catch stderr */
	int cap = memfd_create("fuzz-stderr", MFD_CLOEXEC);
	FUZZ_CHECK(cap >= 0, "memfd_create");
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	dup2(cap, STDERR_FILENO);
	int rc = patchsite_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);

	char err[8192] = "";
	ssize_t n = pread(cap, err, sizeof(err) - 1, 0);
	close(cap);
	err[n > 0 ? n : 0] = 0;
	size_t lines = 0;
	for (char *p = err; *p; p++)
		lines += *p == '\n';

	FUZZ_CHECK(rc == 0 || rc == 2 || (m->audit && rc == 1), "exit status %d", rc);
	if (rc == 2) {
		FUZZ_CHECK(lines == 1 && !strncmp(err, "patchsite: ", 11) &&
				   err[strlen(err) - 1] == '\n',
			   "stderr on error is not one 'patchsite: ' line: [%s]", err);
		/* main()'s own line for a failure that printed nothing (the exact
		   start: a name from the image may say anything further on) */
		char noreason[1100];
		snprintf(noreason, sizeof(noreason), "patchsite: %s: %s failed and gave no reason",
			 argv[argc - 1], argv[1]);
		FUZZ_CHECK(strncmp(err, noreason, strlen(noreason)) != 0,
			   "a failure path printed no reason: [%s]", err);
		FUZZ_CHECK(!m->out || access(out, F_OK) != 0, "failed, but %s was written", out);
	} else {
		/* silent on success, as binutils are (-v asks for a report) */
		FUZZ_CHECK(lines == 0, "stderr on success: [%s]", err);
	}
	if (rc == 2 || !(m->in_place || m->rewrites) || m->out) {
		size_t len;
		uint8_t *now = fuzz_slurp(img, &len);
		FUZZ_CHECK(now && len == size && !memcmp(now, data, size),
			   "the input image changed (exit %d)", rc);
		free(now);
	}
	FUZZ_CHECK(fuzz_count_prefix(fuzz_scratch(), ".patchsite.") == 0,
		   "temporary file left behind");
	char journal[sizeof(img) + 32];
	snprintf(journal, sizeof(journal), "%s.patchsite-journal", img);
	FUZZ_CHECK(access(journal, F_OK) != 0, "an in-place edit's journal left behind");
	return 0;
}
