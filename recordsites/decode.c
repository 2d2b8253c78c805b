// SPDX-License-Identifier: GPL-2.0-only
/*
 * decode.c - the bytes of a record's image, decoded: the helpers every
 * other file of recordsites/ reads code through.
 *
 * Strategy: the lowest layer of recordsites/.  It knows the image (through
 * elfio), the architecture's decoder (arch.h) and the record's private
 * state (record_priv.h), and calls nothing above it: recordsites.c (the
 * scan) -> evidence.c (the layout) -> flavour.c (the tables' word) ->
 * decode.c.  Text is read through a one-section cache; a NOP run is counted
 * in whole units of the kind asked for; a call is an mcount call when its
 * target is a known target or a GOT slot holding one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recordsites/record_priv.h"

/* --- The record's state, read (recordsites.h) ---------------------------- */

bool record_options_stated(const struct record_options *o)
{
	return o->patchable_n >= 0 || o->force_nop_mcount || o->force_calls;
}

const struct site_table *record_table_under_test(const struct record *r)
{
	static const enum table_kind order[] = { TABLE_REGION, TABLE_MCOUNT_LOC, TABLE_PFE };

	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (size_t t = 0; t < r->ntables; t++)
			if (r->tables[t].kind == order[k])
				return &r->tables[t];
	return NULL;
}

/* --- Sorted arrays ------------------------------------------------------- */

const struct target *rs_find_target(const struct target *v, size_t n, uint64_t addr)
{
	size_t lo = BOUND(v, n, addr, addr, false);

	return lo < n && v[lo].addr == addr ? &v[lo] : NULL;
}

int rs_push_target(struct target **v, size_t *n, size_t *cap, uint64_t addr, bool entry)
{
	if (elfio_grow(v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[*n].addr = addr;
	(*v)[*n].entry = entry;
	(*n)++;
	return 0;
}

/* --- Bytes and decoding -------------------------------------------------- */

/* Executable bytes at addr: pointer and how many remain in the section. */
static const uint8_t *text_at(struct record *r, uint64_t addr, size_t *avail)
{
	struct record_priv *p = r->priv;
	struct elfio_section *s = p->cache;

	if (!s || addr < s->addr || addr - s->addr >= s->shdr.sh_size) {
		s = elfio_addr_to_sec(r->e, addr);
		if (!s || !is_text_section(s) || elfio_section_data(r->e, s))
			return NULL;
		p->cache = s;
	}
	uint64_t off = addr - s->addr;
	if (off >= s->size)
		return NULL;
	*avail = s->size - off;
	return s->data + off;
}

/*
 * Start loading the text around addr (the bytes before it too: a CALL_OPS
 * literal) while other functions are decoded.  A function's first decode
 * is mostly a wait for memory: one new cache line, often a new page, per
 * function (perf: a64_decode and compute_shapes took a third of record's
 * time for a tenth of its instructions).  Only within the text section
 * last read, the common case; elsewhere nothing.
 */
void rs_prefetch_text(const struct record *r, uint64_t addr)
{
	const struct elfio_section *s = r->priv->cache;

	if (s && addr >= s->addr + 8 && addr - s->addr < s->size) {
		__builtin_prefetch(s->data + (addr - s->addr) - 8);
		__builtin_prefetch(s->data + (addr - s->addr));
	}
}

int rs_decode_at(struct record *r, uint64_t addr, struct arch_insn *insn)
{
	size_t avail;
	const uint8_t *b = text_at(r, addr, &avail);

	if (!b)
		return ARCH_DECODE_TRUNC;
	memset(insn, 0, sizeof(*insn));
	return r->arch->decode(b, avail, addr, insn);
}

/* Length of a landing pad (ENDBR64, BTI C) at addr, else 0. */
unsigned int rs_landing_len(struct record *r, uint64_t addr)
{
	struct arch_insn in;

	if (rs_decode_at(r, addr, &in) == ARCH_DECODE_OK && in.kind == INSN_LANDING)
		return in.len;
	return 0;
}

/* Is the decoded call at addr a call to an mcount target?  *entry tells which kind. */
bool rs_is_mcount_call(struct record *r, uint64_t addr, const struct arch_insn *in, bool *entry)
{
	struct record_priv *p = r->priv;
	const struct target *t;

	if (in->kind != INSN_CALL && in->kind != INSN_CALL_MEM)
		return false;
	if (elfio_is_rel(r->e)) {
		/* The displacement must be the one the mcount relocation fills. */
		t = rs_find_target(p->relsites, p->nrelsites, addr);
		if (!t)
			return false;
		*entry = t->entry;
		return true;
	}
	if (in->kind == INSN_CALL) {
		t = rs_find_target(p->targets, p->ntargets, in->target);
	} else {
		t = rs_find_target(p->slots, p->nslots, in->target);
		if (!t) {
			uint64_t v;
			/* a GOT slot the static linker filled with the target itself */
			if (elfio_read_u64(r->e, in->target, &v) == 0)
				t = rs_find_target(p->targets, p->ntargets, v);
		}
	}
	if (!t)
		return false;
	*entry = t->entry;
	return true;
}

unsigned int rs_local_entry(const struct record *r, const struct elfio_symbol *f)
{
	return r->arch->local_entry ? r->arch->local_entry(f->other) : 0;
}

/*
 * Function entry: the symbol, or just after its landing pad; where the
 * symbol has a local entry point apart from it (arch.h local_entry), that
 * one too, or just after a landing pad there.
 */
bool rs_at_entry(struct record *r, const struct elfio_symbol *f, uint64_t addr)
{
	uint64_t local = f->addr + rs_local_entry(r, f);

	if (addr == f->addr || (addr > f->addr && addr == f->addr + rs_landing_len(r, f->addr)))
		return true;
	return local != f->addr && (addr == local || (addr > local &&
						      addr == local + rs_landing_len(r, local)));
}

/*
 * A boot image's symbols have no sizes (kallsyms, System.map): f's extent
 * runs to the next symbol and takes in the code of an overridden weak
 * function, which has no symbol of its own.  Where the architecture fixes
 * an mcount call's place from the symbol (arch.h entry_call_offset), a call
 * elsewhere in the extent is not f's: on vmlinux, whose sizes end f before
 * it, it lies outside every sized function.
 */
bool rs_call_outside(struct record *r, const struct elfio_symbol *f, uint64_t addr)
{
	size_t avail;
	const uint8_t *b;
	unsigned int off;

	if (!f || !r->arch->entry_call_offset || !elfio_is_boot_image(r->e))
		return false;
	b = text_at(r, f->addr, &avail);
	off = b ? r->arch->entry_call_offset(b, avail) : 0;
	return !off || addr != f->addr + off;
}

bool rs_is_patch_nop(const struct record *r, const struct arch_insn *in)
{
	return in->kind == INSN_NOP && in->len < 32 && (r->arch->patch_nop_sizes & (1u << in->len));
}

/* A NOP of exactly `unit` bytes, or any patch unit when unit is 0. */
static bool is_unit_nop(const struct record *r, const struct arch_insn *in, unsigned int unit)
{
	return rs_is_patch_nop(r, in) && (!unit || in->len == unit);
}

/*
 * Decode NOPs from *addr covering exactly `bytes`; advance *addr.  The
 * compiler fills a patch area with NOP units (x86 0x90, arm64 NOP, riscv
 * c.nop or nop): a multi-byte x86 NOP of the same size is a different
 * instruction, not a patch area, and a riscv image built with C has c.nop
 * areas while its static keys and alternatives are 4-byte nops, so each
 * NOP must be the layout's unit (unit 0: any of the arch's patch units).
 */
bool rs_nops_exactly(struct record *r, uint64_t *addr, unsigned int bytes,
		     unsigned int unit)
{
	struct arch_insn in;
	uint64_t a = *addr, end = *addr + bytes;

	while (a < end) {
		if (rs_decode_at(r, a, &in) != ARCH_DECODE_OK || !is_unit_nop(r, &in, unit))
			return false;
		a += in.len;
	}
	if (a != end)
		return false;
	*addr = a;
	return true;
}

unsigned int rs_nop_run(struct record *r, uint64_t addr, unsigned int unit, unsigned int limit)
{
	size_t avail;
	const uint8_t *b = text_at(r, addr, &avail);
	unsigned int n = 0, u;

	if (!b)
		return 0;
	while (n < limit && (u = r->arch->patch_nop_at(b + n, avail - n)) &&
	       (!unit || u == unit))
		n += u;
	return n;
}

/*
 * NOP bytes just before addr, walking back one NOP at a time, not below lo,
 * up to limit.  With unit 0 each step tries the architecture's NOP sizes
 * largest first and takes one that is a NOP of exactly that length: on
 * riscv a 4-byte NOP's upper half (0x0000) is not an instruction, and two
 * C.NOPs are not a 4-byte NOP, so the walk is unambiguous even where a link
 * mixes rv64g and rv64gc objects.
 */
unsigned int rs_nops_before(struct record *r, uint64_t addr, uint64_t lo, unsigned int unit,
			    unsigned int limit)
{
	unsigned int sizes = unit ? 1u << unit : r->arch->patch_nop_sizes, n = 0;
	unsigned int top = 31 - (unsigned int)__builtin_clz(sizes | 1);
	size_t left;
	const uint8_t *end;

	/*
	 * One unit (every function's shape asks so): walk the bytes of the
	 * section that holds addr - 1 directly, and leave the general walk
	 * only what crosses into another section.
	 */
	if (unit && addr && (end = text_at(r, addr - 1, &left)) != NULL) {
		uint64_t back = addr - r->priv->cache->addr;	/* bytes of it before addr */

		end++;
		left--;
		while (n + unit <= limit && n + unit <= back && addr - n - unit >= lo &&
		       r->arch->patch_nop_at(end - n - unit, left + n + unit) == unit)
			n += unit;
		if (n + unit > back && n + unit <= limit && addr >= n + unit &&
		    addr - n - unit >= lo)
			goto general;	/* the run may go on in the section before */
		return n;
	}
general:
	for (;;) {
		unsigned int step = 0;

		for (unsigned int u = top; u >= 1 && !step; u--) {
			size_t avail;
			const uint8_t *b;

			if (!(sizes & (1u << u)) || n + u > limit || addr < n + u ||
			    addr - n - u < lo)
				continue;
			b = text_at(r, addr - n - u, &avail);
			if (b && r->arch->patch_nop_at(b, avail) == u)
				step = u;
		}
		if (!step)
			return n;
		n += step;
	}
}

/*
 * A symbol that is nothing but NOPs falls through into what follows: it is
 * padding with a name (objtool's __pfx_ symbols over x86 call padding),
 * never a function with a patch area.
 */
bool rs_is_padding_symbol(struct record *r, const struct elfio_symbol *f)
{
	return f->size <= 64 && rs_nop_run(r, f->addr, 0, (unsigned int)f->size) >= f->size;
}

/* The function at addr (elfio_function_at), past padding symbols. */
const struct elfio_symbol *rs_function_past_padding(struct record *r, uint64_t addr,
						    uint64_t slack)
{
	const struct elfio_symbol *f = elfio_function_at(r->e, addr, slack);

	for (int i = 0; f && i < 4 && rs_is_padding_symbol(r, f); i++) {
		const struct elfio_symbol *g = elfio_function_at(r->e, f->addr + f->size, 0);
		if (!g || g->addr != f->addr + f->size)
			return f;
		f = g;
	}
	return f;
}

/* The function starting exactly at addr (the first of its aliases), or NULL. */
const struct elfio_symbol *rs_function_starting(struct record *r, uint64_t addr)
{
	const struct elfio_symbol *f = elfio_function_at(r->e, addr, 0);

	return f && f->addr == addr ? f : NULL;
}

int rs_push_call(struct record *r, uint64_t addr, const struct elfio_symbol *func, bool entry)
{
	struct record_priv *p = r->priv;

	if (elfio_grow(&p->calls, &p->calls_cap, p->ncalls + 1, sizeof(*p->calls)))
		return -ENOMEM;
	p->calls[p->ncalls++] = (struct call){ addr, func, entry };
	return 0;
}
