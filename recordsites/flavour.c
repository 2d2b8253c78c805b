// SPDX-License-Identifier: GPL-2.0-only
/*
 * flavour.c - the flavours the image's own tables show (the table-driven
 * inference): the evidence of an object, of an image without symbols, and
 * of a second table.
 *
 * Strategy: read the entries of the tables recordsites.c collected and
 * decode what they point at (decode.c): entries that are calls, x86 5-byte
 * NOPs at entry (-mnop-mcount), or NOP areas around a symbol, whose size
 * before and after the entry is inferred from a histogram.  Called by
 * recordsites.c (objects) and evidence.c (no symbols, a second table); calls
 * only decode.c.
 */
#include <string.h>

#include "recordsites/record_priv.h"

/* --- Step 3: flavours ---------------------------------------------------- */

/* Tables the table-driven inference reads: `only`, or all of them. */
#define for_each_table(r, only, t)						\
	for (size_t __t = 0; __t < (r)->ntables && ((t) = (only) ? (only) : &(r)->tables[__t]);	\
	     __t = (only) ? (r)->ntables : __t + 1)

/*
 * Infer the patch area from the table entries that look like one: the
 * distance from entry to the symbol (pre) is the most common one seen; the
 * NOPs after the symbol (post) the smallest run seen, since a function body
 * may itself begin with a NOP but the area is never shorter than N.  Only
 * where the table is the compiler's own word (an object) or the only thing
 * there is (no symbols), or a second table.
 */
static void infer_patchable(struct record *r, const struct site_table *only)
{
	const struct site_table *tb;
	unsigned int hist[65] = { 0 };
	unsigned int best = 0, post = ~0u;

	if (!r->has_symbols)
		return;		/* pre 0, post unknown: only "starts with a NOP" is checked */
	for_each_table(r, only, tb) {
		for (size_t i = 0; i < tb->count; i++) {
			uint64_t v = tb->entries[i].value;
			const struct elfio_symbol *f;
			if (!v || !rs_nop_run(r, v, 0, 1))
				continue;
			f = rs_function_past_padding(r, v, 64);
			if (!f)
				continue;
			if (v < f->addr)
				hist[f->addr - v]++;
			else if (rs_at_entry(r, f, v))
				hist[0]++;
		}
	}
	for (unsigned int i = 1; i <= 64; i++)
		if (hist[i] > hist[best])
			best = i;
	r->pre_bytes = best;
	for_each_table(r, only, tb) {
		for (size_t i = 0; i < tb->count; i++) {
			uint64_t v = tb->entries[i].value;
			const struct elfio_symbol *f;
			uint64_t a;
			if (!v)
				continue;
			f = elfio_function_at(r->e, v + best, 0);
			if (!f)
				continue;
			if (best ? f->addr != v + best : !rs_at_entry(r, f, v))
				continue;
			a = best ? f->addr + rs_landing_len(r, f->addr) : v;
			unsigned int run = rs_nop_run(r, a, 0, 64);
			if (run && run < post)
				post = run;
		}
	}
	if (post != ~0u) {
		r->post_bytes = post;
		r->post_known = true;
	}
}

/* x86 kernels get __patchable_function_entries from call padding, not from ftrace. */
void rs_drop_call_padding(struct record *r)
{
	for (size_t t = 0; t < r->ntables; t++) {
		if (r->tables[t].kind == TABLE_PFE) {
			elfio_free(r->tables[t].entries);
			memmove(&r->tables[t], &r->tables[t + 1],
				(r->ntables - t - 1) * sizeof(r->tables[0]));
			r->ntables--;
			t--;
		}
	}
}

/*
 * The flavours a table shows: the entries that decode as calls to a target,
 * x86 5-byte NOPs at entry (-mnop-mcount), or NOP areas around a symbol.
 * The evidence of an object (whose tables and relocations are the
 * compiler's own), of an image without symbols, and of a second table.
 */
void rs_detect_from_tables(struct record *r, const struct record_options *o,
			   const struct site_table *only)
{
	struct record_priv *p = r->priv;
	const struct site_table *tb;
	bool pfe = false, other = false;

	r->has_calls = p->ntargets || p->nslots || p->nrelsites;
	r->patchable = r->nop_mcount = r->post_known = false;
	r->pre_bytes = r->post_bytes = 0;
	for_each_table(r, only, tb) {
		if (tb->kind == TABLE_PFE)
			pfe = true;
		else
			other = true;
	}
	if (pfe && (r->arch->policy & ARCH_POLICY_PFE_IS_PADDING) && r->has_calls) {
		if (!only)
			rs_drop_call_padding(r);
		pfe = false;
		if (only)
			return;
	}
	r->nop_mcount = o->force_nop_mcount;

	/* Entries of __mcount_loc-style tables that are neither calls nor
	   decodable areas tell us about -mnop-mcount */
	if (other && !r->nop_mcount && (r->arch->policy & ARCH_POLICY_NOP_MCOUNT)) {
		/* a table is one flavour: its first entries tell */
		for_each_table(r, only, tb) {
			if (r->nop_mcount)
				break;
			for (size_t i = 0, seen = 0; i < tb->count && seen < 64; i++) {
				struct arch_insn in;
				uint64_t v = tb->entries[i].value;
				seen += v != 0;
				if (v && rs_decode_at(r, v, &in) == ARCH_DECODE_OK &&
				    in.kind == INSN_NOP && in.len == r->arch->call_len &&
				    !rs_is_patch_nop(r, &in)) {
					r->nop_mcount = true;
					break;
				}
			}
		}
	}
	r->patchable = pfe || o->patchable_n >= 0;
	if (!r->patchable && other && !(r->arch->policy & ARCH_POLICY_PFE_IS_PADDING)) {
		/* arm64/riscv kernels link __patchable_function_entries into the
		   region: entries that land on NOPs mean a patchable layout */
		for_each_table(r, only, tb) {
			for (size_t i = 0; i < tb->count && !r->patchable; i++) {
				uint64_t v = tb->entries[i].value;
				struct arch_insn in;
				if (v && rs_decode_at(r, v, &in) == ARCH_DECODE_OK &&
				    in.kind == INSN_NOP)
					r->patchable = true;
			}
		}
	}
	if (r->patchable)
		infer_patchable(r, only);
	/*
	 * x86: a __patchable_function_entries whose areas leave no NOP at the
	 * entry (=16,16, in objects built without -mfentry) is call padding
	 * too, not a table of sites.
	 */
	if (pfe && o->patchable_n < 0 && r->has_symbols && !r->post_known &&
	    (r->arch->policy & ARCH_POLICY_PFE_IS_PADDING)) {
		if (!only)
			rs_drop_call_padding(r);
		r->patchable = false;
		r->pre_bytes = 0;
	}
}
