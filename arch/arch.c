// SPDX-License-Identifier: GPL-2.0-only
/*
 * arch.c - run-time selection of the architecture from e_machine, in the
 * manner of elfutils' libebl machines[] table; what each architecture
 * supports, asked by the commands and held to its hooks (enum arch_cap);
 * and the profiling call targets every flavour of -pg/-mfentry uses.
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"

/* Every architecture: registering one is its line here. */
static const struct arch_ops *const arches[] = {
	&arch_x86_64,
	&arch_arm64,
	&arch_riscv64,
	&arch_powerpc64le,
};

#define NARCHES	(sizeof(arches) / sizeof(arches[0]))

const struct arch_ops *arch_by_machine(unsigned int machine)
{
	for (size_t i = 0; i < NARCHES; i++)
		if (arches[i]->machine == machine)
			return arches[i];
	return NULL;
}

size_t arch_count(void)
{
	return NARCHES;
}

const struct arch_ops *arch_at(size_t i)
{
	return i < NARCHES ? arches[i] : NULL;
}

static const struct {
	const char *name, *command;
} caps[ARCH_CAP_COUNT] = {
	[ARCH_CAP_RECORD]	= { "record", "record" },
	[ARCH_CAP_AUDIT]	= { "audit", "audit" },
	[ARCH_CAP_IN_PLACE]	= { "in-place", "record --in-place" },
	[ARCH_CAP_REPAD]	= { "repad", "repad" },
	[ARCH_CAP_PIN]		= { "pin", "pin" },
	[ARCH_CAP_EMBED]	= { "embed", "embed" },
	[ARCH_CAP_RUNTIME]	= { "runtime", "the runtime" },
};

bool arch_can(const struct arch_ops *a, enum arch_cap cap)
{
	return a && (unsigned int)cap < ARCH_CAP_COUNT && (a->caps & ARCH_CAN(cap));
}

const char *arch_cap_name(enum arch_cap cap)
{
	return (unsigned int)cap < ARCH_CAP_COUNT ? caps[cap].name : "?";
}

const char *arch_cap_command(enum arch_cap cap)
{
	return (unsigned int)cap < ARCH_CAP_COUNT ? caps[cap].command : "?";
}

const struct arch_ops *arch_for(unsigned int machine, const char *machine_name, enum arch_cap cap,
				char *why, size_t len)
{
	const struct arch_ops *a = arch_by_machine(machine);
	size_t at;

	if (a && arch_can(a, cap))
		return a;
	if (!len)
		return NULL;
	if (a) {
		snprintf(why, len, "%s is not supported on %s (patchsite arches lists what each "
			 "architecture supports)", arch_cap_command(cap), a->name);
		return NULL;
	}
	int w = snprintf(why, len, "unsupported machine %s (e_machine %u); patchsite handles ",
			 machine_name ? machine_name : "unknown", machine);
	at = w < 0 ? 0 : (size_t)w;
	for (size_t i = 0; i < NARCHES && at < len; i++) {
		const char *sep = !i ? "" : i + 1 < NARCHES ? ", " : " and ";
		w = snprintf(why + at, len - at, "%s%s", sep, arches[i]->name);
		at += w < 0 ? 0 : (size_t)w;
	}
	return NULL;
}

/*
 * The hooks and fields behind each capability, as the commands use them:
 * the first one a lacks, or NULL.
 */
#define NEED(cond, what)	do { if (!(cond)) return what; } while (0)

static const char *lacks_scan(const struct arch_ops *a)
{
	NEED(a->name && *a->name, "name");
	NEED(a->insn_align, "insn_align");
	NEED(a->call_len, "call_len");
	NEED(a->patch_nop_sizes, "patch_nop_sizes");
	NEED(a->decode, "decode");
	NEED(a->patch_nop_at, "patch_nop_at");
	NEED(a->call_reloc_back, "call_reloc_back");
	/* PLT code in .plt entries, or call stubs among the text (ppc64) */
	NEED(a->plt_slot || a->text_plt_slot, a->plt_entry_size ? "plt_slot" : "text_plt_slot");
	NEED(!a->plt_slot || a->plt_entry_size, "plt_entry_size");
	NEED(!a->plt_slot || a->plt_stride, "plt_stride");
	NEED(a->nop_unit, "nop_unit");
	NEED(a->nop_name, "nop_name");
	NEED(!a->align_reloc || a->align_target, "align_target");
	NEED(!a->patch_points || a->patch_point_len, "patch_point_len");
	return NULL;
}

static const char *lacks(const struct arch_ops *a, enum arch_cap cap)
{
	const char *w;

	switch (cap) {
	case ARCH_CAP_RECORD:
	case ARCH_CAP_AUDIT:
		return lacks_scan(a);
	case ARCH_CAP_IN_PLACE:
		/* writes the table that record finds */
		NEED(arch_can(a, ARCH_CAP_RECORD), "the record capability");
		NEED(a->relative_reloc, "relative_reloc");
		NEED(a->abs64_reloc, "abs64_reloc");
		return NULL;
	case ARCH_CAP_REPAD:
		if ((w = lacks_scan(a)))
			return w;
		if (!a->literal_size)
			return NULL;	/* nothing to pad: objects are left as they are */
		NEED(a->encode_nops, "encode_nops");
		NEED(a->insn_len, "insn_len");
		NEED(a->pcrel_decode, "pcrel_decode");
		NEED(a->pcrel_encode, "pcrel_encode");
		NEED(a->mapping_symbol, "mapping_symbol");
		if (!a->align_reloc && !a->relax_reloc)
			return NULL;
		/* the link relaxes: padding gets alignment relocations */
		NEED(a->align_reloc, "align_reloc");
		NEED(a->relax_reloc, "relax_reloc");
		NEED(a->align_target, "align_target");
		NEED(a->align_padding, "align_padding");
		return NULL;
	case ARCH_CAP_PIN:
		NEED(a->relax_reloc, "relax_reloc");
		NEED(a->patch_points && *a->patch_points, "patch_points");
		NEED(a->patch_point_len, "patch_point_len");
		NEED(a->call_reloc_back, "call_reloc_back");
		NEED(a->decode, "decode");
		return NULL;
	case ARCH_CAP_EMBED:
		if ((w = lacks_scan(a)))
			return w;
		NEED(a->encode_call, "encode_call");
		NEED(a->callops, "callops");
		NEED(a->callops->site_len && a->callops->site_len <= ARCH_CALLOPS_SITE_MAX &&
		     a->callops->site_back < a->callops->site_len, "callops->site_len");
		NEED(a->callops->tramp_size % 8 == 0 &&
		     (a->callops->tramp_size || a->callops->room_size), "callops->tramp_size");
		NEED(a->callops->area_n || a->callops->entry_calls || a->callops->entry_nop,
		     "callops->area_n");
		NEED(a->callops->call_slot && a->callops->call_slot <= 8, "callops->call_slot");
		NEED(a->callops_site, "callops_site");
		NEED(a->callops_disabled, "callops_disabled");
		NEED(a->callops_tramp || !a->callops->tramp_size, "callops_tramp");
		NEED(a->max_page_size && !(a->max_page_size & (a->max_page_size - 1)),
		     "max_page_size");
		return NULL;
	case ARCH_CAP_RUNTIME:
		/* the runtime attaches to what embed prepared */
		NEED(arch_can(a, ARCH_CAP_EMBED), "the embed capability");
		return NULL;
	case ARCH_CAP_COUNT:
		break;
	}
	return NULL;
}

const char *arch_lacks(const struct arch_ops *a, enum arch_cap cap)
{
	return arch_can(a, cap) ? lacks(a, cap) : NULL;
}

bool arch_is_patch_point(const struct arch_ops *a, const char *name)
{
	for (const char *const *p = a->patch_points; p && *p; p++)
		if (!strcmp(*p, name))
			return true;
	return false;
}

int arch_mapping_symbol(const char *name)
{
	if (name[0] != '$' || (name[1] != 'x' && name[1] != 'd') || (name[2] && name[2] != '.'))
		return ARCH_MAP_NONE;
	return name[1] == 'd' ? ARCH_MAP_DATA : ARCH_MAP_CODE;
}

/*
 * __fentry__: x86 -mfentry (at entry).  mcount: x86 -pg (glibc's name).
 * _mcount: arm64 and riscv64 -pg, and the kernel's name on those.
 */
const char *const arch_mcount_names[] = { "__fentry__", "mcount", "_mcount", NULL };

bool arch_is_mcount_name(const char *name)
{
	/* called for every symbol of a 100,000-symbol image: reject fast */
	if (name[0] != '_' && name[0] != 'm')
		return false;
	for (const char *const *n = arch_mcount_names; *n; n++)
		if (strcmp(*n, name) == 0)
			return true;
	return false;
}

bool arch_mcount_is_entry(const char *name)
{
	return strcmp(name, "__fentry__") == 0;
}
