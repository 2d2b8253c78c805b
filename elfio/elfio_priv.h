/* SPDX-License-Identifier: GPL-2.0-only */
/* elfio_priv.h - shared between the files of elfio/, not a public interface. */
#ifndef PATCHSITE_ELFIO_PRIV_H
#define PATCHSITE_ELFIO_PRIV_H

#include <gelf.h>

#include "elfio/elfio.h"

Elf *elfio_elf(struct elfio *e);
/* The descriptor elfio keeps open on the input (-1 for a decompressed copy). */
int elfio_fd(const struct elfio *e);

#endif
