// SPDX-License-Identifier: GPL-2.0-only
/*
 * recordsites.c - find every patch site in an image and verify it.
 *
 * Strategy:
 *
 *  1. Learn the call targets.  mcount/_mcount/__fentry__ as defined symbols,
 *     the PLT stubs that jump through their GOT slots (found by decoding the
 *     PLT, not by assuming its layout), and the GOT slots themselves for
 *     x86's `call *mcount@GOTPCREL(%rip)`.  In a relocatable object there is
 *     no target address: the compiler's call relocations against those names
 *     mark the calls instead (recordmcount's method), and we still decode.
 *  2. Read the image's own tables: __patchable_function_entries, __mcount_loc,
 *     and the region between __start_mcount_loc and __stop_mcount_loc.  In a
 *     linked image a slot's value is its content, or the addend of the
 *     R_*_RELATIVE relocation that covers it (arm64 kernels linked with
 *     --no-apply-dynamic-relocs keep zeros in place); in ET_REL it is the
 *     relocation's symbol + addend.
 *  3. Establish the layout.  In a linked image it comes from evidence that
 *     is independent of the table under test (evidence.c): what the user
 *     stated, the DWARF units' producer flags, a vote of the functions'
 *     shapes, a second table; the calls found by a sweep of the functions
 *     take part in the vote.  In a relocatable object the compiler's own
 *     relocations and tables are the evidence: the flavours are what their
 *     entries decode as (rs_detect_from_tables, flavour.c).
 *  4. Candidates: the calls the sweep found, the entry of every function
 *     whose layout gives it a NOP-shaped site, and the table entries.  Each
 *     one is verified by decoding the bytes at its address as the layout of
 *     its function says; with a symbol table it must also lie inside a sized
 *     function (counting the area before the symbol for pre-entry NOPs),
 *     which is the kernel's sorttable rule and drops the leftovers of
 *     overridden weak functions.
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elfio/bootimg.h"
#include "recordsites/record_priv.h"


static const char *const flavour_names[FLAVOUR_COUNT] = {
	[FLAVOUR_FENTRY] = "fentry",
	[FLAVOUR_ENTRY_NOP] = "fentry-nop",
	[FLAVOUR_MCOUNT] = "mcount",
	[FLAVOUR_PATCHABLE] = "patchable",
	[FLAVOUR_CALL_OPS] = "call-ops",
};

const char *site_flavour_name(enum site_flavour f)
{
	return f < FLAVOUR_COUNT ? flavour_names[f] : "?";
}

int site_flavour_parse(const char *name, enum site_flavour *f)
{
	for (int i = 0; i < FLAVOUR_COUNT; i++) {
		if (strcmp(name, flavour_names[i]) == 0) {
			*f = (enum site_flavour)i;
			return 0;
		}
	}
	return -EINVAL;
}

void record_options_init(struct record_options *o)
{
	memset(o, 0, sizeof(*o));
	o->patchable_n = -1;
	o->patchable_m = -1;
	o->cap = ARCH_CAP_RECORD;
}

/* --- Sorted arrays ------------------------------------------------------- */

static int cmp_target(const void *a, const void *b)
{
	const struct target *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)x->entry - (int)y->entry;
}

static void sort_targets(struct target *v, size_t *n)
{
	size_t w = 0;

	if (!*n)
		return;		/* v may be NULL: qsort's arguments must not be */
	qsort(v, *n, sizeof(*v), cmp_target);
	for (size_t i = 0; i < *n; i++)
		if (!w || v[w - 1].addr != v[i].addr)
			v[w++] = v[i];
	*n = w;
}

/* Does the layout of function f (linked images) allow this kind of site? */
static bool layout_is(struct record *r, const struct elfio_symbol *f, enum layout_kind k)
{
	if (elfio_is_rel(r->e))
		return true;	/* objects: the flavours the compiler's tables show */
	return record_layout_at(r, f ? f->addr : 0)->kind == k;
}

static bool verify_call(struct record *r, uint64_t addr, struct site *s)
{
	struct arch_insn in;
	bool entry = false;

	if (rs_decode_at(r, addr, &in) != ARCH_DECODE_OK || !rs_is_mcount_call(r, addr, &in, &entry))
		return false;
	s->flavour = entry ? FLAVOUR_FENTRY : FLAVOUR_MCOUNT;
	if (r->has_symbols) {
		s->func = elfio_function_at(r->e, addr, 0);
		if (!s->func || rs_call_outside(r, s->func, addr))
			return false;
		if (entry && !rs_at_entry(r, s->func, addr))
			return false;
	}
	return layout_is(r, s->func, LAYOUT_CALLS);
}

static bool verify_nop_mcount(struct record *r, uint64_t addr, struct site *s)
{
	struct arch_insn in;

	if (rs_decode_at(r, addr, &in) != ARCH_DECODE_OK || in.kind != INSN_NOP ||
	    in.len != r->arch->call_len)
		return false;
	s->flavour = FLAVOUR_ENTRY_NOP;
	if (r->has_symbols) {
		s->func = elfio_function_at(r->e, addr, 0);
		if (!s->func || !rs_at_entry(r, s->func, addr))
			return false;
	}
	return layout_is(r, s->func, LAYOUT_ENTRY_NOP);
}

/*
 * The area of layout l at addr: l->pre bytes of NOP units, the symbol (of
 * f, when the image has symbols), a landing pad, l->post bytes of NOP
 * units (post 0: at least one unit).
 */
static bool verify_area_at(struct record *r, uint64_t addr, const struct layout *l,
			   const struct elfio_symbol *f, struct site *s)
{
	uint64_t a = addr;

	if (l->pre) {
		if (!rs_nops_exactly(r, &a, l->pre, l->unit))
			return false;
		a += rs_landing_len(r, a);
	} else if (f && !rs_at_entry(r, f, addr)) {
		return false;
	}
	if (l->post) {
		if (!rs_nops_exactly(r, &a, l->post, l->unit))
			return false;
	} else if (!rs_nop_run(r, a, l->unit, 1)) {
		return false;
	}
	s->func = f;
	if (r->arch->literal_size && l->pre == r->arch->literal_size) {
		s->flavour = FLAVOUR_CALL_OPS;
		s->misaligned = (addr % r->align) != 0;
		if (elfio_is_rel(r->e)) {
			/* in an object, alignment is the offset's and the section's, or
			   what an alignment relocation will make of it at link time */
			struct elfio_section *sec = elfio_addr_to_sec(r->e, addr);
			const struct target *ap = rs_find_target(r->priv->alignpts,
								 r->priv->nalignpts, addr);
			if (ap)
				s->misaligned = !ap->entry;
			else
				s->misaligned = !sec || ((addr - sec->addr) % r->align) != 0 ||
						sec->shdr.sh_addralign < r->align;
		}
	} else {
		s->flavour = FLAVOUR_PATCHABLE;
	}
	return true;
}

/* The layout objects and symbol-less images verify areas with (from the table path). */
static struct layout table_layout(const struct record *r)
{
	return (struct layout){ LAYOUT_AREA, 0, r->pre_bytes, r->post_known ? r->post_bytes : 0 };
}

static bool verify_patchable(struct record *r, uint64_t addr, struct site *s)
{
	const struct elfio_symbol *f;

	if (elfio_is_rel(r->e)) {
		struct layout l = table_layout(r);
		if (!r->has_symbols)
			return verify_area_at(r, addr, &l, NULL, s);
		f = l.pre ? rs_function_starting(r, addr + l.pre) : elfio_function_at(r->e, addr, 0);
		return f && verify_area_at(r, addr, &l, f, s);
	}
	if (!r->has_symbols)
		return verify_area_at(r, addr, &r->priv->layouts[0], NULL, s);
	/* each layout with an area: the function it would belong to must have it */
	for (size_t i = 0; i < r->priv->nlayouts; i++) {
		const struct layout *l = &r->priv->layouts[i];
		if (l->kind != LAYOUT_AREA)
			continue;
		f = l->pre ? rs_function_starting(r, addr + l->pre) : elfio_function_at(r->e, addr, 0);
		if (f && record_layout_at(r, f->addr) == l && verify_area_at(r, addr, l, f, s))
			return true;
	}
	return false;
}

bool record_verify(struct record *r, uint64_t addr, struct site *s)
{
	memset(s, 0, sizeof(*s));
	s->addr = addr;
	if (r->has_calls && verify_call(r, addr, s))
		return true;
	memset(s, 0, sizeof(*s));
	s->addr = addr;
	if (r->nop_mcount && verify_nop_mcount(r, addr, s))
		return true;
	memset(s, 0, sizeof(*s));
	s->addr = addr;
	if (r->patchable && verify_patchable(r, addr, s))
		return true;
	return false;
}

/* --- Step 1: call targets ------------------------------------------------ */

/*
 * Defined mcount symbols, from every symbol table, read where the tables
 * lie: only a few names matter, and copying every symbol of a kernel out
 * was megabytes.  The same walk of the main table finds a kernel's
 * reserved region for collect_tables.  0 or -errno.
 */
static int targets_from_symbols(struct record *r)
{
	struct record_priv *p = r->priv;
	struct elfio_section *s;
	int ret;

	size_t main = elfio_main_symtab(r->e);
	for_each_section(r->e, s) {
		size_t count;

		if (s->shdr.sh_type != SHT_SYMTAB && s->shdr.sh_type != SHT_DYNSYM)
			continue;
		ret = elfio_symtab_check(r->e, s->index, &count);
		if (ret)
			return ret;
		for (size_t i = 1; i < count; i++) {
			const char *name = elfio_symtab_name(r->e, s->index, i);
			struct elfio_symbol y;

			/* only "__st..." can be the region's ends, and the last of
			   each name wins */
			if (s->index == main && name[0] == '_' && name[1] == '_' && name[2] == 's' &&
			    name[3] == 't') {
				elfio_symtab_get(r->e, s->index, i, &y);
				if (y.shndx != SHN_UNDEF && !strcmp(name, "__start_mcount_loc")) {
					p->region_start = y;
					p->have_start = true;
				} else if (y.shndx != SHN_UNDEF && !strcmp(name, "__stop_mcount_loc")) {
					p->region_stop = y;
					p->have_stop = true;
				}
			}
			if (!arch_is_mcount_name(name))
				continue;
			elfio_symtab_get(r->e, s->index, i, &y);
			if (y.shndx == SHN_UNDEF || !y.addr)
				continue;
			ret = rs_push_target(&p->targets, &p->ntargets, &p->targets_cap, y.addr,
					     arch_mcount_is_entry(name));
			/* calls that share the target's TOC land at its local entry */
			unsigned int local = rs_local_entry(r, &y);
			if (!ret && local)
				ret = rs_push_target(&p->targets, &p->ntargets, &p->targets_cap,
						     y.addr + local, arch_mcount_is_entry(name));
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* GOT slots of mcount symbols, from the dynamic relocations (one pass, none kept).  0 or -errno. */
static int slots_from_dynrel(struct record *r)
{
	struct record_priv *p = r->priv;
	struct elfio_section *s;
	int ret;

	for_each_section(r->e, s) {
		struct elfio_relocs rl;
		size_t count;

		if (s->shdr.sh_type != SHT_RELA || !(s->shdr.sh_flags & SHF_ALLOC) ||
		    !s->shdr.sh_link)
			continue;
		ret = elfio_symtab_check(r->e, s->shdr.sh_link, &count);
		if (ret)
			return ret;
		ret = elfio_relocs(r->e, s, &rl);
		if (ret)
			return ret;
		for (size_t i = 0; i < rl.count && !ret; i++) {
			struct elfio_rela v = elfio_relocs_get(&rl, i);

			/* v.sym < count: elfio checked it against the linked table */
			if (!v.sym)
				continue;
			bool slot_type = v.type == r->arch->jump_slot_reloc ||
					 (r->arch->glob_dat_reloc && v.type == r->arch->glob_dat_reloc) ||
					 v.type == r->arch->abs64_reloc;
			if (!slot_type)
				continue;
			const char *name = elfio_symtab_name(r->e, s->shdr.sh_link, v.sym);
			if (arch_is_mcount_name(name))
				ret = rs_push_target(&p->slots, &p->nslots, &p->slots_cap, v.offset,
						     arch_mcount_is_entry(name));
		}
		if (ret)
			return ret;
	}
	return 0;
}

/* PLT stubs that jump through those slots.  0 or -errno. */
static int targets_from_plt(struct record *r)
{
	struct record_priv *p = r->priv;
	struct elfio_section *s;
	int ret;

	if (!p->nslots || !r->arch->plt_slot)
		return 0;
	for_each_section(r->e, s) {
		if (!is_text_section(s) || (strncmp(s->name, ".plt", 4) && strncmp(s->name, ".iplt", 5)))
			continue;
		ret = elfio_section_data(r->e, s);
		if (ret)
			return ret;
		/* the arch says how far apart entries can start (arch.h plt_stride) */
		for (uint64_t off = 0; off + r->arch->plt_stride <= s->size;
		     off += r->arch->plt_stride) {
			uint64_t slot;
			const struct target *t;

			if (r->arch->plt_slot(s->data + off, s->size - off, s->addr + off, &slot))
				continue;
			t = rs_find_target(p->slots, p->nslots, slot);
			if (t) {
				ret = rs_push_target(&p->targets, &p->ntargets, &p->targets_cap,
						     s->addr + off, t->entry);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

/* PLT call stubs among the code (arch.h text_plt_slot), addressed from .got.  0 or -errno. */
static int targets_from_text_plt(struct record *r)
{
	struct record_priv *p = r->priv;
	struct elfio_section *s;
	int ret;

	struct elfio_section *got = elfio_find_section_by_name(r->e, ".got");
	if (!p->nslots || !r->arch->text_plt_slot || !got)
		return 0;
	for_each_section(r->e, s) {
		if (!is_text_section(s))
			continue;
		ret = elfio_section_data(r->e, s);
		if (ret)
			return ret;
		for (uint64_t off = 0; off + r->arch->insn_align <= s->size;
		     off += r->arch->insn_align) {
			uint64_t slot;
			const struct target *t;

			if (r->arch->text_plt_slot(s->data + off, s->size - off, s->addr + off,
						   got->addr, &slot))
				continue;
			t = rs_find_target(p->slots, p->nslots, slot);
			if (t) {
				ret = rs_push_target(&p->targets, &p->ntargets, &p->targets_cap,
						     s->addr + off, t->entry);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

/*
 * The call targets of a linked image: the mcount symbols, the GOT slots
 * that hold them and the PLT stubs that jump through those.  0 or -errno.
 */
static int collect_targets_linked(struct record *r)
{
	struct record_priv *p = r->priv;
	int ret;

	if ((ret = targets_from_symbols(r)) || (ret = slots_from_dynrel(r)))
		return ret;
	sort_targets(p->slots, &p->nslots);
	if ((ret = targets_from_plt(r)) || (ret = targets_from_text_plt(r)))
		return ret;
	sort_targets(p->targets, &p->ntargets);
	return 0;
}

static int collect_targets_rel(struct record *r)
{
	struct record_priv *p = r->priv;
	struct elfio_section *s;
	int ret;

	for_each_section(r->e, s) {
		const struct elfio_symtab *t;
		struct elfio_section *text;
		const struct elfio_rela *v;
		size_t n;

		if (s->shdr.sh_type != SHT_RELA || s->shdr.sh_info == 0 ||
		    s->shdr.sh_info >= elfio_nsections(r->e))
			continue;
		text = elfio_section(r->e, s->shdr.sh_info);
		if (!is_text_section(text))
			continue;
		ret = elfio_symtab_by_index(r->e, s->shdr.sh_link, &t);
		if (ret)
			return ret;
		ret = elfio_relas(r->e, s, &v, &n);
		if (ret)
			return ret;
		for (size_t i = 0; i < n && !ret; i++) {
			uint64_t to, al;

			if (r->arch->align_reloc && v[i].type == r->arch->align_reloc) {
				/*
				 * The linker deletes bytes of this NOP padding so that
				 * what follows it lands on an alignment (arch.h).
				 */
				if (!r->arch->align_target(v[i].offset, v[i].addend, &to, &al))
					ret = rs_push_target(&p->alignpts, &p->nalignpts,
							     &p->alignpts_cap, text->addr + to,
							     al >= r->align &&
							     text->shdr.sh_addralign >= r->align);
				continue;
			}
			int back = r->arch->call_reloc_back(v[i].type);
			if (back < 0 || !v[i].sym || v[i].sym >= t->count)
				continue;
			const char *name = t->syms[v[i].sym].name;
			if (!arch_is_mcount_name(name) || v[i].offset < (uint64_t)back ||
			    v[i].offset >= text->shdr.sh_size)
				continue;
			uint64_t at = text->addr + v[i].offset - (uint64_t)back;
			struct arch_insn in;
			/* keep only relocations that sit in a call's displacement */
			if (rs_decode_at(r, at, &in) != ARCH_DECODE_OK ||
			    (in.kind != INSN_CALL && in.kind != INSN_CALL_MEM) ||
			    at + in.disp_off != text->addr + v[i].offset)
				continue;
			ret = rs_push_target(&p->relsites, &p->nrelsites, &p->relsites_cap, at,
					     arch_mcount_is_entry(name));
		}
		if (ret)
			return ret;
	}
	sort_targets(p->relsites, &p->nrelsites);
	sort_targets(p->alignpts, &p->nalignpts);
	return 0;
}

/* --- Step 2: the image's tables ------------------------------------------ */

static int cmp_rela_off(const void *a, const void *b)
{
	const struct elfio_rela *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Is offset a slot of one of the tables? */
static bool in_a_table(const struct record *r, uint64_t off)
{
	for (size_t t = 0; t < r->ntables; t++)
		if (off >= r->tables[t].start && off < r->tables[t].end)
			return true;
	return false;
}

/*
 * The R_*_RELATIVE relocations that cover table slots, sorted by offset.
 * Only those: an arm64 vmlinux has three times as many for its data, and
 * sorting them all was a quarter of `record`.  The linker writes them in
 * order; they are sorted only when they are not.
 */
static int load_dynrel(struct record *r)
{
	struct record_priv *p = r->priv;
	struct elfio_section *s;
	bool sorted = true;
	size_t cap = 0;

	for_each_section(r->e, s) {
		struct elfio_relocs rl;
		size_t n;

		if (s->shdr.sh_type != SHT_RELA || !(s->shdr.sh_flags & SHF_ALLOC))
			continue;
		int ret = elfio_relocs(r->e, s, &rl);
		if (ret)
			return ret;
		n = rl.count;
		/*
		 * Room for as many as the table has slots, at most, at once: a
		 * kernel's covers every slot, and growing one at a time from
		 * nothing was a page fault for each 4 KiB and copies.
		 */
		size_t slots = 0;
		for (size_t t = 0; t < r->ntables; t++)
			slots += r->tables[t].count;
		if (!cap && n && elfio_grow(&p->dynrel, &cap, slots < n ? slots : n,
					    sizeof(*p->dynrel))) {
			elfio_err(r->e, "out of memory for the table's relocations");
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++) {
			struct elfio_rela v = elfio_relocs_get(&rl, i);

			if (v.type != r->arch->relative_reloc || !in_a_table(r, v.offset))
				continue;
			if (p->ndynrel == cap &&
			    elfio_grow(&p->dynrel, &cap, p->ndynrel + 1, sizeof(*p->dynrel))) {
				elfio_err(r->e, "out of memory for the table's relocations");
				return -ENOMEM;
			}
			p->dynrel[p->ndynrel++] = v;
		}
	}
	for (size_t i = 1; i < p->ndynrel && sorted; i++)
		sorted = p->dynrel[i - 1].offset <= p->dynrel[i].offset;
	if (!sorted)
		qsort(p->dynrel, p->ndynrel, sizeof(*p->dynrel), cmp_rela_off);
	return 0;
}

struct table_key {
	uint64_t start, end;
	bool used;
};

static size_t table_slot(const struct table_key *set, size_t cap, uint64_t start, uint64_t end)
{
	uint64_t h = start * 0x9e3779b97f4a7c15ull ^ (end + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
	size_t i = (size_t)(h ^ (h >> 29)) & (cap - 1);

	while (set[i].used && (set[i].start != start || set[i].end != end))
		i = (i + 1) & (cap - 1);
	return i;
}

/*
 * Is there a table with exactly these slots already?  1: yes; 0: no, and
 * now it is remembered; or -ENOMEM.  A hash set, because an object with a
 * table section per function has tens of thousands of tables (and a
 * corrupt one millions): comparing each with all before it was quadratic.
 */
static int table_seen(struct record *r, uint64_t start, uint64_t end)
{
	struct record_priv *p = r->priv;

	if (2 * (r->ntables + 1) > p->tset_cap) {
		size_t cap = p->tset_cap ? 2 * p->tset_cap : 64;
		while (2 * (r->ntables + 1) > cap)
			cap *= 2;
		struct table_key *set = elfio_calloc(cap, sizeof(*set));
		if (!set)
			return -ENOMEM;
		for (size_t i = 0; i < r->ntables; i++) {
			size_t k = table_slot(set, cap, r->tables[i].start, r->tables[i].end);
			set[k] = (struct table_key){ r->tables[i].start, r->tables[i].end, true };
		}
		elfio_free(p->tset);
		p->tset = set;
		p->tset_cap = cap;
	}
	size_t k = table_slot(p->tset, p->tset_cap, start, end);
	if (p->tset[k].used)
		return 1;
	p->tset[k] = (struct table_key){ start, end, true };
	return 0;
}

/* 0: added; 1: the same slots are a table already (not added); or -errno. */
static int add_table(struct record *r, enum table_kind kind, const char *name, uint64_t start,
		     uint64_t end)
{
	struct site_table *nt;
	int seen;

	/* the same slots seen twice (a region that is exactly a section) */
	seen = table_seen(r, start, end);
	if (seen)
		return seen;
	/* GCC's own __mcount_loc is byte-aligned: a table may start anywhere */
	if ((end - start) % 8) {
		elfio_err(r->e, "table '%s' at 0x%" PRIx64 " has a size (%" PRIu64
			  ") that is not a whole number of 8-byte slots", name, start, end - start);
		return -EINVAL;
	}
	/*
	 * A corrupt __stop_mcount_loc or a huge SHT_NOBITS table must not size
	 * the entry array (or the slot walk): a real table is file-backed.
	 */
	if (end - start > elfio_file_size(r->e)) {
		elfio_err(r->e, "table '%s' at 0x%" PRIx64 " (%" PRIu64 " bytes) is larger than "
			  "the file", name, start, end - start);
		return -EINVAL;
	}
	if (elfio_grow(&r->tables, &r->priv->tables_cap, r->ntables + 1, sizeof(*r->tables)))
		return -ENOMEM;
	nt = &r->tables[r->ntables];
	memset(nt, 0, sizeof(*nt));
	nt->kind = kind;
	nt->name = name;
	nt->start = start;
	nt->end = end;
	nt->count = (size_t)((end - start) / 8);
	nt->entries = elfio_calloc(nt->count ? nt->count : 1, sizeof(*nt->entries));
	if (!nt->entries)
		return -ENOMEM;
	r->ntables++;
	return 0;
}

static int fill_table_linked(struct record *r, struct site_table *t)
{
	struct record_priv *p = r->priv;
	struct elfio_section *sec = NULL;
	size_t at = 0;

	for (size_t i = 0; i < t->count; i++) {
		struct table_entry *te = &t->entries[i];
		uint64_t v = 0;

		te->slot = t->start + 8 * i;
		/* the slots are in one section, usually: read them from its bytes */
		if (!sec || te->slot < sec->addr || te->slot - sec->addr + 8 > sec->size) {
			sec = elfio_addr_to_sec(r->e, te->slot);
			if (sec && (sec->shdr.sh_type == SHT_NOBITS || elfio_section_data(r->e, sec)))
				sec = NULL;
		}
		if (sec && te->slot - sec->addr + 8 <= sec->size) {
			memcpy(&v, sec->data + (te->slot - sec->addr), sizeof(v));
			v = le64toh(v);
		} else if (elfio_read_u64(r->e, te->slot, &v)) {
			struct elfio_section *s = elfio_addr_to_sec(r->e, te->slot);
			if (!s || s->shdr.sh_type != SHT_NOBITS) {
				elfio_err(r->e, "table '%s': slot 0x%" PRIx64 " is not in the file",
					  t->name, te->slot);
				return -EINVAL;
			}
			v = 0;	/* .bss-like: zero */
		}
		te->value = v;
		/* slots ascend, and so do the relocations: walk them beside the slots */
		if (at && p->dynrel[at - 1].offset >= te->slot)
			at = BOUND(p->dynrel, p->ndynrel, offset, te->slot, false);
		while (at < p->ndynrel && p->dynrel[at].offset < te->slot)
			at++;
		const struct elfio_rela *rel = at < p->ndynrel && p->dynrel[at].offset == te->slot
					       ? &p->dynrel[at] : NULL;
		if (rel) {
			te->has_rela = true;
			if (v == 0 || v != (uint64_t)rel->addend) {
				te->value = (uint64_t)rel->addend;
				te->from_rela = true;
			}
		}
	}
	return 0;
}

/* SHT_RELA sections by the section they apply to (sh_info), then by index. */
static int cmp_rela_target(const void *a, const void *b)
{
	const struct elfio_section *x = *(const struct elfio_section *const *)a;
	const struct elfio_section *y = *(const struct elfio_section *const *)b;

	if (x->shdr.sh_info != y->shdr.sh_info)
		return x->shdr.sh_info < y->shdr.sh_info ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * relas: every SHT_RELA section sorted by cmp_rela_target, so that a clang
 * object with one table section per function (and one .rela each) costs
 * a lookup per table, not a walk over all its sections.
 */
static int fill_table_rel(struct record *r, struct site_table *t, struct elfio_section *tsec,
			  struct elfio_section *const *relas, size_t nrelas)
{
	for (size_t i = 0; i < t->count; i++)
		t->entries[i].slot = t->start + 8 * i;
	if (elfio_section_data(r->e, tsec))
		return -EINVAL;
	for (size_t i = 0; i < t->count; i++) {
		uint64_t v = 0;
		if (tsec->data && tsec->size >= 8 * (i + 1))
			v = get_le64(tsec->data + 8 * i);
		t->entries[i].value = v;	/* unrelocated content: usually 0 */
	}
	size_t lo = BOUND_BY(nrelas, m, relas[m]->shdr.sh_info, tsec->index, false);
	for (size_t k = lo; k < nrelas && relas[k]->shdr.sh_info == tsec->index; k++) {
		struct elfio_section *s = relas[k];
		const struct elfio_symtab *st;
		const struct elfio_rela *v;
		size_t n;
		int ret;

		ret = elfio_symtab_by_index(r->e, s->shdr.sh_link, &st);
		if (ret)
			return ret;
		ret = elfio_relas(r->e, s, &v, &n);
		if (ret)
			return ret;
		for (size_t i = 0; i < n; i++) {
			if (v[i].type != r->arch->abs64_reloc || v[i].offset % 8 ||
			    v[i].offset / 8 >= t->count) {
				elfio_err(r->e, "table '%s': unexpected relocation type %u at 0x%" PRIx64,
					  t->name, v[i].type, v[i].offset);
				return -EINVAL;
			}
			/* v[i].sym < st->count: elfio checked it against the linked table */
			struct table_entry *te = &t->entries[v[i].offset / 8];
			te->value = st->syms[v[i].sym].addr + (uint64_t)v[i].addend;
			te->has_reloc = true;
		}
	}
	return 0;
}

static int collect_tables(struct record *r)
{
	struct elfio_section *s, **relas = NULL;
	size_t nrelas = 0;
	int ret;

	if (elfio_is_rel(r->e)) {
		relas = elfio_calloc(elfio_nsections(r->e), sizeof(*relas));
		if (!relas)
			return -ENOMEM;
		for_each_section(r->e, s)
			if (s->shdr.sh_type == SHT_RELA)
				relas[nrelas++] = s;
		if (nrelas)
			qsort(relas, nrelas, sizeof(*relas), cmp_rela_target);
	}
	for_each_section(r->e, s) {
		enum table_kind kind;

		if (strcmp(s->name, "__patchable_function_entries") == 0)
			kind = TABLE_PFE;
		else if (strcmp(s->name, "__mcount_loc") == 0)
			kind = TABLE_MCOUNT_LOC;
		else
			continue;
		ret = add_table(r, kind, s->name, s->addr, s->addr + s->shdr.sh_size);
		/* a table dropped as a duplicate gets no relocations of its own */
		if (ret == 0 && elfio_is_rel(r->e))
			ret = fill_table_rel(r, &r->tables[r->ntables - 1], s, relas, nrelas);
		if (ret < 0) {
			elfio_free(relas);
			return ret;
		}
	}
	elfio_free(relas);

	/* A kernel's reserved region (its ends found by collect_targets_linked). */
	size_t main = elfio_main_symtab(r->e), count = 0;
	if (main && (ret = elfio_symtab_check(r->e, main, &count)))
		return ret;
	if (main && !elfio_is_rel(r->e)) {
		const struct elfio_symbol *start = r->priv->have_start ? &r->priv->region_start : NULL;
		const struct elfio_symbol *stop = r->priv->have_stop ? &r->priv->region_stop : NULL;
		if (start && stop) {
			if (stop->addr < start->addr) {
				elfio_err(r->e, "__stop_mcount_loc is below __start_mcount_loc");
				return -EINVAL;
			}
			ret = add_table(r, TABLE_REGION, "__start_mcount_loc", start->addr, stop->addr);
			if (ret < 0)
				return ret;
		}
	}

	if (!elfio_is_rel(r->e)) {
		for (size_t i = 0; i < r->ntables; i++) {
			if (i == 0 && (ret = load_dynrel(r)))
				return ret;
			ret = fill_table_linked(r, &r->tables[i]);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* --- Step 3: flavours ---------------------------------------------------- */
static bool any_table_entry(const struct record *r)
{
	for (size_t t = 0; t < r->ntables; t++)
		for (size_t i = 0; i < r->tables[t].count; i++)
			if (r->tables[t].entries[i].value)
				return true;
	return false;
}

/* An object's flavours: the compiler's tables and relocations, or what was stated. */
static void detect_object(struct record *r, const struct record_options *o)
{
	struct record_priv *p = r->priv;

	rs_detect_from_tables(r, o, NULL);
	if (o->force_calls) {
		r->patchable = r->nop_mcount = false;
		r->pre_bytes = r->post_bytes = 0;
	}
	if (o->patchable_n >= 0) {
		unsigned int u = o->patchable_unit ? o->patchable_unit : p->nop_unit;
		r->pre_bytes = (unsigned int)o->patchable_m * u;
		r->post_bytes = (unsigned int)(o->patchable_n - o->patchable_m) * u;
		r->post_known = true;
	}
	/*
	 * A patchable object may still call _mcount: the riscv and arm64
	 * kernels' trampolines call ftrace_stub, an alias of _mcount.  When the
	 * table's entries are patch areas and not one of them is a call, calls
	 * are not sites.
	 */
	if (r->patchable && r->has_calls && any_table_entry(r)) {
		bool call_entry = false;
		for (size_t t = 0; t < r->ntables && !call_entry; t++)
			for (size_t i = 0; i < r->tables[t].count && !call_entry; i++) {
				struct arch_insn in;
				bool entry;
				uint64_t v = r->tables[t].entries[i].value;
				call_entry = v && rs_decode_at(r, v, &in) == ARCH_DECODE_OK &&
					     rs_is_mcount_call(r, v, &in, &entry);
			}
		if (!call_entry)
			r->has_calls = false;
	}
	memset(&r->ev, 0, sizeof(r->ev));
	r->ev.source = record_options_stated(o) ? EVIDENCE_STATED
		       : (r->has_calls || r->patchable || r->nop_mcount) ? EVIDENCE_OBJECT
		       : EVIDENCE_NOTHING;
	r->ev.main = r->patchable ? table_layout(r)
		     : r->nop_mcount ? (struct layout){ LAYOUT_ENTRY_NOP, 0, 0, 0 }
		     : r->has_calls ? (struct layout){ LAYOUT_CALLS, 0, 0, 0 }
		     : (struct layout){ LAYOUT_NONE, 0, 0, 0 };
	r->ev.nlayouts = (size_t)r->has_calls + r->patchable + r->nop_mcount;
	p->layouts[0] = r->ev.main;
}

/* --- Step 4: candidates -------------------------------------------------- */

/* A candidate: the address in the high bits' place, its source in a side field. */
struct cand_ent {
	uint64_t addr;
	unsigned int src;
	int shape;		/* a function shape that carries this site (decoded), or -1 */
	int call;		/* a call the sweep decoded here, or -1 */
};

struct cand {
	struct cand_ent *v;
	size_t n, cap;
	unsigned int src;	/* source of what is pushed now */
};

static int cand_push(struct cand *c, uint64_t a)
{
	if (elfio_grow(&c->v, &c->cap, c->n + 1, sizeof(*c->v)))
		return -ENOMEM;
	c->v[c->n].addr = a;
	c->v[c->n].src = c->src;
	c->v[c->n].shape = -1;
	c->v[c->n].call = -1;
	c->n++;
	return 0;
}

/* The site a decoded call is, under its function's layout: true and *s filled. */
static bool call_site(struct record *r, const struct call *c, struct site *s)
{
	memset(s, 0, sizeof(*s));
	s->addr = c->addr;
	s->func = c->func;
	s->flavour = c->entry ? FLAVOUR_FENTRY : FLAVOUR_MCOUNT;
	if (c->func && c->entry && !rs_at_entry(r, c->func, c->addr))
		return false;
	if (rs_call_outside(r, c->func, c->addr))
		return false;
	return record_layout_at(r, c->func ? c->func->addr : 0)->kind == LAYOUT_CALLS;
}

/* Linear decode of [start, end) in func, keeping every call to a target in p->calls. */
static int sweep(struct record *r, const struct elfio_symbol *func, uint64_t start, uint64_t end,
		 uint64_t *stop)
{
	uint64_t a = start;

	while (a < end) {
		struct arch_insn in;
		bool entry;
		int d = rs_decode_at(r, a, &in);

		if (d == ARCH_DECODE_TRUNC)
			break;
		if (d != ARCH_DECODE_OK) {
			a += r->arch->insn_align;	/* data in text: resynchronise */
			continue;
		}
		if (rs_is_mcount_call(r, a, &in, &entry)) {
			int ret = rs_push_call(r, a, func, entry);
			if (ret)
				return ret;
		}
		a += in.len;
	}
	if (stop)
		*stop = a;
	return 0;
}

/*
 * The calls to a target in a linked image, function by function (or section
 * by section without symbols).  Where every target is an entry target
 * (__fentry__) the call can only be the instruction at entry, which the
 * layout's function shapes decode anyway (evidence.c): nothing to sweep.
 */
static int sweep_calls(struct record *r)
{
	struct record_priv *p = r->priv;
	const struct elfio_symbol *const *f;
	size_t nf;
	int ret;

	if (!p->ntargets && !p->nslots)
		return 0;
	ret = elfio_functions(r->e, &f, &nf);
	if (ret)
		return ret;
	if (nf) {
		if (p->entry_only)
			return 0;
		/*
		 * Functions come sorted by address; bytes the previous sweeps
		 * decoded are not decoded again, so overlapping or nested
		 * symbols (corrupt sizes) cost no more than the text itself.
		 */
		uint64_t swept = 0;
		for (size_t i = 0; i < nf; i++) {
			if (i && f[i]->addr == f[i - 1]->addr)
				continue;	/* alias */
			uint64_t end = f[i]->addr + f[i]->size;
			if (end > swept) {
				uint64_t from = f[i]->addr > swept ? f[i]->addr : swept;
				ret = sweep(r, f[i], from, end, &swept);
				if (ret)
					return ret;
			}
		}
	} else {
		struct elfio_section *s;
		for_each_section(r->e, s) {
			if (!is_text_section(s) || !strncmp(s->name, ".plt", 4))
				continue;
			ret = sweep(r, NULL, s->addr, s->addr + s->shdr.sh_size, NULL);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int gather(struct record *r, const struct record_options *o, struct cand *c)
{
	struct record_priv *p = r->priv;
	const struct elfio_symbol *const *f;
	size_t nf;
	int ret;

	/* the image's own tables */
	c->src = SRC_TABLE;
	for (size_t t = 0; t < r->ntables; t++)
		for (size_t i = 0; i < r->tables[t].count; i++)
			if (r->tables[t].entries[i].value &&
			    (ret = cand_push(c, r->tables[t].entries[i].value)))
				return ret;

	/* relocations mark every call in an object; the sweep found them in images */
	c->src = SRC_SCAN;
	for (size_t i = 0; i < p->nrelsites; i++)
		if ((ret = cand_push(c, p->relsites[i].addr)))
			return ret;
	for (size_t i = 0; i < p->ncalls; i++) {
		if ((ret = cand_push(c, p->calls[i].addr)))
			return ret;
		c->v[c->n - 1].call = (int)i;
	}

	ret = elfio_functions(r->e, &f, &nf);
	if (ret)
		return ret;

	/* entries of functions, for flavours with no call to find */
	c->src = SRC_SYMBOL;
	if (!elfio_is_rel(r->e)) {
		/* each function whose decoded shape is its layout's site */
		for (size_t i = 0; i < p->nshapes; i++) {
			struct site s;
			if (!rs_shape_site(r, i, &s))
				continue;
			if ((ret = cand_push(c, s.addr)))
				return ret;
			c->v[c->n - 1].shape = (int)i;
		}
		return 0;
	}
	/*
	 * In an object the compiler's table names the NOP-shaped sites; symbols
	 * are the candidates only when the user stated the layout, or when no
	 * table entry exists at all.
	 */
	bool stated = record_options_stated(o);
	bool by_symbol = (stated || !any_table_entry(r)) &&
			 (r->nop_mcount || (r->patchable && r->post_known));
	for (size_t i = 0; by_symbol && i < nf; i++) {
		uint64_t a = f[i]->addr, local = a + rs_local_entry(r, f[i]);
		if (r->nop_mcount)
			ret = cand_push(c, a + rs_landing_len(r, a));
		if (!ret && r->patchable)
			ret = cand_push(c, r->pre_bytes ? a - r->pre_bytes : a + rs_landing_len(r, a));
		/* an area at the local entry as well (verification tells which) */
		if (!ret && r->patchable && !r->pre_bytes && local != a)
			ret = cand_push(c, local + rs_landing_len(r, local));
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Candidates arrive as a few ascending runs (each table, the scan in
 * function order, the symbols): merge the runs pairwise, O(n log runs),
 * instead of sorting ~2 entries per site from scratch.
 */
static int sort_cands(struct cand *c)
{
	size_t *runs, nruns = 0;
	struct cand_ent *tmp;

	if (c->n < 2)
		return 0;
	runs = elfio_calloc(c->n + 1, sizeof(*runs));
	tmp = elfio_calloc(c->n, sizeof(*tmp));
	if (!runs || !tmp) {
		elfio_free(runs);
		elfio_free(tmp);
		return -ENOMEM;
	}
	runs[nruns++] = 0;
	for (size_t i = 1; i < c->n; i++)
		if (c->v[i].addr < c->v[i - 1].addr)
			runs[nruns++] = i;
	runs[nruns] = c->n;
	while (nruns > 1) {
		size_t w = 0;
		for (size_t r = 0; r < nruns; r += 2) {
			size_t a = runs[r], m = runs[r + 1], b = r + 2 <= nruns ? runs[r + 2] : m;
			size_t i = a, j = m, k = a;
			if (r + 1 == nruns) {	/* odd run out: copy */
				memcpy(tmp + a, c->v + a, (m - a) * sizeof(*tmp));
				runs[w++] = a;
				continue;
			}
			while (i < m && j < b)
				tmp[k++] = c->v[j].addr < c->v[i].addr ? c->v[j++] : c->v[i++];
			while (i < m)
				tmp[k++] = c->v[i++];
			while (j < b)
				tmp[k++] = c->v[j++];
			runs[w++] = a;
		}
		runs[w] = c->n;
		nruns = w;
		struct cand_ent *sw = c->v;
		c->v = tmp;
		tmp = sw;
	}
	elfio_free(runs);
	elfio_free(tmp);
	return 0;
}

static int cmp_site_addr(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * A linked image with symbols: its sites are the functions whose decoded
 * shape is their layout's site and the calls the sweep decoded, both
 * already in address order; a table entry can add none (it would have to
 * be one of them) and only marks the site it names as listed.  No
 * candidate list, no second decode.
 */
static int sites_from_decodes(struct record *r)
{
	struct record_priv *p = r->priv;
	size_t cap = 0, ns = 0, k = 0;
	struct site s, c;
	bool sorted = true;

	if (elfio_grow(&r->sites, &cap, p->nshapes + p->ncalls + 1, sizeof(*r->sites)))
		return -ENOMEM;
	/* merge the two ascending streams */
	for (size_t i = 0; i <= p->nshapes; i++) {
		bool have = i < p->nshapes && rs_shape_site(r, i, &s);
		if (i < p->nshapes && !have)
			continue;
		for (; k < p->ncalls && (i == p->nshapes || p->calls[k].addr <= s.addr); k++) {
			if (!call_site(r, &p->calls[k], &c))
				continue;
			c.sources = SRC_SCAN;
			r->sites[ns++] = c;
		}
		if (have) {
			s.sources = SRC_SYMBOL;
			r->sites[ns++] = s;
		}
	}
	for (size_t i = 1; i < ns && sorted; i++)
		sorted = r->sites[i - 1].addr < r->sites[i].addr;
	if (!sorted) {
		/* overlapping symbols can interleave the areas: sort, keep one of each */
		size_t w = 0;
		qsort(r->sites, ns, sizeof(*r->sites), cmp_site_addr);
		for (size_t i = 0; i < ns; i++)
			if (!w || r->sites[w - 1].addr != r->sites[i].addr)
				r->sites[w++] = r->sites[i];
			else
				r->sites[w - 1].sources |= r->sites[i].sources;
		ns = w;
	}
	r->nsites = ns;
	for (size_t t = 0; t < r->ntables; t++) {
		const struct table_entry *te = r->tables[t].entries;
		/* a sorted table (the kernel's) is one walk beside the sites */
		size_t at = 0;
		for (size_t i = 0; i < r->tables[t].count; i++) {
			uint64_t v = te[i].value;
			if (!v)
				continue;
			if (at && r->sites[at - 1].addr >= v)	/* out of order: search */
				at = BOUND(r->sites, ns, addr, v, false);
			while (at < ns && r->sites[at].addr < v)
				at++;
			if (at < ns && r->sites[at].addr == v)
				r->sites[at++].sources |= SRC_TABLE;
		}
	}
	return 0;
}

/*
 * A step of record_scan() ran out of memory where nothing below said so:
 * say what the memory was for, in the one line.
 */
static int oom_for(const struct elfio *e, unsigned long before, int ret, const char *what)
{
	if (ret == -ENOMEM && elfio_errors_reported() == before)
		elfio_err(e, "out of memory for %s", what);
	return ret;
}

/* A record of e for the architecture it names, with nothing found yet.  0 or -errno (printed). */
static int record_new(struct elfio *e, const struct record_options *o, unsigned long before,
		      struct record **out)
{
	struct record *r = elfio_calloc(1, sizeof(*r));
	char why[256];

	if (!r)
		return oom_for(e, before, -ENOMEM, "the record of the image");
	r->priv = elfio_calloc(1, sizeof(*r->priv));
	if (!r->priv) {
		elfio_free(r);
		return oom_for(e, before, -ENOMEM, "the record of the image");
	}
	r->e = e;
	r->opts = *o;
	r->arch = arch_for(elfio_ehdr(e)->e_machine, elfio_machine_name(elfio_ehdr(e)->e_machine), o->cap, why, sizeof(why));
	if (!r->arch) {
		elfio_err(e, "%s", why);
		record_free(r);
		return -ENOTSUP;
	}
	r->align = o->align ? o->align : 8;
	r->priv->nop_unit = r->arch->nop_unit(elfio_ehdr(e)->e_flags);
	*out = r;
	return 0;
}

/*
 * A boot image has no DWARF to say its layout: the build's config does,
 * stated in r->opts as if by --patchable.  Whether it did.
 */
static bool state_from_boot_config(struct record *r)
{
	struct elfio *e = r->e;
	struct bootimg_ftrace ft;
	const char *from;
	size_t rawlen = 0;

	if (!elfio_is_boot_image(e) || record_options_stated(&r->opts))
		return false;
	const uint8_t *raw = elfio_raw(e, &rawlen);
	if (bootimg_config_ftrace(elfio_path(e), raw, rawlen, elfio_ehdr(e)->e_machine, &ft,
				  &from) != 1 || ft.kind != BFT_AREA)
		return false;
	r->opts.patchable_n = ft.n;
	r->opts.patchable_m = ft.m;
	snprintf(r->opts.stated_by, sizeof(r->opts.stated_by), "%s in %s", ft.why, from);
	return true;
}

/*
 * A linked image's symbol tables, their names and its dynamic relocations
 * have told all they tell (the functions, the targets, the table's values
 * are ours now): their pages leave before the text is read, a third of
 * what would otherwise be resident at once.
 */
static void release_symbols(struct elfio *e)
{
	struct elfio_section *s;

	for_each_section(e, s) {
		bool symtab = s->shdr.sh_type == SHT_SYMTAB || s->shdr.sh_type == SHT_DYNSYM;
		if (symtab || (s->shdr.sh_type == SHT_RELA && (s->shdr.sh_flags & SHF_ALLOC)))
			elfio_section_release(e, s);
		if (symtab && s->shdr.sh_link < elfio_nsections(e))
			elfio_section_release(e, elfio_section(e, s->shdr.sh_link));
	}
}

/* Whether every call target and GOT slot is an entry's (__fentry__, not mcount). */
static void note_entry_only(struct record *r)
{
	struct record_priv *p = r->priv;

	p->entry_only = true;
	for (size_t i = 0; i < p->ntargets; i++)
		p->entry_only &= p->targets[i].entry;
	for (size_t i = 0; i < p->nslots; i++)
		p->entry_only &= p->slots[i].entry;
}

/*
 * The layout of the sites: an object's from its relocations and sections
 * (detect_object), a linked image's from its calls and its functions'
 * shapes (rs_establish_layout).  0 or -errno (printed).
 */
static int find_layout(struct record *r, const struct record_options *o, unsigned long before)
{
	struct elfio *e = r->e;
	struct record_priv *p = r->priv;
	int ret;

	if (elfio_is_rel(e)) {
		if (elfio_grow(&p->layouts, &p->layouts_cap, 1, sizeof(*p->layouts)))
			return oom_for(e, before, -ENOMEM, "the layout of the patch sites");
		memset(p->layouts, 0, sizeof(*p->layouts));
		p->nlayouts = 1;
		detect_object(r, o);
		return 0;
	}
	if ((ret = sweep_calls(r)))
		return oom_for(e, before, ret, "the calls found in the code");
	ret = oom_for(e, before, rs_establish_layout(r, o), "the layout of the patch sites");
	if (ret)
		return ret;
	if (r->has_calls && (r->arch->policy & ARCH_POLICY_PFE_IS_PADDING))
		rs_drop_call_padding(r);
	return 0;
}

/*
 * The sites of an object, or of an image with no symbols: every candidate
 * (table entries, swept calls, shapes), one site per address that
 * verifies.  0 or -errno (printed).
 */
static int sites_from_cands(struct record *r, const struct record_options *o, unsigned long before)
{
	struct cand c = { 0 };
	int ret;

	if ((ret = gather(r, o, &c)) || (ret = sort_cands(&c))) {
		elfio_free(c.v);
		return oom_for(r->e, before, ret, "the candidate patch sites");
	}
	r->sites = elfio_calloc(c.n ? c.n : 1, sizeof(*r->sites));
	if (!r->sites) {
		elfio_free(c.v);
		return oom_for(r->e, before, -ENOMEM, "the patch sites");
	}
	for (size_t i = 0, j; i < c.n; i = j) {
		struct site s;
		unsigned int src = 0;
		int shape = -1, call = -1;
		for (j = i; j < c.n && c.v[j].addr == c.v[i].addr; j++) {
			src |= c.v[j].src;
			if (c.v[j].shape >= 0)
				shape = c.v[j].shape;
			if (c.v[j].call >= 0)
				call = c.v[j].call;
		}
		/* a function's shape and a swept call were decoded already; anything
		   else (a table entry) is decoded now */
		if (shape >= 0 ? !rs_shape_site(r, (size_t)shape, &s) :
		    call >= 0 ? !call_site(r, &r->priv->calls[call], &s) :
				!record_verify(r, c.v[i].addr, &s))
			continue;
		s.sources = src;
		r->sites[r->nsites++] = s;
	}
	elfio_free(c.v);
	return 0;
}

int record_scan(struct elfio *e, const struct record_options *o, struct record **out)
{
	unsigned long before = elfio_errors_reported();
	struct record *r;
	const struct elfio_symbol *const *f;
	size_t nf;
	int ret;

	*out = NULL;
	if ((ret = record_new(e, o, before, &r)))
		return ret;
	if (state_from_boot_config(r))
		o = &r->opts;
	ret = oom_for(e, before, elfio_functions(e, &f, &nf), "the index of function symbols");
	if (ret)
		goto err;
	r->has_symbols = nf > 0;
	ret = elfio_is_rel(e) ? collect_targets_rel(r) : collect_targets_linked(r);
	if (oom_for(e, before, ret, "the mcount and __fentry__ call targets"))
		goto err;
	ret = oom_for(e, before, collect_tables(r), "the tables of patch sites in the image");
	if (ret)
		goto err;
	if (!elfio_is_rel(e))
		release_symbols(e);
	note_entry_only(r);
	if ((ret = find_layout(r, o, before)))
		goto err;
	if (!elfio_is_rel(e) && r->has_symbols)
		ret = oom_for(e, before, sites_from_decodes(r), "the patch sites");
	else
		ret = sites_from_cands(r, o, before);
	if (ret || (ret = rs_check_stated(r)))
		goto err;
	*out = r;
	return 0;
err:
	record_free(r);
	return ret;
}

bool record_unnamed_code(struct record *r, uint64_t addr, const struct elfio_symbol *f)
{
	struct arch_insn in;
	bool entry;

	return f && rs_decode_at(r, addr, &in) == ARCH_DECODE_OK &&
	       rs_is_mcount_call(r, addr, &in, &entry) && rs_call_outside(r, f, addr);
}

long record_find(const struct record *r, uint64_t addr)
{
	size_t lo = BOUND(r->sites, r->nsites, addr, addr, false);

	return lo < r->nsites && r->sites[lo].addr == addr ? (long)lo : -1;
}

void record_free(struct record *r)
{
	if (!r)
		return;
	if (r->priv) {
		elfio_free(r->priv->targets);
		elfio_free(r->priv->slots);
		elfio_free(r->priv->relsites);
		elfio_free(r->priv->alignpts);
		elfio_free(r->priv->dynrel);
		elfio_free(r->priv->tset);
		elfio_free(r->priv->calls);
		elfio_free(r->priv->layouts);
		elfio_free(r->priv->regions);
		elfio_free(r->priv->shapes);
		elfio_free(r->priv);
	}
	for (size_t i = 0; i < r->ntables; i++)
		elfio_free(r->tables[i].entries);
	elfio_free(r->tables);
	elfio_free(r->sites);
	elfio_free(r);
}
