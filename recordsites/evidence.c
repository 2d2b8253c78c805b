// SPDX-License-Identifier: GPL-2.0-only
/*
 * evidence.c - what the patch sites of a linked image look like, learned
 * from evidence that is independent of the table under test.
 *
 * Strategy: kernels have shipped with tables zeroed by the build, recorded
 * for the wrong patch-area layout, or full of leftovers of overridden weak
 * functions.  A layout learned from such a table calls it clean or writes
 * it back wrong, so the table is never asked.  Instead, in this order:
 *
 *  1. what the user stated (--patchable=N,M, --nop-mcount);
 *  2. DWARF: each unit's DW_AT_producer names the flags it was built with
 *     (GCC's -grecord-gcc-switches, on by default), and its ranges say
 *     where they apply.  A unit built without any patch-site flag (a
 *     notrace file) has no sites; a unit the assembler made has no NOP
 *     areas (hand-written code: the kernel's alternatives begin with BTI C
 *     and NOPs), and has calls only where the image's sites are calls.  A
 *     producer that names no flags (clang, -gno-record-gcc-switches) says
 *     nothing;
 *  3. the code: the functions DWARF says nothing about vote with their
 *     shape.  Each sized function shows the NOP unit at its entry (after a
 *     landing pad), the bytes of that unit's NOPs there, the bytes of the
 *     same NOPs just before the symbol (never below the previous function's
 *     end), whether it begins with x86's 5-byte NOP, and whether it calls an
 *     mcount target.  Ordinary code does not begin with NOPs, so the most
 *     common (unit, run) among the functions that do is the area after the
 *     symbol, if it has a clear majority and enough voters.  The bytes
 *     before the symbol are the largest count that 97% of those functions
 *     have: alignment padding adds NOPs to some of them, never takes any
 *     away.  Where the padding varies, the functions share an address
 *     residue (GCC aligns the start of the area, so func = pre mod align),
 *     and the count must agree with it: a -fpatchable-function-entry=2
 *     image aligned to 64 is not taken for CALL_OPS because most functions
 *     happen to have 8 bytes of padding NOPs before them;
 *  4. where the image-wide vote has no clear majority: one vote per text
 *     section;
 *  5. a table that is not the one under test (a program's
 *     __patchable_function_entries when the kernel-style table is tested).
 *
 * If none of these is decisive, the image is refused with one line that
 * says what is ambiguous and how to state the layout.  Relocatable objects
 * (the compiler's own relocations and tables are its evidence there) and
 * images without symbols (no vote is possible) take the table-driven path
 * in recordsites.c; for the latter the evidence is named as the table under
 * test, and `record --in-place` will not write on it.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recordsites/record_priv.h"

/* A vote needs this many functions that carry the shape. */
#define MIN_VOTE	8
/* NOP bytes looked at around a symbol. */
#define SHAPE_MAX	64


/* What a unit's producer says. */
enum stmt_kind {
	STMT_LAYOUT,		/* the flags name a layout (or none: a notrace unit) */
	STMT_ASSEMBLER,		/* the assembler made it: no NOP areas, calls as the image */
};

struct stmt {
	enum stmt_kind kind;
	struct layout layout;
	const char *flag;	/* the flag that decided, for the description */
	size_t units;		/* units that state it */
};

struct stmts {
	struct stmt *v;
	size_t n, vcap;
	struct region *ranges;	/* [lo, hi) -> v[layout], sorted */
	size_t nranges, cap;
	size_t units;		/* units whose producer names flags, or the assembler */
};

struct vote {
	enum { VOTE_NONE, VOTE_DECIDED, VOTE_AMBIGUOUS } result;
	struct layout layout;
	size_t functions, carriers, pre_agree;
	size_t strong;		/* functions that begin with two NOP units or more, or a 5-byte NOP */
	char why[240];
};

/* --- Function shapes -------------------------------------------------------- */

static unsigned int unit_index(unsigned int u)
{
	return u == 1 ? 0 : u == 2 ? 1 : 2;
}

static void shape_of(struct record *r, const struct elfio_symbol *f, uint64_t lo,
		     struct fshape *s)
{
	struct arch_insn in;
	uint64_t a;

	memset(s, 0, sizeof(*s));
	s->addr = f->addr;
	s->size = f->size;
	s->stmt = -1;
	s->sym = f;
	/* one decode at the symbol; a second only after a landing pad */
	a = f->addr;
	if (rs_decode_at(r, a, &in) != ARCH_DECODE_OK)
		return;
	if (in.kind == INSN_LANDING) {
		s->land = (uint8_t)in.len;
		a += in.len;
		if (rs_decode_at(r, a, &in) != ARCH_DECODE_OK)
			return;
	}
	/*
	 * A symbol with a local entry point apart from it (ppc64: the global
	 * entry sets up the TOC pointer) has its entry NOPs or call at the
	 * local entry, unless the compiler put them before the TOC setup
	 * (GCC before 13 did so with -fpatchable-function-entry).
	 */
	unsigned int local = rs_local_entry(r, f);
	if (local && !s->land && in.kind != INSN_NOP && in.kind != INSN_CALL &&
	    in.kind != INSN_CALL_MEM && local < f->size && local <= SHAPE_MAX) {
		a = f->addr + local;
		if (rs_decode_at(r, a, &in) != ARCH_DECODE_OK)
			return;
		s->land = (uint8_t)local;
		if (in.kind == INSN_LANDING) {
			s->land = (uint8_t)(local + in.len);
			a += in.len;
			if (rs_decode_at(r, a, &in) != ARCH_DECODE_OK)
				return;
		}
	}
	if (in.kind == INSN_CALL || in.kind == INSN_CALL_MEM) {
		/* __fentry__ images: the call at entry is the only one (see sweep_calls) */
		bool entry;
		if (r->priv->entry_only && rs_is_mcount_call(r, a, &in, &entry)) {
			s->call = true;
			return;
		}
	}
	if (in.kind != INSN_NOP)
		return;
	if (rs_is_patch_nop(r, &in)) {
		uint64_t end = f->addr + f->size;
		unsigned int lim = end > a && end - a < SHAPE_MAX ? (unsigned int)(end - a) : SHAPE_MAX;
		s->unit = (uint8_t)in.len;
		s->post = (uint8_t)(in.len + rs_nop_run(r, a + in.len, in.len,
							lim > in.len ? lim - in.len : 0));
		s->pre = (uint8_t)rs_nops_before(r, f->addr, lo, in.len, SHAPE_MAX);
		/*
		 * A symbol that is nothing but NOPs falls through into what
		 * follows it: it is padding with a name (objtool's __pfx_
		 * symbols over x86 call padding, -fpatchable-function-entry=16,16),
		 * not a function with a patch area.  It votes for no layout and
		 * is never a site.
		 */
		if (s->land + s->post >= f->size) {
			s->unit = s->post = s->pre = 0;
			s->padding = true;
		}
	} else if ((r->arch->policy & ARCH_POLICY_NOP_MCOUNT) && in.len == r->arch->call_len) {
		s->entry_nop = true;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Index of the shape at exactly addr, or -1. */
static long shape_find(const struct fshape *v, size_t n, uint64_t addr)
{
	size_t lo = BOUND(v, n, addr, addr, false);

	return lo < n && v[lo].addr == addr ? (long)lo : -1;
}

/*
 * One shape per function address (aliases share one).  lo for the NOPs
 * before a symbol: the furthest end of the functions before it, so that a
 * function's own NOPs are never taken for the next one's, and a symbol
 * nested in another (an inner entry point) has none.
 */
#define SHAPE_PREFETCH	16	/* functions ahead whose text is asked for (rs_prefetch_text) */

static int compute_shapes(struct record *r, const struct elfio_symbol *const *f, size_t nf,
			  struct fshape **out, size_t *nout)
{
	struct fshape *v = elfio_calloc(nf ? nf : 1, sizeof(*v));
	struct elfio_section *sec = NULL;
	size_t n = 0;
	uint64_t maxend = 0;

	if (!v) {
		elfio_err(r->e, "out of memory for %zu function shapes", nf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nf; i++) {
		if (i && f[i]->addr == f[i - 1]->addr) {
			if (f[i]->addr + f[i]->size > maxend)
				maxend = f[i]->addr + f[i]->size;
			continue;
		}
		if (!sec || f[i]->addr < sec->addr || f[i]->addr - sec->addr >= sec->shdr.sh_size)
			sec = elfio_addr_to_sec(r->e, f[i]->addr);
		uint64_t lo = maxend;
		if (sec && sec->addr > lo)
			lo = sec->addr;
		if (lo > f[i]->addr)
			lo = f[i]->addr;	/* nested: no NOPs before it are its own */
		/* the symbols are in symbol-table order, their text in address
		   order: ask for the symbol first, then for its text */
		if (i + 2 * SHAPE_PREFETCH < nf)
			__builtin_prefetch(f[i + 2 * SHAPE_PREFETCH]);
		if (i + SHAPE_PREFETCH < nf)
			rs_prefetch_text(r, f[i + SHAPE_PREFETCH]->addr);
		shape_of(r, f[i], lo, &v[n++]);
		if (f[i]->addr + f[i]->size > maxend)
			maxend = f[i]->addr + f[i]->size;
	}
	/* the entry calls the shapes found, as calls; the functions the sweep found calls in */
	if (r->priv->entry_only && r->priv->ntargets + r->priv->nslots) {
		size_t calls = 0;
		for (size_t k = 0; k < n; k++)
			calls += v[k].call;
		/* room for them all at once: no growth, no copies */
		if (calls && elfio_grow(&r->priv->calls, &r->priv->calls_cap,
					r->priv->ncalls + calls, sizeof(*r->priv->calls))) {
			elfio_free(v);
			elfio_err(r->e, "out of memory for the calls to __fentry__");
			return -ENOMEM;
		}
		for (size_t k = 0; k < n; k++)
			if (v[k].call && rs_push_call(r, v[k].addr + v[k].land, v[k].sym, true)) {
				elfio_free(v);
				elfio_err(r->e, "out of memory for the calls to __fentry__");
				return -ENOMEM;
			}
	} else {
		for (size_t i = 0; i < r->priv->ncalls; i++) {
			const struct elfio_symbol *g = r->priv->calls[i].func;
			/* a boot image's sizeless extent: a weak leftover's call is not g's */
			long k = g && !rs_call_outside(r, g, r->priv->calls[i].addr)
				 ? shape_find(v, n, g->addr) : -1;
			if (k >= 0)
				v[k].call = true;
		}
	}
	*out = v;
	*nout = n;
	return 0;
}

/* --- DWARF: the flags each unit was built with ------------------------------ */

/* Is the token t[0..len) exactly this flag? */
static bool is_flag(const char *t, size_t len, const char *flag)
{
	return len == strlen(flag) && !strncmp(t, flag, len);
}

/*
 * Parse a producer.  Returns 1 and fills *st when it states something, 0
 * when it names no flags at all.  The last occurrence of a flag wins, as on
 * the command line.
 */
static int parse_producer(struct record *r, const char *prod, struct stmt *st)
{
	int n = -1, m = 0;
	bool pg = false, fentry = false, nopmcount = false, any_flag = false;
	unsigned int unit = r->priv->nop_unit;
	const char *pfe_flag = NULL;

	memset(st, 0, sizeof(*st));
	if (!strncmp(prod, "GNU AS", 6) || !strncmp(prod, "AS ", 3) ||
	    strstr(prod, "assembler")) {
		st->kind = STMT_ASSEMBLER;
		st->flag = "the assembler";
		return 1;
	}
	for (const char *p = prod; (p = strstr(p, " -")); p++) {
		const char *t = p + 1;
		size_t len = strcspn(t, " ");

		any_flag = true;
		if (!strncmp(t, "-fpatchable-function-entry=", 27)) {
			char *end;
			long a = strtol(t + 27, &end, 10), b = 0;
			if (*end == ',')
				b = strtol(end + 1, &end, 10);
			if (a >= 0 && a <= 64 && b >= 0 && b <= a) {
				n = (int)a;
				m = (int)b;
				pfe_flag = "-fpatchable-function-entry";
			}
		} else if (is_flag(t, len, "-p") || is_flag(t, len, "-pg")) {
			pg = true;
		} else if (is_flag(t, len, "-mfentry")) {
			fentry = true;
		} else if (is_flag(t, len, "-mnop-mcount")) {
			nopmcount = true;
		} else if (r->arch->nop_unit_march && !strncmp(t, "-march=", 7)) {
			unsigned int mu = r->arch->nop_unit_march(t + 7);
			if (mu)
				unit = mu;
		}
	}
	if (!any_flag)
		return 0;
	st->kind = STMT_LAYOUT;
	st->layout.kind = LAYOUT_NONE;
	st->flag = "no patch-site flag";
	/*
	 * x86 kernels' -fpatchable-function-entry is call padding next to
	 * -mfentry; and an area wholly before the symbol (N == M: =16,16 where
	 * a notrace file drops -mfentry but keeps the padding) leaves no NOP
	 * at the entry to patch: padding, never a site.
	 */
	bool calls = pg || fentry;
	bool area = n > m;
	if (area && calls && (r->arch->policy & ARCH_POLICY_PFE_IS_PADDING))
		area = false;
	if (area) {
		st->layout = (struct layout){ LAYOUT_AREA, unit, (unsigned int)m * unit,
					      (unsigned int)(n - m) * unit };
		st->flag = pfe_flag;
	} else if (calls && nopmcount && (r->arch->policy & ARCH_POLICY_NOP_MCOUNT)) {
		st->layout.kind = LAYOUT_ENTRY_NOP;
		st->flag = "-mnop-mcount";
	} else if (calls) {
		st->layout.kind = LAYOUT_CALLS;
		st->flag = fentry ? "-mfentry" : "-pg";
	}
	return 1;
}

static bool same_layout(const struct layout *a, const struct layout *b)
{
	if (a->kind != b->kind)
		return false;
	return a->kind != LAYOUT_AREA ||
	       (a->unit == b->unit && a->pre == b->pre && a->post == b->post);
}

static int stmt_index(struct stmts *ss, const struct stmt *st)
{
	for (size_t i = 0; i < ss->n; i++)
		if (ss->v[i].kind == st->kind && same_layout(&ss->v[i].layout, &st->layout))
			return (int)i;
	if (elfio_grow(&ss->v, &ss->vcap, ss->n + 1, sizeof(*ss->v)))
		return -ENOMEM;
	ss->v[ss->n] = *st;
	return (int)ss->n++;
}

static int add_range(struct stmts *ss, uint64_t lo, uint64_t hi, int k)
{
	if (elfio_grow(&ss->ranges, &ss->cap, ss->nranges + 1, sizeof(*ss->ranges)))
		return -ENOMEM;
	ss->ranges[ss->nranges++] = (struct region){ lo, hi, (unsigned int)k };
	return 0;
}

static int cmp_region(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static void stmts_free(struct stmts *ss)
{
	elfio_free(ss->v);
	elfio_free(ss->ranges);
	memset(ss, 0, sizeof(*ss));
}

struct range_ctx {
	struct record *r;
	struct stmts *ss;
	int k;
};

static int add_unit_range(void *ctx, uint64_t lo, uint64_t hi)
{
	struct range_ctx *c = ctx;
	int ret = hi > lo ? add_range(c->ss, lo, hi, c->k) : 0;

	if (ret)
		elfio_err(c->r->e, "out of memory for the DWARF units' ranges");
	return ret;
}

/*
 * Every unit's statement, with its address ranges.  An image without
 * .debug_info costs nothing; elfio reads only the unit headers, the first
 * DIE of each, and the ranges of the units whose producer says something.
 */
static int read_statements(struct record *r, struct stmts *ss)
{
	struct elfio_dwarf *dw;
	struct elfio_dwarf_unit u;
	int ret = 0, last_said = 0;
	bool have_last = false;
	struct stmt last_st;

	memset(ss, 0, sizeof(*ss));
	dw = elfio_dwarf_open(r->e);
	if (!dw)
		return errno == ENOMEM ? -ENOMEM : 0;	/* no DWARF: it states nothing */
	while ((ret = elfio_dwarf_next_unit(dw, &u)) > 0) {
		struct stmt st;

		if (!u.producer)
			continue;
		/* a kernel's thousands of units share a few producer strings */
		if (have_last && u.same_producer) {
			if (!last_said)
				continue;
		} else {
			have_last = true;
			last_said = parse_producer(r, u.producer, &last_st);
			if (!last_said)
				continue;
		}
		st = last_st;
		int k = stmt_index(ss, &st);
		if (k < 0) {
			ret = k;
			elfio_err(r->e, "out of memory for the DWARF units' ranges");
			break;
		}
		ss->units++;
		ss->v[k].units++;
		struct range_ctx c = { r, ss, k };
		if ((ret = elfio_dwarf_unit_ranges(dw, add_unit_range, &c)))
			break;	/* error printed */
	}
	elfio_dwarf_close(dw);
	if (ret) {
		stmts_free(ss);
		return ret;
	}
	/* the units come in address order as a rule: sort only when they do not */
	size_t i = 1;
	while (i < ss->nranges && cmp_region(&ss->ranges[i - 1], &ss->ranges[i]) <= 0)
		i++;
	if (i < ss->nranges)
		qsort(ss->ranges, ss->nranges, sizeof(*ss->ranges), cmp_region);
	/*
	 * Where no two ranges overlap, the one holding an address is the last
	 * that starts at or below it, and a unit's ranges that touch (its .text
	 * split in two, neighbours of the same statement) can be one: fewer
	 * ranges for the lookup of every function, the same answers.
	 */
	for (i = 1; i < ss->nranges && ss->ranges[i - 1].hi <= ss->ranges[i].lo; i++)
		;
	if (i >= ss->nranges && ss->nranges) {
		size_t n = 1;
		for (i = 1; i < ss->nranges; i++) {
			struct region *last = &ss->ranges[n - 1];
			if (last->hi == ss->ranges[i].lo && last->layout == ss->ranges[i].layout)
				last->hi = ss->ranges[i].hi;
			else
				ss->ranges[n++] = ss->ranges[i];
		}
		ss->nranges = n;
	}
	return 0;
}

/* The statement whose range holds addr, or -1 (ranges are sorted by lo). */
static int stmt_at(const struct stmts *ss, uint64_t addr)
{
	size_t lo = BOUND(ss->ranges, ss->nranges, lo, addr, true);

	/* ranges of different units do not overlap; look at the last few */
	for (size_t i = lo; i > 0 && lo - i < 8; i--)
		if (ss->ranges[i - 1].lo <= addr && addr < ss->ranges[i - 1].hi)
			return (int)ss->ranges[i - 1].layout;
	return -1;
}

/*
 * The statement for a function.  GCC's DW_AT_low_pc of a function with a
 * patch area is after its NOPs (and the unit's range with it), so look at
 * the first instruction of the body first, then the symbol, then its end.
 */
static int stmt_of(const struct stmts *ss, const struct fshape *s)
{
	int k = stmt_at(ss, s->addr + s->land + s->post);

	if (k < 0)
		k = stmt_at(ss, s->addr);
	if (k < 0 && s->size)
		k = stmt_at(ss, s->addr + s->size - 1);
	return k;
}

/* --- The vote ------------------------------------------------------------- */


/*
 * The bytes before the symbol, among the functions that carry the area
 * after it (c[] their indexes).  0 when decided (fills v->layout.pre and
 * v->pre_agree), -EINVAL when ambiguous (v->why says why).
 *
 *  1. Where almost every function (97%) has exactly the same NOPs before
 *     it, nothing pads them: that is the area (-Os, where GCC aligns
 *     nothing, CALL_OPS literals at 4 mod 8 included).
 *  2. Where padding varies, there is alignment, and GCC aligns the start of
 *     the area: 90% of the functions share func mod A for the largest such
 *     A of 8..64, and the area is r + k*A bytes.  Padding is less than A,
 *     so the next candidate is never reached by padding alone: the largest
 *     candidate two thirds of the functions reach wins, if at most a third
 *     reach the one after it.
 *  3. No shared alignment: the most common exact count, by two thirds.
 */
static int vote_pre(const struct fshape *sh, const uint32_t *c, size_t t, unsigned int u,
		    struct vote *v)
{
	size_t hist[SHAPE_MAX + 1] = { 0 }, atleast[SHAPE_MAX + 2] = { 0 };
	static const unsigned int aligns[] = { 64, 32, 16, 8 };
	unsigned int A = 0, res = 0, mode = 0;

	for (size_t i = 0; i < t; i++)
		hist[sh[c[i]].pre]++;
	for (int q = SHAPE_MAX; q >= 0; q--)
		atleast[q] = atleast[q + 1] + hist[q];
	for (unsigned int q = 1; q <= SHAPE_MAX; q++)
		if (hist[q] > hist[mode])
			mode = q;
	if (hist[mode] * 100 >= t * 97)
		goto decided;

	for (size_t k = 0; k < sizeof(aligns) / sizeof(aligns[0]) && !A; k++) {
		unsigned int al = aligns[k];
		size_t cnt[64] = { 0 }, best = 0;
		for (size_t i = 0; i < t; i++)
			cnt[sh[c[i]].addr & (al - 1)]++;
		for (unsigned int x = 1; x < al; x++)
			if (cnt[x] > cnt[best])
				best = x;
		if (cnt[best] * 10 >= t * 9) {
			A = al;
			res = (unsigned int)best;
		}
	}
	if (A) {
		int q_best = -1;
		for (unsigned int q = res % A; q <= SHAPE_MAX; q += A)
			if (atleast[q] * 3 >= t * 2)
				q_best = (int)q;
		if (q_best < 0) {
			snprintf(v->why, sizeof(v->why), "the NOPs before the symbol: the functions "
				 "are aligned to %u (+%u), but only %zu of %zu have %u bytes of NOPs "
				 "before them", A, res, atleast[res % A], t, res % A);
			return -EINVAL;
		}
		unsigned int next = (unsigned int)q_best + A;
		if (next <= SHAPE_MAX && atleast[next] * 3 > t) {
			snprintf(v->why, sizeof(v->why), "the NOPs before the symbol: %zu of %zu "
				 "functions have %d bytes or more, %zu have %u or more", atleast[q_best],
				 t, q_best, atleast[next], next);
			return -EINVAL;
		}
		mode = (unsigned int)q_best;
		goto decided;
	}
	if (hist[mode] * 3 >= t * 2)
		goto decided;
	snprintf(v->why, sizeof(v->why), "the NOPs before the symbol agree on no count: %zu of "
		 "%zu functions have %u bytes, %zu have none", hist[mode], t, mode, hist[0]);
	return -EINVAL;
decided:
	if (mode % u) {
		snprintf(v->why, sizeof(v->why), "the NOPs before the symbol (%u bytes) are not a "
			 "whole number of %u-byte NOPs", mode, u);
		return -EINVAL;
	}
	v->layout.pre = mode;
	v->pre_agree = atleast[mode];
	return 0;
}

/* What the functions of a vote begin with. */
struct tally {
	size_t calls;		/* call an mcount target */
	size_t entry_nops;	/* begin with a 5-byte NOP */
	size_t strong;		/* ... or with two NOP units or more */
	size_t area;		/* begin with bk NOPs of bu bytes or more */
	unsigned int bu, bk;	/* the most common (unit, run), 0 0 where none */
};

/*
 * Count the shapes of the functions idx[0..n) of sh: the most common
 * (unit, run) of two units or more, else of one; the shorter run on a tie.
 */
static void tally_shapes(const struct fshape *sh, const uint32_t *idx, size_t n, struct tally *t)
{
	static const unsigned int units[3] = { 1, 2, 4 };
	size_t hist[3][SHAPE_MAX + 1];

	memset(t, 0, sizeof(*t));
	memset(hist, 0, sizeof(hist));
	for (size_t i = 0; i < n; i++) {
		const struct fshape *s = &sh[idx[i]];
		t->calls += s->call;
		if (s->entry_nop) {
			t->entry_nops++;
			t->strong++;
		} else if (s->unit) {
			hist[unit_index(s->unit)][s->post / s->unit]++;
			t->strong += s->post >= 2 * s->unit;
		}
	}
	for (unsigned int kmin = 2; kmin >= 1 && !t->bu; kmin--) {
		size_t bcount = 0;
		for (unsigned int ui = 0; ui < 3; ui++)
			for (unsigned int k = kmin; k <= SHAPE_MAX; k++)
				if (hist[ui][k] > bcount) {
					bcount = hist[ui][k];
					t->bu = units[ui];
					t->bk = k;
				}
	}
	if (t->bu)
		for (unsigned int k = t->bk; k <= SHAPE_MAX / t->bu; k++)
			t->area += hist[unit_index(t->bu)][k];
}

/*
 * An area of bk units of bu bytes won the vote: the functions that have it
 * vote on how many of its NOPs come before the symbol (vote_pre).  0 or
 * -ENOMEM.
 */
static int decide_area(const struct fshape *sh, const uint32_t *idx, size_t n,
		       const struct tally *t, struct vote *v)
{
	uint32_t *c = elfio_calloc(t->area, sizeof(*c));
	size_t m = 0;

	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct fshape *s = &sh[idx[i]];
		if (s->unit == t->bu && !s->entry_nop && s->post >= t->bk * t->bu)
			c[m++] = idx[i];
	}
	v->layout = (struct layout){ LAYOUT_AREA, t->bu, 0, t->bk * t->bu };
	v->result = vote_pre(sh, c, m, t->bu, v) ? VOTE_AMBIGUOUS : VOTE_DECIDED;
	elfio_free(c);
	return 0;
}

/*
 * Vote over the functions idx[0..n) of sh.  Fills *v.
 *
 * Ordinary code has NOP-starters of its own, but one NOP: glibc's arm64
 * assembly begins with a NOP where BTI C would be (55 of 922 functions of a
 * static program), static branches leave one.  Two or more NOP units at an
 * entry, or x86's 5-byte NOP, are a compiler's doing: 1 of ~900 functions
 * in the static arm64, riscv64 and x86_64 C libraries.  So a shape of two
 * or more units needs a clear majority only among the functions that begin
 * with such a shape (a static program with a dozen traced functions among
 * a C library has its layout), while a single NOP needs to be the shape of
 * most functions.
 */
static int vote(const struct fshape *sh, const uint32_t *idx, size_t n, struct vote *v)
{
	struct tally t;

	memset(v, 0, sizeof(*v));
	v->functions = n;
	tally_shapes(sh, idx, n, &t);
	size_t calls = t.calls, entry_nops = t.entry_nops, strong = t.strong, area = t.area;
	unsigned int bu = t.bu, bk = t.bk;
	bool weak = bu && bk == 1;
	v->strong = strong;

	/* calls, entry NOPs or areas: one of them, by a wide margin */
	size_t best = calls, second = 0;
	enum layout_kind kind = LAYOUT_CALLS;
	const size_t cand[2] = { entry_nops, area };
	const enum layout_kind kinds[2] = { LAYOUT_ENTRY_NOP, LAYOUT_AREA };
	for (int i = 0; i < 2; i++) {
		if (cand[i] > best) {
			second = best;
			best = cand[i];
			kind = kinds[i];
		} else if (cand[i] > second) {
			second = cand[i];
		}
	}
	if (best == 0) {
		v->result = VOTE_NONE;
		return 0;
	}
	if (second >= MIN_VOTE && second * 10 > best) {
		snprintf(v->why, sizeof(v->why), "the functions mix flavours: %zu call an mcount "
			 "target, %zu begin with a 5-byte NOP, %zu with a NOP area", calls, entry_nops,
			 area);
		v->result = VOTE_AMBIGUOUS;
		/* the leader, for the option the refusal suggests */
		v->layout = (struct layout){ kind, kind == LAYOUT_AREA ? bu : 0, 0,
					     kind == LAYOUT_AREA ? bk * bu : 0 };
		return 0;
	}
	if (kind == LAYOUT_CALLS) {
		v->result = VOTE_DECIDED;
		v->layout.kind = LAYOUT_CALLS;
		v->carriers = calls;
		return 0;
	}
	const char *what = kind == LAYOUT_ENTRY_NOP ? "a 5-byte NOP" : weak ? "a single NOP" :
			   "a NOP area";
	v->carriers = best;
	if (weak && best * 10 < n) {
		v->result = VOTE_NONE;		/* ordinary code's own NOP-starters */
		return 0;
	}
	if (best < MIN_VOTE) {
		/* a stray one in a big image is no layout; a few among few is a
		   layout too small to vote on, not the absence of one */
		if (weak ? best * 2 < n : best * 20 < n) {
			v->result = VOTE_NONE;
			return 0;
		}
		snprintf(v->why, sizeof(v->why), "%zu of %zu functions begin with %s; too few for "
			 "a vote (%d are needed)", best, n, what, MIN_VOTE);
		v->result = VOTE_AMBIGUOUS;
		v->layout = (struct layout){ kind, kind == LAYOUT_AREA ? bu : 0, 0,
					     kind == LAYOUT_AREA ? bk * bu : 0 };
		return 0;
	}
	if (weak ? best * 2 < n : best * 3 < strong * 2) {
		snprintf(v->why, sizeof(v->why), "no clear majority: %zu of %zu functions begin "
			 "with %s, %zu with two NOPs or more", best, n, what, strong);
		v->result = VOTE_AMBIGUOUS;
		v->layout = (struct layout){ kind, kind == LAYOUT_AREA ? bu : 0, 0,
					     kind == LAYOUT_AREA ? bk * bu : 0 };
		return 0;
	}
	if (kind == LAYOUT_ENTRY_NOP) {
		v->result = VOTE_DECIDED;
		v->layout.kind = LAYOUT_ENTRY_NOP;
		return 0;
	}
	return decide_area(sh, idx, n, &t, v);
}

/* --- Layouts and regions ------------------------------------------------------ */

static int add_layout(struct record *r, const struct layout *l)
{
	struct record_priv *p = r->priv;

	for (size_t i = 0; i < p->nlayouts; i++)
		if (same_layout(&p->layouts[i], l))
			return (int)i;
	if (elfio_grow(&p->layouts, &p->layouts_cap, p->nlayouts + 1, sizeof(*p->layouts)))
		return -ENOMEM;
	p->layouts[p->nlayouts] = *l;
	return (int)p->nlayouts++;
}

const struct layout *record_layout_at(const struct record *r, uint64_t addr)
{
	const struct record_priv *p = r->priv;
	size_t lo = BOUND(p->regions, p->nregions, lo, addr, true);

	if (lo && addr < p->regions[lo - 1].hi)
		return &p->layouts[p->regions[lo - 1].layout];
	return &p->layouts[0];
}

/*
 * Regions from the layout of each function (fk[i] for shape i): the most
 * common layout becomes the default (index 0), every run of functions with
 * another one a region from the first symbol to past the last.  Lookups
 * are made at function symbols only.
 */
static int build_regions(struct record *r, const struct fshape *sh, int *fk, size_t n)
{
	struct record_priv *p = r->priv;
	size_t *cnt = elfio_calloc(p->nlayouts, sizeof(*cnt)), cap = 0;
	unsigned int d = 0;

	if (!cnt)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		cnt[fk[i]]++;
	for (unsigned int k = 1; k < p->nlayouts; k++)
		if (cnt[k] > cnt[d])
			d = k;
	elfio_free(cnt);
	if (d) {
		struct layout t = p->layouts[0];
		p->layouts[0] = p->layouts[d];
		p->layouts[d] = t;
		for (size_t i = 0; i < n; i++)
			fk[i] = fk[i] == (int)d ? 0 : fk[i] == 0 ? (int)d : fk[i];
	}
	for (size_t i = 0; i < n; i++) {
		if (!fk[i])
			continue;
		if (i && fk[i - 1] == fk[i]) {
			p->regions[p->nregions - 1].hi = sh[i].addr + 1;
			continue;
		}
		if (elfio_grow(&p->regions, &cap, p->nregions + 1, sizeof(*p->regions)))
			return -ENOMEM;
		p->regions[p->nregions++] = (struct region){ sh[i].addr, sh[i].addr + 1,
							     (unsigned int)fk[i] };
	}
	return 0;
}

/* The summary fields the rest of the tree reads, from the main layout. */
static void summarise(struct record *r)
{
	const struct layout *m = &r->ev.main;
	struct record_priv *p = r->priv;

	r->has_calls = r->patchable = r->nop_mcount = r->post_known = false;
	r->pre_bytes = r->post_bytes = 0;
	r->ev.nlayouts = 0;
	for (size_t i = 0; i < p->nlayouts; i++) {
		r->has_calls |= p->layouts[i].kind == LAYOUT_CALLS;
		r->nop_mcount |= p->layouts[i].kind == LAYOUT_ENTRY_NOP;
		r->patchable |= p->layouts[i].kind == LAYOUT_AREA;
		r->ev.nlayouts += p->layouts[i].kind != LAYOUT_NONE;
	}
	if (m->kind == LAYOUT_AREA) {
		r->pre_bytes = m->pre;
		r->post_bytes = m->post;
		r->post_known = true;
	}
}

/*
 * The option that states layout l, for a message: --calls, --nop-mcount,
 * --patchable=N,M (M left to the user when the NOPs before the symbol are
 * what is in doubt).
 */
static void option_for(const struct record *r, const struct layout *l, bool pre_known, char *buf,
		       size_t len)
{
	unsigned int u = l->unit ? l->unit : r->priv->nop_unit;

	switch (l->kind) {
	case LAYOUT_CALLS:
		snprintf(buf, len, "--calls");
		break;
	case LAYOUT_ENTRY_NOP:
		snprintf(buf, len, "--nop-mcount");
		break;
	case LAYOUT_AREA:
		if (pre_known)
			snprintf(buf, len, "--patchable=%u,%u", (l->pre + l->post) / u, l->pre / u);
		else
			snprintf(buf, len, "--patchable=N,M, N-M=%u (M: the NOPs before the "
				 "symbol)", l->post / u);
		break;
	case LAYOUT_NONE:
		snprintf(buf, len, "--calls, --nop-mcount or --patchable=N,M");
		break;
	}
}

static int ambiguous(struct record *r, const char *why, const struct layout *leader)
{
	char opt[128];

	option_for(r, leader, false, opt, sizeof(opt));
	elfio_err(r->e, "the patch-site layout is ambiguous: %s; state it with %s", why, opt);
	return -EINVAL;
}

/*
 * A stated layout never overrides the code silently: under it the code
 * must have sites, and not far fewer than the table under test has
 * entries.  What the code shows by itself (the vote of all functions, or
 * the calls the sweep decoded) is named so that the message suggests an
 * option that is right for the image.
 */
int rs_check_stated(struct record *r)
{
	struct record_priv *p = r->priv;
	const struct site_table *t = record_table_under_test(r);
	const struct record_options *o = &r->opts;
	size_t entries = 0;
	char stated[320], code[400] = "", opt[128];
	struct vote v = { 0 };

	if (r->ev.source != EVIDENCE_STATED)
		return 0;
	for (size_t i = 0; t && i < t->count; i++)
		entries += t->entries[i].value != 0;
	if (p->nshapes) {
		uint32_t *all = elfio_calloc(p->nshapes, sizeof(*all));
		if (!all) {
			elfio_err(r->e, "out of memory for the vote that checks the stated layout");
			return -ENOMEM;
		}
		for (size_t i = 0; i < p->nshapes; i++)
			all[i] = (uint32_t)i;
		int ret = vote(p->shapes, all, p->nshapes, &v);
		elfio_free(all);
		if (ret) {
			elfio_err(r->e, "out of memory for the vote that checks the stated layout");
			return -ENOMEM;
		}
	} else if (p->ncalls) {
		v.result = VOTE_DECIDED;
		v.layout.kind = LAYOUT_CALLS;
		v.carriers = p->ncalls;
	}
	bool other = v.result == VOTE_DECIDED && v.carriers &&
		     !same_layout(&v.layout, &r->ev.main);
	bool none = !r->nsites && (entries || other);
	bool few = entries && r->nsites * 2 < entries;
	if (!none && !few)
		return 0;
	if (o->stated_by[0])
		snprintf(stated, sizeof(stated), "the build's config (%s: "
			 "-fpatchable-function-entry=%d,%d)", o->stated_by, o->patchable_n,
			 o->patchable_m);
	else if (o->patchable_n >= 0)
		snprintf(stated, sizeof(stated), "--patchable=%d,%d", o->patchable_n, o->patchable_m);
	else
		snprintf(stated, sizeof(stated), "%s", o->force_nop_mcount ? "--nop-mcount" : "--calls");
	if (other) {
		char lay[192];
		record_describe_layout(r, &v.layout, lay, sizeof(lay));
		option_for(r, &v.layout, true, opt, sizeof(opt));
		snprintf(code, sizeof(code), "; the code shows %s in %zu functions (state %s, or "
			 "nothing)", lay, v.carriers, opt);
	}
	if (entries)
		elfio_err(r->e, "%s does not match the code: it gives %zu sites where table '%s' "
			  "has %zu entries%s", stated, r->nsites, t->name, entries, code);
	else
		elfio_err(r->e, "%s does not match the code: it gives no sites%s", stated, code);
	return -EINVAL;
}

/* A table that is not the one under test and has entries, else NULL. */
static const struct site_table *second_table(const struct record *r)
{
	const struct site_table *t = record_table_under_test(r);

	for (size_t i = 0; i < r->ntables; i++) {
		const struct site_table *o = &r->tables[i];
		if (o == t || (t && o->start < t->end && t->start < o->end))
			continue;
		for (size_t k = 0; k < o->count; k++)
			if (o->entries[k].value)
				return o;
	}
	return NULL;
}

/*
 * One vote per text section, for the functions of pool[] whose vote as a
 * whole had no clear majority.  Fills fk[] for them and *best with the
 * section vote that carried most functions.  0 when every section is
 * decided, 1 with why[] when one is not, or -ENOMEM.
 */
static int vote_by_section(struct record *r, const struct fshape *sh, const uint32_t *pool,
			   size_t n, int *fk, struct vote *best, char *why, size_t whylen)
{
	struct elfio_section *s;
	uint32_t *sub = elfio_calloc(n, sizeof(*sub));
	int ret = 0;

	if (!sub)
		return -ENOMEM;
	memset(best, 0, sizeof(*best));
	for_each_section(r->e, s) {
		size_t m = 0;
		struct vote v;
		int k = 0;

		if (!is_text_section(s))
			continue;
		for (size_t i = 0; i < n; i++)
			if (sh[pool[i]].addr >= s->addr && sh[pool[i]].addr - s->addr < s->shdr.sh_size)
				sub[m++] = pool[i];
		if (!m)
			continue;
		if ((ret = vote(sh, sub, m, &v)))
			break;
		if (v.result == VOTE_AMBIGUOUS) {
			snprintf(why, whylen, "in section '%s': %s", s->name, v.why);
			ret = 1;
			break;
		}
		if (v.result == VOTE_DECIDED && (k = add_layout(r, &v.layout)) < 0) {
			ret = k;
			break;
		}
		for (size_t i = 0; i < m; i++)
			fk[sub[i]] = k;
		if (v.result == VOTE_DECIDED && v.carriers > best->carriers)
			*best = v;
	}
	elfio_free(sub);
	return ret;
}

/* The one message of every allocation rs_establish_layout's steps make.  -ENOMEM. */
static int establish_oom(struct record *r)
{
	elfio_err(r->e, "out of memory while establishing the patch-site layout");
	return -ENOMEM;
}

/* 1. stated: every function is judged by its decoded shape against it.  0 or -errno. */
static int establish_stated(struct record *r, const struct record_options *o,
			    const struct elfio_symbol *const *f, size_t nf)
{
	struct record_priv *p = r->priv;
	struct layout l = { LAYOUT_NONE, 0, 0, 0 };
	unsigned int u = o->patchable_unit ? o->patchable_unit : p->nop_unit;

	if (o->patchable_n >= 0)
		l = (struct layout){ LAYOUT_AREA, o->patchable_unit ? 0 : u,
				     (unsigned int)o->patchable_m * u,
				     (unsigned int)(o->patchable_n - o->patchable_m) * u };
	else if (o->force_nop_mcount)
		l.kind = LAYOUT_ENTRY_NOP;
	else
		l.kind = LAYOUT_CALLS;
	p->layouts[0] = l;
	r->ev.source = EVIDENCE_STATED;
	r->ev.main = l;
	summarise(r);
	return nf ? compute_shapes(r, f, nf, &p->shapes, &p->nshapes) : 0;
}

/* No symbols, so no vote: calls found by decoding, else the table itself. */
static void establish_without_symbols(struct record *r, const struct record_options *o)
{
	struct record_priv *p = r->priv;

	if (p->ncalls) {
		p->layouts[0].kind = LAYOUT_CALLS;
		r->ev.source = EVIDENCE_CODE;
		r->ev.carriers = p->ncalls;
	} else {
		rs_detect_from_tables(r, o, NULL);
		if (r->patchable || r->nop_mcount) {
			p->layouts[0] = r->patchable
				? (struct layout){ LAYOUT_AREA, 0, r->pre_bytes,
						   r->post_known ? r->post_bytes : 0 }
				: (struct layout){ LAYOUT_ENTRY_NOP, 0, 0, 0 };
			r->ev.source = EVIDENCE_UNDER_TEST;
		}
	}
	r->ev.main = p->layouts[0];
	summarise(r);
}

/* What rs_establish_layout's steps share: the functions' shapes and the units' statements. */
struct establish {
	struct fshape *sh;		/* every function's shape */
	size_t nsh;
	struct stmts ss;		/* the DWARF units' statements (none where not read) */
	uint32_t *pool;			/* the functions no unit speaks for */
	size_t npool;
	int *fk;			/* per function: its index in p->layouts */
	int *lk;			/* per statement: its index in p->layouts */
	size_t *per;			/* per statement: the functions it speaks for */
	struct layout stated_main;	/* the layout the units name for most functions */
	size_t stated_best;		/* ... and for how many */
	struct vote v;			/* the code's vote */
	char why[320];			/* why that vote was not decided */
};

/*
 * DWARF is read where the code leaves something to tell.  It does not
 * when every function with a site's shape has all of the one the vote
 * decided and that shape has a part nothing else has: a CALL_OPS image
 * whose literals are all there, an image of calls with no NOP areas.
 * Otherwise a unit's flags say which functions that look like sites are:
 * an =N,0 area, a static branch's 5-byte NOP and an assembler's
 * alternative NOPs look the same.  0 or -errno (printed).
 */
static int read_units(struct record *r, struct establish *x)
{
	x->pool = elfio_calloc(x->nsh, sizeof(*x->pool));
	if (!x->pool)
		return establish_oom(r);
	for (size_t i = 0; i < x->nsh; i++)
		x->pool[i] = (uint32_t)i;
	if (vote(x->sh, x->pool, x->nsh, &x->v))
		return establish_oom(r);
	const struct vote *v = &x->v;
	bool unanimous = v->result == VOTE_DECIDED &&
		(v->layout.kind == LAYOUT_CALLS ? v->strong == 0 :
		 v->layout.kind == LAYOUT_AREA && v->layout.pre &&
		 v->carriers == v->strong && v->pre_agree == v->carriers);
	int ret;
	if (!unanimous && (ret = read_statements(r, &x->ss)))
		return ret;
	/*
	 * An assembler's unit says "no NOP areas" only beside units a compiler
	 * made: in an image that is all assembly (generated, or the benchmark's)
	 * it is no evidence, and its code votes.
	 */
	bool compiler_units = false;
	for (size_t k = 0; k < x->ss.n; k++)
		compiler_units |= x->ss.v[k].kind == STMT_LAYOUT;
	if (!compiler_units)
		x->ss.nranges = 0;
	x->fk = elfio_calloc(x->nsh, sizeof(*x->fk));
	x->per = elfio_calloc(x->ss.n, sizeof(*x->per));
	x->lk = elfio_calloc(x->ss.n, sizeof(*x->lk));
	return x->fk && x->per && x->lk ? 0 : establish_oom(r);
}

/* 2. DWARF: which functions a unit speaks for, and the layout most of them name. */
static void assign_units(struct establish *x)
{
	for (size_t i = 0; i < x->nsh; i++) {
		x->sh[i].stmt = x->ss.nranges ? stmt_of(&x->ss, &x->sh[i]) : -1;
		if (x->sh[i].stmt < 0)
			x->pool[x->npool++] = (uint32_t)i;
		else
			x->per[x->sh[i].stmt]++;
	}
	for (size_t k = 0; k < x->ss.n; k++) {
		if (x->ss.v[k].kind == STMT_LAYOUT && x->ss.v[k].layout.kind != LAYOUT_NONE &&
		    x->per[k] > x->stated_best) {
			x->stated_best = x->per[k];
			x->stated_main = x->ss.v[k].layout;
		}
	}
}

/* Layout l (index in p->layouts) for every function of the pool.  0 or -ENOMEM (printed). */
static int pool_takes(struct record *r, struct establish *x, const struct layout *l)
{
	int k = add_layout(r, l);

	if (k < 0)
		return establish_oom(r);
	for (size_t i = 0; i < x->npool; i++)
		x->fk[x->pool[i]] = k;
	return 0;
}

/*
 * 5. a table that is not the one under test, where the sections' votes
 * could not decide either.  0, or -errno (printed: the layout is
 * ambiguous).
 */
static int vote_by_second_table(struct record *r, const struct record_options *o,
				struct establish *x)
{
	const struct site_table *t2 = second_table(r);
	struct layout l;
	int ret;

	if (t2) {
		rs_detect_from_tables(r, o, t2);
		l = r->patchable ? (struct layout){ LAYOUT_AREA, 0, r->pre_bytes,
						    r->post_known ? r->post_bytes : 0 }
				 : (struct layout){ LAYOUT_ENTRY_NOP, 0, 0, 0 };
	}
	if (!t2 || (!r->patchable && !r->nop_mcount))
		return ambiguous(r, x->why, &x->v.layout);
	if ((ret = pool_takes(r, x, &l)))
		return ret;
	r->ev.source = EVIDENCE_TABLE;
	r->ev.table = t2->name;
	x->v.layout = l;
	x->v.result = VOTE_DECIDED;
	return 0;
}

/*
 * 3. the code: the functions no unit speaks for vote (all of them, as in
 * read_units, when no DWARF was read); 4. one vote per section where that
 * one is ambiguous; 5. the second table.  0 or -errno (printed).
 */
static int vote_code(struct record *r, const struct record_options *o, struct establish *x)
{
	struct vote *v = &x->v;

	if (x->ss.nranges && vote(x->sh, x->pool, x->npool, v))
		return establish_oom(r);
	snprintf(x->why, sizeof(x->why), "%s", v->why);
	/*
	 * Where DWARF names the layout, the code it does not cover (the C
	 * library, start files) has its own NOP-starters; unless they vote for
	 * a layout of their own, they have none.
	 */
	if (v->result == VOTE_AMBIGUOUS && x->stated_best)
		v->result = VOTE_NONE;
	if (v->result == VOTE_DECIDED) {
		int ret = pool_takes(r, x, &v->layout);
		if (ret)
			return ret;
		r->ev.source = EVIDENCE_CODE;
	} else if (v->result == VOTE_AMBIGUOUS) {
		struct vote best;
		char swhy[320];
		size_t functions = v->functions;
		int ret = vote_by_section(r, x->sh, x->pool, x->npool, x->fk, &best, swhy,
					  sizeof(swhy));
		if (ret < 0)
			return establish_oom(r);
		if (ret)
			return vote_by_second_table(r, o, x);
		*v = best;
		v->functions = functions;
		v->result = best.carriers ? VOTE_DECIDED : VOTE_NONE;
		r->ev.source = EVIDENCE_CODE;
	}
	return 0;
}

/*
 * The units' own layouts.  An assembler's unit has no NOP areas; its
 * calls to a target are sites where the image's sites are calls (the
 * riscv trampoline calls ftrace_stub, alias _mcount, in an image of
 * NOP areas).  Where the units name a layout for more functions than
 * the code's vote carried, theirs is the image's.  0 or -ENOMEM (printed).
 */
static int apply_units(struct record *r, struct establish *x)
{
	const struct layout none = { LAYOUT_NONE, 0, 0, 0 };
	const struct stmts *ss = &x->ss;

	if (!ss->n)
		return 0;
	bool calls_image = x->stated_best ? x->stated_main.kind == LAYOUT_CALLS
					  : r->ev.main.kind == LAYOUT_CALLS;
	for (size_t k = 0; k < ss->n; k++) {
		struct layout l = ss->v[k].layout;
		if (ss->v[k].kind == STMT_ASSEMBLER)
			l = calls_image ? (struct layout){ LAYOUT_CALLS, 0, 0, 0 } : none;
		if ((x->lk[k] = add_layout(r, &l)) < 0)
			return establish_oom(r);
	}
	for (size_t i = 0; i < x->nsh; i++)
		if (x->sh[i].stmt >= 0)
			x->fk[i] = x->lk[x->sh[i].stmt];
	r->ev.units_stated = ss->units;
	if (x->stated_best) {
		r->ev.source = EVIDENCE_DWARF;
		if (x->v.result != VOTE_DECIDED || x->stated_best >= x->v.carriers)
			r->ev.main = x->stated_main;
		for (size_t k = 0; k < ss->n; k++)
			if (ss->v[k].kind == STMT_LAYOUT && same_layout(&ss->v[k].layout,
									&x->stated_main))
				r->ev.units_main += ss->v[k].units;
	}
	return 0;
}

/*
 * Which layout each function has: stated, else (without symbols) what the
 * code and the table show, else the DWARF units' flags for the functions
 * they speak for and the code's vote (of all, of each section, or a second
 * table) for the rest.  The shapes are kept in r->priv: the sites are read
 * off them.  0 or -errno (printed).
 */
int rs_establish_layout(struct record *r, const struct record_options *o)
{
	struct record_priv *p = r->priv;
	const struct elfio_symbol *const *f;
	const struct layout none = { LAYOUT_NONE, 0, 0, 0 };
	struct establish x = { .stated_main = none };
	size_t nf;
	int ret;

	memset(&r->ev, 0, sizeof(r->ev));
	if ((ret = elfio_functions(r->e, &f, &nf)))
		return ret;
	if (add_layout(r, &none) < 0)
		return establish_oom(r);
	if (record_options_stated(o))
		return establish_stated(r, o, f, nf);
	if (!nf) {
		establish_without_symbols(r, o);
		return 0;
	}
	if ((ret = compute_shapes(r, f, nf, &x.sh, &x.nsh)))
		return ret;
	if ((ret = read_units(r, &x)))
		goto out;
	assign_units(&x);
	if ((ret = vote_code(r, o, &x)))
		goto out;
	r->ev.functions = x.v.functions;
	r->ev.carriers = x.v.carriers;
	r->ev.pre_agree = x.v.pre_agree;
	r->ev.main = x.v.result == VOTE_DECIDED ? x.v.layout : none;
	if ((ret = apply_units(r, &x)))
		goto out;
	if (build_regions(r, x.sh, x.fk, x.nsh)) {
		ret = establish_oom(r);
		goto out;
	}
	for (size_t i = 0; i < x.nsh; i++)
		x.sh[i].layout = x.fk[i];
	p->shapes = x.sh;	/* kept: the sites are read off them */
	p->nshapes = x.nsh;
	x.sh = NULL;
	summarise(r);
out:
	elfio_free(x.pool);
	elfio_free(x.fk);
	elfio_free(x.lk);
	elfio_free(x.per);
	elfio_free(x.sh);
	stmts_free(&x.ss);
	return ret;
}

bool rs_shape_site(struct record *r, size_t i, struct site *s)
{
	const struct fshape *sh = &r->priv->shapes[i];
	const struct layout *l = &r->priv->layouts[sh->layout];

	memset(s, 0, sizeof(*s));
	s->func = sh->sym;
	if (l->kind == LAYOUT_ENTRY_NOP) {
		if (!sh->entry_nop)
			return false;
		s->addr = sh->addr + sh->land;
		s->flavour = FLAVOUR_ENTRY_NOP;
		return true;
	}
	if (l->kind != LAYOUT_AREA || !sh->unit || (l->unit && sh->unit != l->unit) ||
	    sh->post < (l->post ? l->post : sh->unit) || sh->pre < l->pre || sh->addr < l->pre)
		return false;
	/* a unit-0 layout (from a table) takes any unit, but whole NOPs of it */
	if (l->pre % sh->unit || l->post % sh->unit)
		return false;
	s->addr = l->pre ? sh->addr - l->pre : sh->addr + sh->land;
	if (r->arch->literal_size && l->pre == r->arch->literal_size) {
		s->flavour = FLAVOUR_CALL_OPS;
		s->misaligned = s->addr % r->align != 0;
	} else {
		s->flavour = FLAVOUR_PATCHABLE;
	}
	return true;
}

/* --- Describing it ------------------------------------------------------------ */

void record_describe_layout(const struct record *r, const struct layout *l, char *buf, size_t len)
{
	switch (l->kind) {
	case LAYOUT_NONE:
		snprintf(buf, len, "no patch sites");
		break;
	case LAYOUT_CALLS:
		snprintf(buf, len, "calls to %s", r->priv->entry_only ? "__fentry__" :
			 "mcount/_mcount/__fentry__");
		break;
	case LAYOUT_ENTRY_NOP:
		snprintf(buf, len, "5-byte NOPs at entry (-mnop-mcount)");
		break;
	case LAYOUT_AREA: {
		const char *name = r->arch->literal_size && l->pre == r->arch->literal_size
				   ? "call-ops" : "patchable";
		if (l->unit)
			snprintf(buf, len, "%s, %u bytes of %s before the symbol and %u after "
				 "(-fpatchable-function-entry=%u,%u)", name, l->pre, r->arch->nop_name(l->unit),
				 l->post, (l->pre + l->post) / l->unit, l->pre / l->unit);
		else
			snprintf(buf, len, "%s, %u bytes before the symbol and %u after", name, l->pre,
				 l->post);
		break;
	}
	}
}

static void describe_evidence(const struct record *r, char *buf, size_t len)
{
	const struct evidence *ev = &r->ev;

	switch (ev->source) {
	case EVIDENCE_NOTHING:
		snprintf(buf, len, "no function has a site's shape and nothing calls an mcount "
			 "target");
		break;
	case EVIDENCE_STATED:
		if (r->opts.stated_by[0])
			snprintf(buf, len, "as the build's config states (%s)", r->opts.stated_by);
		else
			snprintf(buf, len, "as stated on the command line");
		break;
	case EVIDENCE_DWARF:
		snprintf(buf, len, "from DWARF: %zu of %zu units name it in DW_AT_producer",
			 ev->units_main, ev->units_stated);
		break;
	case EVIDENCE_CODE:
		if (ev->main.kind == LAYOUT_CALLS)
			snprintf(buf, len, "from the code: %zu functions call the target",
				 ev->carriers);
		else if (ev->main.kind == LAYOUT_AREA && ev->main.pre)
			snprintf(buf, len, "from the code: %zu of %zu functions carry the area, %zu of "
				 "them with the bytes before the symbol", ev->carriers, ev->functions,
				 ev->pre_agree);
		else if (ev->main.kind == LAYOUT_AREA)
			snprintf(buf, len, "from the code: %zu of %zu functions carry the area",
				 ev->carriers, ev->functions);
		else
			snprintf(buf, len, "from the code: %zu of %zu functions carry it",
				 ev->carriers, ev->functions);
		break;
	case EVIDENCE_OBJECT:
		snprintf(buf, len, "from the compiler's relocations and tables in the object");
		break;
	case EVIDENCE_TABLE:
		snprintf(buf, len, "from table '%s', which is not the one under test", ev->table);
		break;
	case EVIDENCE_UNDER_TEST:
		snprintf(buf, len, "from the table under test itself: the image has no symbols to "
			 "vote and no DWARF (state it with --patchable=N,M to check the table)");
		break;
	}
}

int record_describe(struct record *r, char *buf, size_t len)
{
	char lay[192], ev[256], tab[256] = "";
	const struct site_table *t = record_table_under_test(r);

	record_describe_layout(r, &r->ev.main, lay, sizeof(lay));
	describe_evidence(r, ev, sizeof(ev));
	if (t) {
		size_t nonzero = 0, listed = 0, stale = 0;
		uint64_t *vals = elfio_calloc(t->count, sizeof(*vals));
		if (!vals) {
			elfio_err(r->e, "out of memory for sorting the %zu entries of table '%s'",
				  t->count, t->name);
			return -ENOMEM;
		}
		for (size_t i = 0; i < t->count; i++) {
			uint64_t val = t->entries[i].value;
			if (!val)
				continue;
			vals[nonzero++] = val;
		}
		bool sorted = true;
		for (size_t i = 1; i < nonzero && sorted; i++)
			sorted = vals[i - 1] <= vals[i];
		if (!sorted)	/* the kernel's own table is sorted already */
			qsort(vals, nonzero, sizeof(*vals), cmp_u64);
		/* both ascending: one walk */
		for (size_t i = 0, k = 0; i < nonzero; i++) {
			while (k < r->nsites && r->sites[k].addr < vals[i])
				k++;
			if (k < r->nsites && r->sites[k].addr == vals[i]) {
				if (!i || vals[i - 1] != vals[i])
					listed++;
			} else {
				stale++;
			}
		}
		elfio_free(vals);
		if (!nonzero)
			snprintf(tab, sizeof(tab), "; table '%s': all %zu slots are zero", t->name,
				 t->count);
		else if (!stale && listed == r->nsites)
			snprintf(tab, sizeof(tab), "; table '%s' agrees (%zu entries)", t->name,
				 nonzero);
		else
			snprintf(tab, sizeof(tab), "; table '%s' disagrees: %zu of %zu entries are not "
				 "sites, %zu of %zu sites are not in it", t->name, stale, nonzero,
				 r->nsites - listed, r->nsites);
	}
	if (!t) {
		bool module = elfio_is_rel(r->e) &&
			      (elfio_find_section_by_name(r->e, ".gnu.linkonce.this_module") ||
			       elfio_find_section_by_name(r->e, ".modinfo"));
		snprintf(tab, sizeof(tab), "; no table (no __mcount_loc, __patchable_function_entries "
			 "or __start_mcount_loc region)%s", !r->nsites ? "" : module
			 ? ": an error for a module, the kernel traces none of its sites"
			 : ": not an error for a program or object that no kernel reads");
	}
	/* the layouts of units or sections that differ from the main one, named */
	char others[320] = "";
	size_t on = 0, ol = 0;
	for (size_t i = 0; i < r->priv->nlayouts; i++) {
		const struct layout *l = &r->priv->layouts[i];
		char d[192];
		if (l->kind == LAYOUT_NONE || same_layout(l, &r->ev.main))
			continue;
		record_describe_layout(r, l, d, sizeof(d));
		if (ol < sizeof(others))
			ol += (size_t)snprintf(others + ol, sizeof(others) - ol, "%s%s",
					       on++ ? "; " : " (some units or sections: ", d);
	}
	if (on && ol < sizeof(others))
		snprintf(others + ol, sizeof(others) - ol, ")");
	snprintf(buf, len, "%s %s: %zu sites: %s%s, %s%s", r->arch->name,
		 elfio_is_rel(r->e) ? "object" : "image", r->nsites, lay, others, ev, tab);
	return 0;
}
