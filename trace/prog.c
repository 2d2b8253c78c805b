// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace/prog.c - the program `patchsite trace` runs, read before it runs.
 *
 * Strategy: the file is mapped and read as ELF64 little-endian (every
 * architecture with a runtime is), one step at a time, each checked before
 * the next relies on it: the header, the program headers (the span of the
 * PT_LOADs, and the segment `patchsite embed` added, known by its magic at
 * its start), the site table in it, then .symtab (or .dynsym) for the
 * names of the functions.  A program's DT_NEEDED libraries are found as
 * the dynamic linker finds them (trace_prog_libs) and read the same way
 * when they carry the segment: a program without the segment, none of
 * whose libraries has it either, is refused here, before it runs (the
 * tracer would only say so on its stderr and trace nothing).  output.c
 * reads each library the tracer listed the same way, for its symbols.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfio/elfio.h"
#include "runtime/segment.h"
#include "trace/trace.h"

static int in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct trace_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->global != y->global)
		return y->global - x->global;	/* a global name first */
	return strcmp(x->name, y->name);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

const char *trace_prog_arch(const struct trace_prog *p)
{
	switch (p->machine) {
	case EM_X86_64:
		return "x86_64";
	case EM_AARCH64:
		return "aarch64";
	case EM_RISCV:
		return "riscv64";
	default:
		return NULL;
	}
}

/* the string at dynamic-string offset off (DT_STRTAB at file offset stroff, strsz long) */
static const char *dyn_str(const unsigned char *b, uint64_t size, uint64_t stroff, uint64_t strsz,
			   uint64_t off)
{
	const char *s, *end;

	if (!stroff || off >= strsz || !in_file(stroff, strsz, size))
		return NULL;
	s = (const char *)b + stroff + off;
	end = memchr(s, 0, strsz - off);
	return end && end != s ? s : NULL;
}

/* the file offset of vaddr (inside a PT_LOAD's file part), or 0 */
static uint64_t vaddr_off(const Elf64_Phdr *ph, unsigned n, uint64_t vaddr)
{
	for (unsigned i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr - ph[i].p_vaddr < ph[i].p_filesz)
			return ph[i].p_offset + (vaddr - ph[i].p_vaddr);
	return 0;
}

/* DT_NEEDED and DT_RUNPATH (else DT_RPATH) into p; -ENOMEM or 0 */
static int read_needed(struct trace_prog *p, const unsigned char *b, uint64_t size,
		       const Elf64_Phdr *ph, unsigned nph)
{
	const Elf64_Dyn *dyn = NULL;
	uint64_t ndyn = 0, strtab = 0, strsz = 0, stroff;
	const char *rp = NULL, *rpath = NULL;

	for (unsigned i = 0; i < nph; i++)
		if (ph[i].p_type == PT_DYNAMIC && in_file(ph[i].p_offset, ph[i].p_filesz, size) &&
		    ph[i].p_offset % 8 == 0) {
			dyn = (const Elf64_Dyn *)(b + ph[i].p_offset);
			ndyn = ph[i].p_filesz / sizeof(*dyn);
		}
	for (uint64_t k = 0; k < ndyn && dyn[k].d_tag != DT_NULL; k++) {
		if (dyn[k].d_tag == DT_STRTAB)
			strtab = dyn[k].d_un.d_ptr;
		else if (dyn[k].d_tag == DT_STRSZ)
			strsz = dyn[k].d_un.d_val;
	}
	stroff = strtab ? vaddr_off(ph, nph, strtab) : 0;
	for (uint64_t k = 0; k < ndyn && dyn[k].d_tag != DT_NULL; k++) {
		const char *s = dyn_str(b, size, stroff, strsz, dyn[k].d_un.d_val);

		if (!s)
			continue;
		if (dyn[k].d_tag == DT_RUNPATH)
			rp = s;
		else if (dyn[k].d_tag == DT_RPATH)
			rpath = s;
		else if (dyn[k].d_tag == DT_NEEDED) {
			size_t cap = p->nneeded;

			if (elfio_grow(&p->needed, &cap, p->nneeded + 1, sizeof(*p->needed)) ||
			    !(p->needed[p->nneeded] = elfio_strdup(s)))
				return -ENOMEM;
			p->nneeded++;
		}
	}
	if ((rp || rpath) && !(p->runpath = elfio_strdup(rp ? rp : rpath)))
		return -ENOMEM;
	return 0;
}

int trace_prog_open(struct trace_prog *p, const char *path)
{
	return trace_prog_open_as(p, path, 0);
}

/* What trace_prog_open_as's steps share: the mapped file and what was found in it. */
struct prog_file {
	const char *path;	/* as given (messages) */
	int flags;		/* TRACE_PROG_* */
	char real[PATH_MAX];
	int fd;
	const unsigned char *b;	/* the file, mapped, or MAP_FAILED */
	uint64_t size;
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	const struct ps_seg_header *seg;	/* the embedded segment's header, or NULL */
	uint64_t seg_off, seg_vaddr, seg_filesz;
	uint64_t *sites;	/* the sites' functions, sorted (p->nsites) */
	const Elf64_Shdr *tab, *str;	/* the symbol table and its names */
};

/*
 * The file by its real path, a regular file (executable for a program),
 * mapped.  0 or -errno said.
 */
static int prog_map(struct prog_file *f)
{
	struct stat st;

	if (!realpath(f->path, f->real) || (f->fd = open(f->real, O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(f->fd, &st) < 0) {
		int err = -errno;

		elfio_error(f->path, "%s", strerror(errno));
		return err;
	}
	if (!S_ISREG(st.st_mode) || (!(f->flags & TRACE_PROG_LIB) && access(f->real, X_OK))) {
		elfio_error(f->path, "not an executable file");
		return -EACCES;
	}
	f->size = (uint64_t)st.st_size;
	if (f->size < sizeof(Elf64_Ehdr) ||
	    (f->b = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, f->fd, 0)) == MAP_FAILED) {
		elfio_error(f->path, "not an ELF file");
		return -ENOEXEC;
	}
	return 0;
}

/*
 * An ELF64 little-endian program of a machine with a runtime; its program
 * headers.  0 or -ENOEXEC said.
 */
static int prog_header(struct trace_prog *p, struct prog_file *f)
{
	const Elf64_Ehdr *eh = f->eh = (const Elf64_Ehdr *)f->b;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB) {
		elfio_error(f->path, "not a 64-bit little-endian ELF file (no runtime for it)");
		return -ENOEXEC;
	}
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) {
		elfio_error(f->path, "not a program (ELF type %u)", eh->e_type);
		return -ENOEXEC;
	}
	p->machine = eh->e_machine;
	if (!trace_prog_arch(p)) {
		elfio_error(f->path, "machine %u: no runtime for it (x86_64, arm64, riscv64)",
			    p->machine);
		return -ENOEXEC;
	}
	if (eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !in_file(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), f->size) ||
	    eh->e_phoff % 8) {
		elfio_error(f->path, "bad program headers");
		return -ENOEXEC;
	}
	f->ph = (const Elf64_Phdr *)(f->b + eh->e_phoff);
	return 0;
}

/*
 * The span of the PT_LOADs (p->lo page aligned, p->hi), and the segment
 * `patchsite embed` added, known by its magic.  0 or -ENOEXEC said.
 */
static int prog_loads(struct trace_prog *p, struct prog_file *f)
{
	const Elf64_Phdr *ph = f->ph;

	p->lo = UINT64_MAX;
	for (unsigned i = 0; i < f->eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_vaddr < p->lo)
			p->lo = ph[i].p_vaddr;
		if (ph[i].p_vaddr + ph[i].p_memsz > p->hi)
			p->hi = ph[i].p_vaddr + ph[i].p_memsz;
		if (ph[i].p_filesz >= sizeof(*f->seg) &&
		    in_file(ph[i].p_offset, ph[i].p_filesz, f->size) && ph[i].p_offset % 8 == 0 &&
		    ((const struct ps_seg_header *)(f->b + ph[i].p_offset))->magic ==
			    PS_SEG_MAGIC) {
			f->seg = (const struct ps_seg_header *)(f->b + ph[i].p_offset);
			f->seg_off = ph[i].p_offset;
			f->seg_vaddr = ph[i].p_vaddr;
			f->seg_filesz = ph[i].p_filesz;
		}
	}
	if (p->lo == UINT64_MAX) {
		elfio_error(f->path, "no PT_LOAD segment");
		return -ENOEXEC;
	}
	p->lo &= ~(uint64_t)0xfff;
	return 0;
}

/*
 * A program's libraries (read_needed); the segment, which a program must
 * have unless TRACE_PROG_ANY, and its site table inside it.  0 or -errno
 * said.
 */
static int prog_segment(struct trace_prog *p, struct prog_file *f)
{
	const struct ps_seg_header *seg = f->seg;

	if (!(f->flags & TRACE_PROG_LIB) && read_needed(p, f->b, f->size, f->ph, f->eh->e_phnum)) {
		elfio_error(f->path, "out of memory");
		return -ENOMEM;
	}
	if (!seg && !(f->flags & TRACE_PROG_ANY)) {
		elfio_error(f->path, "not embedded: run 'patchsite embed %s -o OUT' first",
			    f->path);
		return -ENODEV;
	}
	p->embedded = seg != NULL;
	if (seg && (seg->sites < f->seg_vaddr ||
		    seg->count > f->seg_filesz / sizeof(struct ps_site) ||
		    !in_file(seg->sites - f->seg_vaddr, seg->count * sizeof(struct ps_site),
			     f->seg_filesz))) {
		elfio_error(f->path, "the embedded segment's site table is out of bounds");
		return -ENOEXEC;
	}
	return 0;	/* without the segment: names only (its libraries may be embedded) */
}

/* The sites' functions, sorted, for prog_names to look up. 0 or -ENOMEM said. */
static int prog_sites(struct trace_prog *p, struct prog_file *f)
{
	const struct ps_seg_header *seg = f->seg;

	f->sites = elfio_calloc(seg && seg->count ? seg->count : 1, sizeof(*f->sites));
	if (!f->sites) {
		elfio_error(f->path, "out of memory for %llu sites",
			    (unsigned long long)(seg ? seg->count : 0));
		return -ENOMEM;
	}
	for (uint64_t i = 0; seg && i < seg->count; i++)
		f->sites[i] = ((const struct ps_site *)(f->b + f->seg_off +
							(seg->sites - f->seg_vaddr)))[i].func;
	p->nsites = seg ? seg->count : 0;
	qsort(f->sites, p->nsites, sizeof(*f->sites), u64_cmp);
	return 0;
}

/* The symbol table for the names: .symtab, else .dynsym; its strings. 0 or -ENOEXEC said. */
static int prog_symtab(struct prog_file *f)
{
	const Elf64_Ehdr *eh = f->eh;
	const Elf64_Shdr *sh;

	if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), f->size) ||
	    eh->e_shoff % 8) {
		elfio_error(f->path, "bad section headers");
		return -ENOEXEC;
	}
	sh = (const Elf64_Shdr *)(f->b + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum && !f->tab; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			f->tab = &sh[i];
	for (unsigned i = 0; i < eh->e_shnum && !f->tab; i++)
		if (sh[i].sh_type == SHT_DYNSYM)
			f->tab = &sh[i];
	if (!f->tab) {
		elfio_error(f->path, "no .symtab or .dynsym: its functions have no names to "
			    "trace by");
		return -ENOEXEC;
	}
	if (f->tab->sh_link >= eh->e_shnum ||
	    !in_file(f->tab->sh_offset, f->tab->sh_size, f->size) || f->tab->sh_offset % 8) {
		elfio_error(f->path, "bad symbol table");
		return -ENOEXEC;
	}
	f->str = &sh[f->tab->sh_link];
	if (f->str->sh_type != SHT_STRTAB ||
	    !in_file(f->str->sh_offset, f->str->sh_size, f->size)) {
		elfio_error(f->path, "bad symbol string table");
		return -ENOEXEC;
	}
	return 0;
}

/*
 * The defined, named functions, sorted by address, each marked when it is
 * a site.  0 or -ENOMEM said.
 */
static int prog_names(struct trace_prog *p, struct prog_file *f)
{
	const Elf64_Sym *sy = (const Elf64_Sym *)(f->b + f->tab->sh_offset);
	const Elf64_Shdr *str = f->str;
	size_t n = f->tab->sh_size / sizeof(Elf64_Sym);

	p->syms = elfio_calloc(n ? n : 1, sizeof(*p->syms));
	if (!p->syms) {
		elfio_error(f->path, "out of memory for %zu symbols", n);
		return -ENOMEM;
	}
	for (size_t k = 0; k < n; k++) {
		const char *nm, *end;
		struct trace_sym *s;

		if (ELF64_ST_TYPE(sy[k].st_info) != STT_FUNC || sy[k].st_shndx == SHN_UNDEF ||
		    !sy[k].st_value || !sy[k].st_name || sy[k].st_name >= str->sh_size)
			continue;
		nm = (const char *)f->b + str->sh_offset + sy[k].st_name;
		end = memchr(nm, 0, str->sh_size - sy[k].st_name);
		if (!end || end == nm)
			continue;
		s = &p->syms[p->nsyms];
		s->name = elfio_strdup(nm);
		if (!s->name) {
			elfio_error(f->path, "out of memory for names");
			return -ENOMEM;
		}
		p->nsyms++;
		s->addr = sy[k].st_value;
		s->size = sy[k].st_size;
		s->global = ELF64_ST_BIND(sy[k].st_info) != STB_LOCAL;
		s->site = bsearch(&s->addr, f->sites, p->nsites, sizeof(*f->sites),
				  u64_cmp) != NULL;
	}
	qsort(p->syms, p->nsyms, sizeof(*p->syms), sym_cmp);
	return 0;
}

int trace_prog_open_as(struct trace_prog *p, const char *path, int flags)
{
	struct prog_file f = { .path = path, .flags = flags, .fd = -1, .b = MAP_FAILED };
	int err;

	memset(p, 0, sizeof(*p));
	if ((err = prog_map(&f)) || (err = prog_header(p, &f)) || (err = prog_loads(p, &f)) ||
	    (err = prog_segment(p, &f)) || (err = prog_sites(p, &f)) || (err = prog_symtab(&f)) ||
	    (err = prog_names(p, &f)))
		goto out;
	p->path = elfio_strdup(f.real);
	if (!p->path) {
		elfio_error(path, "out of memory");
		err = -ENOMEM;
	}
out:
	elfio_free(f.sites);
	if (f.b != MAP_FAILED)
		munmap((void *)f.b, f.size);
	if (f.fd >= 0)
		close(f.fd);
	if (err)
		trace_prog_free(p);
	return err;
}

void trace_prog_free(struct trace_prog *p)
{
	for (size_t i = 0; i < p->nsyms; i++)
		elfio_free(p->syms[i].name);
	elfio_free(p->syms);
	elfio_free(p->path);
	for (size_t i = 0; i < p->nneeded; i++)
		elfio_free(p->needed[i]);
	elfio_free(p->needed);
	elfio_free(p->runpath);
	for (size_t i = 0; i < p->nlibs; i++)
		trace_prog_free(&p->libs[i]);
	elfio_free(p->libs);
	memset(p, 0, sizeof(*p));
}

/* path is an ELF64 shared library with the segment `patchsite embed` adds
   (read quietly: most libraries a program links are not) */
static int lib_embedded(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	struct ps_seg_header h;
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_DYN ||
	    eh.e_phentsize != sizeof(ph)) {
		close(fd);
		return 0;
	}
	for (unsigned i = 0; i < eh.e_phnum && !found; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
			break;
		found = ph.p_type == PT_LOAD && ph.p_filesz >= sizeof(h) &&
			pread(fd, &h, sizeof(h), (off_t)ph.p_offset) == (ssize_t)sizeof(h) &&
			h.magic == PS_SEG_MAGIC;
	}
	close(fd);
	return found;
}

/* name found in the directories of list (':'-separated; $ORIGIN is origin)
   under sysroot into out[cap]: 1, or 0 */
static int find_in_dirs(const char *list, const char *origin, const char *sysroot,
			const char *name, char *out, size_t cap)
{
	while (list && *list) {
		size_t n = strcspn(list, ":");
		char dir[PATH_MAX];
		const char *o = strstr(list, "$ORIGIN");
		int w;

		if (o && o < list + n)
			w = snprintf(dir, sizeof(dir), "%.*s%s%.*s", (int)(o - list), list, origin,
				     (int)(list + n - o - 7), o + 7);
		else
			w = snprintf(dir, sizeof(dir), "%.*s", (int)n, list);
		if (w > 0 && (size_t)w < sizeof(dir) && n) {
			w = snprintf(out, cap, "%s%s/%s", dir[0] == '/' && !o ? sysroot : "", dir, name);
			if (w > 0 && (size_t)w < cap && access(out, F_OK) == 0)
				return 1;
		}
		list += n;
		if (*list)
			list++;
	}
	return 0;
}

int trace_prog_libs(struct trace_prog *p, const char *sysroot)
{
	char origin[PATH_MAX], sys[PATH_MAX], found[PATH_MAX];
	const char *slash = strrchr(p->path, '/');
	size_t cap = 0;

	snprintf(origin, sizeof(origin), "%.*s", slash ? (int)(slash - p->path) : 0, p->path);
	snprintf(sys, sizeof(sys), "/lib/%s-linux-gnu:/usr/lib/%s-linux-gnu:/lib64:/usr/lib64:/lib:"
		 "/usr/lib:/usr/local/lib", trace_prog_arch(p), trace_prog_arch(p));
	for (size_t i = 0; i < p->nneeded; i++) {
		const char *name = p->needed[i];
		int ok;

		if (strchr(name, '/'))
			ok = snprintf(found, sizeof(found), "%s", name) < (int)sizeof(found);
		else
			ok = find_in_dirs(getenv("LD_LIBRARY_PATH"), origin, "", name, found,
					  sizeof(found)) ||
			     find_in_dirs(p->runpath, origin, sysroot, name, found, sizeof(found)) ||
			     find_in_dirs(sys, origin, sysroot, name, found, sizeof(found));
		if (!ok || !lib_embedded(found))
			continue;
		if (elfio_grow(&p->libs, &cap, p->nlibs + 1, sizeof(*p->libs)))
			return -ENOMEM;
		if (trace_prog_open_as(&p->libs[p->nlibs], found, TRACE_PROG_LIB) == 0)
			p->nlibs++;
	}
	return 0;
}
