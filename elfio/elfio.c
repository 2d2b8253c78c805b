// SPDX-License-Identifier: GPL-2.0-only
/*
 * elfio.c - ELF access on libelf: open, validate, sections, symbols,
 * relocations, and the atomic writer.
 *
 * Strategy: map the file (ELF_C_READ_MMAP) so that cost follows what we
 * touch, not the file size: a 350 MB vmlinux with full DWARF is read for
 * its section headers, its symbol table and the few text bytes at each
 * candidate, nothing more.  Compressed modules are the exception: they are
 * inflated (elfio/decompress.c) into a buffer we own and given to libelf
 * with elf_memory(), as is an image opened from memory (an archive's
 * member, elfio_open_memory).
 * Symbol tables and relocations are read where they lie: a table is checked
 * whole once, and only what a caller keeps is copied out (the sized
 * functions; every symbol only for elfio_symbols).  A caller done with a
 * section's bytes can hand its pages back (elfio_section_release).
 *
 * Every header-derived offset and count is checked against the file size
 * before libelf or we rely on it, one step at a time, each with its own
 * message (libbpf's bpf_object__elf_init does the same).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "elfio/elfio.h"
#include "elfio/elfio_priv.h"
#include "elfio/bootimg.h"
#include "elfio/decompress.h"

struct elfio {
	char *path;
	unsigned int flags;
	int fd;
	Elf *elf;
	void *mem;		/* decompressed file image (ours), or NULL */
	size_t memlen;
	bool compressed;
	bool boot;		/* made from a boot image (vmlinuz: bootimg.c) */
	uint64_t file_size;
	mode_t mode;		/* the input's permission bits */
	GElf_Ehdr ehdr;

	size_t nsec;
	struct elfio_section *secs;
	struct elfio_section **by_addr;	/* ALLOC sections sorted by address */
	size_t nby_addr;

	struct elfio_symtab *tabs;	/* loaded symbol tables */
	size_t ntabs;
	size_t *tab_of;			/* section index -> 1 + index in tabs, 0: not loaded */
	size_t *xndx_of;		/* symbol table -> its SHT_SYMTAB_SHNDX (0: none), or NULL */
	bool main_loaded;
	const struct elfio_symtab *main_tab;

	struct symview *views;		/* section index -> its table's view, or NULL */

	bool funcs_loaded;
	struct elfio_symbol *fsyms;	/* the sized functions of the main table */
	const struct elfio_symbol **funcs;
	uint64_t *funcs_maxend;		/* running max of addr+size, for lookups */
	size_t nfuncs;
};

/* Upper bound for a decompressed module: far beyond any real .ko. */
#define MAX_DECOMPRESSED	(4ULL << 30)

/*
 * One line, whatever the file holds: names from the image (symbols,
 * sections, the path itself) may contain newlines or terminal escapes, so
 * control bytes are written as \xNN (UTF-8 passes through unchanged).
 */
/* Longest message part of an error line: a corrupt name can be megabytes. */
#define ERR_MSG_MAX	1024

static void put_escaped(const char *s, size_t max)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (n >= max) {
			fputs("...", stderr);
			return;
		}
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(stderr, "\\x%02x", *p);
			n += 4;
		} else {
			fputc(*p, stderr);
			n++;
		}
	}
}

static unsigned long reported;

unsigned long elfio_errors_reported(void)
{
	return reported;
}

static void vreport(const char *path, const char *fmt, va_list ap)
{
	char *msg = NULL;

	reported++;
	fputs("patchsite: ", stderr);
	put_escaped(path, SIZE_MAX);
	fputs(": ", stderr);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	put_escaped(msg ? msg : fmt, ERR_MSG_MAX);
	free(msg);		/* vasprintf's: the library mallocs it */
	fputc('\n', stderr);
}

void elfio_error(const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(path, fmt, ap);
	va_end(ap);
}

void elfio_err(const struct elfio *e, const char *fmt, ...)
{
	va_list ap;

	if (e->flags & ELFIO_QUIET)
		return;
	va_start(ap, fmt);
	vreport(e->path, fmt, ap);
	va_end(ap);
}

int elfio_elf_err(const struct elfio *e, const char *what, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (errno == ENOMEM) {
		elfio_err(e, "out of memory for %s", what);
		return -ENOMEM;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	elfio_err(e, "%s: %s", msg, elf_errmsg(-1));
	return -EINVAL;
}

/* --- Decompression of whole files (.ko.gz, .ko.xz, .ko.zst) -------------- */

/*
 * The whole-file formats: gzip (deflate only), xz and zstd, as kmod reads
 * modules.  The decompressor family knows more (a boot image's payload may
 * be lzma, bzip2, lz4 or lzo), but a whole file in those is not opened as
 * one: it stays "not an ELF file".
 */
static enum elfio_z sniff_compression(const uint8_t *m, size_t n)
{
	if (n >= 2 && m[0] == 0x1f && m[1] == 0x8b)
		return ELFIO_Z_GZIP;
	if (n >= 6 && !memcmp(m, "\xfd" "7zXZ\0", 6))
		return ELFIO_Z_XZ;
	if (n >= 4 && !memcmp(m, "\x28\xb5\x2f\xfd", 4))
		return ELFIO_Z_ZSTD;
	return ELFIO_Z_NONE;
}

static int decompress_file(struct elfio *e, enum elfio_z kind)
{
	struct stat st;
	uint8_t *in = NULL;
	int ret;

	if (fstat(e->fd, &st) < 0)
		return -errno;
	in = elfio_calloc(st.st_size ? (size_t)st.st_size : 1, 1);
	if (!in) {
		elfio_err(e, "out of memory for the %s-compressed file (%jd bytes)", elfio_z_name(kind),
			  (intmax_t)st.st_size);
		return -ENOMEM;
	}
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t r = pread(e->fd, in + got, (size_t)st.st_size - got, (off_t)got);
		if (r <= 0) {
			ret = r < 0 ? -errno : -EIO;
			elfio_err(e, "cannot read: %s", strerror(-ret));
			goto out;
		}
		got += (size_t)r;
	}
	uint8_t *out = NULL;
	size_t outlen = 0;
	ret = elfio_z_inflate(kind, in, got, MAX_DECOMPRESSED, 0, &out, &outlen);
	if (ret == -ENOMEM)
		elfio_err(e, "out of memory for the module decompressed from %s", elfio_z_name(kind));
	else if (ret)
		elfio_err(e, "corrupt or truncated %s stream", elfio_z_name(kind));
	if (ret)
		goto out;
	e->mem = out;
	e->memlen = outlen;
	e->compressed = true;
out:
	elfio_free(in);
	return ret;
}

/* --- Open and validate --------------------------------------------------- */

static const char *et_name(unsigned int t)
{
	switch (t) {
	case ET_NONE: return "ET_NONE";
	case ET_CORE: return "ET_CORE (a core dump)";
	default: return "unknown";
	}
}

static int check_range(struct elfio *e, uint64_t off, uint64_t size)
{
	return off <= e->file_size && size <= e->file_size - off ? 0 : -1;
}

static int load_sections(struct elfio *e)
{
	size_t shstrndx;

	errno = 0;
	if (elf_getshdrnum(e->elf, &e->nsec) < 0) {
		return elfio_elf_err(e, "the section headers",
				     "cannot read the section header table");
	}
	/* libelf counts no sections when their table is not in the file */
	if (e->nsec == 0 && e->ehdr.e_shoff && e->ehdr.e_shoff >= e->file_size) {
		elfio_err(e, "is truncated: the section header table at offset %#" PRIx64 " lies "
			  "past the end of the file (%" PRIu64 " bytes)", (uint64_t)e->ehdr.e_shoff,
			  (uint64_t)e->file_size);
		return -EINVAL;
	}
	if (e->nsec == 0) {
		elfio_err(e, "has no section headers");
		return -EINVAL;
	}
	if (e->ehdr.e_shentsize != sizeof(Elf64_Shdr)) {
		elfio_err(e, "bad section header size %u", e->ehdr.e_shentsize);
		return -EINVAL;
	}
	if (e->nsec > e->file_size / sizeof(Elf64_Shdr) ||
	    check_range(e, e->ehdr.e_shoff, (uint64_t)e->nsec * sizeof(Elf64_Shdr))) {
		elfio_err(e, "section header table is truncated");
		return -EINVAL;
	}
	if (e->ehdr.e_phnum && (e->ehdr.e_phentsize != sizeof(Elf64_Phdr) ||
				check_range(e, e->ehdr.e_phoff,
					    (uint64_t)e->ehdr.e_phnum * sizeof(Elf64_Phdr)))) {
		elfio_err(e, "program header table is truncated or malformed");
		return -EINVAL;
	}
	errno = 0;
	if (elf_getshdrstrndx(e->elf, &shstrndx) < 0) {
		return elfio_elf_err(e, "the section headers",
				     "cannot find the section name table");
	}
	if (shstrndx == SHN_UNDEF || shstrndx >= e->nsec) {
		elfio_err(e, "bad section name table index %zu", shstrndx);
		return -EINVAL;
	}

	e->secs = elfio_calloc(e->nsec, sizeof(*e->secs));
	if (!e->secs) {
		elfio_err(e, "out of memory for %zu sections", e->nsec);
		return -ENOMEM;
	}

	for (size_t i = 0; i < e->nsec; i++) {
		struct elfio_section *s = &e->secs[i];

		s->index = i;
		errno = 0;
		s->scn = elf_getscn(e->elf, i);
		if (!s->scn || !gelf_getshdr(s->scn, &s->shdr)) {
			return elfio_elf_err(e, "the section headers",
					     "cannot read section header %zu", i);
		}
		if (s->shdr.sh_type != SHT_NOBITS && s->shdr.sh_type != SHT_NULL &&
		    check_range(e, s->shdr.sh_offset, s->shdr.sh_size)) {
			elfio_err(e, "section %zu extends past the end of the file "
				  "(offset 0x%" PRIx64 ", size 0x%" PRIx64 ")", i,
				  (uint64_t)s->shdr.sh_offset, (uint64_t)s->shdr.sh_size);
			return -EINVAL;
		}
	}
	/* Now the name table's bounds are known good; names can be read. */
	if (e->secs[shstrndx].shdr.sh_type != SHT_STRTAB) {
		elfio_err(e, "section name table is not a string table");
		return -EINVAL;
	}
	for (size_t i = 1; i < e->nsec; i++) {
		struct elfio_section *s = &e->secs[i];

		s->name = elf_strptr(e->elf, shstrndx, s->shdr.sh_name);
		if (!s->name) {
			elfio_err(e, "section %zu has a bad name index %u", i, s->shdr.sh_name);
			return -EINVAL;
		}
		/*
		 * The gABI forbids SHF_COMPRESSED on SHF_ALLOC and SHT_NOBITS
		 * sections and libelf refuses to inflate them; refuse here, once,
		 * rather than fail on every read of the section's bytes.
		 */
		if ((s->shdr.sh_flags & SHF_COMPRESSED) &&
		    ((s->shdr.sh_flags & SHF_ALLOC) || s->shdr.sh_type == SHT_NOBITS)) {
			elfio_err(e, "section '%s' is SHF_COMPRESSED but %s", s->name,
				  s->shdr.sh_type == SHT_NOBITS ? "SHT_NOBITS" : "SHF_ALLOC");
			return -EINVAL;
		}
	}
	e->secs[0].name = "";

	/* SHT_SYMTAB_SHNDX sections by the symbol table they extend (first wins). */
	for (size_t i = 1; i < e->nsec; i++) {
		size_t link = e->secs[i].shdr.sh_link;
		if (e->secs[i].shdr.sh_type != SHT_SYMTAB_SHNDX || link >= e->nsec)
			continue;
		if (!e->xndx_of) {
			e->xndx_of = elfio_calloc(e->nsec, sizeof(*e->xndx_of));
			if (!e->xndx_of)
				return -ENOMEM;
		}
		if (!e->xndx_of[link])
			e->xndx_of[link] = i;
	}
	return 0;
}

static int cmp_sec_addr(const void *a, const void *b)
{
	const struct elfio_section *x = *(const struct elfio_section *const *)a;
	const struct elfio_section *y = *(const struct elfio_section *const *)b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->shdr.sh_size != y->shdr.sh_size)	/* empty sections first */
		return x->shdr.sh_size < y->shdr.sh_size ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * ET_REL: give every SHF_ALLOC section its own address range so that a flat
 * address means "section + offset".  Ranges start at 0x10000 and are
 * separated by at least 0x1000 so that "end of one" never equals "start of
 * the next".  Sections keep their index order, so sorting addresses sorts
 * by (section index, offset) as a relocatable table must.
 */
static void assign_addresses(struct elfio *e)
{
	uint64_t next = 0x10000;

	for (size_t i = 1; i < e->nsec; i++) {
		struct elfio_section *s = &e->secs[i];

		if (!(s->shdr.sh_flags & SHF_ALLOC))
			continue;
		if (e->ehdr.e_type != ET_REL) {
			s->addr = s->shdr.sh_addr;
			continue;
		}
		uint64_t align = s->shdr.sh_addralign > 16 ? s->shdr.sh_addralign : 16;
		if (align > (1 << 20))
			align = 1 << 20;
		next = (next + align - 1) & ~(align - 1);
		s->addr = next;
		uint64_t sz = s->shdr.sh_size;
		if (sz > (1ULL << 40))	/* a corrupt size cannot wrap the space */
			sz = 1ULL << 40;
		next += sz + 0x1000;
	}
}

static int index_sections(struct elfio *e)
{
	e->by_addr = elfio_calloc(e->nsec, sizeof(*e->by_addr));
	if (!e->by_addr) {
		elfio_err(e, "out of memory for the index of %zu sections", e->nsec);
		return -ENOMEM;
	}
	for (size_t i = 1; i < e->nsec; i++)
		if (e->secs[i].shdr.sh_flags & SHF_ALLOC)
			e->by_addr[e->nby_addr++] = &e->secs[i];
	qsort(e->by_addr, e->nby_addr, sizeof(*e->by_addr), cmp_sec_addr);
	return 0;
}

/*
 * The image's bytes are there (the file, or e->mem): check them step by
 * step, each with its own message, and have libelf read them.  magic: the
 * first n (up to 8) bytes.
 */
static int parse_image(struct elfio *e, const uint8_t *magic, size_t n)
{
	int ret = -EINVAL;

	if (n < SELFMAG || memcmp(magic, ELFMAG, SELFMAG) != 0) {
		elfio_err(e, "not an ELF file");
		return ret;
	}
	if (n < EI_DATA + 1 || e->file_size < EI_NIDENT) {
		elfio_err(e, "truncated ELF header");
		return ret;
	}
	if (magic[EI_CLASS] != ELFCLASS64) {
		elfio_err(e, "%s ELF is not supported (only ELF64)",
			  magic[EI_CLASS] == ELFCLASS32 ? "32-bit" : "unknown-class");
		return ret;
	}
	if (magic[EI_DATA] != ELFDATA2LSB) {
		elfio_err(e, "%s ELF is not supported (only little-endian)",
			  magic[EI_DATA] == ELFDATA2MSB ? "big-endian" : "unknown-endian");
		return ret;
	}
	if (e->file_size < sizeof(Elf64_Ehdr)) {
		elfio_err(e, "truncated ELF header");
		return ret;
	}

	errno = 0;
	if (e->mem)
		e->elf = elf_memory(e->mem, e->memlen);
	else
		e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF)
		return elfio_elf_err(e, "libelf's descriptor of the image", "not an ELF file");
	if (!gelf_getehdr(e->elf, &e->ehdr))
		return elfio_elf_err(e, "the ELF header", "cannot read the ELF header");
	if (e->ehdr.e_ident[EI_VERSION] != EV_CURRENT || e->ehdr.e_version != EV_CURRENT) {
		elfio_err(e, "unsupported ELF version %u", e->ehdr.e_version);
		return ret;
	}
	if (e->ehdr.e_type != ET_REL && e->ehdr.e_type != ET_EXEC && e->ehdr.e_type != ET_DYN) {
		elfio_err(e, "unsupported ELF type %u, %s", e->ehdr.e_type,
			  et_name(e->ehdr.e_type));
		return ret;
	}

	ret = load_sections(e);
	if (ret)
		return ret;
	assign_addresses(e);
	ret = index_sections(e);
	if (ret)
		return ret;
	return 0;
}

/* 0 with e->mem the ELF image made from a boot image, or not one (0, nothing done), or -errno. */
static int open_boot_image(struct elfio *e, uint8_t *magic, ssize_t *n)
{
	const uint8_t *b = e->mem;
	size_t len = e->memlen;
	uint8_t *out = NULL;
	size_t outlen = 0;
	int ret;

	if (!b) {
		/* a boot image is read whole (copied into the ELF made from it): its
		   page tables filled in one call, not a fault at a time (an ELF is
		   mostly not read here: only whether it is a stripped kernel; an
		   arm64 or riscv64 Image is read from the block bootimg maps it in) */
		bool elf = *n >= SELFMAG && !memcmp(magic, ELFMAG, SELFMAG);
		uint8_t im[4] = { 0 };
		bool image = pread(e->fd, im, 4, 0x38) == 4 &&
			     (!memcmp(im, "ARM\x64", 4) || !memcmp(im, "RSC\x05", 4));
		b = e->file_size ? mmap(NULL, e->file_size, PROT_READ,
					MAP_PRIVATE | (elf || image ? 0 : MAP_POPULATE), e->fd, 0)
				 : NULL;
		if (b == MAP_FAILED)
			return 0;	/* parse_image says what it is not */
		len = e->file_size;
	}
	ret = bootimg_to_elf_fd(e->path, e->mem ? -1 : e->fd, b, len, e->flags & ELFIO_QUIET, &out,
				&outlen);
	if (!e->mem && b)
		munmap((void *)b, len);
	if (ret)
		return ret > 0 ? 0 : ret;
	elfio_free(e->mem);
	e->mem = out;
	e->memlen = e->file_size = outlen;
	e->compressed = e->boot = true;
	*n = outlen < 8 ? (ssize_t)outlen : 8;
	memcpy(magic, out, (size_t)*n);
	return 0;
}

struct elfio *elfio_open(const char *path, unsigned int flags)
{
	struct elfio *e = NULL;
	struct stat st;
	uint8_t magic[8];
	int ret = -EINVAL;

	elf_version(EV_CURRENT);

	e = elfio_calloc(1, sizeof(*e));
	if (e)
		e->path = elfio_strdup(path);
	if (!e || !e->path) {
		if (!(flags & ELFIO_QUIET))
			elfio_error(path, "out of memory for the image's descriptor");
		elfio_free(e);
		errno = ENOMEM;
		return NULL;
	}
	e->fd = -1;
	e->flags = flags;

	/* an in-place write killed half way: undo it before reading anything */
	ret = elfio_journal_recover(path, flags & ELFIO_QUIET);
	if (ret)
		goto err;
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0) {
		ret = -errno;
		elfio_err(e, "%s", strerror(errno));
		goto err;
	}
	if (fstat(e->fd, &st) < 0) {
		ret = -errno;
		elfio_err(e, "%s", strerror(errno));
		goto err;
	}
	if (!S_ISREG(st.st_mode)) {
		elfio_err(e, "not a regular file");
		goto err;
	}
	e->file_size = (uint64_t)st.st_size;
	e->mode = st.st_mode & 07777;

	ssize_t n = pread(e->fd, magic, sizeof(magic), 0);
	if (n < 0) {
		ret = -errno;
		elfio_err(e, "cannot read: %s", strerror(errno));
		goto err;
	}
	enum elfio_z z = sniff_compression(magic, (size_t)n);
	if (z != ELFIO_Z_NONE) {
		ret = decompress_file(e, z);
		if (ret)
			goto err;
		e->file_size = e->memlen;
		n = e->memlen < sizeof(magic) ? (ssize_t)e->memlen : (ssize_t)sizeof(magic);
		memcpy(magic, e->mem, (size_t)n);
	}

	/* a kernel's boot image (vmlinuz, or a vmlinux stripped of its symbols):
	   the ELF image made from it (bootimg.c) */
	if ((size_t)n < SELFMAG || memcmp(magic, ELFMAG, SELFMAG) ||
	    ((size_t)n > EI_CLASS && magic[EI_CLASS] == ELFCLASS64)) {
		ret = open_boot_image(e, magic, &n);
		if (ret)
			goto err;
	}

	ret = parse_image(e, magic, (size_t)n);
	if (ret)
		goto err;
	return e;

err:
	elfio_close(e);
	errno = ret < 0 ? -ret : EINVAL;
	return NULL;
}

struct elfio *elfio_open_memory(const char *name, const void *buf, size_t len,
				unsigned int flags)
{
	struct elfio *e;
	int ret = -ENOMEM;

	elf_version(EV_CURRENT);
	e = elfio_calloc(1, sizeof(*e));
	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	e->fd = -1;
	e->flags = flags;
	e->path = elfio_strdup(name);
	/* ours, for libelf to read (and inflate sections of) as it reads a file */
	e->mem = elfio_calloc(len ? len : 1, 1);
	if (!e->path || !e->mem) {
		if (!(flags & ELFIO_QUIET))
			elfio_error(name, "out of memory for a %zu-byte image", len);
		goto err;
	}
	memcpy(e->mem, buf, len);
	e->memlen = len;
	e->file_size = len;
	e->mode = 0644;
	ret = parse_image(e, e->mem, len < 8 ? len : 8);
	if (ret)
		goto err;
	return e;
err:
	elfio_close(e);
	errno = -ret;
	return NULL;
}

void elfio_close(struct elfio *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->ntabs; i++)
		elfio_free(e->tabs[i].syms);
	elfio_free(e->tabs);
	elfio_free(e->tab_of);
	elfio_free(e->xndx_of);
	elfio_free(e->views);
	elfio_free(e->fsyms);
	elfio_free(e->funcs);
	elfio_free(e->funcs_maxend);
	for (size_t i = 0; e->secs && i < e->nsec; i++)
		elfio_free(e->secs[i].relas);
	elfio_free(e->by_addr);
	elfio_free(e->secs);
	if (e->elf)
		elf_end(e->elf);
	elfio_free(e->mem);
	if (e->fd >= 0)
		close(e->fd);
	elfio_free(e->path);
	elfio_free(e);
}

const char *elfio_path(const struct elfio *e) { return e->path; }
Elf *elfio_elf(struct elfio *e) { return e->elf; }
int elfio_fd(const struct elfio *e) { return e->fd; }
const GElf_Ehdr *elfio_ehdr(const struct elfio *e) { return &e->ehdr; }
bool elfio_is_rel(const struct elfio *e) { return e->ehdr.e_type == ET_REL; }
bool elfio_was_compressed(const struct elfio *e) { return e->compressed; }
bool elfio_is_boot_image(const struct elfio *e) { return e->boot; }
uint64_t elfio_file_size(const struct elfio *e) { return e->file_size; }
mode_t elfio_mode(const struct elfio *e) { return e->mode; }

const uint8_t *elfio_raw(struct elfio *e, size_t *len)
{
	size_t n = 0;
	const uint8_t *p = e->mem ? e->mem : (const uint8_t *)elf_rawfile(e->elf, &n);

	if (e->mem)
		n = e->memlen;
	*len = p ? n : 0;
	return p;
}

bool elfio_same_file(const char *a, const char *b)
{
	struct stat x, y;

	if (!strcmp(a, b))
		return true;
	return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

size_t elfio_nsections(const struct elfio *e) { return e->nsec; }

struct elfio_section *elfio_section(struct elfio *e, size_t index)
{
	return index < e->nsec ? &e->secs[index] : NULL;
}

struct elfio_section *elfio_find_section_by_name(struct elfio *e, const char *name)
{
	for (size_t i = 1; i < e->nsec; i++)
		if (strcmp(e->secs[i].name, name) == 0)
			return &e->secs[i];
	return NULL;
}

bool is_text_section(const struct elfio_section *s)
{
	return s->shdr.sh_type == SHT_PROGBITS &&
	       (s->shdr.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR);
}

/*
 * Map in, with one call, the pages of [p, p + len) when they are part of
 * the mapped file: a section we are about to read all of (text, symbols,
 * strings) would otherwise cost a page fault per 64 KiB, which on this
 * kind of machine is most of the time `record` takes.  Best effort: a
 * kernel without MADV_POPULATE_READ (before 5.14) just faults as before.
 */
static void prefault(struct elfio *e, const void *p, size_t len)
{
#ifdef MADV_POPULATE_READ
	size_t fsize;
	const char *base = e->mem ? NULL : elf_rawfile(e->elf, &fsize);
	const char *q = p;
	long pg = sysconf(_SC_PAGESIZE);

	if (!base || !q || q < base || len > fsize || (size_t)(q - base) > fsize - len || pg <= 0)
		return;
	uintptr_t lo = (uintptr_t)q & ~((uintptr_t)pg - 1);
	uintptr_t hi = (uintptr_t)q + len;
	madvise((void *)lo, hi - lo, MADV_POPULATE_READ);
#else
	(void)e;
	(void)p;
	(void)len;
#endif
}

void elfio_section_release(struct elfio *e, const struct elfio_section *s)
{
#ifdef MADV_DONTNEED
	size_t fsize;
	const char *base = e->mem ? NULL : elf_rawfile(e->elf, &fsize);
	long pg = sysconf(_SC_PAGESIZE);

	/*
	 * Only bytes of the file mapping (ELF_C_READ_MMAP: read-only and
	 * private, so nothing in it was ever written and a page dropped reads
	 * back the same), and only whole pages of this section.  Where mmap
	 * fails, libelf reads the file into malloc'd memory instead, and there
	 * MADV_DONTNEED would zero live data: mmap's result is page-aligned,
	 * glibc's large allocations are not (they start 16 bytes into their
	 * mapping), so an unaligned base is never released.
	 */
	if (!base || pg <= 0 || ((uintptr_t)base & ((uintptr_t)pg - 1)) ||
	    s->shdr.sh_type == SHT_NOBITS ||
	    (s->shdr.sh_flags & SHF_COMPRESSED) || s->shdr.sh_offset > fsize ||
	    s->shdr.sh_size > fsize - s->shdr.sh_offset)
		return;
	uintptr_t lo = (uintptr_t)base + s->shdr.sh_offset;
	uintptr_t hi = lo + s->shdr.sh_size;
	lo = (lo + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
	hi &= ~((uintptr_t)pg - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
#else
	(void)e;
	(void)s;
#endif
}

int elfio_section_data(struct elfio *e, struct elfio_section *s)
{
	if (s->loaded)
		return 0;
	if (s->shdr.sh_type == SHT_NOBITS || s->shdr.sh_type == SHT_NULL) {
		s->data = NULL;
		s->size = 0;
		s->loaded = true;
		return 0;
	}
	if (s->shdr.sh_flags & SHF_COMPRESSED) {
		/* libelf inflates into its own buffer and updates the header. */
		errno = 0;
		if (elf_compress(s->scn, 0, 0) < 0) {
			return elfio_elf_err(e, "a decompressed section",
					     "section '%s': cannot decompress", s->name);
		}
		if (!gelf_getshdr(s->scn, &s->shdr)) {
			return elfio_elf_err(e, "a section header", "section '%s'", s->name);
		}
	}
	/*
	 * elf_rawdata: the bytes as they are in the file, no type conversion;
	 * for a decompressed section libelf hands back the inflated bytes.
	 */
	errno = 0;
	Elf_Data *d = (s->shdr.sh_flags & SHF_COMPRESSED) ? elf_getdata(s->scn, NULL)
							  : elf_rawdata(s->scn, NULL);
	if (!d && s->shdr.sh_size) {
		return elfio_elf_err(e, "a section's contents", "section '%s': cannot read",
				     s->name);
	}
	s->data = d ? d->d_buf : NULL;
	s->size = d ? d->d_size : 0;
	if (s->size && !s->data) {
		elfio_err(e, "section '%s': no data", s->name);
		return -EINVAL;
	}
	prefault(e, s->data, s->size);
	s->loaded = true;
	return 0;
}

bool elfio_section_bytes(struct elfio *e, const struct elfio_section *s, const uint8_t **data,
			 size_t *size)
{
	Elf_Data *d = s->scn ? elf_getdata(s->scn, NULL) : NULL;

	(void)e;
	*data = d ? d->d_buf : NULL;
	*size = d ? d->d_size : 0;
	return d != NULL;
}

struct elfio_section *elfio_addr_to_sec(struct elfio *e, uint64_t addr)
{
	/* last section with start <= addr: the one before lo */
	size_t lo = BOUND_BY(e->nby_addr, m, e->by_addr[m]->addr, addr, true);

	/* several sections may start at the same address (empty ones): walk back */
	for (size_t i = lo; i-- > 0;) {
		struct elfio_section *s = e->by_addr[i];
		if (addr - s->addr < s->shdr.sh_size)
			return s;
		if (i + 8 < lo)
			break;
	}
	return NULL;
}

/* --- Symbols -------------------------------------------------------------- */

/*
 * A symbol table where it is: the checked header, the mapped entries and
 * the string table.  checked: every entry has passed decode_sym once.
 */
struct symview {
	bool ready, checked;
	const uint8_t *raw;	/* the entries (ELF64 LSB, checked at open) */
	const uint8_t *xraw;	/* its SHT_SYMTAB_SHNDX, or NULL */
	const char *strs;
	size_t strsz, count;
	bool terminated;	/* the string table ends with a NUL */
};

/* The header of table shndx, checked once; errors as they always were. */
static int symtab_view(struct elfio *e, size_t shndx, struct symview **out)
{
	struct elfio_section *s = &e->secs[shndx];
	struct symview *v;
	Elf_Data *xdata = NULL;
	Elf_Data *d;
	int ret;

	if (!e->views) {
		e->views = elfio_calloc(e->nsec, sizeof(*e->views));
		if (!e->views) {
			elfio_err(e, "out of memory for the symbol tables");
			return -ENOMEM;
		}
	}
	v = &e->views[shndx];
	*out = v;
	if (v->ready)
		return 0;
	if (s->shdr.sh_type != SHT_SYMTAB && s->shdr.sh_type != SHT_DYNSYM) {
		elfio_err(e, "section '%s' is not a symbol table", s->name);
		return -EINVAL;
	}
	if (s->shdr.sh_entsize != sizeof(Elf64_Sym) || s->shdr.sh_size % sizeof(Elf64_Sym)) {
		elfio_err(e, "symbol table '%s' has a bad entry size", s->name);
		return -EINVAL;
	}
	if (s->shdr.sh_link == 0 || s->shdr.sh_link >= e->nsec ||
	    e->secs[s->shdr.sh_link].shdr.sh_type != SHT_STRTAB) {
		elfio_err(e, "symbol table '%s' has a bad string table link %u", s->name,
			  s->shdr.sh_link);
		return -EINVAL;
	}
	errno = 0;
	d = elf_getdata(s->scn, NULL);
	if (!d && s->shdr.sh_size) {
		return elfio_elf_err(e, "a symbol table", "symbol table '%s'", s->name);
	}
	/*
	 * Extended section indexes, for objects with more than 65280 sections:
	 * the first SHT_SYMTAB_SHNDX linked to this table (indexed once, in
	 * load_sections, so that many tables do not mean many scans).
	 */
	size_t xi = e->xndx_of ? e->xndx_of[shndx] : 0;
	if (xi) {
		xdata = elf_getdata(e->secs[xi].scn, NULL);
		if (!xdata || xdata->d_size / sizeof(Elf32_Word) <
				      s->shdr.sh_size / sizeof(Elf64_Sym)) {
			elfio_err(e, "section '%s' is truncated", e->secs[xi].name);
			return -EINVAL;
		}
	}

	size_t count = s->shdr.sh_size / sizeof(Elf64_Sym);
	if (d && d->d_size < count * sizeof(Elf64_Sym)) {
		elfio_err(e, "symbol table '%s' is truncated", s->name);
		return -EINVAL;
	}
	/*
	 * Symbols are read straight from the (mapped) table and names straight
	 * from the string table: a 100,000-symbol vmlinux is read in one pass
	 * with no libelf call per symbol.  The image is ELF64 LSB (checked at
	 * open) and so is every host we build for, so the layout is the file's.
	 */
	struct elfio_section *strsec = &e->secs[s->shdr.sh_link];
	ret = elfio_section_data(e, strsec);
	if (ret)
		return ret;
	v->strs = (const char *)strsec->data;
	v->strsz = strsec->size;
	v->terminated = v->strsz && v->strs[v->strsz - 1] == 0;
	v->raw = d ? d->d_buf : NULL;
	v->xraw = xdata ? xdata->d_buf : NULL;
	v->count = count;
	if (v->raw)
		prefault(e, v->raw, count * sizeof(Elf64_Sym));
	v->ready = true;
	return 0;
}

/* Symbol i of table s (view v), checked: 0, or -EINVAL with the error printed. */
/* What is wrong with symbol i, the one place these rules are written. */
enum sym_fault { SYM_OK, SYM_BAD_NAME, SYM_NO_SHNDX, SYM_BAD_SECTION };

static inline enum sym_fault sym_fault(const struct elfio *e, const struct symview *v, size_t i)
{
	const uint8_t *p = v->raw + i * sizeof(Elf64_Sym);
	uint32_t name;
	uint16_t sh;
	Elf32_Word x = 0;

	memcpy(&name, p + offsetof(Elf64_Sym, st_name), sizeof(name));
	memcpy(&sh, p + offsetof(Elf64_Sym, st_shndx), sizeof(sh));
	if (name >= v->strsz || (!v->terminated && !memchr(v->strs + name, 0, v->strsz - name)))
		return SYM_BAD_NAME;
	if (sh == SHN_XINDEX && !v->xraw)
		return SYM_NO_SHNDX;
	if (sh == SHN_XINDEX)
		memcpy(&x, v->xraw + i * sizeof(x), sizeof(x));
	if (sh != SHN_UNDEF && sh != SHN_COMMON && sh != SHN_ABS &&
	    (sh == SHN_XINDEX ? x : sh) >= e->nsec)
		return SYM_BAD_SECTION;
	return SYM_OK;
}

/* Whether symbol i fails a check (decode_sym then says which). */
static inline bool sym_bad(const struct elfio *e, const struct symview *v, size_t i)
{
	return sym_fault(e, v, i) != SYM_OK;
}

static inline int decode_sym(struct elfio *e, const struct elfio_section *s,
			     const struct symview *v, size_t i, struct elfio_symbol *sym)
{
	Elf64_Sym gs;
	Elf32_Word xndx = 0;
	enum sym_fault f = sym_fault(e, v, i);

	memcpy(&gs, v->raw + i * sizeof(gs), sizeof(gs));
	if (f == SYM_BAD_NAME) {
		elfio_err(e, "symbol table '%s': symbol %zu has a bad name index %u",
			  s->name, i, gs.st_name);
		return -EINVAL;
	}
	if (v->xraw)
		memcpy(&xndx, v->xraw + i * sizeof(xndx), sizeof(xndx));
	sym->name = v->strs + gs.st_name;
	sym->type = ELF64_ST_TYPE(gs.st_info);
	sym->bind = ELF64_ST_BIND(gs.st_info);
	sym->other = gs.st_other;
	sym->size = gs.st_size;
	sym->shndx = gs.st_shndx == SHN_XINDEX ? xndx : gs.st_shndx;
	if (f == SYM_NO_SHNDX) {
		elfio_err(e, "symbol table '%s': symbol '%s' needs SHT_SYMTAB_SHNDX, "
			  "which is missing", s->name, sym->name);
		return -EINVAL;
	}
	if (f == SYM_BAD_SECTION) {
		elfio_err(e, "symbol table '%s': symbol '%s' has a bad section index %u",
			  s->name, sym->name, sym->shndx);
		return -EINVAL;
	}
	sym->in_section = gs.st_shndx != SHN_UNDEF &&
			  (gs.st_shndx < SHN_LORESERVE || gs.st_shndx == SHN_XINDEX);
	if (gs.st_shndx == SHN_UNDEF || gs.st_shndx == SHN_COMMON)
		sym->addr = 0;
	else if (gs.st_shndx == SHN_ABS)
		sym->addr = gs.st_value;
	else if (e->ehdr.e_type == ET_REL)
		sym->addr = e->secs[sym->shndx].addr + gs.st_value;
	else
		sym->addr = gs.st_value;
	return 0;
}



static int load_symtab(struct elfio *e, size_t shndx, struct elfio_symtab *t)
{
	struct elfio_section *s = &e->secs[shndx];
	struct symview *v;
	int ret;

	t->shndx = shndx;
	ret = symtab_view(e, shndx, &v);
	if (ret)
		return ret;
	t->count = v->count;
	t->syms = elfio_calloc(t->count ? t->count : 1, sizeof(*t->syms));
	if (!t->syms)
		return -ENOMEM;
	for (size_t i = 0; i < t->count; i++) {
		ret = decode_sym(e, s, v, i, &t->syms[i]);
		if (ret)
			goto err;
	}
	v->checked = true;
	return 0;
err:
	elfio_free(t->syms);
	t->syms = NULL;
	return ret;
}

int elfio_symtab_check(struct elfio *e, size_t shndx, size_t *count)
{
	struct symview *v;
	struct elfio_symbol y;
	int ret;

	*count = 0;
	if (shndx == 0 || shndx >= e->nsec) {
		elfio_err(e, "bad symbol table index %zu", shndx);
		return -EINVAL;
	}
	ret = symtab_view(e, shndx, &v);
	if (ret)
		return ret;
	for (size_t i = 0; i < v->count && !v->checked; i++)
		if (sym_bad(e, v, i) && (ret = decode_sym(e, &e->secs[shndx], v, i, &y)))
			return ret;
	v->checked = true;
	*count = v->count;
	return 0;
}

const char *elfio_symtab_name(struct elfio *e, size_t shndx, size_t i)
{
	const struct symview *v = &e->views[shndx];
	uint32_t st_name;

	memcpy(&st_name, v->raw + i * sizeof(Elf64_Sym) + offsetof(Elf64_Sym, st_name),
	       sizeof(st_name));
	return v->strs + st_name;
}

void elfio_symtab_get(struct elfio *e, size_t shndx, size_t i, struct elfio_symbol *out)
{
	/* checked already: no error */
	decode_sym(e, &e->secs[shndx], &e->views[shndx], i, out);
}

int elfio_symtab_by_index(struct elfio *e, size_t shndx, const struct elfio_symtab **out)
{
	struct elfio_symtab *nt;
	int ret;

	if (shndx == 0 || shndx >= e->nsec) {
		elfio_err(e, "bad symbol table index %zu", shndx);
		return -EINVAL;
	}
	if (e->tab_of && e->tab_of[shndx]) {
		*out = &e->tabs[e->tab_of[shndx] - 1];
		return 0;
	}
	/* Pointers handed out earlier must stay valid: allocate the array once. */
	if (!e->tabs) {
		e->tabs = elfio_calloc(e->nsec, sizeof(*e->tabs));
		e->tab_of = elfio_calloc(e->nsec, sizeof(*e->tab_of));
		if (!e->tabs || !e->tab_of) {
			elfio_err(e, "out of memory for the symbol tables of %zu sections",
				  e->nsec);
			return -ENOMEM;
		}
	}
	nt = &e->tabs[e->ntabs];
	unsigned long before = elfio_errors_reported();
	ret = load_symtab(e, shndx, nt);
	if (ret == -ENOMEM && elfio_errors_reported() == before)
		elfio_err(e, "out of memory for symbol table '%s' (%" PRIu64 " symbols)",
			  e->secs[shndx].name, e->secs[shndx].shdr.sh_size / sizeof(Elf64_Sym));
	if (ret)
		return ret;
	e->ntabs++;
	e->tab_of[shndx] = e->ntabs;
	*out = nt;
	return 0;
}

size_t elfio_main_symtab(const struct elfio *e)
{
	size_t idx = 0;

	for (size_t i = 1; i < e->nsec && !idx; i++)
		if (e->secs[i].shdr.sh_type == SHT_SYMTAB)
			idx = i;
	for (size_t i = 1; i < e->nsec && !idx; i++)
		if (e->secs[i].shdr.sh_type == SHT_DYNSYM)
			idx = i;
	return idx;
}

int elfio_symbols(struct elfio *e, const struct elfio_symtab **out)
{
	if (!e->main_loaded) {
		size_t idx = elfio_main_symtab(e);

		if (idx) {
			int ret = elfio_symtab_by_index(e, idx, &e->main_tab);
			if (ret)
				return ret;
		}
		e->main_loaded = true;
	}
	*out = e->main_tab;
	return 0;
}

static int bind_rank(unsigned char bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/*
 * Sort key of a function: the address, then global before weak before
 * local, then larger first, then the name.  Kept beside the pointer so the
 * sort compares in cache and follows the pointer only for aliases.
 */
struct fkey {
	uint64_t addr;
	const struct elfio_symbol *s;
};

static int cmp_fkey(const void *a, const void *b)
{
	const struct fkey *p = a, *q = b;

	if (p->addr != q->addr)
		return p->addr < q->addr ? -1 : 1;
	const struct elfio_symbol *x = p->s, *y = q->s;
	if (bind_rank(x->bind) != bind_rank(y->bind))
		return bind_rank(x->bind) - bind_rank(y->bind);
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Sort by address with an LSD radix sort over the bits in which the keys
 * differ (kernel addresses share their top 40), 11 bits a pass so that the
 * counts stay in the L1 cache, then order aliases at one address with
 * cmp_fkey.  Linear in the number of functions; a comparison sort of
 * 50,000 keys was 15% of `record`.
 */
#define RADIX_BITS	11

static void sort_fkeys(struct fkey *k, size_t n, struct fkey *tmp)
{
	struct fkey *src = k, *dst;
	uint64_t all_or = 0, all_and = ~0ULL;
	size_t cnt[(1u << RADIX_BITS) + 1];

	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++) {
		all_or |= k[i].addr;
		all_and &= k[i].addr;
	}
	uint64_t diff = all_or ^ all_and;
	dst = tmp;
	if (diff) {
		unsigned int lo = (unsigned int)__builtin_ctzll(diff);
		unsigned int hi = 64 - (unsigned int)__builtin_clzll(diff);
		for (unsigned int shift = lo; shift < hi; shift += RADIX_BITS) {
			const uint64_t mask = (1u << RADIX_BITS) - 1;
			memset(cnt, 0, sizeof(cnt));
			for (size_t i = 0; i < n; i++)
				cnt[((src[i].addr >> shift) & mask) + 1]++;
			for (size_t d = 1; d <= mask; d++)
				cnt[d] += cnt[d - 1];
			for (size_t i = 0; i < n; i++)
				dst[cnt[(src[i].addr >> shift) & mask]++] = src[i];
			struct fkey *sw = src;
			src = dst;
			dst = sw;
		}
	}
	if (src != k)
		memcpy(k, src, n * sizeof(*k));
	for (size_t i = 1, j; i < n; i = j) {
		for (j = i; j < n && k[j].addr == k[i - 1].addr; j++)
			;
		if (j > i)
			qsort(k + i - 1, j - i + 1, sizeof(*k), cmp_fkey);
		if (j == i)
			j++;
	}
}

static bool is_function(const struct elfio *e, const struct elfio_symbol *s)
{
	return (s->type == STT_FUNC || s->type == STT_GNU_IFUNC) && s->size &&
	       s->in_section && s->shndx < e->nsec;
}

/*
 * The sized functions are read off the main table where it lies (checked
 * whole, as elfio_symbols would), and only they are kept: a kernel has
 * three or four symbols for each function, and an array of all of them was
 * megabytes that `record` never reads.
 */
int elfio_functions(struct elfio *e, const struct elfio_symbol *const **out, size_t *count)
{
	if (!e->funcs_loaded) {
		size_t idx = elfio_main_symtab(e), total = 0, n = 0, cap = 0;
		struct symview *v = NULL;
		struct fkey *k;
		int ret;

		if (idx && (ret = symtab_view(e, idx, &v)))
			return ret;
		total = v ? v->count : 0;
		/*
		 * Check every symbol (elfio_symtab_check's errors) and count the
		 * functions in one pass, then copy them into one array of the
		 * right size (no growth, no copies).
		 */
		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < total; i++) {
				Elf64_Sym gs;
				unsigned char type;
				struct elfio_symbol y;

				if (!pass && !v->checked && sym_bad(e, v, i) &&
				    (ret = decode_sym(e, &e->secs[idx], v, i, &y)))
					return ret;
				/* the fields that decide, straight from the entry */
				memcpy(&gs, v->raw + i * sizeof(gs), sizeof(gs));
				type = ELF64_ST_TYPE(gs.st_info);
				if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !gs.st_size ||
				    gs.st_shndx == SHN_UNDEF ||
				    (gs.st_shndx >= SHN_LORESERVE && gs.st_shndx != SHN_XINDEX))
					continue;
				if (!pass) {
					cap++;
					continue;
				}
				decode_sym(e, &e->secs[idx], v, i, &e->fsyms[n]);	/* checked */
				n += is_function(e, &e->fsyms[n]);
			}
			if (v)
				v->checked = true;
			if (!pass && !(e->fsyms = elfio_calloc(cap ? cap : 1, sizeof(*e->fsyms)))) {
				elfio_err(e, "out of memory for %zu function symbols", cap);
				return -ENOMEM;
			}
		}
		/* the keys and the sort's scratch space, in one block */
		k = elfio_calloc(n ? 2 * n : 1, sizeof(*k));
		if (!k) {
			elfio_err(e, "out of memory for sorting %zu function symbols", n);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			k[i] = (struct fkey){ e->fsyms[i].addr, &e->fsyms[i] };
		sort_fkeys(k, n, k + n);
		e->funcs = elfio_calloc(n ? n : 1, sizeof(*e->funcs));
		e->funcs_maxend = elfio_calloc(n ? n : 1, sizeof(*e->funcs_maxend));
		if (!e->funcs || !e->funcs_maxend) {
			elfio_free(k);
			elfio_err(e, "out of memory for the index of %zu function symbols", n);
			return -ENOMEM;
		}
		uint64_t maxend = 0;
		for (size_t i = 0; i < n; i++) {
			e->funcs[i] = k[i].s;
			uint64_t end = k[i].addr + k[i].s->size;
			if (end < k[i].addr)	/* corrupt size: clamp, never wrap */
				end = UINT64_MAX;
			if (end > maxend)
				maxend = end;
			e->funcs_maxend[i] = maxend;
		}
		elfio_free(k);
		e->nfuncs = n;
		e->funcs_loaded = true;
	}
	*out = e->funcs;
	*count = e->nfuncs;
	return 0;
}

/*
 * The function whose range [addr_f - before, addr_f + size) holds addr.
 * A match inside the body wins over one in the area before a symbol
 * (CALL_OPS literals); among aliases the sort order (global first) wins.
 */
const struct elfio_symbol *elfio_function_at(struct elfio *e, uint64_t addr, uint64_t before)
{
	const struct elfio_symbol *const *f;
	const struct elfio_symbol *pre = NULL;
	size_t n;

	if (elfio_functions(e, &f, &n) || !n)
		return NULL;

	/* first function starting after addr + before */
	uint64_t key = addr + before < addr ? UINT64_MAX : addr + before;
	size_t lo = BOUND_BY(n, m, f[m]->addr, key, true);
	/*
	 * Of the functions that hold addr, the first in sort order (the lowest
	 * start, then global first) wins.  funcs_maxend only grows, so the
	 * first index whose running end passes addr is found by bisection; that
	 * function ends past addr (its end is the running maximum), and holds
	 * addr if it starts at or before it.  No later one can start earlier.
	 * Two searches, not a walk back: one huge (corrupt) st_size would
	 * otherwise make every lookup visit every function.
	 */
	size_t a = BOUND_BY(n, m, e->funcs_maxend[m], addr, true);
	if (a < n && f[a]->addr <= addr)
		return f[a];
	/* None: the first function starting in (addr, addr + before], if any. */
	a = BOUND_BY(lo, m, f[m]->addr, addr, true);
	if (a < lo && f[a]->addr - addr <= before)
		pre = f[a];
	return pre;
}

uint64_t elfio_symbol_value(struct elfio *e, const struct elfio_symbol *s)
{
	/* decode_sym's addr, undone: exact, modulo 2^64 as it was added */
	if (e->ehdr.e_type == ET_REL && s->in_section && s->shndx < e->nsec)
		return s->addr - e->secs[s->shndx].addr;
	return s->addr;
}

void elfio_symbol_put(uint8_t *table, size_t i, uint64_t value, uint64_t size)
{
	uint8_t *p = table + i * sizeof(Elf64_Sym);

	put_le64(p + offsetof(Elf64_Sym, st_value), value);
	put_le64(p + offsetof(Elf64_Sym, st_size), size);
}

/* --- Relocations ---------------------------------------------------------- */

/*
 * Check relocation section rel once, whole: its kind, entry size and
 * bytes, and the symbol index of every entry against the table its sh_link
 * names (libelf's gelf_getrela checks none of that but the bytes; a bad
 * index found later, where a symbol is read, is an error with no section
 * or entry in it).
 */
static int check_relocs(struct elfio *e, struct elfio_section *rel, struct elfio_relocs *r)
{
	bool rela = rel->shdr.sh_type == SHT_RELA;
	size_t entsize = rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
	Elf_Data *d;

	memset(r, 0, sizeof(*r));
	if (rel->shdr.sh_type != SHT_RELA && rel->shdr.sh_type != SHT_REL) {
		elfio_err(e, "section '%s' is not a relocation section", rel->name);
		return -EINVAL;
	}
	/* inflated in place (its header then says how big it is), as its bytes are read */
	if ((rel->shdr.sh_flags & SHF_COMPRESSED) && elfio_section_data(e, rel))
		return -EINVAL;
	if (rel->shdr.sh_entsize != entsize || rel->shdr.sh_size % entsize) {
		elfio_err(e, "relocation section '%s' has a bad entry size", rel->name);
		return -EINVAL;
	}
	size_t n = rel->shdr.sh_size / entsize;
	errno = 0;
	d = elf_getdata(rel->scn, NULL);
	if (!d && n) {
		return elfio_elf_err(e, "a relocation section", "relocation section '%s'",
				     rel->name);
	}
	if (d && d->d_size < n * entsize) {
		elfio_err(e, "relocation section '%s' is truncated", rel->name);
		return -EINVAL;
	}
	r->raw = d ? d->d_buf : NULL;
	r->count = n;
	r->entsize = entsize;
	r->file_off = rel->shdr.sh_offset;
	if (rel->relocs_checked)
		return 0;

	size_t link = rel->shdr.sh_link, nsyms = 1;
	bool table = link && link < e->nsec && (e->secs[link].shdr.sh_type == SHT_SYMTAB ||
						 e->secs[link].shdr.sh_type == SHT_DYNSYM);

	if (table)
		nsyms = e->secs[link].shdr.sh_size / sizeof(Elf64_Sym);
	for (size_t i = 0; i < n; i++) {
		struct elfio_rela v = elfio_relocs_get(r, i);

		if (v.sym < nsyms)
			continue;
		if (table)
			elfio_err(e, "relocation section '%s': relocation %zu names symbol %u, past the "
				  "end of '%s' (%zu symbols)", rel->name, i, v.sym,
				  e->secs[link].name, nsyms);
		else
			elfio_err(e, "relocation section '%s': relocation %zu names symbol %u, but the "
				  "section links to no symbol table", rel->name, i, v.sym);
		return -EINVAL;
	}
	rel->relocs_checked = true;
	return 0;
}

int elfio_relocs(struct elfio *e, struct elfio_section *rel, struct elfio_relocs *out)
{
	return check_relocs(e, rel, out);
}

int elfio_relas(struct elfio *e, struct elfio_section *rel, const struct elfio_rela **out,
		size_t *count)
{
	struct elfio_relocs r;
	struct elfio_rela *v;
	int ret;

	*out = NULL;
	*count = 0;
	if (rel->relas) {
		*out = rel->relas;
		*count = rel->nrelas;
		return 0;
	}
	ret = check_relocs(e, rel, &r);
	if (ret)
		return ret;
	v = elfio_calloc(r.count ? r.count : 1, sizeof(*v));
	if (!v) {
		elfio_err(e, "out of memory for %zu relocations of '%s'", r.count, rel->name);
		return -ENOMEM;
	}
	/*
	 * Straight from the (mapped) section, as the symbols are: an arm64
	 * vmlinux has 140,000 relocations; gelf_getrela per entry was a tenth
	 * of `record`.
	 */
	for (size_t i = 0; i < r.count; i++)
		v[i] = elfio_relocs_get(&r, i);
	rel->relas = v;
	rel->nrelas = r.count;
	*out = v;
	*count = r.count;
	return 0;
}

size_t elfio_reloc_encode(const struct elfio_section *rel, const struct elfio_rela *v,
			  uint8_t *out)
{
	put_le64(out, v->offset);
	put_le64(out + 8, ELF64_R_INFO((uint64_t)v->sym, (uint64_t)v->type));
	if (rel->shdr.sh_type != SHT_RELA)
		return sizeof(Elf64_Rel);
	put_le64(out + 16, (uint64_t)v->addend);
	return sizeof(Elf64_Rela);
}

int elfio_read_u64(struct elfio *e, uint64_t addr, uint64_t *val)
{
	struct elfio_section *s = elfio_addr_to_sec(e, addr);
	uint64_t v = 0;

	if (!s || s->shdr.sh_type == SHT_NOBITS)
		return -ERANGE;
	if (elfio_section_data(e, s))
		return -EINVAL;
	uint64_t off = addr - s->addr;
	if (off > s->size || s->size - off < 8)
		return -ERANGE;
	v = get_le64(s->data + off);
	*val = v;
	return 0;
}

int elfio_addr_to_offset(struct elfio *e, uint64_t addr, uint64_t *off)
{
	struct elfio_section *s = elfio_addr_to_sec(e, addr);

	if (!s || s->shdr.sh_type == SHT_NOBITS || (s->shdr.sh_flags & SHF_COMPRESSED))
		return -ERANGE;
	*off = s->shdr.sh_offset + (addr - s->addr);
	return 0;
}

int elfio_addr_owner(struct elfio *e, uint64_t addr, uint64_t len, struct elfio_section **sec,
		     struct elfio_section **other)
{
	struct elfio_section *s = elfio_addr_to_sec(e, addr);

	*other = NULL;
	if (!s || s->shdr.sh_type == SHT_NOBITS || (s->shdr.sh_flags & SHF_COMPRESSED) ||
	    len > s->shdr.sh_size - (addr - s->addr))
		return -ERANGE;
	*sec = s;
	/* every loaded section: a hostile one may start anywhere before addr */
	for (size_t i = 0; i < e->nby_addr; i++) {
		struct elfio_section *t = e->by_addr[i];

		if (t != s && t->shdr.sh_type != SHT_NOBITS && t->shdr.sh_size &&
		    t->addr < addr + len && addr < t->addr + t->shdr.sh_size) {
			*other = t;
			return -EEXIST;
		}
	}
	return 0;
}

void elfio_format_addr(struct elfio *e, uint64_t addr, char *buf, size_t len)
{
	if (e->ehdr.e_type == ET_REL) {
		struct elfio_section *s = elfio_addr_to_sec(e, addr);
		if (s) {
			snprintf(buf, len, "%s+0x%" PRIx64, s->name, addr - s->addr);
			return;
		}
	}
	snprintf(buf, len, "0x%" PRIx64, addr);
}
