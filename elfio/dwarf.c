// SPDX-License-Identifier: GPL-2.0-only
/*
 * dwarf.c - which compilation unit, built with which flags, holds an
 * address: DW_AT_name and DW_AT_producer of the CU, through libdw.
 *
 * Strategy: libdw on the Elf handle elfio already has open (so compressed
 * .debug_* sections and compressed modules come for free).  Address to CU
 * goes through dwarf_addrdie(), which uses .debug_aranges or, where a
 * compiler left them out, the CUs' own ranges.  In a relocatable object
 * libdw does not apply relocations, so addresses cannot be matched; an
 * object with a single CU (the usual .o) attributes everything to it.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

#include "elfio.h"
#include "elfio_priv.h"

struct elfio_dwarf {
	Dwarf *dw;
	bool single;		/* ET_REL with exactly one CU */
	Dwarf_Die single_cu;
};

struct elfio_dwarf *elfio_dwarf_open(struct elfio *e)
{
	struct elfio_dwarf *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->dw = dwarf_begin_elf(elfio_elf(e), DWARF_C_READ, NULL);
	if (!d->dw) {
		free(d);
		return NULL;	/* no DWARF: attribution is simply absent */
	}
	if (elfio_is_rel(e)) {
		Dwarf_Off off = 0, next;
		size_t hsize;
		int n = 0;
		while (n < 2 && dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			if (n == 0 && !dwarf_offdie(d->dw, off + hsize, &d->single_cu))
				break;
			n++;
			off = next;
		}
		d->single = n == 1;
	}
	return d;
}

void elfio_dwarf_close(struct elfio_dwarf *d)
{
	if (!d)
		return;
	dwarf_end(d->dw);
	free(d);
}

int elfio_dwarf_cu(struct elfio_dwarf *d, struct elfio *e, uint64_t addr, const char **name,
		   const char **producer)
{
	Dwarf_Die cu, *die = NULL;
	Dwarf_Attribute a;

	*name = *producer = NULL;
	if (!d)
		return -1;
	if (elfio_is_rel(e)) {
		if (!d->single)
			return -1;
		die = &d->single_cu;
	} else {
		die = dwarf_addrdie(d->dw, addr, &cu);
		if (!die)
			return -1;
	}
	*name = dwarf_formstring(dwarf_attr(die, DW_AT_name, &a));
	*producer = dwarf_formstring(dwarf_attr(die, DW_AT_producer, &a));
	return *name || *producer ? 0 : -1;
}
