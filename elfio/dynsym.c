// SPDX-License-Identifier: GPL-2.0-only
/*
 * dynsym.c - a shared object's dynamic symbols by name (and elfutils' name
 * of an ELF machine, for arch_for's message), for `patchsite
 * trace -p` (trace/inject.c), which finds dlopen in a running program's
 * libc and its own entry points in the tracer it loads.
 *
 * Strategy: libelf over the file (the section headers' SHT_DYNSYM, defined
 * STT_FUNC symbols only), and the first PT_LOAD's page so that the caller
 * can turn /proc/PID/maps' mapping of offset 0 into a load bias.
 */
#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "elfio/elfio.h"

/* the first PT_LOAD's address, page-aligned down (the load bias is the
   mapping at file offset 0 minus it), and a .dynsym symbol's value */
int elfio_dynsym_lookup(const char *path, const char *const *names, uint64_t *vals, int n,
			uint64_t *first_load)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = -ENOENT;
	Elf *e = NULL;
	Elf_Scn *scn = NULL;
	size_t phnum;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getphdrnum(e, &phnum))
		goto out;
	*first_load = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
			*first_load = ph.p_vaddr & ~(uint64_t)0xfff;
			break;
		}
	}
	for (int k = 0; k < n; k++)
		vals[k] = 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			nm = elf_strptr(e, sh.sh_link, s.st_name);
			for (int k = 0; nm && k < n; k++)
				if (!vals[k] && !strcmp(nm, names[k]))
					vals[k] = s.st_value;
		}
	}
	err = 0;
	for (int k = 0; k < n; k++)
		if (!vals[k])
			err = -ENOENT;
out:
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

/* elfutils' name for an ELF machine ("SPARC v9 64-bit"), or NULL. */
const char *elfio_machine_name(unsigned int machine)
{
	return dwelf_elf_e_machine_string((int)machine);
}
