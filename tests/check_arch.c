// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_arch.c - the decoder test: every architecture's cases, one harness.
 *
 * Strategy: the cases are data, one file per architecture
 * (tests/arch/ARCH.cases, tests/arch/README), which tests/arch/gen.py
 * assembles with the architecture's own assembler and checks against its
 * objdump before it writes them out as the table this file runs
 * (arch_cases[], one set per architecture of fixtures/arches.mk).  Each
 * case is one loop iteration of its architecture's TCase: a linear decode
 * with what every step must return (and what patch_nop_at says at it), a
 * pcrel_decode, or an insn_len.  The bytes are copied into a heap buffer of
 * exactly the stated length, so ASan reports any read past the end.  The
 * architecture's arch_ops is the registry's for the e_machine of the object
 * the cases assembled to: a case set that no registered architecture
 * decodes fails.  Tests that are not decode (encoders, PLT slots, the
 * alignment and CALL_OPS hooks, random properties) live beside the cases in
 * tests/arch/ARCH.c and are added to this suite from the same table; the
 * bodies those share are tests/arch/harness.c's, fed with each
 * architecture's rows.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/arch/harness.h"
#include "tests/check_suites.h"

uint8_t *arch_dup_exact(const void *bytes, size_t len)
{
	/* malloc(0) may return NULL; keep one byte so the pointer is valid, len stays 0 */
	uint8_t *p = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(p);
	if (len)
		memcpy(p, bytes, len);
	return p;
}

static const struct arch_case_set *set_of(size_t i)
{
	for (size_t s = 0; s < arch_case_nsets; s++)
		if (i >= arch_case_sets[s].first && i < arch_case_sets[s].first + arch_case_sets[s].count)
			return &arch_case_sets[s];
	ck_abort_msg("case %zu belongs to no architecture", i);
	return NULL;
}

static const struct arch_ops *ops_of(const struct arch_case_set *set)
{
	const struct arch_ops *ops = arch_by_machine(set->machine);

	ck_assert_msg(ops != NULL, "%s: e_machine %u is no registered architecture",
		      set->arch, set->machine);
	return ops;
}

/* What patch_nop_at must say where decode said *insn (arch.h's contract). */
static unsigned int nop_unit_of(const struct arch_ops *ops, const struct arch_insn *insn)
{
	if (insn->kind == INSN_NOP && insn->len < 32 && (ops->patch_nop_sizes >> insn->len & 1))
		return insn->len;
	return 0;
}

static void check_step(const struct arch_case *c, size_t k, const struct arch_case_step *w,
		       int ret, const struct arch_insn *insn)
{
	ck_assert_msg(ret == w->ret, "%s: %s: step %zu: ret %d, want %d", c->where, c->what, k,
		      ret, w->ret);
	if (ret != ARCH_DECODE_OK)
		return;
	ck_assert_msg(insn->len == w->len, "%s: %s: step %zu: len %u, want %u", c->where,
		      c->what, k, insn->len, w->len);
	if (w->kind == ARCH_CASE_ANY)
		return;
	ck_assert_msg((int)insn->kind == w->kind, "%s: %s: step %zu: kind %d, want %d",
		      c->where, c->what, k, insn->kind, w->kind);
	ck_assert_msg(insn->disp_off == w->disp_off, "%s: %s: step %zu: disp_off %u, want %u",
		      c->where, c->what, k, insn->disp_off, w->disp_off);
	if (w->kind == INSN_CALL || w->kind == INSN_CALL_MEM || w->kind == INSN_BRANCH)
		ck_assert_msg(insn->target == w->target, "%s: %s: step %zu: target %#llx, want %#llx",
			      c->where, c->what, k, (unsigned long long)insn->target,
			      (unsigned long long)w->target);
}

/* Every k < len bytes of the step at off, alone in an exact buffer: TRUNC. */
static void check_prefixes(const struct arch_ops *ops, const struct arch_case *c, size_t k,
			   size_t off, unsigned int len)
{
	for (unsigned int n = 0; n < len; n++) {
		uint8_t *part = arch_dup_exact(c->bytes + off, n);
		struct arch_insn insn;
		int ret = ops->decode(part, n, c->addr + off, &insn);

		free(part);
		ck_assert_msg(ret == ARCH_DECODE_TRUNC, "%s: %s: step %zu: %u of its %u bytes: "
			      "ret %d, not TRUNC", c->where, c->what, k, n, len, ret);
	}
}

static void run_decode(const struct arch_ops *ops, const struct arch_case *c)
{
	uint8_t *buf = arch_dup_exact(c->bytes, c->len);
	struct arch_insn insn;
	size_t off = 0;
	int ret = ARCH_DECODE_OK;

	for (size_t k = 0; k < c->nsteps; k++) {
		unsigned int unit = ops->patch_nop_at(buf + off, c->len - off);

		memset(&insn, 0x5a, sizeof(insn));
		ret = ops->decode(buf + off, c->len - off, c->addr + off, &insn);
		check_step(c, k, &c->steps[k], ret, &insn);
		if (ret != ARCH_DECODE_OK) {
			ck_assert_msg(unit == 0, "%s: %s: step %zu: patch_nop_at %u where decode "
				      "fails", c->where, c->what, k, unit);
			break;
		}
		ck_assert_msg(unit == nop_unit_of(ops, &insn), "%s: %s: step %zu: patch_nop_at %u, "
			      "decode says %u", c->where, c->what, k, unit, nop_unit_of(ops, &insn));
		if (c->prefixes)
			check_prefixes(ops, c, k, off, insn.len);
		off += insn.len;
	}
	if (ret == ARCH_DECODE_OK)
		ck_assert_msg(off == c->len, "%s: %s: decoded %zu of %zu bytes", c->where, c->what,
			      off, c->len);
	free(buf);

	/* the first instruction alone, less one byte: truncated */
	if (c->short_check) {
		buf = arch_dup_exact(c->bytes, c->steps[0].len - 1);
		ret = ops->decode(buf, c->steps[0].len - 1, c->addr, &insn);
		ck_assert_msg(ret == ARCH_DECODE_TRUNC, "%s: %s: one byte short: ret %d", c->where,
			      c->what, ret);
		free(buf);
	}
	/* followed by other bytes: the first step does not change */
	if (c->pad >= 0) {
		size_t n = c->len + 32;

		buf = malloc(n);
		ck_assert_ptr_nonnull(buf);
		memset(buf, c->pad, n);
		memcpy(buf, c->bytes, c->len);
		ret = ops->decode(buf, n, c->addr, &insn);
		check_step(c, 0, &c->steps[0], ret, &insn);
		free(buf);
	}
}

static void run_pcrel(const struct arch_ops *ops, const struct arch_case *c)
{
	const struct arch_case_pcrel *w = &c->pc;
	uint8_t *buf = arch_dup_exact(c->bytes, c->len);
	uint8_t out[32];
	struct arch_pcrel pc;
	int ret;

	ck_assert_ptr_nonnull(ops->pcrel_decode);
	memset(&pc, 0x5a, sizeof(pc));
	ret = ops->pcrel_decode(buf, c->len, &pc);
	ck_assert_msg(ret == w->ret, "%s: %s: ret %d, want %d", c->where, c->what, ret, w->ret);
	if (ret != ARCH_PCREL_NONE) {
		ck_assert_msg(strcmp(pc.name, w->name) == 0, "%s: %s: name %s, want %s", c->where,
			      c->what, pc.name, w->name);
		ck_assert_msg(pc.len == w->len, "%s: %s: len %u, want %u", c->where, c->what,
			      pc.len, w->len);
	}
	if (ret == ARCH_PCREL_OK) {
		ck_assert_msg(pc.disp == w->disp, "%s: %s: disp %lld, want %lld", c->where, c->what,
			      (long long)pc.disp, (long long)w->disp);
		ck_assert_msg(pc.min == w->min && pc.max == w->max && pc.step == w->step,
			      "%s: %s: range [%lld, %lld] step %u, want [%lld, %lld] step %u",
			      c->where, c->what, (long long)pc.min, (long long)pc.max, pc.step,
			      (long long)w->min, (long long)w->max, w->step);
		ck_assert_msg(pc.lo_off == w->lo_off, "%s: %s: lo_off %u, want %u", c->where,
			      c->what, pc.lo_off, w->lo_off);
		ck_assert_msg(pc.flags == w->flags, "%s: %s: flags %#x, want %#x", c->where,
			      c->what, pc.flags, w->flags);
		/* re-encoded for its own displacement: the same bytes */
		ck_assert_uint_le(pc.len, sizeof(out));
		ck_assert_int_eq(ops->pcrel_encode(&pc, pc.disp, out), 0);
		ck_assert_msg(memcmp(out, buf, pc.len) == 0, "%s: %s: re-encoded differently",
			      c->where, c->what);
	}
	free(buf);
}

static void run_insnlen(const struct arch_ops *ops, const struct arch_case *c)
{
	uint8_t *buf = arch_dup_exact(c->bytes, c->len);
	unsigned int n;

	ck_assert_ptr_nonnull(ops->insn_len);
	n = ops->insn_len(buf, c->len);
	ck_assert_msg(n == c->insn_len, "%s: %s: insn_len %u, want %u", c->where, c->what, n,
		      c->insn_len);
	free(buf);
}

START_TEST(test_case)
{
	const struct arch_case *c = &arch_cases[_i];
	const struct arch_ops *ops = ops_of(set_of((size_t)_i));

	switch (c->type) {
	case ARCH_CASE_DECODE:
		run_decode(ops, c);
		break;
	case ARCH_CASE_PCREL:
		run_pcrel(ops, c);
		break;
	case ARCH_CASE_INSNLEN:
		run_insnlen(ops, c);
		break;
	}
}
END_TEST

/* Every set decodes with a registered architecture, and no two with the same. */
START_TEST(test_sets)
{
	const struct arch_case_set *set = &arch_case_sets[_i];
	const struct arch_ops *ops = ops_of(set);

	ck_assert_uint_gt(set->count, 0);
	ck_assert_uint_eq(ops->machine, set->machine);
	for (size_t s = 0; s < arch_case_nsets; s++)
		if (s != (size_t)_i)
			ck_assert_uint_ne(arch_case_sets[s].machine, set->machine);
}
END_TEST

Suite *arch_suite(void)
{
	Suite *s = suite_create("arch");
	TCase *tc = tcase_create("sets");

	tcase_add_loop_test(tc, test_sets, 0, (int)arch_case_nsets);
	suite_add_tcase(s, tc);
	for (size_t i = 0; i < arch_case_nsets; i++) {
		const struct arch_case_set *set = &arch_case_sets[i];

		tc = tcase_create(set->arch);
		tcase_add_loop_test(tc, test_case, (int)set->first, (int)(set->first + set->count));
		suite_add_tcase(s, tc);
		if (set->tests)
			set->tests(s);
	}
	return s;
}
