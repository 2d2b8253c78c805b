// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_recordsites.c - record on images built byte by byte (elfgen), so
 * that each rule is tested on exactly the bytes it is about: entry calls
 * after a landing pad, prologue calls, leftover code of an overridden weak
 * function (no symbol), notrace functions that start with a NOP, stale
 * table entries, CALL_OPS areas with and without BTI, misalignment, and
 * relocatable objects whose calls are marked by relocations.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check_suites.h"
#include "tests/elfgen.h"
#include "elfio/elfio.h"
#include "recordsites/recordsites.h"

struct img {
	uint8_t text[256];
	uint64_t base;
};

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

/* x86: E8 rel32 at text offset `at` to absolute `to` */
static void x86_call(struct img *m, size_t at, uint64_t to)
{
	m->text[at] = 0xe8;
	put32(m->text + at + 1, (uint32_t)(to - (m->base + at + 5)));
}

static struct record *scan(const char *path, const struct record_options *o, struct elfio **ep)
{
	struct record_options def;
	struct record *r = NULL;

	if (!o) {
		record_options_init(&def);
		o = &def;
	}
	*ep = elfio_open(path, 0);
	ck_assert_ptr_nonnull(*ep);
	ck_assert_int_eq(record_scan(*ep, o, &r), 0);
	return r;
}

static void expect_sites(struct record *r, const uint64_t *want, size_t n)
{
	ck_assert_uint_eq(r->nsites, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(r->sites[i].addr, want[i]);
}

/*
 * x86_64 -mfentry image:
 *   0x00 f1: ENDBR64; call __fentry__; ret          site 0x04
 *   0x10 f2 (+ global alias f2_alias): call __fentry__; ret   site 0x10
 *   0x20 notrace: 5-byte NOP; ret                   no site (flavour is fentry)
 *   0x30 (no symbol: overridden weak): call __fentry__; ret   not recorded
 *   0x40 late: nop; call __fentry__; ret            not at entry: not a site
 *   0x50 __fentry__: ret
 */
static char *make_x86_fentry(const uint64_t *table, size_t ntable)
{
	struct img m = { .base = 0x401000 };
	uint64_t fentry = m.base + 0x50;
	memset(m.text, 0xcc, sizeof(m.text));
	memcpy(m.text, "\xf3\x0f\x1e\xfa", 4);
	x86_call(&m, 4, fentry);
	m.text[9] = 0xc3;
	x86_call(&m, 0x10, fentry);
	m.text[0x15] = 0xc3;
	memcpy(m.text + 0x20, "\x0f\x1f\x44\x00\x00\xc3", 6);
	x86_call(&m, 0x30, fentry);
	m.text[0x35] = 0xc3;
	m.text[0x40] = 0x90;
	x86_call(&m, 0x41, fentry);
	m.text[0x46] = 0xc3;
	m.text[0x50] = 0xc3;

	uint8_t tab[64] = { 0 };
	for (size_t i = 0; i < ntable; i++)
		put64(tab + 8 * i, table[i]);
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, m.base, 16, m.text, 0x60 },
		{ "__mcount_loc", SHT_PROGBITS, SHF_ALLOC, 0x402000, 8, tab, 8 * ntable },
	};
	struct eg_sym syms[] = {
		{ "f2", 0x401010, 6, 1, STT_FUNC, STB_LOCAL },
		{ "f1", 0x401000, 10, 1, STT_FUNC, STB_GLOBAL },
		{ "f2_alias", 0x401010, 6, 1, STT_FUNC, STB_GLOBAL },
		{ "notrace", 0x401020, 6, 1, STT_FUNC, STB_GLOBAL },
		{ "late", 0x401040, 7, 1, STT_FUNC, STB_GLOBAL },
		{ "__fentry__", 0x401050, 1, 1, STT_FUNC, STB_GLOBAL },
	};
	char *p = eg_tmpname("x86fentry");
	ck_assert_int_eq(eg_write(p, ET_EXEC, EM_X86_64, secs, ntable ? 2 : 1, syms, 6), 0);
	return p;
}

START_TEST(x86_fentry_scan)
{
	char *p = make_x86_fentry(NULL, 0);
	struct elfio *e;
	struct record *r = scan(p, NULL, &e);
	const uint64_t want[] = { 0x401004, 0x401010 };
	char buf[64];

	expect_sites(r, want, 2);
	ck_assert_int_eq(r->sites[0].flavour, FLAVOUR_FENTRY);
	ck_assert_uint_eq(r->sites[0].sources, SRC_SCAN);
	ck_assert_str_eq(r->sites[0].func->name, "f1");
	/* the global alias names the site, not the local symbol */
	ck_assert_str_eq(r->sites[1].func->name, "f2_alias");
	record_symbolize(r, r->sites[0].addr, r->sites[0].func, buf, sizeof(buf));
	ck_assert_str_eq(buf, "f1+0x4");
	ck_assert_uint_eq(r->ntables, 0);
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/* Names from the image cannot split or forge a line of text output. */
START_TEST(text_names_escaped)
{
	char buf[64];

	record_text_name(buf, sizeof(buf), "a b\n\x1b[31m\\x\xff");
	ck_assert_str_eq(buf, "a\\x20b\\x0a\\x1b[31m\\x5cx\\xff");
	record_text_str(buf, sizeof(buf), "GNU C17 -Os\n");
	ck_assert_str_eq(buf, "GNU C17 -Os\\x0a");
	/* cut at an escape boundary, always terminated */
	record_text_name(buf, 6, "ab\ncd");
	ck_assert_str_eq(buf, "ab");

	char *p = make_x86_fentry(NULL, 0);
	struct elfio *e;
	struct record *r = scan(p, NULL, &e);
	struct elfio_symbol evil = *r->sites[0].func;
	char *out = eg_tmpname("symlist");
	uint8_t *txt;
	long n;

	evil.name = "f1\nfake 0x1 forged";
	r->sites[0].func = &evil;
	ck_assert_int_eq(record_output(r, OUT_SYMBOLIZE, out), 0);
	n = eg_slurp(out, &txt);
	ck_assert_int_gt(n, 0);
	size_t lines = 0;
	for (long i = 0; i < n; i++)
		lines += txt[i] == '\n';
	ck_assert_uint_eq(lines, 2);
	ck_assert_ptr_nonnull(memmem(txt, (size_t)n, "f1\\x0afake\\x200x1\\x20forged+0x4 fentry\n", 38));
	free(txt);
	ck_assert_int_eq(record_output(r, OUT_JSON, out), 0);
	n = eg_slurp(out, &txt);
	ck_assert_ptr_nonnull(memmem(txt, (size_t)n, "\"f1\\u000afake 0x1 forged\"", 25));
	free(txt);
	unlink(out);
	free(out);
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/* A stale table: leftover weak code, a NOP, a mid-function address, a zero. */
START_TEST(x86_fentry_table_entries_verified)
{
	const uint64_t table[] = { 0x401010, 0x401030, 0x401021, 0x401006, 0, 0x401004 };
	char *p = make_x86_fentry(table, 6);
	struct elfio *e;
	struct record *r = scan(p, NULL, &e);
	const uint64_t want[] = { 0x401004, 0x401010 };

	expect_sites(r, want, 2);
	ck_assert_uint_eq(r->ntables, 1);
	ck_assert_int_eq(r->tables[0].kind, TABLE_MCOUNT_LOC);
	ck_assert_uint_eq(r->tables[0].count, 6);
	ck_assert_uint_eq(r->tables[0].entries[1].value, 0x401030);
	/* 0x401004 is in the table and found by the scan; so is 0x401010 */
	ck_assert_uint_eq(r->sites[0].sources, SRC_TABLE | SRC_SCAN);
	/* a leftover is a call to __fentry__ but outside every function */
	struct site s;
	ck_assert(!record_verify(r, 0x401030, &s));
	ck_assert(!record_verify(r, 0x401045, &s));
	ck_assert(record_verify(r, 0x401010, &s));
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/*
 * A table entry on a 5-byte NOP at an entry is not evidence of -mnop-mcount:
 * the table is what is tested, never its own witness.  The image's calls to
 * __fentry__ say what its sites are, and the entry is not one.
 */
START_TEST(x86_nop_mcount_table_is_no_evidence)
{
	const uint64_t table[] = { 0x401020 };
	char *p = make_x86_fentry(table, 1);
	struct elfio *e;
	struct record *r = scan(p, NULL, &e);
	const uint64_t want[] = { 0x401004, 0x401010 };

	ck_assert(!r->nop_mcount);
	ck_assert(r->has_calls);
	ck_assert_int_eq(r->ev.source, EVIDENCE_CODE);
	expect_sites(r, want, 2);
	ck_assert_int_eq(record_find(r, 0x401020), -1);
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/* -mnop-mcount stated: the sites are the 5-byte NOPs at entry, and only they. */
START_TEST(x86_nop_mcount_forced)
{
	char *p = make_x86_fentry(NULL, 0);
	struct record_options o;
	struct elfio *e;

	record_options_init(&o);
	o.force_nop_mcount = true;
	struct record *r = scan(p, &o, &e);
	const uint64_t want[] = { 0x401020 };
	expect_sites(r, want, 1);
	ck_assert_int_eq(r->ev.source, EVIDENCE_STATED);
	ck_assert_int_eq(r->sites[0].flavour, FLAVOUR_ENTRY_NOP);
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/* x86 -pg: call mcount inside the prologue; a call to another function is not a site. */
START_TEST(x86_mcount_prologue)
{
	struct img m = { .base = 0x1000 };
	memset(m.text, 0xcc, sizeof(m.text));
	memcpy(m.text, "\x55\x48\x89\xe5", 4);	/* push %rbp; mov %rsp,%rbp */
	x86_call(&m, 4, 0x1040);		/* call mcount */
	x86_call(&m, 9, 0x1030);		/* call other */
	memcpy(m.text + 14, "\x5d\xc3", 2);
	m.text[0x30] = 0xc3;
	m.text[0x40] = 0xc3;
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, m.base, 16, m.text, 0x50 },
	};
	struct eg_sym syms[] = {
		{ "main", 0x1000, 16, 1, STT_FUNC, STB_GLOBAL },
		{ "other", 0x1030, 1, 1, STT_FUNC, STB_GLOBAL },
		{ "mcount", 0x1040, 1, 1, STT_FUNC, STB_GLOBAL },
	};
	char *p = eg_tmpname("x86pg");
	ck_assert_int_eq(eg_write(p, ET_DYN, EM_X86_64, secs, 1, syms, 3), 0);
	struct elfio *e;
	struct record *r = scan(p, NULL, &e);
	const uint64_t want[] = { 0x1004 };
	expect_sites(r, want, 1);
	ck_assert_int_eq(r->sites[0].flavour, FLAVOUR_MCOUNT);
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/*
 * Bigger arm64 images, word by word, as GCC lays them out: a64_func()
 * emits one function of the given kind at the next `align` boundary (NOP
 * padding, as GNU as fills code alignment on arm64).
 */
#define A64_NOP		0xd503201fu
#define A64_BTIC	0xd503245fu
#define A64_RET		0xd65f03c0u
#define A64_ADD		0x91000400u	/* add x0, x0, #1 */

enum a64_kind {
	A64_CALLOPS,		/* NOP NOP | f: [BTI C] NOP NOP body RET */
	A64_CALLOPS_MIS,	/* the same with its literal at 4 mod 8 (no alignment) */
	A64_PFE2,		/* f: [BTI C] NOP NOP body RET (=2) */
	A64_ASM_ALT,		/* hand-written: f: BTI C; NOP; NOP (an alternative); RET */
	A64_NOTRACE_KEY,	/* notrace: f: NOP (a static key); body RET */
	A64_ATTR_1_0,		/* patchable_function_entry(1,0): f: NOP body RET */
	A64_PLAIN,		/* f: body RET */
};

struct a64img {
	uint32_t w[2048];
	size_t n;
	struct eg_sym syms[128];
	size_t nsyms;
	char names[128][16];
	uint64_t base;
};

static uint64_t a64_here(const struct a64img *g)
{
	return g->base + 4 * g->n;
}

/* Emit one function; returns its site address (0: none). */
static uint64_t a64_func(struct a64img *g, enum a64_kind k, unsigned int align, bool bti,
			 unsigned int body)
{
	uint64_t site = 0;

	if (k == A64_CALLOPS_MIS) {
		while (a64_here(g) % 8 != 4)
			g->w[g->n++] = A64_ADD;		/* the end of a previous body */
	} else {
		while (a64_here(g) % align)
			g->w[g->n++] = A64_NOP;
	}
	if (k == A64_CALLOPS || k == A64_CALLOPS_MIS) {
		site = a64_here(g);
		g->w[g->n++] = A64_NOP;
		g->w[g->n++] = A64_NOP;
	}
	uint64_t start = a64_here(g);
	if (bti || k == A64_ASM_ALT)
		g->w[g->n++] = A64_BTIC;
	if (k == A64_PFE2)
		site = a64_here(g) - (bti ? 4 : 0);
	if (k == A64_CALLOPS || k == A64_CALLOPS_MIS || k == A64_PFE2 || k == A64_ASM_ALT) {
		g->w[g->n++] = A64_NOP;
		g->w[g->n++] = A64_NOP;
	} else if (k == A64_NOTRACE_KEY || k == A64_ATTR_1_0) {
		g->w[g->n++] = A64_NOP;
	}
	for (unsigned int i = 0; i < body; i++)
		g->w[g->n++] = A64_ADD;
	g->w[g->n++] = A64_RET;
	snprintf(g->names[g->nsyms], sizeof(g->names[0]), "f%zu", g->nsyms);
	g->syms[g->nsyms] = (struct eg_sym){ g->names[g->nsyms], start, a64_here(g) - start, 1,
					     STT_FUNC, STB_GLOBAL };
	g->nsyms++;
	return site;
}

static char *a64_write(struct a64img *g, const char *tag, const uint64_t *table, size_t ntable)
{
	uint8_t *text = malloc(4 * g->n), *tab = calloc(ntable ? ntable : 1, 8);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(tab);
	for (size_t i = 0; i < g->n; i++)
		put32(text + 4 * i, g->w[i]);
	for (size_t i = 0; i < ntable; i++)
		put64(tab + 8 * i, table[i]);
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, g->base, 64, text, 4 * g->n },
		{ "__patchable_function_entries", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 0x800000, 8,
		  tab, 8 * ntable },
	};
	char *p = eg_tmpname(tag);
	ck_assert_int_eq(eg_write(p, ET_EXEC, EM_AARCH64, secs, ntable ? 2 : 1, g->syms,
				  g->nsyms), 0);
	free(text);
	free(tab);
	return p;
}

/*
 * CALL_OPS (=4,2, aligned to 8) with every near miss of a real kernel: the
 * layout comes from the functions, and the table under test, which lists
 * every function at +0 (a table recorded for the =2 layout), is not its
 * evidence: record gives the real sites, at func-8.
 */
START_TEST(arm64_call_ops_layout)
{
	struct a64img *g = calloc(1, sizeof(*g));
	uint64_t want[32], table[32];
	size_t nw = 0, nt = 0;

	g->base = 0x400000;
	for (unsigned int i = 0; i < 14; i++) {
		uint64_t s = a64_func(g, A64_CALLOPS, 8, i % 3 == 0, i % 4);
		want[nw++] = s;
		table[nt++] = s + 8;
	}
	uint64_t mis = a64_func(g, A64_CALLOPS_MIS, 8, false, 1);
	want[nw++] = mis;
	uint64_t asm_alt = a64_func(g, A64_ASM_ALT, 8, true, 2);
	uint64_t notrace = g->syms[g->nsyms].value;
	a64_func(g, A64_NOTRACE_KEY, 8, false, 3);
	notrace = g->syms[g->nsyms - 1].value;
	a64_func(g, A64_ATTR_1_0, 8, false, 2);
	uint64_t attr = g->syms[g->nsyms - 1].value;
	a64_func(g, A64_PLAIN, 8, false, 5);
	char *p = a64_write(g, "a64ops", table, nt);
	struct elfio *e;
	struct record *r = scan(p, NULL, &e);

	ck_assert_int_eq(r->ev.source, EVIDENCE_CODE);
	ck_assert(r->patchable);
	ck_assert_uint_eq(r->pre_bytes, 8);
	ck_assert_uint_eq(r->post_bytes, 8);
	expect_sites(r, want, nw);
	for (size_t i = 0; i < nw; i++) {
		ck_assert_int_eq(r->sites[i].flavour, FLAVOUR_CALL_OPS);
		ck_assert(r->sites[i].misaligned == (want[i] == mis));
	}
	/* near misses: not sites, whatever NOPs they begin with */
	struct site s;
	ck_assert(!record_verify(r, asm_alt - 8, &s));
	ck_assert(!record_verify(r, asm_alt + 4, &s));
	ck_assert(!record_verify(r, notrace, &s));
	ck_assert(!record_verify(r, attr, &s));
	/* the table's entries (func+0) are not sites */
	ck_assert(!record_verify(r, table[0], &s));
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
	free(g);
}
END_TEST

/*
 * -fpatchable-function-entry=2 with functions aligned to 64: padding puts 8
 * or more bytes of NOPs before most functions, which is not a CALL_OPS
 * literal (the functions share the residue 0 mod 64, so an area before the
 * symbol would have to be 64 bytes long).
 */
START_TEST(arm64_pfe2_padding_is_not_a_literal)
{
	struct a64img *g = calloc(1, sizeof(*g));
	uint64_t want[32];
	size_t nw = 0, before8 = 0;

	g->base = 0x400000;
	for (unsigned int i = 0; i < 16; i++) {
		want[nw++] = a64_func(g, A64_PFE2, 64, false, (i * 5) % 13);
		before8 += i && (g->syms[i].value - (g->syms[i - 1].value + g->syms[i - 1].size)) >= 8;
	}
	ck_assert_uint_ge(before8, 8);	/* the trap is real */
	char *p = a64_write(g, "a64pad", NULL, 0);
	struct elfio *e;
	struct record *r = scan(p, NULL, &e);
	ck_assert_uint_eq(r->pre_bytes, 0);
	ck_assert_uint_eq(r->post_bytes, 8);
	expect_sites(r, want, nw);
	ck_assert_int_eq(r->sites[0].flavour, FLAVOUR_PATCHABLE);
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
	free(g);
}
END_TEST

/* Three functions are too few for a vote: refused, with the way out named. */
START_TEST(arm64_too_small_for_a_vote)
{
	struct a64img *g = calloc(1, sizeof(*g));
	struct record_options o;
	struct record *r = NULL;

	g->base = 0x400000;
	for (unsigned int i = 0; i < 3; i++)
		a64_func(g, A64_CALLOPS, 8, false, i);
	char *p = a64_write(g, "a64small", NULL, 0);
	struct elfio *e = elfio_open(p, ELFIO_QUIET);
	ck_assert_ptr_nonnull(e);
	record_options_init(&o);
	ck_assert_int_eq(record_scan(e, &o, &r), -EINVAL);
	ck_assert_ptr_null(r);
	elfio_close(e);
	/* stated, the same image records */
	o.patchable_n = 4;
	o.patchable_m = 2;
	e = elfio_open(p, 0);
	ck_assert_int_eq(record_scan(e, &o, &r), 0);
	ck_assert_uint_eq(r->nsites, 3);
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
	free(g);
}
END_TEST

/*
 * The old three-function CALL_OPS image, with a table: used where the
 * layout is stated.
 *   0x00 NOP NOP | 0x08 a: BTI C; NOP; NOP; RET       site 0x00, aligned
 *   0x1c NOP NOP | 0x24 b: NOP; NOP; RET              site 0x1c, misaligned
 *   0x30 c (notrace): NOP; NOP; RET, no entry         not a site
 */
static char *make_arm64_callops(void)
{
	static const uint32_t words[] = {
		0xd503201f, 0xd503201f, 0xd503245f, 0xd503201f, 0xd503201f, 0xd65f03c0,
		0xd503201f, 0xd503201f, 0xd503201f, 0xd503201f, 0xd503201f, 0xd65f03c0,
		0xd503201f, 0xd503201f, 0xd65f03c0,
	};
	uint8_t text[sizeof(words)];
	for (size_t i = 0; i < sizeof(words) / 4; i++)
		put32(text + 4 * i, words[i]);
	uint8_t tab[16];
	put64(tab, 0x400000);
	put64(tab + 8, 0x40001c);
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x400000, 8, text, sizeof(text) },
		{ "__patchable_function_entries", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 0x410000, 8,
		  tab, 16 },
	};
	struct eg_sym syms[] = {
		{ "a", 0x400008, 0x10, 1, STT_FUNC, STB_GLOBAL },
		{ "b", 0x400024, 0xc, 1, STT_FUNC, STB_GLOBAL },
		{ "c", 0x400030, 0xc, 1, STT_FUNC, STB_GLOBAL },
	};
	char *p = eg_tmpname("a64ops3");
	ck_assert_int_eq(eg_write(p, ET_EXEC, EM_AARCH64, secs, 2, syms, 3), 0);
	return p;
}

/* The same layout forced by --patchable=4,2 finds sites from symbols. */
START_TEST(arm64_patchable_by_symbols)
{
	char *p = make_arm64_callops();
	struct record_options o;
	struct elfio *e;

	record_options_init(&o);
	o.patchable_n = 4;
	o.patchable_m = 2;
	struct record *r = scan(p, &o, &e);
	ck_assert_uint_eq(r->pre_bytes, 8);
	ck_assert_uint_eq(r->post_bytes, 8);
	/* from the table: 0x0, 0x1c; c at 0x30 has NOP NOP before it (b's tail is
	   NOP NOP RET: 0x24,0x28 are b's NOPs) - not both pre-NOPs, so not a site */
	ck_assert_int_ge(record_find(r, 0x400000), 0);
	ck_assert_int_ge(record_find(r, 0x40001c), 0);
	ck_assert_int_eq(record_find(r, 0x400028), -1);
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/*
 * CALL_OPS layout voted by the functions (no table) in a link whose e_flags
 * claim RVC but whose functions were built without C: the 8-byte literal
 * before each function is two 4-byte NOPs, which C.NOP units cannot see.
 */
START_TEST(riscv_callops_rvc_flag_4byte_nops)
{
	uint8_t text[0x20 * 10] = { 0 };
	struct eg_sym syms[10];
	char names[10][8];
	uint64_t want[10];
	for (unsigned int f = 0; f < 10; f++) {
		unsigned int b = f * 0x20;
		for (unsigned int k = 0; k < 4; k++)	/* literal (2) + patch area (2) */
			put32(text + b + 4 * k, 0x00000013);		/* nop */
		put32(text + b + 16, 0x00008067);			/* ret */
		snprintf(names[f], sizeof(names[f]), "f%u", f);
		syms[f] = (struct eg_sym){ names[f], 0x10008 + b, 12, 1, STT_FUNC, STB_GLOBAL };
		want[f] = 0x10000 + b;
	}
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x10000, 8, text, sizeof(text) },
	};
	char *p = eg_tmpname("rvrvc");
	ck_assert_int_eq(eg_write(p, ET_EXEC, EM_RISCV, secs, 1, syms, 10), 0);
	/* e_flags := EF_RISCV_RVC | EF_RISCV_FLOAT_ABI_DOUBLE, as a mixed link leaves it */
	uint8_t *img;
	long n = eg_slurp(p, &img);
	ck_assert_int_gt(n, 64);
	put32(img + 48, EF_RISCV_RVC | EF_RISCV_FLOAT_ABI_DOUBLE);
	FILE *fp = fopen(p, "wb");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(img, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	free(img);

	struct elfio *e;
	struct record *r = scan(p, NULL, &e);
	ck_assert(r->patchable);
	ck_assert_uint_eq(r->pre_bytes, 8);
	ck_assert_uint_eq(r->post_bytes, 8);
	expect_sites(r, want, 10);
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/* riscv64 -pg after relaxation: jal ra,_mcount inside the prologue. */
static uint32_t rv_jal(uint32_t rd, int32_t off)
{
	uint32_t u = (uint32_t)off;
	return ((u >> 20) & 1) << 31 | ((u >> 1) & 0x3ff) << 21 | ((u >> 11) & 1) << 20 |
	       ((u >> 12) & 0xff) << 12 | rd << 7 | 0x6f;
}

START_TEST(riscv_relaxed_jal)
{
	uint8_t text[0x40] = { 0 };
	put32(text + 0, 0xff010113);		/* addi sp,sp,-16 */
	put32(text + 4, 0x00113423);		/* sd ra,8(sp) */
	put32(text + 8, rv_jal(1, 0x30 - 8));	/* jal ra,_mcount */
	put32(text + 12, rv_jal(1, 0x20 - 12));	/* jal ra,other */
	put32(text + 16, 0x00008067);		/* ret */
	put32(text + 0x20, 0x00008067);
	put32(text + 0x30, 0x00008067);
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x10000, 4, text, sizeof(text) },
	};
	struct eg_sym syms[] = {
		{ "f", 0x10000, 20, 1, STT_FUNC, STB_GLOBAL },
		{ "other", 0x10020, 4, 1, STT_FUNC, STB_GLOBAL },
		{ "_mcount", 0x10030, 4, 1, STT_FUNC, STB_GLOBAL },
	};
	char *p = eg_tmpname("rvjal");
	ck_assert_int_eq(eg_write(p, ET_EXEC, EM_RISCV, secs, 1, syms, 3), 0);
	struct elfio *e;
	struct record *r = scan(p, NULL, &e);
	const uint64_t want[] = { 0x10008 };
	expect_sites(r, want, 1);
	ck_assert_int_eq(r->sites[0].flavour, FLAVOUR_MCOUNT);
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/* ET_REL: calls are marked by R_X86_64_PLT32 against __fentry__ (undefined). */
START_TEST(x86_rel_by_relocation)
{
	uint8_t text[0x20];
	memset(text, 0xcc, sizeof(text));
	memcpy(text, "\xe8\x00\x00\x00\x00\xc3", 6);		/* f: call __fentry__ */
	memcpy(text + 0x10, "\xe8\x00\x00\x00\x00\xc3", 6);	/* g: call other */
	Elf64_Rela rel[2] = {
		{ .r_offset = 1, .r_info = ELF64_R_INFO(3, R_X86_64_PLT32), .r_addend = -4 },
		{ .r_offset = 0x11, .r_info = ELF64_R_INFO(4, R_X86_64_PLT32), .r_addend = -4 },
	};
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0, 16, text, sizeof(text) },
		{ ".rela.text", SHT_RELA, SHF_INFO_LINK, 0, 8, rel, sizeof(rel), EG_SYMTAB, 1,
		  sizeof(Elf64_Rela) },
	};
	struct eg_sym syms[] = {
		{ "f", 0, 6, 1, STT_FUNC, STB_GLOBAL },
		{ "g", 0x10, 6, 1, STT_FUNC, STB_GLOBAL },
		{ "__fentry__", 0, 0, 0, STT_NOTYPE, STB_GLOBAL },
		{ "other", 0, 0, 0, STT_NOTYPE, STB_GLOBAL },
	};
	char *p = eg_tmpname("x86rel");
	ck_assert_int_eq(eg_write(p, ET_REL, EM_X86_64, secs, 2, syms, 4), 0);
	struct elfio *e;
	struct record *r = scan(p, NULL, &e);
	char buf[64];
	ck_assert_uint_eq(r->nsites, 1);
	elfio_format_addr(e, r->sites[0].addr, buf, sizeof(buf));
	ck_assert_str_eq(buf, ".text+0x0");
	ck_assert_int_eq(r->sites[0].flavour, FLAVOUR_FENTRY);
	record_free(r);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

/*
 * arch_ops.patch_nop_at is the fast path of the decoder for patch-area
 * NOPs: on every registered arch it must say what decode() says, for the
 * NOP units, their neighbours (x86 multi-byte NOPs, riscv HINTs, two c.nop,
 * powerpc's other ori forms) and 100,000 pseudo-random words, a quarter of
 * them starting with the arch's own NOP unit with one bit flipped after it.
 */
START_TEST(patch_nop_at_agrees_with_decode)
{
	static const uint8_t samples[][8] = {
		{ 0x90 }, { 0x66, 0x90 }, { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, { 0xf3, 0x90 },
		{ 0x1f, 0x20, 0x03, 0xd5 }, { 0x5f, 0x24, 0x03, 0xd5 }, { 0x3f, 0x23, 0x03, 0xd5 },
		{ 0x01, 0x00 }, { 0x01, 0x00, 0x01, 0x00 }, { 0x13, 0x00, 0x00, 0x00 },
		{ 0x05, 0x00 }, { 0x13, 0x00, 0x10, 0x00 }, { 0x00, 0x00, 0x00, 0x00 },
		{ 0x00, 0x00, 0x00, 0x60 }, { 0x00, 0x00, 0x21, 0x60 }, { 0x01, 0x00, 0x00, 0x60 },
	};
	const size_t nsamples = sizeof(samples) / sizeof(samples[0]);
	uint64_t x = 0x9e3779b97f4a7c15ull;

	ck_assert_uint_ge(arch_count(), 4);
	for (size_t a = 0; a < arch_count(); a++) {
		const struct arch_ops *ar = arch_at(a);
		uint8_t nop[8];
		unsigned int unit = 0;

		/* the arch's own NOP unit, from the samples: each arch has one */
		for (size_t i = 0; i < nsamples && !unit; i++) {
			unit = ar->patch_nop_at(samples[i], 8);
			memcpy(nop, samples[i], 8);
		}
		ck_assert_msg(unit > 0, "%s: no NOP unit among the samples", ar->name);
		for (size_t i = 0; i < nsamples + 100000; i++) {
			uint8_t b[8];
			if (i < nsamples) {
				memcpy(b, samples[i], 8);
			} else {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				memcpy(b, &x, 8);
				if (i % 4 == 0) {
					memcpy(b, nop, unit);
					b[(x >> 8) % 8] ^= (uint8_t)(1u << ((x >> 16) % 8));
				}
			}
			for (size_t len = 1; len <= 8; len++) {
				struct arch_insn in = { 0 };
				unsigned int want = 0;
				if (ar->decode(b, len, 0x1000, &in) == ARCH_DECODE_OK &&
				    in.kind == INSN_NOP && in.len < 32 &&
				    (ar->patch_nop_sizes & (1u << in.len)))
					want = in.len;
				ck_assert_msg(ar->patch_nop_at(b, len) == want,
					      "%s: patch_nop_at %u, decode %u (len %zu, sample %zu)",
					      ar->name, ar->patch_nop_at(b, len), want, len, i);
			}
		}
	}
}
END_TEST

/* An unsupported machine is refused with -ENOTSUP. */
START_TEST(unsupported_machine)
{
	uint8_t text[4] = { 0 };
	struct eg_sec secs[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, 4, text, 4 },
	};
	char *p = eg_tmpname("s390");
	ck_assert_int_eq(eg_write(p, ET_EXEC, EM_S390, secs, 1, NULL, 0), 0);
	struct elfio *e = elfio_open(p, ELFIO_QUIET);
	struct record_options o;
	struct record *r = NULL;
	record_options_init(&o);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(record_scan(e, &o, &r), -ENOTSUP);
	ck_assert_ptr_null(r);
	elfio_close(e);
	unlink(p);
	free(p);
}
END_TEST

Suite *recordsites_suite(void)
{
	Suite *s = suite_create("recordsites");
	TCase *tc = tcase_create("x86_64");

	tcase_add_test(tc, x86_fentry_scan);
	tcase_add_test(tc, text_names_escaped);
	tcase_add_test(tc, x86_fentry_table_entries_verified);
	tcase_add_test(tc, x86_nop_mcount_forced);
	tcase_add_test(tc, x86_nop_mcount_table_is_no_evidence);
	tcase_add_test(tc, x86_mcount_prologue);
	tcase_add_test(tc, x86_rel_by_relocation);
	suite_add_tcase(s, tc);

	tc = tcase_create("arm64");
	tcase_add_test(tc, arm64_call_ops_layout);
	tcase_add_test(tc, arm64_pfe2_padding_is_not_a_literal);
	tcase_add_test(tc, arm64_too_small_for_a_vote);
	tcase_add_test(tc, arm64_patchable_by_symbols);
	suite_add_tcase(s, tc);

	tc = tcase_create("riscv64");
	tcase_add_test(tc, riscv_relaxed_jal);
	tcase_add_test(tc, riscv_callops_rvc_flag_4byte_nops);
	suite_add_tcase(s, tc);

	tc = tcase_create("patch_nop_at");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, patch_nop_at_agrees_with_decode);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, unsupported_machine);
	suite_add_tcase(s, tc);
	return s;
}
