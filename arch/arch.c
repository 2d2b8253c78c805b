// SPDX-License-Identifier: GPL-2.0-only
/*
 * arch.c - run-time selection of the architecture from e_machine, in the
 * manner of elfutils' libebl machines[] table, and the profiling call
 * targets every flavour of -pg/-mfentry uses.
 */
#include <elf.h>
#include <string.h>

#include "arch.h"

static const struct arch_ops *const arches[] = {
	&arch_x86_64,
	&arch_arm64,
	&arch_riscv64,
	&arch_powerpc64le,
};

const struct arch_ops *arch_by_machine(unsigned int machine)
{
	for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (arches[i]->machine == machine)
			return arches[i];
	return NULL;
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
