// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_batch.c - the package audit (recordsites/batch.c, package.c)
 * through its C API, on a directory of images built byte by byte.
 *
 * Strategy: every image is the same small x86_64 -mfentry program (two
 * functions whose entry calls __fentry__ are its two sites) with its own
 * __mcount_loc table, so each image's findings are known from the table
 * the test wrote: the two sites (clean), one left out (missing), an entry
 * on a function's NOP that is no site (stale), the two sites in the wrong
 * order (unsorted).  Beside them a file that is no ELF (could not be read)
 * and files whose names no package image has (not collected).  The counts
 * the package audit hands back are checked against that, per image
 * (package_audit_image) and summed over the tree (package_audit), in one
 * worker and in several.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/check_suites.h"
#include "tests/elfgen.h"
#include "recordsites/batch.h"
#include "recordsites/package.h"

#define BASE	0x401000u
#define SITE1	(BASE + 0x04)	/* f1: ENDBR64; call __fentry__ */
#define SITE2	(BASE + 0x10)	/* f2: call __fentry__ */
#define NOTRACE	(BASE + 0x20)	/* notrace: a 5-byte NOP, no site */

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void call_at(uint8_t *text, size_t at, uint64_t to)
{
	text[at] = 0xe8;
	put32(text + at + 1, (uint32_t)(to - (BASE + at + 5)));
}

/* The program with __mcount_loc holding table[0..n), written to path. */
static void write_image(const char *path, const uint64_t *table, size_t n)
{
	uint8_t text[0x40], tab[64] = { 0 };
	uint64_t fentry = BASE + 0x30;

	memset(text, 0xcc, sizeof(text));
	memcpy(text, "\xf3\x0f\x1e\xfa", 4);
	call_at(text, 4, fentry);
	text[9] = 0xc3;
	call_at(text, 0x10, fentry);
	text[0x15] = 0xc3;
	memcpy(text + 0x20, "\x0f\x1f\x44\x00\x00\xc3", 6);
	text[0x30] = 0xc3;
	for (size_t i = 0; i < n; i++)
		put64(tab + 8 * i, table[i]);
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, BASE, 16, text, sizeof(text) },
		{ "__mcount_loc", SHT_PROGBITS, SHF_ALLOC, 0x402000, 8, tab, 8 * n },
	};
	struct eg_sym syms[] = {
		{ "f1", BASE, 10, 1, STT_FUNC, STB_GLOBAL },
		{ "f2", BASE + 0x10, 6, 1, STT_FUNC, STB_GLOBAL },
		{ "notrace", NOTRACE, 6, 1, STT_FUNC, STB_GLOBAL },
		{ "__fentry__", fentry, 1, 1, STT_FUNC, STB_GLOBAL },
	};
	ck_assert_int_eq(eg_write(path, ET_EXEC, EM_X86_64, secs, 2, syms, 4), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

static const uint64_t t_clean[] = { SITE1, SITE2 };
static const uint64_t t_missing[] = { SITE1 };
static const uint64_t t_stale[] = { SITE1, SITE2, NOTRACE };
static const uint64_t t_unsorted[] = { SITE2, SITE1 };

struct tree {
	char dir[256], sub[300];
	char path[8][400];
	size_t n;
};

static const char *tree_add(struct tree *t, const char *dir, const char *name)
{
	ck_assert_uint_lt(t->n, 8);
	snprintf(t->path[t->n], sizeof(t->path[0]), "%s/%s", dir, name);
	return t->path[t->n++];
}

/*
 * DIR/vmlinux-1 (clean), DIR/a.ko (missing), DIR/sub/b.ko (stale),
 * DIR/sub/c.ko (unsorted), DIR/sub/d.ko (clean), DIR/z.ko (no ELF);
 * DIR/notes.txt and DIR/sub/e.o: not images of a package.
 */
static void make_tree(struct tree *t)
{
	char *d = eg_tmpname("package");

	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "%s", d);
	free(d);
	snprintf(t->sub, sizeof(t->sub), "%s/sub", t->dir);
	ck_assert_int_eq(mkdir(t->dir, 0700), 0);
	ck_assert_int_eq(mkdir(t->sub, 0700), 0);
	write_image(tree_add(t, t->dir, "vmlinux-1"), t_clean, 2);
	write_image(tree_add(t, t->dir, "a.ko"), t_missing, 1);
	write_image(tree_add(t, t->sub, "b.ko"), t_stale, 3);
	write_image(tree_add(t, t->sub, "c.ko"), t_unsorted, 2);
	write_image(tree_add(t, t->sub, "d.ko"), t_clean, 2);
	write_file(tree_add(t, t->dir, "z.ko"), "not an ELF file\n");
	write_image(tree_add(t, t->dir, "notes.txt"), t_missing, 1);
	write_image(tree_add(t, t->sub, "e.o"), t_missing, 1);
}

static void remove_tree(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		unlink(t->path[i]);
	rmdir(t->sub);
	rmdir(t->dir);
}

static void options(struct package_options *o, unsigned int jobs)
{
	memset(o, 0, sizeof(*o));
	record_options_init(&o->ro);
	o->ro.cap = ARCH_CAP_AUDIT;
	o->jobs = jobs;
}

/* Each image's counts, as the test built it. */
START_TEST(image_counts)
{
	struct tree t;
	struct package_options o;
	struct package_counts c;
	FILE *out = tmpfile();

	ck_assert_ptr_nonnull(out);
	make_tree(&t);
	options(&o, 1);
	static const struct {
		size_t i;
		int status;
		int kind;	/* the one finding, or -1 */
	} want[] = {
		{ 0, 0, -1 }, { 1, 1, FIND_MISSING }, { 2, 1, FIND_STALE },
		{ 3, 1, FIND_UNSORTED }, { 4, 0, -1 },
	};
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		memset(&c, 0xff, sizeof(c));
		ck_assert_int_eq(package_audit_image(&o, t.path[want[w].i], out, &c),
				 want[w].status);
		for (int k = 0; k < FIND_COUNT; k++) {
			ck_assert_msg(c.count[k] == (k == want[w].kind),
				      "%s: %" PRIu64 " %s", t.path[want[w].i], c.count[k],
				      finding_kind_name(k));
			ck_assert_uint_eq(c.ignored[k], 0);
		}
	}
	/* --ignore=stale: the stale entry counted as ignored, the image clean */
	o.ignore = 1u << FIND_STALE;
	ck_assert_int_eq(package_audit_image(&o, t.path[2], out, &c), 0);
	ck_assert_uint_eq(c.count[FIND_STALE], 0);
	ck_assert_uint_eq(c.ignored[FIND_STALE], 1);
	/* no ELF: not read */
	ck_assert_int_eq(package_audit_image(&o, t.path[5], out, &c), 2);
	fclose(out);
	remove_tree(&t);
}
END_TEST

/* The images a directory holds: the package's names only, sorted. */
START_TEST(collect_walks_sorted)
{
	struct tree t;
	struct batch b;
	char *args[1];

	make_tree(&t);
	args[0] = t.dir;
	ck_assert_int_eq(batch_collect(&b, args, 1), 0);
	ck_assert_uint_eq(b.n, 6);
	ck_assert_uint_eq(b.dirs, 1);
	ck_assert_uint_eq(b.unreadable, 0);
	for (size_t i = 1; i < b.n; i++)
		ck_assert_int_lt(strcmp(b.paths[i - 1], b.paths[i]), 0);
	for (size_t i = 0; i < b.n; i++) {
		ck_assert_ptr_null(strstr(b.paths[i], "notes.txt"));
		ck_assert_ptr_null(strstr(b.paths[i], "e.o"));
	}
	batch_free(&b);
	remove_tree(&t);
}
END_TEST

/* The tree's totals are the sums of what each image was built with, whatever the workers. */
static void totals_for(unsigned int jobs, unsigned int ignore)
{
	struct tree t;
	struct package_options o;
	struct package_totals tot;
	char *args[2];

	make_tree(&t);
	options(&o, jobs);
	o.ignore = ignore;
	args[0] = t.dir;
	args[1] = t.path[0];	/* a file named too: audited again */
	/* the reports go to stdout: away, for this call */
	int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(null, 0);
	fflush(stdout);
	ck_assert_int_ge(dup2(null, STDOUT_FILENO), 0);
	int ret = package_audit(&o, args, 2, &tot);
	fflush(stdout);
	ck_assert_int_ge(dup2(saved, STDOUT_FILENO), 0);
	close(saved);
	close(null);
	ck_assert_int_eq(ret, 0);
	ck_assert_int_eq(tot.run, 0);
	ck_assert_uint_eq(tot.images, 7);
	ck_assert_uint_eq(tot.unreadable, 1);
	ck_assert(tot.said);		/* z.ko's reason, on stderr */
	bool stale_ignored = ignore & (1u << FIND_STALE);
	ck_assert_uint_eq(tot.clean, stale_ignored ? 4 : 3);
	ck_assert_uint_eq(tot.with_findings, stale_ignored ? 2 : 3);
	for (int k = 0; k < FIND_COUNT; k++) {
		size_t want = k == FIND_MISSING || k == FIND_UNSORTED ||
			      (k == FIND_STALE && !stale_ignored);
		ck_assert_msg(tot.count[k] == want, "%zu %s", tot.count[k],
			      finding_kind_name(k));
		ck_assert_uint_eq(tot.ignored[k], k == FIND_STALE && stale_ignored);
	}
	remove_tree(&t);
}

START_TEST(totals_one_worker)
{
	totals_for(1, 0);
}
END_TEST

START_TEST(totals_three_workers)
{
	totals_for(3, 0);
}
END_TEST

START_TEST(totals_ignored)
{
	totals_for(2, 1u << FIND_STALE);
}
END_TEST

Suite *batch_suite(void)
{
	Suite *s = suite_create("batch");
	TCase *tc = tcase_create("package");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, image_counts);
	tcase_add_test(tc, collect_walks_sorted);
	tcase_add_test(tc, totals_one_worker);
	tcase_add_test(tc, totals_three_workers);
	tcase_add_test(tc, totals_ignored);
	suite_add_tcase(s, tc);
	return s;
}
