// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_arch_caps.c - what each architecture declares it supports (enum
 * arch_cap): every declared capability has every hook and field it needs
 * (so removing one from an arch file fails here), the needs themselves are
 * checked by removing each hook from a copy, the matrix the three original
 * architectures declare, and the one-line refusals commands print.
 */
#include <check.h>
#include <elf.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "elfio/elfio.h"
#include "tests/check_suites.h"

/* Every table entry: its capabilities are complete. */
START_TEST(test_declared_complete)
{
	const struct arch_ops *a = arch_at((size_t)_i);

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_eq(arch_by_machine(a->machine), a);
	for (int k = 0; k < ARCH_CAP_COUNT; k++) {
		const char *w = arch_lacks(a, k);

		ck_assert_msg(!w, "%s declares %s but lacks %s", a->name, arch_cap_name(k), w);
	}
	ck_assert_ptr_null(arch_at(arch_count()));
}
END_TEST

/* The hooks and fields a capability may need, cleared one at a time. */
#define FIELD(f) { #f, offsetof(struct arch_ops, f), sizeof(((struct arch_ops *)0)->f) }
static const struct field {
	const char *name;
	size_t off, size;
} fields[] = {
	FIELD(insn_align), FIELD(call_len), FIELD(literal_size), FIELD(patch_nop_sizes),
	FIELD(abs64_reloc), FIELD(relative_reloc), FIELD(plt_entry_size), FIELD(align_reloc),
	FIELD(relax_reloc), FIELD(patch_points), FIELD(patch_point_len), FIELD(max_page_size),
	FIELD(decode), FIELD(patch_nop_at), FIELD(call_reloc_back), FIELD(plt_slot),
	FIELD(text_plt_slot), FIELD(local_entry), FIELD(entry_call_offset),
	FIELD(encode_nops), FIELD(encode_call), FIELD(nop_unit), FIELD(nop_name),
	FIELD(insn_len), FIELD(pcrel_decode), FIELD(pcrel_encode), FIELD(align_target),
	FIELD(align_padding), FIELD(mapping_symbol), FIELD(callops), FIELD(callops_site),
	FIELD(callops_disabled), FIELD(callops_tramp),
};
#define NFIELDS	(sizeof(fields) / sizeof(fields[0]))

static bool cleared(const struct arch_ops *a, const struct field *f, struct arch_ops *c)
{
	static const uint8_t zero[sizeof(struct arch_ops)];

	*c = *a;
	if (!memcmp((const uint8_t *)a + f->off, zero, f->size))
		return false;	/* not filled in: nothing to remove */
	memset((uint8_t *)c + f->off, 0, f->size);
	return true;
}

/*
 * Without one hook, a capability either does without it (x86_64's repad
 * has nothing to pad) or names that very hook as lacking: never another.
 */
START_TEST(test_clearing_names_the_hook)
{
	const struct arch_ops *a = arch_at((size_t)_i);
	struct arch_ops c;

	for (size_t f = 0; f < NFIELDS; f++) {
		if (!cleared(a, &fields[f], &c))
			continue;
		for (int k = 0; k < ARCH_CAP_COUNT; k++) {
			const char *w = arch_lacks(&c, k);

			ck_assert_msg(!w || !strcmp(w, fields[f].name),
				      "%s without %s: %s says it lacks %s", a->name, fields[f].name,
				      arch_cap_name(k), w);
		}
	}
}
END_TEST

/* ... and these are needed: the check is not empty. */
static const struct need {
	unsigned int machine;
	const char *field;
	enum arch_cap cap;
} needs[] = {
	{ EM_X86_64, "decode", ARCH_CAP_RECORD },
	{ EM_X86_64, "plt_slot", ARCH_CAP_AUDIT },
	{ EM_X86_64, "relative_reloc", ARCH_CAP_IN_PLACE },
	{ EM_X86_64, "callops_site", ARCH_CAP_EMBED },
	{ EM_X86_64, "callops_disabled", ARCH_CAP_EMBED },
	{ EM_X86_64, "max_page_size", ARCH_CAP_EMBED },
	{ EM_AARCH64, "nop_unit", ARCH_CAP_RECORD },
	{ EM_AARCH64, "pcrel_encode", ARCH_CAP_REPAD },
	{ EM_AARCH64, "mapping_symbol", ARCH_CAP_REPAD },
	{ EM_AARCH64, "callops_tramp", ARCH_CAP_EMBED },
	{ EM_AARCH64, "callops", ARCH_CAP_EMBED },
	{ EM_AARCH64, "max_page_size", ARCH_CAP_EMBED },
	{ EM_AARCH64, "encode_call", ARCH_CAP_EMBED },
	{ EM_RISCV, "align_target", ARCH_CAP_RECORD },
	{ EM_RISCV, "patch_point_len", ARCH_CAP_AUDIT },
	{ EM_RISCV, "insn_len", ARCH_CAP_REPAD },
	{ EM_RISCV, "align_padding", ARCH_CAP_REPAD },
	{ EM_RISCV, "align_reloc", ARCH_CAP_REPAD },
	{ EM_RISCV, "relax_reloc", ARCH_CAP_PIN },
	{ EM_RISCV, "callops_tramp", ARCH_CAP_EMBED },
	{ EM_RISCV, "callops_disabled", ARCH_CAP_EMBED },
	{ EM_RISCV, "max_page_size", ARCH_CAP_EMBED },
	{ EM_RISCV, "patch_points", ARCH_CAP_PIN },
	{ EM_PPC64, "text_plt_slot", ARCH_CAP_RECORD },
	{ EM_PPC64, "decode", ARCH_CAP_AUDIT },
	{ EM_PPC64, "relative_reloc", ARCH_CAP_IN_PLACE },
};

START_TEST(test_needed)
{
	const struct need *n = &needs[_i];
	const struct arch_ops *a = arch_by_machine(n->machine);
	const struct field *f = NULL;
	struct arch_ops c;

	for (size_t k = 0; k < NFIELDS; k++)
		if (!strcmp(fields[k].name, n->field))
			f = &fields[k];
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(f);
	ck_assert(arch_can(a, n->cap));
	ck_assert_msg(cleared(a, f, &c), "%s has no %s", a->name, n->field);
	ck_assert_str_eq(arch_lacks(&c, n->cap) ? arch_lacks(&c, n->cap) : "(nothing)", n->field);
	/* an undeclared capability asks for nothing */
	c.caps &= ~ARCH_CAN(n->cap);
	ck_assert_ptr_null(arch_lacks(&c, n->cap));
}
END_TEST

/* Capabilities that build on another. */
START_TEST(test_dependent)
{
	struct arch_ops c = arch_arm64;

	c.caps &= ~ARCH_CAN(ARCH_CAP_EMBED);
	ck_assert_str_eq(arch_lacks(&c, ARCH_CAP_RUNTIME), "the embed capability");
	c = arch_riscv64;
	c.caps &= ~ARCH_CAN(ARCH_CAP_RECORD);
	ck_assert_str_eq(arch_lacks(&c, ARCH_CAP_IN_PLACE), "the record capability");
	/* x86_64 declares repad with no hook to move code: it has nothing to pad */
	ck_assert(arch_can(&arch_x86_64, ARCH_CAP_REPAD));
	ck_assert_uint_eq(arch_x86_64.literal_size, 0);
	ck_assert_ptr_null(arch_x86_64.insn_len);
	ck_assert_ptr_null(arch_lacks(&arch_x86_64, ARCH_CAP_REPAD));
	c = arch_x86_64;
	c.literal_size = 8;
	ck_assert_str_eq(arch_lacks(&c, ARCH_CAP_REPAD), "insn_len");
}
END_TEST

/* What the three original architectures declare (README "Architectures"). */
START_TEST(test_matrix)
{
	const unsigned int scan = ARCH_CAN(ARCH_CAP_RECORD) | ARCH_CAN(ARCH_CAP_AUDIT) |
				  ARCH_CAN(ARCH_CAP_IN_PLACE) | ARCH_CAN(ARCH_CAP_REPAD);

	ck_assert_uint_eq(arch_x86_64.caps,
			  scan | ARCH_CAN(ARCH_CAP_EMBED) | ARCH_CAN(ARCH_CAP_RUNTIME));
	ck_assert_uint_eq(arch_arm64.caps,
			  scan | ARCH_CAN(ARCH_CAP_EMBED) | ARCH_CAN(ARCH_CAP_RUNTIME));
	ck_assert_uint_eq(arch_riscv64.caps, scan | ARCH_CAN(ARCH_CAP_PIN) |
			  ARCH_CAN(ARCH_CAP_EMBED) | ARCH_CAN(ARCH_CAP_RUNTIME));
	ck_assert_uint_eq(arch_powerpc64le.caps, ARCH_CAN(ARCH_CAP_RECORD) | ARCH_CAN(ARCH_CAP_AUDIT) |
						 ARCH_CAN(ARCH_CAP_IN_PLACE));
	ck_assert(!arch_can(NULL, ARCH_CAP_RECORD));
	ck_assert(!arch_can(&arch_arm64, ARCH_CAP_COUNT));
	ck_assert_str_eq(arch_cap_name(ARCH_CAP_IN_PLACE), "in-place");
	ck_assert_str_eq(arch_cap_command(ARCH_CAP_IN_PLACE), "record --in-place");
	ck_assert_str_eq(arch_cap_name(ARCH_CAP_COUNT), "?");
}
END_TEST

START_TEST(test_refusals)
{
	char why[256], want[256];
	size_t at;

	ck_assert_ptr_eq(arch_for(EM_AARCH64, elfio_machine_name(EM_AARCH64), ARCH_CAP_EMBED, why, sizeof(why)), &arch_arm64);
	ck_assert_ptr_eq(arch_for(EM_RISCV, elfio_machine_name(EM_RISCV), ARCH_CAP_EMBED, why, sizeof(why)), &arch_riscv64);
	ck_assert_ptr_null(arch_for(EM_PPC64, elfio_machine_name(EM_PPC64), ARCH_CAP_EMBED, why, sizeof(why)));
	ck_assert_str_eq(why, "embed is not supported on powerpc64le (patchsite arches lists what "
			 "each architecture supports)");
	ck_assert_ptr_null(arch_for(EM_X86_64, elfio_machine_name(EM_X86_64), ARCH_CAP_PIN, why, sizeof(why)));
	ck_assert_str_eq(why, "pin is not supported on x86_64 (patchsite arches lists what "
			 "each architecture supports)");

	/* an unknown machine: elfutils' name for it, and the table's architectures */
	ck_assert_ptr_null(arch_for(EM_SPARCV9, elfio_machine_name(EM_SPARCV9), ARCH_CAP_RECORD, why, sizeof(why)));
	at = (size_t)snprintf(want, sizeof(want), "(e_machine %u); patchsite handles ", EM_SPARCV9);
	for (size_t i = 0; i < arch_count(); i++)
		at += (size_t)snprintf(want + at, sizeof(want) - at, "%s%s",
				       !i ? "" : i + 1 < arch_count() ? ", " : " and ",
				       arch_at(i)->name);
	ck_assert_msg(!strncmp(why, "unsupported machine ", 20), "%s", why);
	ck_assert_msg(strlen(why) > strlen(want) &&
		      !strcmp(why + strlen(why) - strlen(want), want), "%s", why);
	ck_assert_ptr_nonnull(strstr(why, "x86_64, arm64"));

	/* a short buffer: cut, still a string */
	memset(why, 'x', sizeof(why));
	ck_assert_ptr_null(arch_for(EM_SPARCV9, elfio_machine_name(EM_SPARCV9), ARCH_CAP_RECORD, why, 30));
	ck_assert_uint_eq(strlen(why), 29);
	ck_assert_ptr_null(arch_for(EM_PPC64, elfio_machine_name(EM_PPC64), ARCH_CAP_EMBED, why, 0));
}
END_TEST

START_TEST(test_mapping_symbols)
{
	static const struct {
		const char *name;
		int common, riscv;
	} v[] = {
		{ "$x", ARCH_MAP_CODE, ARCH_MAP_CODE },
		{ "$d", ARCH_MAP_DATA, ARCH_MAP_DATA },
		{ "$x.cold", ARCH_MAP_CODE, ARCH_MAP_CODE },
		{ "$d.42", ARCH_MAP_DATA, ARCH_MAP_DATA },
		{ "$xrv64i2p1_c2p0", ARCH_MAP_NONE, ARCH_MAP_CODE },
		{ "$drv64", ARCH_MAP_NONE, ARCH_MAP_NONE },
		{ "$a", ARCH_MAP_NONE, ARCH_MAP_NONE },
		{ "$", ARCH_MAP_NONE, ARCH_MAP_NONE },
		{ "$xy", ARCH_MAP_NONE, ARCH_MAP_NONE },
		{ "x", ARCH_MAP_NONE, ARCH_MAP_NONE },
		{ "", ARCH_MAP_NONE, ARCH_MAP_NONE },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ck_assert_int_eq(arch_mapping_symbol(v[i].name), v[i].common);
		ck_assert_int_eq(arch_arm64.mapping_symbol(v[i].name), v[i].common);
		ck_assert_int_eq(arch_riscv64.mapping_symbol(v[i].name), v[i].riscv);
	}
	ck_assert(arch_is_patch_point(&arch_riscv64, "ftrace_call"));
	ck_assert(!arch_is_patch_point(&arch_riscv64, "ftrace_caller"));
	ck_assert(!arch_is_patch_point(&arch_x86_64, "ftrace_call"));
}
END_TEST

Suite *arch_caps_suite(void)
{
	Suite *s = suite_create("arch_caps");
	TCase *tc = tcase_create("declared");

	tcase_add_loop_test(tc, test_declared_complete, 0, (int)arch_count());
	tcase_add_loop_test(tc, test_clearing_names_the_hook, 0, (int)arch_count());
	tcase_add_loop_test(tc, test_needed, 0, (int)(sizeof(needs) / sizeof(needs[0])));
	tcase_add_test(tc, test_dependent);
	tcase_add_test(tc, test_matrix);
	suite_add_tcase(s, tc);
	tc = tcase_create("asked");
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_mapping_symbols);
	suite_add_tcase(s, tc);
	return s;
}
