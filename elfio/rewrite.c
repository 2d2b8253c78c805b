// SPDX-License-Identifier: GPL-2.0-only
/*
 * rewrite.c - the one way patchsite writes a changed image: a model of the
 * open image's sections and segments, changed by the commands and
 * committed once, atomically.
 *
 * Strategy: a rewrite starts as the image elfio has open (never the file
 * opened again by path: what was validated is what is written) and records
 * changes of three kinds:
 *
 *  - byte patches at file offsets (a table's slots, a relocation entry, a
 *    site's instructions).  The layout does not change: the output is the
 *    input copied (copy_file_range) with the patches written on top;
 *  - new contents or header fields of existing sections, in a relocatable
 *    object (repad grows text, relocation, symbol and DWARF sections).  An
 *    ET_REL has no program headers, so libelf lays the output out anew
 *    (ELF_C_WRITE on a memfd), each section at the next offset its
 *    alignment allows, as the assembler's output is laid out;
 *  - in a linked image, a new loadable segment and sections that cover it
 *    (embed).  Nothing loaded moves: the new bytes go after the last byte
 *    of the input, the segment at an offset congruent to its address modulo
 *    its alignment, then a grown .shstrtab and the section header table;
 *    the segment's program header takes over the PT_NOTE entry, moved
 *    behind the last PT_LOAD so that the PT_LOADs stay sorted.  Every added
 *    byte is covered by a section header (the old .shstrtab and header table
 *    stay where they were, unreferenced).
 *
 * All three end in elfio_write_edited_check()/elfio_write_file_atomic():
 * a temporary beside the target, the mode kept, fsync, an optional
 * read-back check, rename; on any failure the target is untouched.  Byte
 * patches can instead go into the image itself (elfio_rw_commit_in_place,
 * journal.c: an undo journal beside it, no copy), as `record --in-place`
 * does at every kernel link.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfio/elfio.h"
#include "elfio/elfio_priv.h"

struct rw_sec {
	GElf_Shdr shdr;		/* as it will be written, once set */
	const void *data;	/* new contents (the caller's, valid until commit), or NULL */
	size_t size;
	bool shdr_set;		/* shdr replaces the input's */
	bool changed;		/* shdr or data differ from the input's */
};

struct elfio_rw {
	struct elfio *e;
	struct rw_sec *secs;	/* the input's sections, by index */
	size_t nsec;
	struct elfio_edits patches;
	/* sections with bytes in the file, by offset, for rw_patch's owner
	   check (built at the first patch); maxend[i]: the largest end of
	   byoff[0..i], so that a search finds sections that overlap */
	struct elfio_section **byoff;
	uint64_t *maxend;
	size_t nbyoff;
	bool relayout;		/* an ET_REL section changed: libelf lays it out */

	/* linked images: the appended segment and its sections */
	bool placed, has_seg;
	GElf_Phdr seg;		/* p_offset, p_vaddr, p_filesz, p_align from placing */
	const void *seg_data;
	struct rw_new {
		char *name;
		GElf_Shdr shdr;	/* sh_offset relative to the segment's start */
	} *added;
	size_t nadded, added_cap;
};

struct elfio_rw *elfio_rw_new(struct elfio *e)
{
	struct elfio_rw *w = elfio_calloc(1, sizeof(*w));

	if (!w)
		goto oom;
	w->e = e;
	w->nsec = elfio_nsections(e);
	w->secs = elfio_calloc(w->nsec ? w->nsec : 1, sizeof(*w->secs));
	if (!w->secs)
		goto oom;
	for (size_t i = 1; i < w->nsec; i++)
		w->secs[i].shdr = elfio_section(e, i)->shdr;
	elfio_edits_init(&w->patches);
	return w;
oom:
	elfio_err(e, "out of memory for a rewrite");
	if (w)
		elfio_free(w->secs);
	elfio_free(w);
	return NULL;
}

void elfio_rw_free(struct elfio_rw *w)
{
	if (!w)
		return;
	elfio_edits_free(&w->patches);
	elfio_free(w->byoff);
	elfio_free(w->maxend);
	for (size_t i = 0; i < w->nadded; i++)
		elfio_free(w->added[i].name);
	elfio_free(w->added);
	elfio_free(w->secs);
	elfio_free(w);
}

static int by_offset(const void *a, const void *b)
{
	const struct elfio_section *x = *(struct elfio_section *const *)a;
	const struct elfio_section *y = *(struct elfio_section *const *)b;

	if (x->shdr.sh_offset != y->shdr.sh_offset)
		return x->shdr.sh_offset < y->shdr.sh_offset ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static bool has_file_bytes(const struct elfio_section *s)
{
	return s->shdr.sh_type != SHT_NOBITS && s->shdr.sh_type != SHT_NULL && s->shdr.sh_size;
}

/* the sections with bytes in the file, sorted by offset: 0 or -ENOMEM */
static int index_by_offset(struct elfio_rw *w)
{
	struct elfio_section *s;
	size_t n = 0;

	for_each_section(w->e, s)
		n += has_file_bytes(s);
	w->byoff = elfio_calloc(n ? n : 1, sizeof(*w->byoff));
	w->maxend = elfio_calloc(n ? n : 1, sizeof(*w->maxend));
	if (!w->byoff || !w->maxend)
		return -ENOMEM;
	for_each_section(w->e, s)
		if (has_file_bytes(s))
			w->byoff[w->nbyoff++] = s;
	qsort(w->byoff, w->nbyoff, sizeof(*w->byoff), by_offset);
	for (size_t i = 0; i < w->nbyoff; i++) {
		const Elf64_Shdr *h = &w->byoff[i]->shdr;
		uint64_t end = h->sh_offset + h->sh_size;	/* within the file: checked at open */

		w->maxend[i] = i && w->maxend[i - 1] > end ? w->maxend[i - 1] : end;
	}
	return 0;
}

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/*
 * A byte patch changes one section's bytes and nothing else: not the ELF
 * header, the program or section headers, nor a second section that a
 * hostile header lays over the same bytes (a table "at" the section
 * headers would otherwise be written over them, and the image broken).
 * 0, or -EINVAL said.
 */
static int patch_owner(struct elfio_rw *w, uint64_t off, size_t len)
{
	const Elf64_Ehdr *eh = elfio_ehdr(w->e);
	const char *hdr = NULL;

	if (overlaps(off, len, 0, eh->e_ehsize))
		hdr = "the ELF header";
	else if (overlaps(off, len, eh->e_phoff, (uint64_t)eh->e_phnum * eh->e_phentsize))
		hdr = "the program header table";
	else if (overlaps(off, len, eh->e_shoff, (uint64_t)elfio_nsections(w->e) * eh->e_shentsize))
		hdr = "the section header table";
	if (hdr) {
		elfio_err(w->e, "a write of %zu bytes at offset 0x%" PRIx64 " would change %s; "
			  "nothing written", len, off, hdr);
		return -EINVAL;
	}
	if (!w->byoff && index_by_offset(w)) {
		elfio_err(w->e, "out of memory for a rewrite");
		return -ENOMEM;
	}
	/* the first section that starts past off; then back while one may reach it */
	size_t lo = BOUND_BY(w->nbyoff, m, w->byoff[m]->shdr.sh_offset, off, true);
	const struct elfio_section *own = NULL, *other = NULL;
	for (size_t i = lo; i-- > 0 && w->maxend[i] > off;) {
		const Elf64_Shdr *h = &w->byoff[i]->shdr;
		if (overlaps(off, len, h->sh_offset, h->sh_size))
			*(own ? &other : &own) = w->byoff[i];
	}
	for (size_t i = lo; i < w->nbyoff && w->byoff[i]->shdr.sh_offset < off + len; i++)
		*(own ? &other : &own) = w->byoff[i];
	if (!own || other || off < own->shdr.sh_offset ||
	    off + len > own->shdr.sh_offset + own->shdr.sh_size) {
		if (other && other->index < own->index) {
			const struct elfio_section *t = own;
			own = other;
			other = t;
		}
		if (other)
			elfio_err(w->e, "a write of %zu bytes at offset 0x%" PRIx64 " would change "
				  "sections %zu '%s' and %zu '%s', which share bytes in the file; "
				  "nothing written", len, off, own->index, own->name, other->index,
				  other->name);
		else
			elfio_err(w->e, "a write of %zu bytes at offset 0x%" PRIx64 " is not within "
				  "one section's bytes; nothing written", len, off);
		return -EINVAL;
	}
	return 0;
}

int elfio_rw_patch(struct elfio_rw *w, uint64_t off, const void *bytes, size_t len)
{
	int ret;

	if (off > elfio_file_size(w->e) || len > elfio_file_size(w->e) - off) {
		elfio_err(w->e, "a patch of %zu bytes at offset 0x%" PRIx64 " is past the end of "
			  "the file", len, off);
		return -ERANGE;
	}
	if ((ret = patch_owner(w, off, len)))
		return ret;
	if (elfio_edits_add(&w->patches, off, bytes, len)) {
		elfio_err(w->e, "out of memory for a patch");
		return -ENOMEM;
	}
	return 0;
}

int elfio_rw_patch_addr(struct elfio_rw *w, uint64_t addr, const void *bytes, size_t len)
{
	struct elfio_section *s, *other;
	int ret = elfio_addr_owner(w->e, addr, len, &s, &other);

	if (ret == -EEXIST) {
		elfio_err(w->e, "address 0x%" PRIx64 " (%zu bytes) is both section %zu '%s' and "
			  "section %zu '%s'; nothing written", addr, len, s->index, s->name,
			  other->index, other->name);
		return -EINVAL;
	}
	if (ret) {
		elfio_err(w->e, "address 0x%" PRIx64 " (%zu bytes) is not in a section's bytes", addr,
			  len);
		return -ERANGE;
	}
	return elfio_rw_patch(w, s->shdr.sh_offset + (addr - s->addr), bytes, len);
}

static int check_index(struct elfio_rw *w, size_t idx)
{
	if (idx == 0 || idx >= w->nsec) {
		elfio_err(w->e, "no section %zu to rewrite", idx);
		return -EINVAL;
	}
	if (!elfio_is_rel(w->e)) {
		elfio_err(w->e, "section %zu: only a relocatable object's sections are laid out "
			  "anew", idx);
		return -EINVAL;
	}
	return 0;
}

int elfio_rw_set_shdr(struct elfio_rw *w, size_t idx, const GElf_Shdr *sh)
{
	int ret = check_index(w, idx);

	if (ret)
		return ret;
	w->secs[idx].shdr = *sh;
	w->secs[idx].shdr_set = true;
	w->secs[idx].changed = true;
	w->relayout = true;
	return 0;
}

int elfio_rw_set_data(struct elfio_rw *w, size_t idx, const void *data, size_t size)
{
	int ret = check_index(w, idx);

	if (ret)
		return ret;
	w->secs[idx].data = data;
	w->secs[idx].size = size;
	w->secs[idx].changed = true;
	w->relayout = true;
	return 0;
}

const GElf_Shdr *elfio_rw_shdr(struct elfio_rw *w, size_t idx)
{
	if (!idx || idx >= w->nsec)
		return NULL;
	if (!w->secs[idx].shdr_set) {
		Elf_Scn *scn = elf_getscn(elfio_elf(w->e), idx);
		if (!scn || !gelf_getshdr(scn, &w->secs[idx].shdr))
			return NULL;
	}
	return &w->secs[idx].shdr;
}

int elfio_rw_place_segment(struct elfio_rw *w, uint64_t size, uint64_t align, uint64_t min_addr,
			   uint64_t *off, uint64_t *addr)
{
	uint64_t len = elfio_file_size(w->e), o = (len + 15) & ~15ull;

	if (elfio_is_rel(w->e) || w->placed || !align || (align & (align - 1)) ||
	    min_addr > UINT64_MAX - 2 * align || o < len) {
		elfio_err(w->e, "cannot place a segment here (one, in a linked image, aligned to a "
			  "power of two)");
		return -EINVAL;
	}
	w->seg.p_type = PT_LOAD;
	w->seg.p_offset = o;
	w->seg.p_vaddr = w->seg.p_paddr = ((min_addr + align - 1) & ~(align - 1)) + o % align;
	w->seg.p_filesz = w->seg.p_memsz = size;
	w->seg.p_align = align;
	w->placed = true;
	*off = o;
	*addr = w->seg.p_vaddr;
	return 0;
}

int elfio_rw_add_segment(struct elfio_rw *w, uint32_t flags, const void *data)
{
	if (!w->placed || w->has_seg) {
		elfio_err(w->e, "a segment must be placed, once, before it is added");
		return -EINVAL;
	}
	w->seg.p_flags = flags;
	w->seg_data = data;
	w->has_seg = true;
	return 0;
}

int elfio_rw_add_section(struct elfio_rw *w, const char *name, const GElf_Shdr *sh)
{
	if (!w->has_seg || sh->sh_offset > w->seg.p_filesz ||
	    sh->sh_size > w->seg.p_filesz - sh->sh_offset ||
	    sh->sh_addr != w->seg.p_vaddr + sh->sh_offset) {
		elfio_err(w->e, "section '%s' is not inside the added segment", name);
		return -EINVAL;
	}
	if (elfio_grow(&w->added, &w->added_cap, w->nadded + 1, sizeof(*w->added)))
		goto oom;
	w->added[w->nadded].name = elfio_strdup(name);
	if (!w->added[w->nadded].name)
		goto oom;
	w->added[w->nadded].shdr = *sh;
	w->nadded++;
	return 0;
oom:
	elfio_err(w->e, "out of memory for a new section");
	return -ENOMEM;
}

/* --- ET_REL: libelf lays the object out ------------------------------------ */

static int build_rel(struct elfio_rw *w, Elf *out)
{
	Elf *in = elfio_elf(w->e);
	GElf_Ehdr eh = *elfio_ehdr(w->e);
	size_t shstrndx;

	/*
	 * errno: libelf's allocations set it when they fail, and elf_newscn
	 * hands back a section without a header when its header's failed.
	 */
	errno = 0;
	if (!gelf_newehdr(out, ELFCLASS64) || elf_getshdrstrndx(in, &shstrndx))
		goto libelf_err;
	for (size_t i = 1; i < w->nsec; i++) {
		Elf_Scn *is = elf_getscn(in, i), *os = elf_newscn(out);
		struct rw_sec *rs = &w->secs[i];
		GElf_Shdr sh;
		Elf_Data *id, *od;

		/* the live header unless replaced: it agrees with the data libelf
		   hands back (a section decompressed in place says so) */
		if (!is || !os || errno == ENOMEM || !gelf_getshdr(is, &sh))
			goto libelf_err;
		if (rs->shdr_set)
			sh = rs->shdr;
		if (elf_ndxscn(os) != i) {
			elfio_err(w->e, "section numbering changed while copying");
			return -EINVAL;
		}
		id = elf_getdata(is, NULL);
		if (id && elf_getdata(is, id)) {
			elfio_err(w->e, "section %zu has more than one data block", i);
			return -EINVAL;
		}
		od = elf_newdata(os);
		if (!od || errno == ENOMEM)
			goto libelf_err;
		if (id) {
			od->d_type = id->d_type;
			od->d_size = id->d_size;
			od->d_buf = id->d_buf;
		} else {
			od->d_type = ELF_T_BYTE;
			od->d_size = sh.sh_type == SHT_NOBITS ? sh.sh_size : 0;
		}
		if (rs->data && id) {
			od->d_buf = (void *)rs->data;
			od->d_size = rs->size;
		}
		od->d_align = sh.sh_addralign ? sh.sh_addralign : 1;
		od->d_off = 0;
		od->d_version = EV_CURRENT;
		if (!gelf_update_shdr(os, &sh))
			goto libelf_err;
	}
	eh.e_phoff = 0;
	eh.e_phnum = 0;
	/* elfutils has no elf_setshstrndx: a large index goes to section 0's sh_link */
	if (shstrndx >= SHN_LORESERVE) {
		Elf_Scn *zero = elf_getscn(out, 0);
		GElf_Shdr sh0;

		if (!zero || !gelf_getshdr(zero, &sh0))
			goto libelf_err;
		sh0.sh_link = (Elf64_Word)shstrndx;
		if (!gelf_update_shdr(zero, &sh0))
			goto libelf_err;
		eh.e_shstrndx = SHN_XINDEX;
	} else {
		eh.e_shstrndx = (Elf64_Half)shstrndx;
	}
	if (!gelf_update_ehdr(out, &eh) || elf_update(out, ELF_C_WRITE) < 0 || errno == ENOMEM)
		goto libelf_err;
	return 0;
libelf_err:
	return elfio_elf_err(w->e, "the output object", "cannot build the output");
}

/*
 * libelf's layout of the changed object, into a memfd: then either
 * written atomically to out_path, or (buf != NULL) copied to *buf.
 */
static int commit_rel(struct elfio_rw *w, const char *out_path, const struct elfio_write_check *chk,
		      uint8_t **buf, size_t *len)
{
	const char *name = out_path ? out_path : elfio_path(w->e);
	Elf *out = NULL;
	void *map = MAP_FAILED;
	struct stat st = { 0 };
	int fd, ret;

	fd = memfd_create("patchsite-rewrite", MFD_CLOEXEC);
	if (fd < 0) {
		elfio_error(name, "memfd_create: %s", strerror(errno));
		return -errno;
	}
	errno = 0;
	out = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!out) {
		ret = elfio_elf_err(w->e, "libelf's descriptor of the output", "elf_begin");
		goto out;
	}
	ret = build_rel(w, out);
	if (ret)
		goto out;
	elf_end(out);
	out = NULL;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		elfio_error(name, "fstat: %s", strerror(errno));
		goto out;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		elfio_error(name, "mmap: %s", strerror(errno));
		goto out;
	}
	if (buf) {
		/* malloc'd: elfio_rw_commit_memory's contract (see elfio_ar_replace) */
		*buf = malloc(st.st_size ? (size_t)st.st_size : 1);
		if (!*buf) {
			ret = -ENOMEM;
			elfio_error(name, "out of memory for a %zu-byte object", (size_t)st.st_size);
			goto out;
		}
		memcpy(*buf, map, (size_t)st.st_size);
		*len = (size_t)st.st_size;
		ret = 0;
	} else {
		ret = elfio_write_file_atomic_check(out_path, map, (size_t)st.st_size,
						    elfio_mode(w->e), chk);
	}
out:
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	elf_end(out);
	close(fd);
	return ret;
}

/* --- Program and section headers from the file's bytes ------------------------ */

/* Offsets of the Elf64_Phdr and Elf64_Shdr fields this file reads and writes. */
#define PH_TYPE		0
#define PH_FLAGS	4
#define PH_OFFSET	8
#define PH_VADDR	16
#define PH_PADDR	24
#define PH_FILESZ	32
#define PH_MEMSZ	40
#define PH_ALIGN	48
#define SH_TYPE		4
#define SH_OFFSET	24
#define SH_SIZE		32

bool elfio_header_tables_inside(struct elfio *e)
{
	const GElf_Ehdr *eh = elfio_ehdr(e);
	uint64_t len = elfio_file_size(e);

	return !(eh->e_phoff > len || (len - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum ||
		 eh->e_shoff > len || (len - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum);
}

int elfio_phdr_read(struct elfio *e, size_t i, struct elfio_phdr *ph)
{
	const GElf_Ehdr *eh = elfio_ehdr(e);
	size_t len = 0;
	const uint8_t *buf = elfio_raw(e, &len), *p;

	if (!buf || eh->e_phoff > len || (len - eh->e_phoff) / sizeof(Elf64_Phdr) <= i)
		return -EINVAL;
	p = buf + eh->e_phoff + i * sizeof(Elf64_Phdr);
	ph->type = (uint32_t)get_le(p + PH_TYPE, 4);
	ph->flags = (uint32_t)get_le(p + PH_FLAGS, 4);
	ph->offset = get_le(p + PH_OFFSET, 8);
	ph->vaddr = get_le(p + PH_VADDR, 8);
	ph->paddr = get_le(p + PH_PADDR, 8);
	ph->filesz = get_le(p + PH_FILESZ, 8);
	ph->memsz = get_le(p + PH_MEMSZ, 8);
	ph->align = get_le(p + PH_ALIGN, 8);
	return 0;
}

int elfio_shdr_read(struct elfio *e, size_t i, GElf_Shdr *sh)
{
	const GElf_Ehdr *eh = elfio_ehdr(e);
	size_t len = 0;
	const uint8_t *buf = elfio_raw(e, &len), *p;

	if (!buf || eh->e_shoff > len || (len - eh->e_shoff) / sizeof(Elf64_Shdr) <= i)
		return -EINVAL;
	p = buf + eh->e_shoff + i * sizeof(Elf64_Shdr);
	memset(sh, 0, sizeof(*sh));
	sh->sh_name = (uint32_t)get_le(p + 0, 4);
	sh->sh_type = (uint32_t)get_le(p + SH_TYPE, 4);
	sh->sh_flags = get_le(p + 8, 8);
	sh->sh_addr = get_le(p + 16, 8);
	sh->sh_offset = get_le(p + SH_OFFSET, 8);
	sh->sh_size = get_le(p + SH_SIZE, 8);
	sh->sh_link = (uint32_t)get_le(p + 40, 4);
	sh->sh_info = (uint32_t)get_le(p + 44, 4);
	sh->sh_addralign = get_le(p + 48, 8);
	sh->sh_entsize = get_le(p + 56, 8);
	return 0;
}

/* --- Linked images: a segment appended --------------------------------------- */

static int commit_segment(struct elfio_rw *w, const char *out_path,
			  const struct elfio_write_check *chk)
{
	struct elfio *e = w->e;
	const GElf_Ehdr *eh = elfio_ehdr(e);
	size_t fsize = 0;
	const uint8_t *in = elfio_raw(e, &fsize);
	uint64_t len = elfio_file_size(e), phoff = eh->e_phoff, shoff = eh->e_shoff;
	size_t phnum = eh->e_phnum, shnum = eh->e_shnum, shstrndx = eh->e_shstrndx;
	size_t note = SIZE_MAX, last_load = 0;
	uint8_t *ob = NULL, *p;
	int ret = -EINVAL;

	if (!in || fsize != len) {
		elfio_err(e, "the image's bytes are not available to copy");
		return -EINVAL;
	}
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || !phnum || phnum == PN_XNUM ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || !shnum || shstrndx == SHN_UNDEF ||
	    shstrndx >= shnum || phoff > len || (len - phoff) / sizeof(Elf64_Phdr) < phnum ||
	    shoff > len || (len - shoff) / sizeof(Elf64_Shdr) < shnum) {
		elfio_err(e, "a segment is added only to an image with program headers, section "
			  "headers and .shstrtab, without extended numbering");
		return -EINVAL;
	}
	for (size_t i = 0; i < phnum; i++) {
		struct elfio_phdr ph;

		if (elfio_phdr_read(e, i, &ph))
			return -EINVAL;	/* not reached: the table's bounds are checked above */
		if (ph.type == PT_LOAD)
			last_load = i;
		else if (ph.type == PT_NOTE && note == SIZE_MAX)
			note = i;
	}
	if (note == SIZE_MAX) {
		elfio_err(e, "no PT_NOTE program header to turn into the new segment's PT_LOAD");
		return -EINVAL;
	}
	GElf_Shdr ss;
	if (elfio_shdr_read(e, shstrndx, &ss))
		return -EINVAL;	/* not reached: the table's bounds are checked above */
	uint64_t old_str_off = ss.sh_offset, old_str_size = ss.sh_size;
	if (ss.sh_type != SHT_STRTAB || old_str_off > len ||
	    old_str_size > len - old_str_off) {
		elfio_err(e, "the section name table is not a string table inside the file");
		return -EINVAL;
	}

	/* the layout of what is appended: segment | .shstrtab | section headers */
	uint64_t al = w->seg.p_align, size = w->seg.p_filesz, names = 0, seg_off = w->seg.p_offset;
	for (size_t i = 0; i < w->nadded; i++)
		names += strlen(w->added[i].name) + 1;
	uint64_t str_off = seg_off + size, str_size = old_str_size + names;
	uint64_t sh_off = (str_off + str_size + 7) & ~7ull;
	uint64_t olen = sh_off + (shnum + w->nadded) * sizeof(Elf64_Shdr);

	ob = elfio_calloc(1, olen);
	if (!ob) {
		elfio_err(e, "out of memory for a %" PRIu64 "-byte image", olen);
		return -ENOMEM;
	}
	memcpy(ob, in, len);
	for (size_t i = 0; i < w->patches.n; i++)
		memcpy(ob + w->patches.v[i].off, w->patches.v[i].bytes, w->patches.v[i].len);
	memcpy(ob + seg_off, w->seg_data, size);

	/* .shstrtab, grown, and the section headers */
	memcpy(ob + str_off, in + old_str_off, old_str_size);
	memcpy(ob + sh_off, in + shoff, shnum * sizeof(Elf64_Shdr));
	p = ob + sh_off + shstrndx * sizeof(Elf64_Shdr);
	put_le(p + 24, str_off, 8);
	put_le(p + 32, str_size, 8);
	uint64_t name = old_str_size;
	for (size_t i = 0; i < w->nadded; i++) {
		const GElf_Shdr *sh = &w->added[i].shdr;
		size_t nl = strlen(w->added[i].name) + 1;

		memcpy(ob + str_off + name, w->added[i].name, nl);
		p = ob + sh_off + (shnum + i) * sizeof(Elf64_Shdr);
		put_le(p + 0, name, 4);
		put_le(p + 4, sh->sh_type, 4);
		put_le(p + 8, sh->sh_flags, 8);
		put_le(p + 16, sh->sh_addr, 8);
		put_le(p + 24, seg_off + sh->sh_offset, 8);
		put_le(p + 32, sh->sh_size, 8);
		put_le(p + 40, sh->sh_link, 4);
		put_le(p + 44, sh->sh_info, 4);
		put_le(p + 48, sh->sh_addralign, 8);
		put_le(p + 56, sh->sh_entsize, 8);
		name += nl;
	}

	/* the PT_NOTE entry becomes the PT_LOAD, kept behind the last PT_LOAD */
	if (note < last_load) {
		memmove(ob + phoff + note * sizeof(Elf64_Phdr),
			ob + phoff + (note + 1) * sizeof(Elf64_Phdr),
			(last_load - note) * sizeof(Elf64_Phdr));
		note = last_load;
	}
	p = ob + phoff + note * sizeof(Elf64_Phdr);
	put_le(p + 0, w->seg.p_type, 4);
	put_le(p + 4, w->seg.p_flags, 4);
	put_le(p + 8, seg_off, 8);
	put_le(p + 16, w->seg.p_vaddr, 8);
	put_le(p + 24, w->seg.p_paddr, 8);
	put_le(p + 32, size, 8);
	put_le(p + 40, size, 8);
	put_le(p + 48, al, 8);

	/* the ELF header: e_shoff, e_shnum */
	put_le(ob + 0x28, sh_off, 8);
	put_le(ob + 0x3c, shnum + w->nadded, 2);

	ret = elfio_write_file_atomic_check(out_path, ob, olen, elfio_mode(e), chk);
	elfio_free(ob);
	return ret;
}

int elfio_rw_commit(struct elfio_rw *w, const char *out_path, const struct elfio_write_check *chk)
{
	if (elfio_was_compressed(w->e)) {
		elfio_err(w->e, "cannot rewrite a compressed file; decompress it first");
		return -ENOTSUP;
	}
	if (w->has_seg)
		return commit_segment(w, out_path, chk);
	if (w->relayout) {
		if (w->patches.n) {
			elfio_err(w->e, "byte patches and new section contents in one rewrite");
			return -EINVAL;
		}
		return commit_rel(w, out_path, chk, NULL, NULL);
	}
	return elfio_write_edited_check(w->e, &w->patches, out_path, chk);
}

int elfio_rw_commit_memory(struct elfio_rw *w, uint8_t **buf, size_t *len)
{
	const uint8_t *raw;
	size_t rawlen;

	*buf = NULL;
	*len = 0;
	if (w->has_seg) {
		elfio_err(w->e, "a new segment is written to a file, not to memory");
		return -EINVAL;
	}
	if (w->relayout) {
		if (w->patches.n) {
			elfio_err(w->e, "byte patches and new section contents in one rewrite");
			return -EINVAL;
		}
		return commit_rel(w, NULL, NULL, buf, len);
	}
	/* byte patches on a copy of the image, as elfio_write_edited writes them on the file's */
	raw = elfio_raw(w->e, &rawlen);
	if (!raw) {
		elfio_err(w->e, "the image's bytes are not available");
		return -EINVAL;
	}
	/* malloc'd: the caller's, and it goes on to elfio_ar_replace, which takes malloc */
	*buf = malloc(rawlen ? rawlen : 1);
	if (!*buf) {
		elfio_err(w->e, "out of memory for a %zu-byte image", rawlen);
		return -ENOMEM;
	}
	memcpy(*buf, raw, rawlen);
	for (size_t i = 0; i < w->patches.n; i++) {
		const struct elfio_edit *ed = &w->patches.v[i];

		if (ed->off > rawlen || ed->len > rawlen - ed->off) {
			/* an edit past the end: a bug, never extend silently */
			elfio_err(w->e, "a patch at %#" PRIx64 " lies past the end of the image",
				  ed->off);
			free(*buf);
			*buf = NULL;
			return -ERANGE;
		}
		memcpy(*buf + ed->off, ed->bytes, ed->len);
	}
	*len = rawlen;
	return 0;
}

int elfio_rw_commit_in_place(struct elfio_rw *w, unsigned int flags,
			     const struct elfio_write_check *chk, size_t *written)
{
	*written = 0;
	if (w->has_seg || w->relayout) {
		elfio_err(w->e, "only byte patches are written in place");
		return -EINVAL;
	}
	return elfio_write_in_place(w->e, &w->patches, flags, chk, written);
}

bool elfio_rw_changes(const struct elfio_rw *w)
{
	return w->patches.n || w->relayout || w->has_seg;
}
