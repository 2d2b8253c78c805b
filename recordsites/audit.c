// SPDX-License-Identifier: GPL-2.0-only
/*
 * audit.c - check an image's patch sites as ftrace would see them at boot.
 *
 * Strategy: record_scan() has already found every real site (verified by
 * decoding) and kept the image's own tables.  Audit compares the two:
 *  - every site whose CALL_OPS literal is not naturally aligned (the kernel
 *    skips it with "Misaligned patch-site");
 *  - every non-zero table entry that does not verify as a site (zero entries
 *    were cleared by the build, as sorttable does for weak leftovers);
 *  - every site that no table lists, when the image has a table at all;
 *  - every entry listed twice in a table;
 *  - once per table, a table whose entries are consistently off from the
 *    sites by the same distance: a table recorded for another patch-area
 *    layout (or with one applied to the wrong configuration), which the
 *    per-entry findings show only as many unrelated stale and missing ones.
 * Each finding names the function and, with DWARF, the CU and its
 * DW_AT_producer, so "why is this one misaligned" has an answer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recordsites/recordsites.h"
#include "elfio/bootimg.h"

static const char *const kind_names[FIND_COUNT] = {
	[FIND_MISALIGNED] = "misaligned",
	[FIND_STALE] = "stale",
	[FIND_MISSING] = "missing",
	[FIND_DUPLICATE] = "duplicate",
	[FIND_SHORT] = "short",
	[FIND_UNSORTED] = "unsorted",
	[FIND_SHIFTED] = "shifted",
};

const char *finding_kind_name(enum finding_kind k)
{
	return k < FIND_COUNT ? kind_names[k] : "?";
}

/* A stale entry outside every sized function: an overridden weak function's code. */
static bool is_weak_leftover(const struct finding *f)
{
	return f->kind == FIND_STALE && !f->func && strstr(f->msg, "outside every sized function");
}

int audit_ignore_parse(const char *list, unsigned int *mask)
{
	const char *p = list;

	*mask = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		int k;
		for (k = 0; k < FIND_COUNT; k++)
			if (strlen(kind_names[k]) == len && !strncmp(p, kind_names[k], len))
				break;
		if (k < FIND_COUNT)
			*mask |= 1u << k;
		else if (len == 4 && !strncmp(p, "weak", 4))
			*mask |= AUDIT_IGNORE_WEAK;
		else
			return -EINVAL;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

void audit_ignore(struct audit *a, unsigned int mask)
{
	size_t w = 0;

	for (size_t i = 0; i < a->n; i++) {
		const struct finding *f = &a->v[i];
		bool weak = is_weak_leftover(f);
		if ((mask & (1u << f->kind)) || (weak && (mask & AUDIT_IGNORE_WEAK))) {
			a->count[f->kind]--;
			a->ignored[f->kind]++;
			a->ignored_weak += weak;
			continue;
		}
		a->v[w++] = *f;
	}
	a->n = w;
}

static struct finding *add(struct audit *a, enum finding_kind k, uint64_t addr,
			   const struct elfio_symbol *f)
{
	struct finding *nv;

	if (elfio_grow(&a->v, &a->cap, a->n + 1, sizeof(*a->v)))
		return NULL;
	nv = &a->v[a->n++];
	memset(nv, 0, sizeof(*nv));
	nv->kind = k;
	nv->addr = addr;
	nv->func = f;
	a->count[k]++;
	return nv;
}

/* The site of function f, if it has one. */
static const struct site *site_of(struct record *r, const struct elfio_symbol *f)
{
	uint64_t lo = f->addr >= 64 ? f->addr - 64 : 0;
	long i;

	/* sites are sorted: find the first >= lo and walk while in range */
	size_t a = BOUND(r->sites, r->nsites, addr, lo, false);
	for (i = (long)a; (size_t)i < r->nsites && r->sites[i].addr < f->addr + f->size; i++)
		if (r->sites[i].func && r->sites[i].func->addr == f->addr)
			return &r->sites[i];
	return NULL;
}

static void describe_stale(struct record *r, uint64_t v, struct finding *fd)
{
	char where[192];
	struct elfio_section *sec = elfio_addr_to_sec(r->e, v);

	if (!sec || !is_text_section(sec)) {
		snprintf(fd->msg, sizeof(fd->msg), "table entry does not point into code");
		return;
	}
	if (!r->has_symbols) {
		snprintf(fd->msg, sizeof(fd->msg), "table entry does not decode as a patch site");
		return;
	}
	if (!fd->func) {
		snprintf(fd->msg, sizeof(fd->msg),
			 "table entry is outside every sized function (code of an overridden "
			 "weak function, or of a function with no .size)");
		return;
	}
	const struct site *s = site_of(r, fd->func);
	if (s) {
		record_symbolize(r, s->addr, s->func, where, sizeof(where));
		snprintf(fd->msg, sizeof(fd->msg),
			 "table entry is not a patch site; the function's site is at %s (moved by "
			 "relaxation, or recorded against the wrong function)", where);
	} else {
		snprintf(fd->msg, sizeof(fd->msg),
			 "table entry is not a patch site; the function has none");
	}
}

/*
 * record_find() for the entries of one table, in table order: a table is
 * sorted (the kernel binary-searches it), so each entry's site is at or
 * just after the last one's, and a step from there replaces a binary
 * search that missed the cache at each level.  *hint: where the last one
 * was (0 to begin).
 */
static long find_from(const struct record *r, uint64_t v, size_t *hint)
{
	size_t i = *hint;

	if (i < r->nsites && r->sites[i].addr <= v) {
		for (size_t n = 0; n < 4 && i < r->nsites && r->sites[i].addr < v; n++)
			i++;
		if (i == r->nsites || r->sites[i].addr >= v)
			goto found;
	}
	i = BOUND(r->sites, r->nsites, addr, v, false);
found:
	*hint = i;
	return i < r->nsites && r->sites[i].addr == v ? (long)i : -1;
}

/* The site nearest to v (within 64 bytes), or NULL. */
static const struct site *nearest_site(const struct record *r, uint64_t v)
{
	size_t lo = BOUND(r->sites, r->nsites, addr, v, false);
	const struct site *best = NULL;

	for (size_t i = lo ? lo - 1 : 0; i < r->nsites && i <= lo; i++) {
		uint64_t d = r->sites[i].addr > v ? r->sites[i].addr - v : v - r->sites[i].addr;
		if (d <= 64 && (!best || d < (best->addr > v ? best->addr - v : v - best->addr)))
			best = &r->sites[i];
	}
	return best;
}

/*
 * One finding for a table whose entries are off from the sites by the same
 * distance: at least half of its non-zero entries, and at least two.  0, or
 * -ENOMEM.
 */
static int check_shift(struct record *r, struct audit *a, const struct site_table *tb,
		       const bool *is_site, size_t nonzero)
{
	size_t hist[129] = { 0 }, best = 64;
	struct finding *fd;

	for (size_t i = 0; i < tb->count; i++) {
		uint64_t v = tb->entries[i].value;
		const struct site *s;
		if (!v || is_site[i] || !(s = nearest_site(r, v)))
			continue;
		hist[64 + (int64_t)(v - s->addr)]++;
	}
	for (size_t d = 0; d < 129; d++)
		if (d != 64 && hist[d] > hist[best])
			best = d;
	if (best == 64 || hist[best] < 2 || hist[best] * 2 < nonzero)
		return 0;
	int64_t delta = (int64_t)best - 64;
	fd = add(a, FIND_SHIFTED, tb->start, NULL);
	if (!fd)
		return -ENOMEM;
	fd->table = tb->name;
	snprintf(fd->msg, sizeof(fd->msg),
		 "%zu of the %zu entries of table '%s' are %" PRId64 " bytes %s the sites they "
		 "belong to: the table was recorded for another patch-area layout than the "
		 "code has (%s)", hist[best], nonzero, tb->name, delta < 0 ? -delta : delta,
		 delta < 0 ? "before" : "after", r->ev.main.kind == LAYOUT_AREA ?
		 (r->pre_bytes ? "the sites are the first NOPs before the symbol" :
		  "the sites are the first NOPs at entry") : "the sites are the calls");
	return 0;
}

/* Order of findings: address, kind, then position found (ctx: the array). */
static int cmp_finding(const void *x, const void *y, void *ctx)
{
	const struct finding *v = ctx;
	size_t i = *(const size_t *)x, j = *(const size_t *)y;

	if (v[i].addr != v[j].addr)
		return v[i].addr < v[j].addr ? -1 : 1;
	if (v[i].kind != v[j].kind)
		return v[i].kind < v[j].kind ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Whether an unsorted kernel table is a finding: the build's config says
 * (elfio/bootimg.c); without one, a boot image's is not (the note at the
 * end of audit_run says so).
 */
static bool build_sorts(struct record *r, const struct site_table *tb, size_t descents,
			const char **note_table, size_t *note_descents)
{
	size_t len = 0;
	const uint8_t *raw = elfio_raw(r->e, &len);
	const char *from = NULL;
	int s = bootimg_config_sorted(elfio_path(r->e), raw, len, &from);

	if (s < 0 && elfio_is_boot_image(r->e)) {
		if (!*note_table) {
			*note_table = tb->name;
			*note_descents = descents;
		}
		return false;
	}
	return s != 0;
}

/*
 * The build's config says which ftrace layout the kernel expects (the
 * compiler flags its Makefiles chose): sites of another layout are patched
 * where ftrace does not look.  One finding, in the words record uses for
 * layouts.  0, or -ENOMEM; *no_config: a boot image with no config to be had.
 */
static int check_config_layout(struct record *r, struct audit *a, bool *no_config)
{
	size_t len = 0;
	const uint8_t *raw = elfio_raw(r->e, &len);
	const char *from = NULL;
	struct bootimg_ftrace ft;
	char want[256], got[256];

	*no_config = false;
	if (elfio_is_rel(r->e) || !r->ntables || r->opts.stated_by[0])
		return 0;	/* a module, a program, or the config already stated it */
	int c = bootimg_config_ftrace(elfio_path(r->e), raw, len, elfio_ehdr(r->e)->e_machine, &ft,
				      &from);
	if (c < 0) {
		*no_config = elfio_is_boot_image(r->e);
		return 0;
	}
	if (c == 0 || r->ev.main.kind == LAYOUT_NONE || !r->nsites)
		return 0;
	unsigned int u = r->arch->nop_unit(elfio_ehdr(r->e)->e_flags);
	struct layout l = { LAYOUT_NONE, 0, 0, 0 };
	if (ft.kind == BFT_CALLS)
		l.kind = LAYOUT_CALLS;
	else if (ft.kind == BFT_NOP5)
		l.kind = LAYOUT_ENTRY_NOP;
	else
		l = (struct layout){ LAYOUT_AREA, u, (unsigned int)ft.m * u,
				     (unsigned int)(ft.n - ft.m) * u };
	const struct layout *m = &r->ev.main;
	if (m->kind == l.kind && (l.kind != LAYOUT_AREA || (m->pre == l.pre && m->post == l.post)))
		return 0;
	record_describe_layout(r, &l, want, sizeof(want));
	record_describe_layout(r, m, got, sizeof(got));
	struct finding *fd = add(a, FIND_SHIFTED, r->sites[0].addr, r->sites[0].func);
	if (!fd)
		return -ENOMEM;
	/* (a long path is cut: the message ends where it ends) */
	if (snprintf(fd->msg, sizeof(fd->msg), "the build's config (%s in %s) gives the compiler "
		     "%s, which ftrace expects; the %zu sites are %s", ft.why, from, want, r->nsites,
		     got) < 0)
		fd->msg[0] = 0;
	return 0;
}

/* A finding for every site whose ops literal the kernel skips as misaligned.  0, or -ENOMEM. */
static int check_misaligned(struct record *r, struct audit *a)
{
	for (size_t i = 0; i < r->nsites; i++) {
		const struct site *s = &r->sites[i];
		if (!s->misaligned)
			continue;
		struct finding *fd = add(a, FIND_MISALIGNED, s->addr, s->func);
		if (!fd)
			return -ENOMEM;
		struct elfio_section *sec = elfio_addr_to_sec(r->e, s->addr);
		if (elfio_is_rel(r->e) && sec && sec->shdr.sh_addralign < r->align)
			snprintf(fd->msg, sizeof(fd->msg),
				 "section '%s' is only %" PRIu64 "-byte aligned, so the final link "
				 "decides the %u-byte alignment the ops literal needs",
				 sec->name, (uint64_t)sec->shdr.sh_addralign, r->align);
		else if (elfio_is_rel(r->e) && sec)
			snprintf(fd->msg, sizeof(fd->msg),
				 "ops literal at offset 0x%" PRIx64 " of '%s' (%" PRIu64 " mod %u): "
				 "after any link the kernel skips it (\"Misaligned patch-site\")",
				 s->addr - sec->addr, sec->name, (s->addr - sec->addr) % r->align,
				 r->align);
		else
			snprintf(fd->msg, sizeof(fd->msg),
				 "ops literal at %" PRIu64 " mod %u: the kernel skips it (\"Misaligned "
				 "patch-site\") and the function cannot be traced",
				 s->addr % r->align, r->align);
	}
	return 0;
}

/* A boot image with no config: what audit_run could not check, said once at its end. */
struct audit_notes {
	const char *table;	/* the first unsorted table no config judged */
	size_t descents;	/* ... its descents */
	bool no_config;		/* no config says which layout the kernel expects */
};

/*
 * Mark each entry of tb that is a site (is_site) and count its non-zero
 * entries and descents: the kernel binary-searches the table and, where the
 * build sorted it, does not sort it again.  *first: the slot of the first
 * descent.
 */
static void scan_table(struct record *r, const struct site_table *tb, bool *is_site,
		       size_t *nonzero, size_t *descents, size_t *first)
{
	uint64_t prev = 0;
	size_t hint = 0;

	*nonzero = *descents = *first = 0;
	for (size_t i = 0; i < tb->count; i++) {
		uint64_t v = tb->entries[i].value;
		if (!v)
			continue;
		(*nonzero)++;
		if (prev && v < prev && !(*descents)++)
			*first = i;
		prev = v;
		is_site[i] = find_from(r, v, &hint) >= 0;
	}
}

/* One finding for an unsorted table the kernel would not sort again.  0, or -ENOMEM. */
static int check_unsorted(struct record *r, struct audit *a, const struct site_table *tb,
			  size_t descents, size_t first, struct audit_notes *notes)
{
	/* nobody sorts a program's __patchable_function_entries: only the
	   tables a kernel reads (and its region holds the PFE entries) */
	/* ... and not a module's: the kernel sorts it when it loads it
	   (ftrace_process_locs), and in an ET_REL the order compared is
	   across sections anyway */
	/* ... and not where every kernel sorts it at boot (arch.h) */
	if (!descents || tb->kind == TABLE_PFE || elfio_is_rel(r->e) ||
	    (r->arch->policy & ARCH_POLICY_SORTED_AT_BOOT) ||
	    !build_sorts(r, tb, descents, &notes->table, &notes->descents))
		return 0;
	uint64_t fv = tb->entries[first].value;
	struct finding *fd = add(a, FIND_UNSORTED, fv,
				 r->has_symbols ? elfio_function_at(r->e, fv, r->pre_bytes) : NULL);
	if (!fd)
		return -ENOMEM;
	fd->table = tb->name;
	snprintf(fd->msg, sizeof(fd->msg),
		 "table '%s' is not sorted (%zu descents, the first at slot %zu); a "
		 "kernel built with CONFIG_BUILDTIME_MCOUNT_SORT binary-searches it "
		 "without sorting it again", tb->name, descents, first);
	return 0;
}

/*
 * A finding for each non-zero entry of tb that is no site; its non-zero
 * values, in table order, into vals (*nv of them).  0, or -ENOMEM.
 */
static int check_stale(struct record *r, struct audit *a, const struct site_table *tb,
		       const bool *is_site, uint64_t *vals, size_t *nv)
{
	*nv = 0;
	for (size_t i = 0; i < tb->count; i++) {
		uint64_t v = tb->entries[i].value;
		if (!v)
			continue;	/* cleared by the build: not a finding */
		vals[(*nv)++] = v;
		if (is_site[i])
			continue;
		const struct elfio_symbol *f = r->has_symbols
			? elfio_function_at(r->e, v, r->pre_bytes) : NULL;
		if (record_unnamed_code(r, v, f))
			f = NULL;	/* as vmlinux's sizes say: in no function */
		struct finding *fd = add(a, FIND_STALE, v, f);
		if (!fd)
			return -ENOMEM;
		fd->table = tb->name;
		describe_stale(r, v, fd);
	}
	return 0;
}

/* One finding per value listed more than once in vals (sorted).  0, or -ENOMEM. */
static int check_duplicates(struct record *r, struct audit *a, const struct site_table *tb,
			    const uint64_t *vals, size_t nv)
{
	for (size_t i = 1; i < nv; i++) {
		if (vals[i] != vals[i - 1] || (i >= 2 && vals[i] == vals[i - 2]))
			continue;
		size_t k = i;
		while (k < nv && vals[k] == vals[i])
			k++;
		long si = record_find(r, vals[i]);
		struct finding *fd = add(a, FIND_DUPLICATE, vals[i], si >= 0 ? r->sites[si].func :
					 (r->has_symbols ? elfio_function_at(r->e, vals[i],
									     r->pre_bytes) : NULL));
		if (!fd)
			return -ENOMEM;
		fd->table = tb->name;
		snprintf(fd->msg, sizeof(fd->msg), "listed %zu times", k - i + 1);
	}
	return 0;
}

/* The findings of one table: unsorted, shifted, stale, duplicate.  0, or -ENOMEM. */
static int check_table(struct record *r, struct audit *a, const struct site_table *tb,
		       struct audit_notes *notes)
{
	uint64_t *vals = elfio_calloc(tb->count, sizeof(*vals));
	bool *is_site = elfio_calloc(tb->count, sizeof(*is_site));
	size_t nv, nonzero, descents, first;
	int ret = -ENOMEM;

	if (!vals || !is_site) {
		elfio_err(r->e, "out of memory for the %zu entries of table '%s'",
			  tb->count, tb->name);
		goto out;
	}
	scan_table(r, tb, is_site, &nonzero, &descents, &first);
	if (check_unsorted(r, a, tb, descents, first, notes) ||
	    check_shift(r, a, tb, is_site, nonzero) ||
	    check_stale(r, a, tb, is_site, vals, &nv))
		goto out;
	/* the values in table order are already sorted when it has no descents */
	if (descents)
		qsort(vals, nv, sizeof(*vals), cmp_u64);
	ret = check_duplicates(r, a, tb, vals, nv);
out:
	elfio_free(vals);
	elfio_free(is_site);
	return ret;
}

/*
 * Missing sites: a module with sites and no table (the kernel traces none
 * of them), and each site that a table, where there is one, does not list.
 * 0, or -ENOMEM.
 */
static int check_missing(struct record *r, struct audit *a)
{
	struct finding *fd;
	size_t total_entries = 0;

	if (!r->ntables && r->nsites && elfio_is_rel(r->e) &&
	    (elfio_find_section_by_name(r->e, ".gnu.linkonce.this_module") ||
	     elfio_find_section_by_name(r->e, ".modinfo"))) {
		fd = add(a, FIND_MISSING, r->sites[0].addr, r->sites[0].func);
		if (!fd)
			return -ENOMEM;
		snprintf(fd->msg, sizeof(fd->msg), "the module has %zu sites and no __mcount_loc: "
			 "the kernel traces none of them", r->nsites);
	}
	/* only meaningful against a table that exists */
	for (size_t t = 0; t < r->ntables; t++)
		total_entries += r->tables[t].count;
	for (size_t i = 0; total_entries && i < r->nsites; i++) {
		const struct site *s = &r->sites[i];
		/* a misaligned site is one finding: record --in-place leaves
		   it out of the table on purpose */
		if ((s->sources & SRC_TABLE) || s->misaligned)
			continue;
		fd = add(a, FIND_MISSING, s->addr, s->func);
		if (!fd)
			return -ENOMEM;
		snprintf(fd->msg, sizeof(fd->msg), "%s site is not in the table",
			 site_flavour_name(s->flavour));
	}
	return 0;
}

/*
 * Trampoline patch points (arch_ops.patch_points): ftrace writes
 * patch_point_len bytes there; a call the link relaxed is shorter and
 * the write destroys the instruction after it.  0, or -ENOMEM.
 */
static int check_patch_points(struct record *r, struct audit *a)
{
	const struct elfio_symtab *st = NULL;

	if (!r->arch->patch_point_len || elfio_is_rel(r->e) || elfio_symbols(r->e, &st) || !st)
		return 0;
	for (size_t i = 1; i < st->count; i++) {
		const struct elfio_symbol *y = &st->syms[i];
		if (!arch_is_patch_point(r->arch, y->name) || y->shndx == SHN_UNDEF)
			continue;
		struct elfio_section *sec = elfio_addr_to_sec(r->e, y->addr);
		struct arch_insn in;
		if (!sec || !is_text_section(sec) || elfio_section_data(r->e, sec) ||
		    y->addr - sec->addr >= sec->size)
			continue;
		uint64_t off = y->addr - sec->addr;
		if (r->arch->decode(sec->data + off, sec->size - off, y->addr, &in) ||
		    (in.kind != INSN_CALL && in.kind != INSN_BRANCH) ||
		    in.len >= r->arch->patch_point_len)
			continue;
		struct finding *fd = add(a, FIND_SHORT, y->addr, elfio_function_at(r->e, y->addr, 0));
		if (!fd)
			return -ENOMEM;
		fd->table = y->name;
		snprintf(fd->msg, sizeof(fd->msg),
			 "patch point '%s' is a %u-byte call after linker relaxation; ftrace "
			 "writes %u bytes here and destroys the next instruction (run "
			 "'patchsite pin' on the objects before the final link)", y->name,
			 in.len, r->arch->patch_point_len);
	}
	return 0;
}

/*
 * Findings in address order, kinds in a fixed order at one address,
 * else in the order found (a stable sort: qsort on the position as the
 * last key).  An insertion sort here was quadratic in the findings: a
 * relaxed kernel's stale table has one per function.  0, or -ENOMEM.
 */
static int sort_findings(struct audit *a)
{
	if (a->n <= 1)
		return 0;
	size_t *ord = elfio_calloc(a->n, sizeof(*ord));
	struct finding *sorted = elfio_calloc(a->n, sizeof(*sorted));
	if (!ord || !sorted) {
		elfio_free(ord);
		elfio_free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < a->n; i++)
		ord[i] = i;
	qsort_r(ord, a->n, sizeof(*ord), cmp_finding, a->v);
	for (size_t i = 0; i < a->n; i++)
		sorted[i] = a->v[ord[i]];
	elfio_free(ord);
	elfio_free(a->v);
	a->v = sorted;
	a->cap = a->n;
	return 0;
}

/*
 * With DWARF, each finding names its unit and producer (strings that
 * belong to *dw, kept open with the audit).  A clean image has none to
 * name, and reads no DWARF.  0, or -ENOMEM / an error printed.
 */
static int name_units(struct record *r, struct audit *a, struct elfio_dwarf **dw)
{
	if (a->n) {
		*dw = elfio_dwarf_open(r->e);
		if (!*dw && errno == ENOMEM)
			return -ENOMEM;	/* error printed */
	}
	a->has_dwarf = *dw != NULL;
	for (size_t i = 0; *dw && i < a->n; i++) {
		uint64_t at = a->v[i].func ? a->v[i].func->addr : a->v[i].addr;
		if (elfio_dwarf_cu(*dw, r->e, at, &a->v[i].cu, &a->v[i].producer) < 0)
			return -ENOMEM;	/* error printed */
	}
	return 0;
}

/* A boot image with no config: what was not checked, said once. */
static void print_notes(struct record *r, const struct audit_notes *notes)
{
	if (notes->table)
		fprintf(stderr, "patchsite: %s: note: table '%s' is not sorted (%zu descents); no "
			"build config says whether the build sorts it (CONFIG_BUILDTIME_MCOUNT_SORT) "
			"or which ftrace layout it expects: not a finding, and the layout is not "
			"checked (pass --config=FILE)\n", elfio_path(r->e), notes->table,
			notes->descents);
	else if (notes->no_config)
		fprintf(stderr, "patchsite: %s: note: no build config says which ftrace layout the "
			"kernel expects: the layout is not checked (pass --config=FILE)\n",
			elfio_path(r->e));
}

int audit_run(struct record *r, struct audit *a)
{
	struct elfio_dwarf *dw = NULL;
	unsigned long reported = elfio_errors_reported();
	struct audit_notes notes = { NULL, 0, false };
	int ret = -ENOMEM;

	memset(a, 0, sizeof(*a));
	if (check_config_layout(r, a, &notes.no_config) || check_misaligned(r, a))
		goto out;
	for (size_t t = 0; t < r->ntables; t++)
		if (check_table(r, a, &r->tables[t], &notes))
			goto out;
	if (check_missing(r, a) || check_patch_points(r, a) || sort_findings(a) ||
	    name_units(r, a, &dw))
		goto out;
	print_notes(r, &notes);
	ret = 0;
out:
	if (ret) {
		/* the findings' arrays, where nothing below printed why */
		if (elfio_errors_reported() == reported)
			elfio_err(r->e, "out of memory for the audit's findings");
		elfio_dwarf_close(dw);
		elfio_free(a->v);	/* the caller frees nothing after an error */
		memset(a, 0, sizeof(*a));
	} else {
		a->dw = dw;
	}
	return ret;
}

void audit_free(struct audit *a)
{
	elfio_dwarf_close(a->dw);
	elfio_free(a->v);
	memset(a, 0, sizeof(*a));
}


int audit_print(struct record *r, const struct audit *a, bool json, FILE *o)
{
	char addr[256], fn[512], lay[1024], cu[512], desc[1024];

	/* before anything is printed: it may run out of memory */
	if (record_describe(r, desc, sizeof(desc)))
		return -ENOMEM;
	if (json) {
		fprintf(o, "{\"schema\":%d,\"machine\":\"%s\",\"site_count\":%zu,\"layout\":",
			RECORD_JSON_SCHEMA, r->arch->name, r->nsites);
		record_describe_layout(r, &r->ev.main, lay, sizeof(lay));
		record_json_string(o, lay);
		fputs(",\"evidence\":", o);
		record_json_string(o, desc);
		fputs(",\"tables\":[", o);
		for (size_t t = 0; t < r->ntables; t++) {
			size_t nonzero = 0;
			for (size_t i = 0; i < r->tables[t].count; i++)
				nonzero += r->tables[t].entries[i].value != 0;
			fprintf(o, "%s{\"name\":", t ? "," : "");
			record_json_string(o, r->tables[t].name);
			/* slots reserved, entries that are not zero (what the text counts) */
			fprintf(o, ",\"slots\":%zu,\"entries\":%zu}", r->tables[t].count, nonzero);
		}
		fputs("],\"summary\":{", o);
		for (int k = 0; k < FIND_COUNT; k++)
			fprintf(o, "%s\"%s\":%zu", k ? "," : "", kind_names[k], a->count[k]);
		fputs("},\"ignored\":{", o);
		for (int k = 0; k < FIND_COUNT; k++)
			fprintf(o, "%s\"%s\":%zu", k ? "," : "", kind_names[k], a->ignored[k]);
		fprintf(o, ",\"weak\":%zu", a->ignored_weak);
		fputs("},\"findings\":[", o);
		for (size_t i = 0; i < a->n; i++) {
			const struct finding *f = &a->v[i];
			elfio_format_addr(r->e, f->addr, addr, sizeof(addr));
			fprintf(o, "%s\n{\"kind\":\"%s\",\"address\":", i ? "," : "",
				kind_names[f->kind]);
			record_json_string(o, addr);
			fputs(",\"function\":", o);
			record_json_string(o, f->func ? f->func->name : NULL);
			if (f->func)
				fprintf(o, ",\"offset\":%" PRId64, (int64_t)(f->addr - f->func->addr));
			else
				fputs(",\"offset\":null", o);
			fputs(",\"table\":", o);
			record_json_string(o, f->table);
			fputs(",\"message\":", o);
			record_json_string(o, f->msg);
			fputs(",\"cu\":", o);
			record_json_string(o, f->cu);
			fputs(",\"producer\":", o);
			record_json_string(o, f->producer);
			fputc('}', o);
		}
		fputs("\n]}\n", o);
		return 0;
	}

	fprintf(o, "%s\n", desc);
	for (size_t i = 0; i < a->n; i++) {
		const struct finding *f = &a->v[i];
		record_text_addr(r, f->addr, addr, sizeof(addr));
		record_symbolize(r, f->addr, f->func, fn, sizeof(fn));
		fprintf(o, "%s: %s %s: %s", kind_names[f->kind], addr, fn, f->msg);
		if (f->cu || f->producer) {
			/* DWARF strings: spaces are normal there, control bytes are not */
			record_text_str(cu, sizeof(cu), f->cu ? f->cu : "?");
			fprintf(o, " [%s", cu);
			if (f->producer) {
				record_text_str(cu, sizeof(cu), f->producer);
				fprintf(o, ": %s", cu);
			}
			fputc(']', o);
		}
		fputc('\n', o);
	}
	fprintf(o, "summary:");
	for (int k = 0; k < FIND_COUNT; k++)
		fprintf(o, "%s %zu %s", k ? "," : "", a->count[k], kind_names[k]);
	for (int k = 0, first = 1; k < FIND_COUNT; k++) {
		if (!a->ignored[k])
			continue;
		fprintf(o, "%s %zu %s", first ? "; ignored:" : ",", a->ignored[k], kind_names[k]);
		if (k == FIND_STALE && a->ignored_weak)
			fprintf(o, " (%zu of them weak leftovers)", a->ignored_weak);
		first = 0;
	}
	fputc('\n', o);
	return 0;
}
