// SPDX-License-Identifier: GPL-2.0-only
/*
 * tests/arch/harness.c - one test body for each hook beyond decode that
 * more than one architecture has (PLT slots, the encoders, call
 * relocations, pcrel_encode, the -march NOP unit, the alignment hooks),
 * run over the tables tests/arch/ARCH.c hands to arch_add_X (harness.h).
 *
 * Strategy: a Check loop test knows only its index, so each arch_add_X
 * call takes the next range of a global index and remembers, for it, the
 * architecture's arch_ops and its rows; the test body finds its range and
 * row from _i.  The registry is filled while the suite is built, before
 * Check forks, so every test process has it.  Bytes a hook reads are in
 * exactly sized heap copies (arch_dup_exact), so ASan reports any read
 * past them; buffers a hook writes are prefilled and checked beyond what
 * it may write.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/arch/harness.h"

/* One arch_add_X call: its rows are the loop indices [first, first + count). */
struct rows {
	const struct arch_ops *ops;
	const void *rows;
	int first, count;
};

#define MAX_ROWS	64

static struct rows registry[MAX_ROWS];
static size_t nregistry;
static int next_index;

static void add_rows(TCase *tc, const TTest *test, const struct arch_ops *ops,
		     const void *rows, size_t n)
{
	struct rows *r;

	if (nregistry == MAX_ROWS || n == 0 || n > 100000 || ops == NULL) {
		fprintf(stderr, "tests/arch/harness.c: table %zu of %zu rows refused "
			"(MAX_ROWS %d)\n", nregistry, n, MAX_ROWS);
		abort();
	}
	r = &registry[nregistry++];
	r->ops = ops;
	r->rows = rows;
	r->first = next_index;
	r->count = (int)n;
	next_index += (int)n;
	tcase_add_loop_test(tc, test, r->first, r->first + r->count);
}

/* The table loop index i belongs to; *row is its row there. */
static const struct rows *rows_of(int i, size_t *row)
{
	for (size_t k = 0; k < nregistry; k++)
		if (i >= registry[k].first && i < registry[k].first + registry[k].count) {
			*row = (size_t)(i - registry[k].first);
			return &registry[k];
		}
	ck_abort_msg("loop index %d is in no table", i);
	return NULL;
}

#define ROW(type, var, ops)							\
	size_t row_;								\
	const struct rows *r_ = rows_of(_i, &row_);				\
	const struct arch_ops *ops = r_->ops;					\
	const type *var = (const type *)r_->rows + row_

size_t arch_nops_walk(const struct arch_ops *ops, const uint8_t *buf, size_t len)
{
	size_t off = 0, n = 0;

	while (off < len) {
		struct arch_insn insn;
		int ret = ops->decode(buf + off, len - off, 0x1000 + off, &insn);

		ck_assert_msg(ret == ARCH_DECODE_OK, "%s: encode_nops(%zu): at %zu: ret %d",
			      ops->name, len, off, ret);
		ck_assert_msg(insn.kind == INSN_NOP, "%s: encode_nops(%zu): at %zu: kind %d, "
			      "not a NOP", ops->name, len, off, insn.kind);
		ck_assert_uint_gt(insn.len, 0);
		off += insn.len;
		n++;
	}
	ck_assert_msg(off == len, "%s: encode_nops(%zu): the NOPs cover %zu", ops->name, len,
		      off);
	return n;
}

#define WANT_EQ(f)	ck_assert_msg(ops->f == w->f, "%s: " #f " %u, want %u", w->name, \
				      ops->f, w->f)

void arch_check_ops_fields(const struct arch_ops *ops, const struct arch_ops_want *w)
{
	ck_assert_str_eq(ops->name, w->name);
	WANT_EQ(machine);
	WANT_EQ(insn_align);
	WANT_EQ(call_len);
	WANT_EQ(literal_size);
	WANT_EQ(abs64_reloc);
	WANT_EQ(relative_reloc);
	WANT_EQ(jump_slot_reloc);
	WANT_EQ(glob_dat_reloc);
	WANT_EQ(plt_entry_size);
	WANT_EQ(plt_stride);
	WANT_EQ(align_reloc);
}

START_TEST(test_plt_slot)
{
	ROW(struct arch_plt_case, c, ops);
	uint8_t *buf = arch_dup_exact(c->bytes, c->len);
	uint64_t slot = 0xdeadbeef;
	int ret = ops->plt_slot(buf, c->len, c->addr, &slot);

	ck_assert_msg(ret == c->ret, "%s: %s: ret %d, want %d", ops->name, c->what, ret, c->ret);
	if (ret == 0)
		ck_assert_msg(slot == c->slot, "%s: %s: slot %#llx, want %#llx", ops->name,
			      c->what, (unsigned long long)slot, (unsigned long long)c->slot);
	free(buf);
}
END_TEST

START_TEST(test_encode_nops)
{
	ROW(struct arch_nops_case, c, ops);
	uint8_t buf[20], untouched[20];
	size_t n;

	ck_assert_uint_lt(c->len, sizeof(buf));
	memset(buf, 0xaa, sizeof(buf));
	memset(untouched, 0xaa, sizeof(untouched));
	ck_assert_msg(ops->encode_nops(buf, c->len) == c->ret, "%s: encode_nops(%zu): want %d",
		      ops->name, c->len, c->ret);
	if (c->ret) {
		ck_assert_msg(memcmp(buf, untouched, sizeof(buf)) == 0,
			      "%s: encode_nops(%zu) failed but wrote", ops->name, c->len);
		return;
	}
	ck_assert_msg(memcmp(buf, c->bytes, c->len) == 0, "%s: encode_nops(%zu): other bytes",
		      ops->name, c->len);
	/* exactly len bytes */
	ck_assert_msg(buf[c->len] == 0xaa, "%s: encode_nops(%zu) wrote past the end", ops->name,
		      c->len);
	n = arch_nops_walk(ops, buf, c->len);
	ck_assert_msg(n == c->nnops, "%s: encode_nops(%zu): %zu NOPs, want %zu", ops->name,
		      c->len, n, c->nnops);
}
END_TEST

START_TEST(test_encode_call)
{
	ROW(struct arch_call_case, c, ops);
	uint8_t buf[12], untouched[12], *copy;
	struct arch_insn insn;
	int ret;

	ck_assert_uint_le(ops->call_len, sizeof(c->bytes));
	memset(buf, 0xaa, sizeof(buf));
	memset(untouched, 0xaa, sizeof(untouched));
	ret = ops->encode_call(buf, c->from, c->to);
	ck_assert_msg(ret == c->ret, "%s: %s: ret %d, want %d", ops->name, c->what, ret, c->ret);
	if (c->ret) {
		ck_assert_msg(memcmp(buf, untouched, sizeof(buf)) == 0, "%s: %s: failed but wrote",
			      ops->name, c->what);
		return;
	}
	ck_assert_msg(memcmp(buf, c->bytes, ops->call_len) == 0, "%s: %s: other bytes",
		      ops->name, c->what);
	ck_assert_msg(memcmp(buf + ops->call_len, untouched, sizeof(buf) - ops->call_len) == 0,
		      "%s: %s: wrote past call_len", ops->name, c->what);

	/* round trip through decode, from exactly call_len bytes */
	copy = arch_dup_exact(buf, ops->call_len);
	ret = ops->decode(copy, ops->call_len, c->from, &insn);
	free(copy);
	ck_assert_msg(ret == ARCH_DECODE_OK, "%s: %s: decode ret %d", ops->name, c->what, ret);
	ck_assert_uint_eq(insn.len, ops->call_len);
	ck_assert_int_eq(insn.kind, INSN_CALL);
	ck_assert_msg(insn.target == c->to, "%s: %s: round trip %#llx", ops->name, c->what,
		      (unsigned long long)insn.target);
	ck_assert_msg(insn.disp_off == c->disp_off, "%s: %s: disp_off %u, want %u", ops->name,
		      c->what, insn.disp_off, c->disp_off);
}
END_TEST

START_TEST(test_call_reloc_back)
{
	ROW(struct arch_reloc_case, c, ops);
	int back = ops->call_reloc_back(c->type);

	ck_assert_msg(back == c->back, "%s: call_reloc_back(%u): %d, want %d", ops->name,
		      c->type, back, c->back);
}
END_TEST

START_TEST(test_pcrel_encode)
{
	ROW(struct arch_penc_case, c, ops);
	uint8_t out[16], untouched[16];
	struct arch_pcrel pc, again;
	int ret;

	ck_assert_int_eq(ops->pcrel_decode(c->from, c->len, &pc), ARCH_PCREL_OK);
	ck_assert_uint_eq(pc.len, c->len);
	memset(out, 0xaa, sizeof(out));
	memset(untouched, 0xaa, sizeof(untouched));
	ret = ops->pcrel_encode(&pc, c->disp, out);
	ck_assert_msg(ret == c->ret, "%s: %s: ret %d, want %d", ops->name, c->what, ret, c->ret);
	if (c->ret) {
		ck_assert_msg(memcmp(out, untouched, sizeof(out)) == 0, "%s: %s: failed but wrote",
			      ops->name, c->what);
		/* the limits decode reports say the same */
		ck_assert_msg(c->disp < pc.min || c->disp > pc.max || c->disp % pc.step,
			      "%s: %s: within [%lld, %lld] step %u", ops->name, c->what,
			      (long long)pc.min, (long long)pc.max, pc.step);
		return;
	}
	ck_assert_msg(memcmp(out, c->want, c->len) == 0, "%s: %s: other bytes", ops->name,
		      c->what);
	/* exactly pc.len bytes */
	ck_assert_msg(memcmp(out + c->len, untouched, sizeof(out) - c->len) == 0,
		      "%s: %s: wrote past its length", ops->name, c->what);
	ck_assert_msg(c->disp >= pc.min && c->disp <= pc.max && c->disp % pc.step == 0,
		      "%s: %s: outside [%lld, %lld] step %u", ops->name, c->what,
		      (long long)pc.min, (long long)pc.max, pc.step);
	ck_assert_int_eq(ops->pcrel_decode(out, c->len, &again), ARCH_PCREL_OK);
	ck_assert_str_eq(again.name, pc.name);
	ck_assert_int_eq(again.disp, c->disp);
}
END_TEST

/* Any reference re-encoded to its own displacement gives back the same bytes. */
START_TEST(test_pcrel_identity)
{
	size_t loop;
	const struct rows *r = rows_of(_i, &loop);
	const struct arch_ops *ops = r->ops;
	const struct arch_pcrel_gen *g = r->rows;	/* one generator, every loop */
	uint32_t x = g->seed + (uint32_t)loop;

	ck_assert_uint_le(g->len, 16);
	for (int n = 0; n < g->rounds; n++) {
		uint8_t in[16], out[16];
		struct arch_pcrel pc;

		g->fill(in, &x, n);
		if (ops->pcrel_decode(in, g->len, &pc) == ARCH_PCREL_OK) {
			ck_assert_int_eq(ops->pcrel_encode(&pc, pc.disp, out), 0);
			ck_assert_msg(memcmp(out, in, pc.len) == 0, "%s: round %d: %s re-encoded "
				      "differently", ops->name, n, pc.name);
		}
	}
}
END_TEST

START_TEST(test_nop_unit_march)
{
	ROW(struct arch_march_case, c, ops);
	unsigned int unit = ops->nop_unit_march(c->march);

	ck_assert_msg(unit == c->unit, "%s: -march=%s: unit %u, want %u", ops->name, c->march,
		      unit, c->unit);
	if (c->unit)
		ck_assert_str_eq(ops->nop_name(c->unit), c->name);
}
END_TEST

START_TEST(test_align_target)
{
	ROW(struct arch_align_case, c, ops);
	uint64_t to = 0xdead, align = 0xbeef;
	int ret = ops->align_target(c->offset, c->addend, &to, &align);

	ck_assert_msg(ret == c->ret, "%s: align_target(%#llx, %lld): ret %d, want %d", ops->name,
		      (unsigned long long)c->offset, (long long)c->addend, ret, c->ret);
	if (ret)
		return;
	ck_assert_msg(to == c->to && align == c->align, "%s: align_target(%#llx, %lld): "
		      "to %#llx align %llu, want %#llx %llu", ops->name,
		      (unsigned long long)c->offset, (long long)c->addend, (unsigned long long)to,
		      (unsigned long long)align, (unsigned long long)c->to,
		      (unsigned long long)c->align);
}
END_TEST

START_TEST(test_align_padding)
{
	ROW(struct arch_pad_case, c, ops);
	struct arch_align_pad pad;
	uint64_t to, al;
	int ret;

	memset(&pad, 0x5a, sizeof(pad));
	ret = ops->align_padding(c->e_flags, c->align, &pad);
	ck_assert_msg(ret == c->ret, "%s: align_padding(%#x, %llu): ret %d, want %d", ops->name,
		      c->e_flags, (unsigned long long)c->align, ret, c->ret);
	if (c->ret)
		return;
	ck_assert_msg(pad.size == c->size, "%s: align_padding(%#x, %llu): size %llu, want %llu",
		      ops->name, c->e_flags, (unsigned long long)c->align,
		      (unsigned long long)pad.size, (unsigned long long)c->size);
	ck_assert_uint_ne(ops->align_reloc, 0);
	ck_assert_uint_eq(pad.type, ops->align_reloc);
	ck_assert_int_eq(pad.addend, (int64_t)c->size);
	/* and align_target reads back the alignment it asks for */
	ck_assert_int_eq(ops->align_target(0x100 + ops->nop_unit(c->e_flags), pad.addend, &to,
					   &al), 0);
	ck_assert_uint_eq(al, c->align);
	ck_assert_uint_eq(to % c->align, 0);
}
END_TEST

/* arch_add_X(tc, ops, rows, n): the rows through test_X (harness.h) */
#define ARCH_ADD(name, type, test)						\
	void arch_add_##name(TCase *tc, const struct arch_ops *ops,		\
			     const type *rows, size_t n)			\
	{									\
		add_rows(tc, test, ops, rows, n);				\
	}

ARCH_ADD(plt_cases, struct arch_plt_case, test_plt_slot)
ARCH_ADD(nops_cases, struct arch_nops_case, test_encode_nops)
ARCH_ADD(call_cases, struct arch_call_case, test_encode_call)
ARCH_ADD(reloc_cases, struct arch_reloc_case, test_call_reloc_back)
ARCH_ADD(penc_cases, struct arch_penc_case, test_pcrel_encode)
ARCH_ADD(march_cases, struct arch_march_case, test_nop_unit_march)
ARCH_ADD(align_cases, struct arch_align_case, test_align_target)
ARCH_ADD(pad_cases, struct arch_pad_case, test_align_padding)

/* loops runs of gen->rounds each, seeded gen->seed + 0 .. loops - 1 */
void arch_add_pcrel_identity(TCase *tc, const struct arch_ops *ops,
			     const struct arch_pcrel_gen *gen, int loops)
{
	add_rows(tc, test_pcrel_identity, ops, gen, (size_t)loops);
}
