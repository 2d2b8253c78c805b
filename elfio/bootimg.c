// SPDX-License-Identifier: GPL-2.0-only
/*
 * bootimg.c - a kernel as it ships (vmlinuz), read as the ELF it came from.
 *
 * Strategy: elfio_open hands over any file that is not ELF (after its own
 * whole-file gunzip/unxz/unzstd, which is what makes Image.gz an Image).
 * Here a boot image is recognised by its own header: x86's setup header
 * ("HdrS" at 0x202, the payload's offset and length at 0x248), arm64's
 * Image header ("ARM\x64" at 0x38), riscv64's ("RSC\x05" at 0x38), EFI
 * zboot ("zimg" at 4, the payload's offset, size and compression name);
 * and a vmlinux stripped of its symbols (powerpc64le's packages ship one)
 * by an ELF with no .symtab, an .init.text and a banner.
 * The payload is decompressed by elfio/decompress.c with a bound
 * (BOOTIMG_MAX_RATIO times the input and BOOTIMG_MAX_OUT), so that a bomb
 * is refused, not followed.
 *
 * x86's payload is vmlinux stripped of its symbols (objcopy -S keeps the
 * section headers): the ELF image made here is that payload byte for byte,
 * followed by a .symtab and .strtab made from the symbols and a section
 * header table that adds them.  Nothing else changes, so sections,
 * addresses, the reserved __start/__stop_mcount_loc region and the code
 * are the build's own; record and audit read it as they read vmlinux.
 *
 * The symbols come, in order, from --system-map=FILE, a real System.map
 * beside the image (Debian's one-line stub is recognised and skipped), or
 * the kallsyms tables inside the image (kallsyms.c).  Either is checked
 * against the image: _text must be where the code starts and linux_banner
 * must point at "Linux version ".  Kallsyms has no sizes: a function's
 * extent is up to the next symbol's address (or its section's end).
 *
 * An Image (arm64, riscv64) has no section headers: the ELF made from it
 * puts the kernel's sections where its symbols (_start or _text, _etext,
 * _sinittext, _einittext, _end) and its relocation table say they are.
 *
 * The build's config (--config, config-VERSION beside the image, IKCONFIG)
 * says whether the build sorts the table and which ftrace layout the
 * kernel's Makefiles gave the compiler (audit.c and record_scan use both).
 */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "elfio/bootimg.h"
#include "elfio/decompress.h"
#include "elfio/elfio.h"

static const char *opt_map, *opt_config;

void bootimg_set_system_map(const char *path) { opt_map = path; }
void bootimg_set_config(const char *path) { opt_config = path; }

/* --- Symbols ------------------------------------------------------------ */

/*
 * A symbol is kallsyms.c's struct ksym (raw unused here): kallsyms' own
 * array is the list, not a copy of it (a kernel's is 4 MB of fresh pages).
 */
struct syms {
	struct ksym *v;		/* k.syms when from kallsyms (not freed apart) */
	size_t n;
	char *pool;		/* System.map's text */
	struct kallsyms k;	/* or the kallsyms tables' */
	const char *from;	/* "kallsyms", or the map's path */
};

static void syms_free(struct syms *s)
{
	if (s->v != s->k.syms)
		elfio_free(s->v);
	elfio_free(s->pool);
	kallsyms_free(&s->k);
}

static const struct ksym *sym_find(const struct syms *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)	/* the first byte first: no call for most */
		if (s->v[i].name[0] == name[0] && !strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

/*
 * A System.map: "ADDRESS TYPE NAME" lines.  1 for Debian's stub (one line,
 * "The real System.map is in ..."), 0 read, -errno after a message.
 */
static int read_map(const char *image, const char *path, bool quiet, struct syms *s)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		if (!quiet)
			elfio_error(image, "System.map %s: %s", path, strerror(errno));
		return -errno;
	}
	for (;;) {
		if (len + 65536 + 1 > cap &&
		    elfio_grow(&text, &cap, cap ? cap * 2 : 1 << 20, 1)) {
			elfio_free(text);
			fclose(f);
			return -ENOMEM;
		}
		size_t r = fread(text + len, 1, cap - len - 1, f);
		len += r;
		if (r == 0)
			break;
	}
	fclose(f);
	text[len] = 0;
	if (strstr(text, "The real System.map is in") && !strchr(text, '\n')[1]) {
		elfio_free(text);
		return 1;
	}
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	s->v = elfio_calloc(lines + 1, sizeof(*s->v));
	if (!s->v) {
		elfio_free(text);
		return -ENOMEM;
	}
	char *save = NULL;
	size_t lineno = 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end, *p;
		lineno++;
		uint64_t a = strtoull(line, &end, 16);
		if (end == line || *end != ' ' || !end[1] || end[2] != ' ' || !end[3]) {
			if (!quiet)
				elfio_error(image, "System.map %s: line %zu is not \"ADDRESS TYPE NAME\"",
					    path, lineno);
			elfio_free(text);
			return -EINVAL;
		}
		p = end + 3;
		s->v[s->n++] = (struct ksym){ .name = p, .addr = a, .type = end[1] };
	}
	s->pool = text;
	s->from = path;
	return 0;
}

/* --- ELF payload: sections -------------------------------------------- */

struct payload {
	const uint8_t *b;
	size_t len;
	uint8_t *own;		/* b when the buffer is ours (elfio_calloc'd: an Image's ELF,
				   a decompressed payload): synthesize grows it into the
				   image and takes it over (NULL then) */
	size_t cap;		/* bytes own holds (room made for the symbols), or 0: len */
	Elf64_Ehdr eh;		/* a copy: the bytes need not be aligned */
	Elf64_Shdr *sh;		/* a copy */
	size_t nsh;
	const char *shstr;
	size_t shstrlen;
};

static int payload_parse(struct payload *p, const char **why)
{
	Elf64_Ehdr eh;

	if (p->len < sizeof(eh) || memcmp(p->b, ELFMAG, SELFMAG)) {
		*why = "is not an ELF image";
		return -EINVAL;
	}
	memcpy(&eh, p->b, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum || eh.e_shnum >= SHN_LORESERVE ||
	    eh.e_shoff > p->len || (p->len - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum ||
	    eh.e_shstrndx >= eh.e_shnum) {
		*why = "is an ELF image without a readable section header table";
		return -EINVAL;
	}
	p->eh = eh;
	p->nsh = eh.e_shnum;
	p->sh = elfio_calloc(p->nsh, sizeof(*p->sh));
	if (!p->sh)
		return -ENOMEM;
	memcpy(p->sh, p->b + eh.e_shoff, p->nsh * sizeof(*p->sh));
	for (size_t i = 0; i < p->nsh; i++)
		if (p->sh[i].sh_type != SHT_NOBITS &&
		    (p->sh[i].sh_offset > p->len || p->sh[i].sh_size > p->len - p->sh[i].sh_offset)) {
			*why = "has a section that lies past its end";
			return -EINVAL;
		}
	const Elf64_Shdr *ss = &p->sh[eh.e_shstrndx];
	p->shstr = (const char *)p->b + ss->sh_offset;
	p->shstrlen = ss->sh_size;
	if (!p->shstrlen || p->shstr[p->shstrlen - 1]) {
		*why = "has a section name table that is not NUL-terminated";
		return -EINVAL;
	}
	for (size_t i = 0; i < p->nsh; i++)
		if (p->sh[i].sh_name >= p->shstrlen) {
			*why = "has a section whose name lies past the section name table";
			return -EINVAL;
		}
	return 0;
}

/* The allocated section (not NOBITS when bytes are wanted) that holds addr, or 0. */
static size_t sec_of(const struct payload *p, uint64_t addr, bool bytes)
{
	for (size_t i = 1; i < p->nsh; i++) {
		const Elf64_Shdr *s = &p->sh[i];
		if (!(s->sh_flags & SHF_ALLOC) || (bytes && s->sh_type == SHT_NOBITS))
			continue;
		if (addr >= s->sh_addr && addr - s->sh_addr < s->sh_size)
			return i;
	}
	return 0;
}

/* The image's bytes at addr (at least n), or NULL. */
static const uint8_t *bytes_at(const struct payload *p, uint64_t addr, size_t n)
{
	size_t i = sec_of(p, addr, true);
	if (!i)
		return NULL;
	const Elf64_Shdr *s = &p->sh[i];
	if (s->sh_size - (addr - s->sh_addr) < n)
		return NULL;
	return p->b + s->sh_offset + (addr - s->sh_addr);
}

/* The symbols belong to this image: _text where the code starts, linux_banner its banner. */
static int check_match(const struct payload *p, const struct syms *s, const char **why)
{
	const struct ksym *text = sym_find(s, "_text");
	const struct ksym *banner = sym_find(s, "linux_banner");
	uint64_t lo = UINT64_MAX;

	/* the lowest code (x86, arm64, ppc64le's .head.text), or .text (riscv64's
	   head text comes before _text) */
	uint64_t dot_text = UINT64_MAX;
	for (size_t i = 1; i < p->nsh; i++) {
		if (!(p->sh[i].sh_flags & SHF_ALLOC))
			continue;
		if ((p->sh[i].sh_flags & SHF_EXECINSTR) && p->sh[i].sh_addr < lo)
			lo = p->sh[i].sh_addr;
		if (p->sh[i].sh_name < p->shstrlen && !strcmp(p->shstr + p->sh[i].sh_name, ".text"))
			dot_text = p->sh[i].sh_addr;
	}
	if (!text || (text->addr != lo && text->addr != dot_text)) {
		*why = "_text is not where the image's code starts";
		return -EINVAL;
	}
	const uint8_t *b = banner ? bytes_at(p, banner->addr, 14) : NULL;
	if (!b || memcmp(b, "Linux version ", 14)) {
		*why = "linux_banner does not point at the image's \"Linux version\" string";
		return -EINVAL;
	}
	return 0;
}

static int cmp_sym_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool is_object_type(char t)
{
	switch (t) {
	case 'd': case 'D': case 'b': case 'B': case 'r': case 'R':
	case 'g': case 'G': case 's': case 'S':
		return true;
	}
	return false;
}

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/*
 * A function's extent from kallsyms runs to the next symbol; on arm64 that
 * takes in the alignment padding and the NOPs of the next function's
 * patchable area (-fpatchable-function-entry=N,M puts M before the symbol),
 * which vmlinux's sized symbols leave out: trailing NOPs and zero words are
 * not the function's, and a text symbol followed by nothing else (a label
 * such as __irqentry_text_start) is no function.  (x86's padding is the next function's __pfx_ symbol.)
 */
static uint64_t trim_padding(const struct payload *p, size_t sec, uint64_t lo, uint64_t end)
{
	const Elf64_Shdr *s = &p->sh[sec];

	if (p->eh.e_machine != EM_AARCH64 || s->sh_type == SHT_NOBITS)
		return end;
	const uint8_t *base = p->b + s->sh_offset - s->sh_addr;
	while (end >= lo + 4 && !((end - lo) % 4)) {
		uint32_t w = get_le32(base + end - 4);
		if (w != 0xd503201fu && w != 0)
			break;
		end -= 4;
	}
	return end;
}

/*
 * arm64 code that only looks like a patch area at a symbol, which vmlinux's
 * DWARF (the unit was not built with the ftrace flags) or its symbol types
 * tell apart and kallsyms or a System.map do not:
 *  - an alternative's original instructions (alternative_else_nop_endif:
 *    NOPs the kernel rewrites at boot) right at an assembly function's entry,
 *    from the kernel's own __alt_instructions table (struct alt_instr:
 *    orig_offset, alt_offset, cpucap, orig_len, alt_len; 12 bytes);
 *  - a label followed by padding (a vector slot's: 8 NOPs or more, longer
 *    than any ftrace patch area), NOTYPE in vmlinux.
 * Such a symbol is made a label (STT_NOTYPE), as record would see it with DWARF.
 */
struct alt_ranges {
	uint64_t *lo, *hi;	/* sorted by lo */
	size_t n;
	size_t cur;		/* in_alt's last answer: the ranges starting at or before it */
};

static int cmp_u64p(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void alt_ranges_read(const struct payload *p, const struct syms *s, struct alt_ranges *ar)
{
	const struct ksym *a = sym_find(s, "__alt_instructions");
	const struct ksym *z = sym_find(s, "__alt_instructions_end");

	memset(ar, 0, sizeof(*ar));
	if (p->eh.e_machine != EM_AARCH64 || !a || !z || z->addr <= a->addr ||
	    (z->addr - a->addr) % 12 || (z->addr - a->addr) / 12 > (1u << 22))
		return;
	size_t n = (size_t)(z->addr - a->addr) / 12;
	const uint8_t *b = bytes_at(p, a->addr, n * 12);
	uint64_t *v = b ? elfio_calloc(n * 2, sizeof(*v)) : NULL;
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		int32_t off = (int32_t)get_le32(b + 12 * i);
		v[2 * i] = a->addr + 12 * i + (uint64_t)(int64_t)off;
		v[2 * i + 1] = v[2 * i] + b[12 * i + 10];
	}
	/* the table is in link order, so mostly by address already: sort when not */
	size_t i = 1;
	while (i < n && v[2 * (i - 1)] <= v[2 * i])
		i++;
	if (i < n)
		qsort(v, n, 2 * sizeof(*v), cmp_u64p);
	ar->lo = v;
	ar->n = n;
}

/*
 * Is addr inside an alternative's original instructions?  The symbols ask
 * in address order (each pass of synthesize): the search walks on from
 * the last answer, a binary search only where it went back or far (one
 * per function was a binary search's cache misses, perf).
 */
static bool in_alt(struct alt_ranges *ar, uint64_t addr)
{
	size_t lo = ar->cur, hi = ar->n, steps = 0;

	if (lo && ar->lo[2 * (lo - 1)] > addr) {
		lo = 0;
	} else {
		while (lo < hi && ar->lo[2 * lo] <= addr && steps++ < 16)
			lo++;
		if (lo == hi || ar->lo[2 * lo] > addr)
			hi = lo;	/* found: no search */
	}
	while (lo < hi) {		/* the first range starting past addr */
		size_t mid = (lo + hi) / 2;
		if (ar->lo[2 * mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	ar->cur = lo;
	/* ranges are short (a few instructions): look back a little */
	for (size_t i = lo; i > 0 && lo - i < 4; i--)
		if (ar->lo[2 * (i - 1)] <= addr && addr < ar->lo[2 * (i - 1) + 1])
			return true;
	return false;
}

static bool not_an_entry(const struct payload *p, size_t sec, struct alt_ranges *ar,
			 uint64_t addr, uint64_t size)
{
	const Elf64_Shdr *sh = &p->sh[sec];

	if (p->eh.e_machine != EM_AARCH64 || sh->sh_type == SHT_NOBITS || size < 4)
		return false;
	const uint8_t *base = p->b + sh->sh_offset - sh->sh_addr;
	uint64_t at = addr;
	uint32_t w = get_le32(base + at);
	if ((w & ~0xc0u) == 0xd503241fu && size >= 8)	/* BTI, BTI c, BTI j, BTI jc */
		w = get_le32(base + (at += 4));
	if (w != 0xd503201fu)
		return false;
	if (ar->n && in_alt(ar, at))
		return true;
	unsigned int nops = 0;
	while (nops < 8 && at + 4 <= addr + size && get_le32(base + at) == 0xd503201fu) {
		nops++;
		at += 4;
	}
	return nops >= 8;
}

/*
 * riscv64's patch areas (-fpatchable-function-entry=N,0) start at the
 * function's symbol, and so does each table entry; an overridden weak
 * function keeps its code and its entry but loses its symbol, so in a
 * boot image its code lies inside the sizeless extent of the function
 * before it, and the audit took the leftover's entry for a stray in that
 * function ("not a patch site; the function's site is at f+0") where
 * vmlinux, whose sizes end f before it, says the entry lies outside every
 * sized function.  The table's entries (its words, or where a relocatable
 * build left them zero, the addends of the R_RISCV_RELATIVE relocations
 * that fill them) end such an extent, as a symbol would.  Only a table
 * whose entries are mostly at symbols counts: an -pg (mcount call) build's
 * are calls inside the functions, not their starts.
 */
struct entries {
	uint64_t *v;		/* sorted */
	size_t n;
};

#define R_RISCV_RELATIVE_	3

static bool sym_at(const struct syms *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->v[lo].addr == addr;
}

static void entries_read(const struct payload *p, const struct syms *s, struct entries *en)
{
	const struct ksym *a = sym_find(s, "__start_mcount_loc");
	const struct ksym *z = sym_find(s, "__stop_mcount_loc");

	memset(en, 0, sizeof(*en));
	if (p->eh.e_machine != EM_RISCV || !a || !z || z->addr <= a->addr ||
	    (z->addr - a->addr) % 8 || (z->addr - a->addr) / 8 > (1u << 24))
		return;
	size_t n = (size_t)(z->addr - a->addr) / 8, k = 0;
	const uint8_t *b = bytes_at(p, a->addr, n * 8);
	uint64_t *v = b ? elfio_calloc(n, sizeof(*v)) : NULL;
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		if ((v[k] = get_le64(b + 8 * i)))
			k++;
	if (!k) {		/* a relocatable build's: the values are relocations' addends */
		for (size_t i = 1; i < p->nsh; i++) {
			const Elf64_Shdr *r = &p->sh[i];
			if (r->sh_type != SHT_RELA || r->sh_size % 24)
				continue;
			for (size_t j = 0; j < r->sh_size / 24 && k < n; j++) {
				const uint8_t *q = p->b + r->sh_offset + 24 * j;
				uint64_t off = get_le64(q);
				if (get_le64(q + 8) == R_RISCV_RELATIVE_ && off >= a->addr &&
				    off < z->addr && (v[k] = get_le64(q + 16)))
					k++;
			}
		}
	}
	size_t i = 1;
	while (i < k && v[i - 1] <= v[i])
		i++;
	if (i < k)
		qsort(v, k, sizeof(*v), cmp_u64p);
	size_t at = 0;
	for (i = 0; i < k; i++)
		at += sym_at(s, v[i]);
	if (!k || at * 2 <= k) {
		elfio_free(v);
		return;
	}
	en->v = v;
	en->n = k;
}

/* The first entry past addr, or UINT64_MAX. */
static uint64_t entry_after(const struct entries *en, uint64_t addr)
{
	size_t lo = 0, hi = en->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (en->v[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < en->n ? en->v[lo] : UINT64_MAX;
}

/* What synthesize's steps share: the payload, its symbols, the image made of them. */
struct synth {
	struct payload *p;
	struct syms *s;
	struct alt_ranges ar;
	struct entries en;
	size_t nsym, strsz;		/* .symtab's entries, .strtab's bytes */
	size_t symoff, stroff, shstroff, shoff, nsh, total;	/* the image's layout */
	uint8_t *o;			/* the image */
	size_t first_global;		/* .symtab's sh_info */
};

/* the section names synthesize adds */
static const char synth_added[] = ".symtab\0.strtab";

/* kallsyms and System.map list symbols by address already: sort only when not */
static void sort_syms(struct syms *s)
{
	size_t i0 = 1;

	while (i0 < s->n && s->v[i0 - 1].addr <= s->v[i0].addr)
		i0++;
	if (i0 < s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_sym_addr);
}

/* The image: the payload, .symtab, .strtab, the section names, the section headers. */
static void synth_layout(struct synth *y)
{
	const struct payload *p = y->p;

	y->nsym = 1;
	y->strsz = 1;
	for (size_t i = 0; i < y->s->n; i++) {
		y->nsym++;
		y->strsz += strlen(y->s->v[i].name) + 1;
	}
	y->symoff = (p->len + 7) & ~(size_t)7;
	y->stroff = y->symoff + y->nsym * sizeof(Elf64_Sym);
	y->shstroff = y->stroff + y->strsz;
	y->shoff = (y->shstroff + p->shstrlen + sizeof(synth_added) + 7) & ~(size_t)7;
	y->nsh = p->nsh + 2;
	y->total = y->shoff + y->nsh * sizeof(Elf64_Shdr);
}

/*
 * The image's block, the payload's bytes at its start.  A buffer of ours
 * grows in place (a mapped block's pages move, they are not copied): a
 * kernel-sized copy cost its page faults and their zeroing again, half of
 * auditing an arm64 Image (perf).  0 or -ENOMEM.
 */
static int synth_block(struct synth *y)
{
	struct payload *p = y->p;

	if (p->own) {
		size_t cap = p->cap > p->len ? p->cap : p->len;
		size_t shstr_at = (size_t)((const uint8_t *)p->shstr - p->b);

		y->o = p->own;
		if (elfio_grow(&y->o, &cap, y->total, 1))
			return -ENOMEM;
		p->own = NULL;		/* o is the image now: the caller frees neither */
		memset(y->o + p->len, 0, y->total - p->len);
		p->b = y->o;
		p->shstr = (const char *)y->o + shstr_at;
	} else {
		y->o = elfio_calloc(y->total, 1);
		if (!y->o)
			return -ENOMEM;
		memcpy(y->o, p->b, p->len);
	}
	return 0;
}

/*
 * trim_padding reads the word before each next symbol, one cache miss a
 * function (the Image was just copied): start loading the one at a, a few
 * symbols ahead, in section psec (that of the last symbol).
 */
static inline void prefetch_sym(const struct payload *p, size_t psec, uint64_t a)
{
	const Elf64_Shdr *h = &p->sh[psec];

	if (h->sh_type != SHT_NOBITS && a >= h->sh_addr + 4 && a - h->sh_addr <= h->sh_size)
		__builtin_prefetch(p->b + h->sh_offset + (a - h->sh_addr) - 4);
}

/*
 * The size of s->v[i], a function in section sec: to the next higher
 * address within the section, or an overridden weak function's leftover,
 * less the padding; 0 for a label that only padding follows.
 */
static uint64_t func_size(struct synth *y, size_t sec, size_t i)
{
	const struct payload *p = y->p;
	const struct syms *s = y->s;
	uint64_t addr = s->v[i].addr, end = p->sh[sec].sh_addr + p->sh[sec].sh_size;
	size_t j = i + 1;

	while (j < s->n && s->v[j].addr == addr)
		j++;
	if (j < s->n && s->v[j].addr < end)
		end = s->v[j].addr;
	if (y->en.n) {
		uint64_t ea = entry_after(&y->en, addr);
		if (ea < end)
			end = ea;
	}
	end = trim_padding(p, sec, addr, end);
	return end - addr;
}

/* The ELF symbol for s->v[i] (local or not), in section sec (0: none), its name at name. */
static Elf64_Sym synth_sym(struct synth *y, size_t i, size_t sec, bool local, size_t name)
{
	const struct payload *p = y->p;
	const struct ksym *k = &y->s->v[i];
	Elf64_Sym e = { 0 };
	unsigned char type = STT_NOTYPE;

	e.st_name = (Elf64_Word)name;
	e.st_value = k->addr;
	e.st_shndx = sec ? (Elf64_Half)sec : SHN_ABS;
	if (sec && is_text_type(k->type) && (p->sh[sec].sh_flags & SHF_EXECINSTR)) {
		type = STT_FUNC;
		e.st_size = func_size(y, sec, i);
		if (!e.st_size || not_an_entry(p, sec, &y->ar, k->addr, e.st_size))
			type = STT_NOTYPE;	/* a label: only padding follows */
	} else if (sec && is_object_type(k->type)) {
		type = STT_OBJECT;
	}
	unsigned char bind = local ? STB_LOCAL
			      : (k->type == 'w' || k->type == 'W' || k->type == 'v' ||
				 k->type == 'V') ? STB_WEAK : STB_GLOBAL;
	e.st_info = ELF64_ST_INFO(bind, type);
	return e;
}

/* .symtab and .strtab: locals first, then the rest (ELF's order), in two passes. */
static void synth_symbols(struct synth *y)
{
	const struct payload *p = y->p;
	const struct syms *s = y->s;
	Elf64_Sym *st = (Elf64_Sym *)(y->o + y->symoff);
	char *str = (char *)y->o + y->stroff;
	size_t at = 1, k = 1;

	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			y->first_global = k;
		size_t psec = 0;	/* the section of the last symbol, for the prefetch */
		for (size_t i = 0; i < s->n; i++) {
			const struct ksym *v = &s->v[i];
			if (psec && i + 8 < s->n)
				prefetch_sym(p, psec, s->v[i + 8].addr);
			bool local = v->type >= 'a' && v->type <= 'z' && v->type != 'w' &&
				     v->type != 'v';
			if (local != (pass == 0))
				continue;
			size_t sec = sec_of(p, v->addr, false);
			psec = sec;
			st[k++] = synth_sym(y, i, sec, local, at);
			size_t l = strlen(v->name) + 1;
			memcpy(str + at, v->name, l);
			at += l;
		}
	}
}

/* The section names with the two added, the section headers, the ELF header's count. */
static void synth_headers(struct synth *y)
{
	const struct payload *p = y->p;
	uint8_t *o = y->o;

	memcpy(o + y->shstroff, p->shstr, p->shstrlen);
	memcpy(o + y->shstroff + p->shstrlen, synth_added, sizeof(synth_added));
	Elf64_Shdr *sh = (Elf64_Shdr *)(o + y->shoff);
	memcpy(sh, p->sh, p->nsh * sizeof(*sh));
	Elf64_Shdr *ss = &sh[p->eh.e_shstrndx];
	ss->sh_offset = y->shstroff;
	ss->sh_size = p->shstrlen + sizeof(synth_added);
	sh[p->nsh] = (Elf64_Shdr){ .sh_name = (Elf64_Word)p->shstrlen, .sh_type = SHT_SYMTAB,
				   .sh_offset = y->symoff, .sh_size = y->nsym * sizeof(Elf64_Sym),
				   .sh_link = (Elf64_Word)(p->nsh + 1),
				   .sh_info = (Elf64_Word)y->first_global, .sh_addralign = 8,
				   .sh_entsize = sizeof(Elf64_Sym) };
	sh[p->nsh + 1] = (Elf64_Shdr){ .sh_name = (Elf64_Word)(p->shstrlen + 8),
				       .sh_type = SHT_STRTAB, .sh_offset = y->stroff,
				       .sh_size = y->strsz, .sh_addralign = 1 };
	Elf64_Ehdr *eh = (Elf64_Ehdr *)o;
	eh->e_shoff = y->shoff;
	eh->e_shnum = (Elf64_Half)y->nsh;
}

/*
 * The ELF image: the payload as it is, then .symtab, .strtab, the section
 * names with theirs added, and the section headers.
 */
static int synthesize(struct payload *p, struct syms *s, uint8_t **out, size_t *outlen)
{
	struct synth y = { .p = p, .s = s };
	int ret;

	sort_syms(s);
	alt_ranges_read(p, s, &y.ar);
	entries_read(p, s, &y.en);
	synth_layout(&y);
	ret = synth_block(&y);
	if (!ret) {
		synth_symbols(&y);
		synth_headers(&y);
		*out = y.o;
		*outlen = y.total;
	}
	elfio_free(y.ar.lo);
	elfio_free(y.en.v);
	return ret;
}

/* --- Symbol sources ---------------------------------------------------- */

/* "DIR/vmlinuz-VERSION" -> "DIR/System.map-VERSION", or NULL. */
static char *beside(const char *path, const char *prefix)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dash = strchr(base, '-');
	char *r = NULL;

	if (!dash || strncmp(base, "vmlinu", 6))
		return NULL;
	if (asprintf(&r, "%.*s%s%s", (int)(base - path), path, prefix, dash) < 0)
		return NULL;
	return r;
}

/*
 * kallsyms of a build without CONFIG_KALLSYMS_ALL: text symbols (and a few
 * section bounds), no linux_banner to check them against the image with.
 */
static bool text_only(const struct kallsyms *k)
{
	return kallsyms_lookup(k, "linux_banner") < 0;
}

static void say_text_only(const char *path)
{
	elfio_error(path, "kallsyms has text symbols only (a kernel built without "
		    "CONFIG_KALLSYMS_ALL): no linux_banner, no data; pass --system-map=FILE (the "
		    "build's, or the -dbg package's)");
}

static int from_kallsyms(const struct payload *p, struct syms *s, const char **why)
{
	int ret = kallsyms_decode(p->b, p->len, &s->k, why);
	if (ret)
		return ret;
	if (text_only(&s->k))
		return -ENODATA;
	kallsyms_resolve(&s->k, s->k.relative_base);
	s->v = s->k.syms;
	s->n = s->k.count;
	s->from = "kallsyms";
	return 0;
}

/*
 * Symbols for the ELF payload; then the ELF image.  pre: symbols already
 * read (an arm64 Image's, which its ELF was made from), taken over.
 */
static int elf_payload(const char *path, struct payload *p, struct syms *pre, bool quiet,
		       uint8_t **out, size_t *outlen)
{
	struct syms s = { 0 };
	const char *why = NULL;
	char *map = opt_map ? NULL : beside(path, "System.map");
	int ret;

	ret = payload_parse(p, &why);
	if (ret) {
		if (!quiet && why)
			elfio_error(path, "the boot image's payload %s", why);
		goto out;
	}
	ret = 1;
	if (pre) {
		s = *pre;
		memset(pre, 0, sizeof(*pre));
		ret = 0;
		if (check_match(p, &s, &why)) {
			if (!quiet && strcmp(s.from, "kallsyms"))
				elfio_error(path, "System.map %s is not this image's (another "
					    "build?): %s", s.from, why);
			else if (!quiet)
				elfio_error(path, "%s symbols that do not match the image: %s",
					    s.from, why);
			ret = -EINVAL;
			goto out;
		}
	} else if (opt_map || map) {
		const char *m = opt_map ? opt_map : map;
		FILE *f = opt_map ? NULL : fopen(m, "r");
		if (opt_map || f) {
			if (f)
				fclose(f);
			ret = read_map(path, m, quiet, &s);
			if (ret < 0)
				goto out;
			if (ret == 0 && check_match(p, &s, &why)) {
				if (!quiet)
					elfio_error(path, "System.map %s is not this image's (another "
						    "build?): %s", m, why);
				ret = -EINVAL;
				goto out;
			}
		}
	}
	if (ret == 1) {
		ret = from_kallsyms(p, &s, &why);
		if (ret == -ENODATA) {
			if (!quiet)
				say_text_only(path);
			ret = -EINVAL;
			goto out;
		}
		if (ret == -ENOENT) {
			if (!quiet)
				elfio_error(path, "a boot image with no symbols: no kallsyms tables in "
					    "it and no System.map beside it (pass --system-map=FILE, "
					    "or audit the -dbg package's vmlinux)");
			goto out;
		}
		if (ret) {
			if (!quiet)
				elfio_error(path, "corrupt kallsyms tables: %s", why);
			goto out;
		}
		if (check_match(p, &s, &why)) {
			if (!quiet)
				elfio_error(path, "kallsyms tables that do not match the image: %s",
					    why);
			ret = -EINVAL;
			goto out;
		}
	}
	ret = synthesize(p, &s, out, outlen);
	if (ret == -ENOMEM && !quiet)
		elfio_error(path, "out of memory for the image made from the boot image");
out:
	free(map);		/* beside()'s: asprintf's */
	elfio_free(p->sh);
	syms_free(&s);
	return ret;
}

/* --- Boot image formats ----------------------------------------------- */

static uint64_t limit_for(size_t inlen)
{
	uint64_t l = (uint64_t)inlen * BOOTIMG_MAX_RATIO;
	return l < BOOTIMG_MAX_OUT ? l : BOOTIMG_MAX_OUT;
}

static int inflate_payload(const char *path, const char *what, const uint8_t *in, size_t inlen,
			   bool quiet, uint8_t **out, size_t *outlen)
{
	enum elfio_z z = elfio_z_sniff(in, inlen);
	uint64_t limit = limit_for(inlen);
	int ret;

	if (z == ELFIO_Z_NONE) {
		if (!quiet)
			elfio_error(path, "%s is not a compressed stream (no gzip, xz, lzma, zstd, "
				    "bzip2, lz4 or lzo magic)", what);
		return -EINVAL;
	}
	ret = elfio_z_inflate(z, in, inlen, limit, inlen >= 4 ? get_le32(in + inlen - 4) : 0, out,
			      outlen);
	if (ret && !quiet) {
		if (ret == -ENOTSUP)
			elfio_error(path, "%s is %s-compressed, which this build cannot "
				    "decompress", what, elfio_z_name(z));
		else if (ret == -EFBIG)
			elfio_error(path, "%s inflates past %" PRIu64 " bytes (%llu times its %zu "
				    "bytes, at most %llu): refused as a decompression bomb", what,
				    limit, BOOTIMG_MAX_RATIO, inlen, BOOTIMG_MAX_OUT);
		else if (ret == -ENOMEM)
			elfio_error(path, "out of memory decompressing %s", what);
		else
			elfio_error(path, "%s: corrupt or truncated %s stream", what,
				    elfio_z_name(z));
	}
	return ret;
}

static int bzimage(const char *path, const uint8_t *b, size_t len, bool quiet, uint8_t **out,
		   size_t *outlen)
{
	if (len < 0x250) {
		if (!quiet)
			elfio_error(path, "a truncated bzImage: %zu bytes, less than its setup header",
				    len);
		return -EINVAL;
	}
	unsigned setup = b[0x1f1] ? b[0x1f1] : 4;
	uint16_t version = get_le16(b + 0x206);
	uint32_t poff = get_le32(b + 0x248), plen = get_le32(b + 0x24c);
	uint64_t at = (uint64_t)(setup + 1) * 512 + poff;

	if (version < 0x208) {
		if (!quiet)
			elfio_error(path, "a bzImage of boot protocol %u.%02u, older than 2.08 (no "
				    "payload offset)", version >> 8, version & 0xff);
		return -EINVAL;
	}
	if (!plen || at > len || plen > len - at) {
		if (!quiet)
			elfio_error(path, "a truncated bzImage: its payload (%u bytes at offset "
				    "%#" PRIx64 ") lies past its end (%zu bytes)", plen, at, len);
		return -EINVAL;
	}
	uint8_t *raw = NULL;
	size_t rawlen = 0;
	int ret = inflate_payload(path, "the bzImage's payload", b + at, plen, quiet, &raw,
				  &rawlen);
	if (ret)
		return ret;
	struct payload p = { .b = raw, .len = rawlen, .own = raw };
	ret = elf_payload(path, &p, NULL, quiet, out, outlen);
	elfio_free(p.own);	/* NULL when the image took it over */
	return ret;
}

/* --- arm64 and riscv64 Image ----------------------------------------------- */

#define R_AARCH64_RELATIVE_	1027

/*
 * What differs between the two raw Images: where the Image starts (arm64:
 * _text, its header is head.S's first code; riscv64: _start, then
 * .head.text up to _text, page aligned), the relocation type a relocatable
 * build keeps in the Image, and the ELF machine.
 */
struct image_arch {
	const char *name;	/* "arm64", "riscv64" (messages) */
	const char *start;	/* the symbol at the Image's first byte */
	uint64_t rel_type;	/* R_*_RELATIVE */
	uint16_t machine;
	uint32_t e_flags;
};

static const struct image_arch arm64_arch = { "arm64", "_text", R_AARCH64_RELATIVE_, EM_AARCH64, 0 };
/* EF_RISCV_RVC: a kernel built with RISCV_ISA_C (every distribution's; its NOPs are 2 bytes) */
static const struct image_arch riscv64_arch = { "riscv64", "_start", R_RISCV_RELATIVE_, EM_RISCV,
						0x1 };

/*
 * The dynamic relocations in an Image (arm64's --no-apply-dynamic-relocs,
 * riscv64's relocatable build keep them in it, between symbols kallsyms does
 * not list): the longest run of 8-aligned 24-byte Elf64_Rela entries of
 * type `type`, symbol 0.
 */
static bool is_rela(const uint8_t *b, size_t len, size_t at, uint64_t type)
{
	return at + 24 <= len && get_le64(b + at + 8) == type;
}

/*
 * Only a run of 16 entries or more counts, and such a run has an entry at
 * one of 0, 8 and 16 bytes past every multiple of 192 (8 entries) it
 * spans: those places are probed, and a run found there is followed both
 * ways.  A whole-Image scan at every 8 bytes was a twelfth of auditing an
 * arm64 Image (perf).
 */
#define RELA_MIN_RUN	16
#define RELA_PROBE	(24 * RELA_MIN_RUN / 2)
/*
 * A kernel's table is hundreds of thousands of entries: a first pass
 * probes every RELA_COARSE entries' worth of bytes, which finds every run
 * longer than that (a probe stride that is a multiple of 24 keeps each
 * phase on one residue), and where it finds one, no shorter run found by
 * the fine pass could be longer: the fine pass is only for small Images.
 * The fine pass's probes were a twentieth of auditing an arm64 Image (perf).
 */
#define RELA_COARSE	4096
static void rela_scan(const uint8_t *b, size_t len, uint64_t type, size_t stride, size_t *bestp,
		      size_t *bsp)
{
	size_t best = 0, bs = 0, done[3] = { 0, 0, 0 };

	for (size_t q = 0; q + 24 <= len; q += stride) {
		for (size_t ph = 0; ph < 3; ph++) {
			size_t at = q + 8 * ph;
			/* done[ph]: the end of the last run followed in this phase */
			if (at < done[ph] || !is_rela(b, len, at, type))
				continue;
			size_t s = at, e = at + 24;
			while (s >= 24 && is_rela(b, len, s - 24, type))
				s -= 24;
			while (is_rela(b, len, e, type))
				e += 24;
			done[ph] = e;
			if (e - s > best || (e - s == best && s < bs)) {
				best = e - s;
				bs = s;
			}
		}
	}
	*bestp = best;
	*bsp = bs;
}

static void find_rela(const uint8_t *b, size_t len, uint64_t type, size_t *start, size_t *end)
{
	size_t best, bs;

	*start = *end = 0;
	rela_scan(b, len, type, 24 * RELA_COARSE, &best, &bs);
	if (best < 24 * (RELA_COARSE + 1))
		rela_scan(b, len, type, RELA_PROBE, &best, &bs);
	if (best >= 24 * RELA_MIN_RUN) {
		*start = bs;
		*end = bs + best;
	}
}

static const struct ksym *need(const struct syms *s, const char *name, const char **why)
{
	const struct ksym *y = sym_find(s, name);
	static char msg[128];

	if (!y) {
		snprintf(msg, sizeof(msg), "no symbol %s", name);
		*why = msg;
	}
	return y;
}

struct secdef {
	const char *name;
	uint32_t type;
	uint64_t flags, lo, hi;
};

/* The ELF's headers, then the Image at 64 KiB (its alignment). */
#define RAW_AT	0x10000

/* What raw_image's steps share: the Image, its symbols, the ELF made of it. */
struct raw {
	const struct image_arch *ia;
	const char *path;
	bool quiet;
	const uint8_t *b;	/* the Image: the caller's bytes, or at RAW_AT in e */
	size_t len;
	size_t rs, re;		/* its dynamic relocations (find_rela), or 0, 0 */
	char *map;		/* the System.map beside it (beside()'s), or NULL */
	struct syms s;
	const char *why;
	uint64_t S, T, etext, sinit, einit, end;	/* the start symbol, _text, ... _end */
	struct secdef d[9];	/* the sections, in address order */
	size_t nd;
	char names[160];	/* .shstrtab's bytes */
	size_t nl;
	uint32_t name_at[9], shstr_name;
	size_t shstr_off, shoff, nsh, total;	/* where the names and headers lie; the size */
	uint8_t *e;		/* the block the ELF is made in, or NULL */
	size_t ecap;
};

/*
 * Where the Image is the file (fd), the block the ELF is made in maps it
 * first, and everything below reads it there: its page tables are filled
 * once (elfio.c maps an Image unpopulated), not for two mappings.  The
 * room after the Image (for what synthesize adds) is virtual until
 * written: the Image's size again and a megabyte, which a kernel's symbol
 * table never fills (if it did: a copy, raw_block).
 */
static void raw_map_block(struct raw *r, int fd)
{
	if (fd >= 0 && r->len <= SIZE_MAX / 4) {
		r->ecap = RAW_AT + 2 * r->len + (1u << 20);
		r->e = elfio_map_file(fd, r->len, RAW_AT, r->ecap);
		if (r->e)
			r->b = r->e + RAW_AT;
	}
}

/*
 * Symbols from --system-map=FILE, or the System.map beside the Image when
 * it opens: 0 read, 1 none (or Debian's stub), -errno after a message.
 */
static int raw_map_symbols(struct raw *r)
{
	const char *m = opt_map ? opt_map : r->map;

	if (!m)
		return 1;
	if (!opt_map) {
		FILE *f = fopen(m, "r");

		if (!f)
			return 1;
		fclose(f);
	}
	return read_map(r->path, m, r->quiet, &r->s);
}

/*
 * kallsyms' base: the base's slot lies at the start + its offset in the
 * Image, and the relocation there has the base as its addend.  arm64's 6.1
 * lists no _text (its base is _stext): then _text is where the candidate
 * puts it, 64 KiB aligned, with linux_banner's bytes at the right place.
 * t, lb: the start symbol's and linux_banner's indexes, or -1.  True when
 * found (*base, and *text_at: the start's offset from the base's slot).
 */
static bool raw_kallsyms_base(const struct raw *r, long t, long lb, uint64_t *base,
			      uint64_t *text_at)
{
	const struct kallsyms *k = &r->s.k;
	const uint8_t *b = r->b;
	bool found = false;

	for (size_t at = r->rs; !found && at < r->re; at += 24) {
		uint64_t off = get_le64(b + at), add = get_le64(b + at + 16);
		uint64_t tx = off - k->relative_base_at;
		if (t >= 0) {
			found = tx == add + k->syms[t].raw;
		} else if (r->ia->machine == EM_AARCH64 && !(tx & 0xffff) && add >= tx && lb >= 0 &&
			   add - tx + k->syms[lb].raw + 14 <= r->len) {
			found = !memcmp(b + (add - tx) + k->syms[lb].raw, "Linux version ", 14);
		}
		if (found) {
			*base = add;
			*text_at = tx;
		}
	}
	return found;
}

/* A kernel linked at 0 (no relocation's addend past the Image) has base 0. */
static bool raw_at_zero(const struct raw *r, long t, long lb)
{
	bool at_zero = t >= 0 && lb >= 0 && !r->s.k.syms[t].raw;

	for (size_t at = r->rs; at_zero && at < r->re; at += 24)
		at_zero = get_le64(r->b + at + 16) < r->len;
	return at_zero;
}

/*
 * Symbols from the Image's kallsyms tables, at their base (the
 * relocation's, or the blob's own in a build that is not relocatable).
 * 0, or -errno after a message.
 */
static int raw_kallsyms(struct raw *r)
{
	struct syms *s = &r->s;
	int ret = kallsyms_decode(r->b, r->len, &s->k, &r->why);

	if (ret) {
		if (!r->quiet && ret == -ENOENT)
			elfio_error(r->path, "a boot image with no symbols: no kallsyms tables in "
				    "it and no System.map beside it (pass --system-map=FILE, "
				    "or audit the -dbg package's vmlinux)");
		else if (!r->quiet)
			elfio_error(r->path, "corrupt kallsyms tables: %s", r->why);
		return ret;
	}
	if (text_only(&s->k)) {
		if (!r->quiet)
			say_text_only(r->path);
		return -EINVAL;
	}
	long t = kallsyms_lookup(&s->k, r->ia->start);
	long lb = kallsyms_lookup(&s->k, "linux_banner");
	uint64_t base = s->k.relative_base, text_at = 0;
	bool found = raw_kallsyms_base(r, t, lb, &base, &text_at);
	if (!found && !s->k.relative_base && !raw_at_zero(r, t, lb)) {
		if (!r->quiet)
			elfio_error(r->path, "corrupt kallsyms tables: no relocation sets "
				    "kallsyms_relative_base");
		return -EINVAL;
	}
	kallsyms_resolve(&s->k, base);
	s->v = s->k.syms;		/* a spare slot at its end (kallsyms_decode) */
	s->n = s->k.count;
	if (t < 0 && found)
		s->v[s->n++] = (struct ksym){ .name = r->ia->start, .addr = text_at, .type = 'T' };
	s->from = "kallsyms";
	return 0;
}

/*
 * The bounds of the sections: the start symbol, _text, _etext, _sinittext,
 * _einittext and _end, in that order, the Image's end between the last
 * two, the relocations after the init text.  0 or -EINVAL said.
 */
static int raw_bounds(struct raw *r)
{
	const struct syms *s = &r->s;
	const char *from = s->from ? s->from : "kallsyms";
	const struct ksym *start, *text, *etext, *sinit, *einit, *end;

	if (!(start = need(s, r->ia->start, &r->why)) || !(text = need(s, "_text", &r->why)) ||
	    !(etext = need(s, "_etext", &r->why)) || !(sinit = need(s, "_sinittext", &r->why)) ||
	    !(einit = need(s, "_einittext", &r->why)) || !(end = need(s, "_end", &r->why))) {
		if (!r->quiet)
			elfio_error(r->path, "%s: %s", from, r->why);
		return -EINVAL;
	}
	r->S = start->addr;
	r->T = text->addr;
	r->etext = etext->addr;
	r->sinit = sinit->addr;
	r->einit = einit->addr;
	r->end = end->addr;
	uint64_t img_end = r->S + r->len, ra = r->rs ? r->S + r->rs : 0;
	if (!(r->S <= r->T && r->T < r->etext && r->etext <= r->sinit && r->sinit <= r->einit &&
	      r->einit <= img_end && img_end <= r->end) ||
	    (r->rs && !(r->einit <= ra))) {
		if (!r->quiet)
			elfio_error(r->path, "the %s symbols do not fit this %s Image (another "
				    "build?): %s %#" PRIx64 ", _text, _etext, _sinittext, "
				    "_einittext, _end out of order or past its %zu bytes", from,
				    r->ia->name, r->ia->start, r->S, r->len);
		return -EINVAL;
	}
	return 0;
}

/* The sections, from the bounds: riscv64's head text, ..., .rela.dyn, .data, .bss. */
static void raw_sections(struct raw *r)
{
	struct secdef *d = r->d;
	uint64_t img_end = r->S + r->len;
	uint64_t ra = r->rs ? r->S + r->rs : 0, rz = r->rs ? r->S + r->re : 0;
	size_t nd = 0;

	if (r->S < r->T)
		d[nd++] = (struct secdef){ ".head.text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
					   r->S, r->T };
	d[nd++] = (struct secdef){ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, r->T,
				   r->etext };
	d[nd++] = (struct secdef){ ".rodata", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, r->etext,
				   r->sinit };
	d[nd++] = (struct secdef){ ".init.text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
				   r->sinit, r->einit };
	if (r->rs) {
		d[nd++] = (struct secdef){ ".init.data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE,
					   r->einit, ra };
		d[nd++] = (struct secdef){ ".rela.dyn", SHT_RELA, SHF_ALLOC, ra, rz };
		d[nd++] = (struct secdef){ ".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, rz,
					   img_end };
	} else {
		d[nd++] = (struct secdef){ ".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, r->einit,
					   img_end };
	}
	d[nd++] = (struct secdef){ ".bss", SHT_NOBITS, SHF_ALLOC | SHF_WRITE, img_end, r->end };
	r->nd = nd;
}

/* The section names, and where they and the section headers go after the Image. */
static void raw_names(struct raw *r)
{
	r->nl = 1;
	r->names[0] = 0;
	for (size_t i = 0; i < r->nd; i++) {
		r->name_at[i] = (uint32_t)r->nl;
		r->nl += (size_t)sprintf(r->names + r->nl, "%s", r->d[i].name) + 1;
	}
	r->shstr_name = (uint32_t)r->nl;
	r->nl += (size_t)sprintf(r->names + r->nl, ".shstrtab") + 1;
	r->shstr_off = RAW_AT + r->len;
	r->shoff = (r->shstr_off + r->nl + 7) & ~(size_t)7;
	r->nsh = r->nd + 2;
	r->total = r->shoff + r->nsh * sizeof(Elf64_Shdr);
}

/*
 * Room for what synthesize adds (the symbol table, its names, the section
 * names and headers again), so that the block is made once: the Image's
 * bytes in it are the file's pages, mapped, where the Image is the file
 * (not an Image.gz's inflated copy).  A copy where the mapping is missing
 * or short.  0 or -ENOMEM.
 */
static int raw_block(struct raw *r)
{
	size_t room = 8 + (r->s.n + 1) * sizeof(Elf64_Sym) + 1 + r->nl + 16 + 8 +
		      (r->nsh + 2) * sizeof(Elf64_Shdr);

	for (size_t i = 0; i < r->s.n; i++)
		room += strlen(r->s.v[i].name) + 1;
	if (!r->e || r->total + room > r->ecap) {
		uint8_t *c = elfio_calloc(r->total + room, 1);
		if (!c)
			return -ENOMEM;
		memcpy(c + RAW_AT, r->b, r->len);
		elfio_free(r->e);	/* b pointed into it: not read again */
		r->e = c;
		r->ecap = r->total + room;
	}
	return 0;
}

/* The ELF header, the section names and the section headers, in the block. */
static void raw_headers(struct raw *r)
{
	Elf64_Ehdr eh = { 0 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = r->rs || r->ia->machine == EM_AARCH64 ? ET_DYN : ET_EXEC;
	eh.e_machine = r->ia->machine;
	eh.e_version = EV_CURRENT;
	eh.e_entry = r->S;
	eh.e_flags = r->ia->e_flags;
	eh.e_shoff = r->shoff;
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (Elf64_Half)r->nsh;
	eh.e_shstrndx = (Elf64_Half)(r->nsh - 1);
	memcpy(r->e, &eh, sizeof(eh));
	memcpy(r->e + r->shstr_off, r->names, r->nl);
	Elf64_Shdr *sh = (Elf64_Shdr *)(r->e + r->shoff);
	for (size_t i = 0; i < r->nd; i++) {
		const struct secdef *d = &r->d[i];
		sh[i + 1] = (Elf64_Shdr){ .sh_name = r->name_at[i], .sh_type = d->type,
					  .sh_flags = d->flags, .sh_addr = d->lo,
					  .sh_offset = RAW_AT + (d->lo - r->S),
					  .sh_size = d->hi - d->lo, .sh_addralign = 8 };
		if (d->type == SHT_RELA)
			sh[i + 1].sh_entsize = sizeof(Elf64_Rela);
		if (d->type == SHT_NOBITS)
			sh[i + 1].sh_offset = RAW_AT + r->len;
	}
	sh[r->nsh - 1] = (Elf64_Shdr){ .sh_name = r->shstr_name, .sh_type = SHT_STRTAB,
				       .sh_offset = r->shstr_off, .sh_size = r->nl,
				       .sh_addralign = 1 };
}

/*
 * An arm64 or riscv64 Image: its bytes are the kernel from its start symbol
 * on.  Symbols from a map, or kallsyms (their base from the relocation that
 * sets kallsyms_relative_base, or the blob's own in a build that is not
 * relocatable); then an ELF image with the kernel's sections at their
 * addresses (riscv64's head text, text, rodata, init text, init data,
 * .rela.dyn, data, bss) made for elf_payload.
 */
static int raw_image(const struct image_arch *ia, const char *path, int fd, const uint8_t *b,
		     size_t len, bool quiet, uint8_t **out, size_t *outlen)
{
	struct raw r = { .ia = ia, .path = path, .quiet = quiet, .b = b, .len = len,
			 .map = opt_map ? NULL : beside(path, "System.map") };
	int ret;

	raw_map_block(&r, fd);
	find_rela(r.b, len, ia->rel_type, &r.rs, &r.re);
	ret = raw_map_symbols(&r);
	if (ret == 1)
		ret = raw_kallsyms(&r);
	if (!ret)
		ret = raw_bounds(&r);
	if (!ret) {
		raw_sections(&r);
		raw_names(&r);
		ret = raw_block(&r);
	}
	if (!ret) {
		raw_headers(&r);
		struct payload p = { .b = r.e, .len = r.total, .own = r.e, .cap = r.ecap };
		ret = elf_payload(path, &p, &r.s, quiet, out, outlen);
		elfio_free(p.own);	/* NULL when the image took it over */
		r.e = NULL;
	}
	free(r.map);		/* beside()'s: asprintf's; s.from may be it until here */
	syms_free(&r.s);
	elfio_free(r.e);	/* an error before the image was made */
	return ret;
}

/*
 * A kernel's vmlinux stripped of its symbols (what a powerpc64le package
 * installs as its boot image): an ELF with no .symtab, an .init.text and a
 * "Linux version " banner.  Symbols come as for a bzImage's payload (a map,
 * else kallsyms); without either it is left to be read as the ELF it is.
 */
static bool stripped_kernel(const char *path, const uint8_t *b, size_t len)
{
	Elf64_Ehdr eh;
	bool init_text = false;

	if (len < sizeof(eh) || memcmp(b, ELFMAG, SELFMAG))
		return false;
	memcpy(&eh, b, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    eh.e_shoff > len || (len - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum ||
	    eh.e_shstrndx >= eh.e_shnum)
		return false;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(b + eh.e_shoff);
	Elf64_Shdr ss;
	memcpy(&ss, &sh[eh.e_shstrndx], sizeof(ss));
	for (size_t i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr x;
		memcpy(&x, &sh[i], sizeof(x));
		if (x.sh_type == SHT_SYMTAB)
			return false;
		if (ss.sh_offset <= len && x.sh_name < ss.sh_size && ss.sh_size <= len - ss.sh_offset &&
		    !strncmp((const char *)b + ss.sh_offset + x.sh_name, ".init.text",
			     ss.sh_size - x.sh_name))
			init_text = true;
	}
	if (!init_text || !memmem(b, len, "Linux version ", 14))
		return false;
	if (opt_map)
		return true;
	char *map = beside(path, "System.map");
	FILE *f = map ? fopen(map, "r") : NULL;
	free(map);		/* beside()'s: asprintf's */
	if (f) {
		fclose(f);
		return true;
	}
	struct kallsyms k;
	const char *why;
	if (kallsyms_decode(b, len, &k, &why) == -ENOENT)
		return false;
	kallsyms_free(&k);
	return true;
}

int bootimg_to_elf_fd(const char *path, int fd, const uint8_t *b, size_t len, bool quiet,
		      uint8_t **out, size_t *outlen)
{
	if (len >= SELFMAG && !memcmp(b, ELFMAG, SELFMAG)) {
		if (!stripped_kernel(path, b, len))
			return 1;
		struct payload p = { .b = b, .len = len };
		return elf_payload(path, &p, NULL, quiet, out, outlen);
	}
	if (len >= 0x206 && !memcmp(b + 0x202, "HdrS", 4))
		return bzimage(path, b, len, quiet, out, outlen);
	if (len >= 0x40 && !memcmp(b + 0x38, "ARM\x64", 4))
		return raw_image(&arm64_arch, path, fd, b, len, quiet, out, outlen);
	if (len >= 0x40 && !memcmp(b + 0x38, "RSC\x05", 4))
		return raw_image(&riscv64_arch, path, fd, b, len, quiet, out, outlen);
	if (len >= 0x20 && b[0] == 'M' && b[1] == 'Z' && !memcmp(b + 4, "zimg", 4)) {
		uint32_t off = get_le32(b + 8), size = get_le32(b + 12);
		if (off > len || size > len - off) {
			if (!quiet)
				elfio_error(path, "a truncated EFI zboot image: its payload (%u bytes "
					    "at %#x) lies past its end", size, off);
			return -EINVAL;
		}
		uint8_t *raw = NULL;
		size_t rawlen = 0;
		int ret = inflate_payload(path, "the EFI zboot image's payload", b + off, size,
					  quiet, &raw, &rawlen);
		if (ret)
			return ret;
		ret = bootimg_to_elf(path, raw, rawlen, quiet, out, outlen);
		elfio_free(raw);
		return ret == 1 ? (quiet ? -EINVAL : (elfio_error(path, "the EFI zboot image's "
					"payload is not a kernel Image"), -EINVAL)) : ret;
	}
	return 1;
}

int bootimg_to_elf(const char *path, const uint8_t *b, size_t len, bool quiet, uint8_t **out,
		   size_t *outlen)
{
	return bootimg_to_elf_fd(path, -1, b, len, quiet, out, outlen);
}

/* --- The build's config -------------------------------------------------- */

/* "KEY=y" at the start of a line of text (len bytes). */
static bool config_y(const char *text, size_t len, const char *key)
{
	size_t kl = strlen(key);
	const char *p = text;

	while ((p = memmem(p, len - (size_t)(p - text), key, kl))) {
		if ((p == text || p[-1] == '\n') && (size_t)(text + len - p) >= kl + 2 &&
		    p[kl] == '=' && p[kl + 1] == 'y')
			return true;
		p++;
	}
	return false;
}

/* A file's text if it looks like a config (CONFIG_ lines), else NULL. */
static char *config_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t n = 0;

	if (!f)
		return NULL;
	FILE *m = open_memstream(&text, &n);
	if (m) {
		char buf[65536];
		size_t r;
		while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, r, m);
		fclose(m);
	}
	fclose(f);
	if (text && !memmem(text, n, "CONFIG_", 7)) {
		free(text);
		text = NULL;
	}
	*len = n;
	return text;
}

/*
 * The build's config: --config=FILE, else config-VERSION beside the image
 * (vmlinuz-VERSION, vmlinux-VERSION), else the image's IKCONFIG ("IKCFG_ST",
 * a gzip stream of it, "IKCFG_ED").  NULL when none; *from says which.
 */
static char *config_text(const char *path, const uint8_t *img, size_t len, size_t *tl,
			 const char **from)
{
	static char beside_path[4096];
	char *t;

	*from = NULL;
	if (opt_config) {
		if ((t = config_file(opt_config, tl)))
			*from = opt_config;
		return t;
	}
	char *c = beside(path, "config");
	if (c) {
		snprintf(beside_path, sizeof(beside_path), "%s", c);
		free(c);	/* asprintf's */
		if ((t = config_file(beside_path, tl))) {
			*from = beside_path;
			return t;
		}
	}
	const uint8_t *st = img ? memmem(img, len, "IKCFG_ST", 8) : NULL;
	if (st) {
		size_t at = (size_t)(st - img) + 8;
		const uint8_t *ed = memmem(img + at, len - at, "IKCFG_ED", 8);
		uint8_t *text = NULL;
		if (ed && elfio_z_sniff(img + at, (size_t)(ed - (img + at))) == ELFIO_Z_GZIP &&
		    !elfio_z_inflate(ELFIO_Z_GZIP, img + at, (size_t)(ed - (img + at)), 16u << 20, 0,
				     &text, tl)) {
			/* malloc'd: the callers free it as config_file's (open_memstream's) */
			t = malloc(*tl + 1);
			if (t) {
				memcpy(t, text, *tl);
				t[*tl] = 0;
				*from = "the image's own config (IKCONFIG)";
			}
			elfio_free(text);
			return t;
		}
	}
	return NULL;
}

int bootimg_config_sorted(const char *path, const uint8_t *img, size_t len, const char **from)
{
	size_t tl = 0;
	char *t = config_text(path, img, len, &tl, from);

	if (!t)
		return -1;
	int ret = config_y(t, tl, "CONFIG_BUILDTIME_MCOUNT_SORT");
	free(t);
	return ret;
}

/*
 * The flags the kernel's Makefiles give the compiler for ftrace, from the
 * options that choose them (arch/arm64/Makefile, arch/riscv/Makefile,
 * arch/powerpc/Makefile, the top Makefile's -mfentry/-mnop-mcount).
 */
int bootimg_config_ftrace(const char *path, const uint8_t *img, size_t len, uint16_t machine,
			  struct bootimg_ftrace *ft, const char **from)
{
	size_t tl = 0;
	char *t = config_text(path, img, len, &tl, from);

	memset(ft, 0, sizeof(*ft));
	if (!t)
		return -1;
#define Y(k) config_y(t, tl, "CONFIG_" k)
	if (!Y("FUNCTION_TRACER") || !Y("DYNAMIC_FTRACE")) {
		free(t);
		return 0;
	}
	switch (machine) {
	case EM_AARCH64:
		ft->kind = BFT_AREA;
		if (Y("DYNAMIC_FTRACE_WITH_CALL_OPS")) {
			ft->n = 4, ft->m = 2;
			snprintf(ft->why, sizeof(ft->why), "CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS=y");
		} else if (Y("DYNAMIC_FTRACE_WITH_ARGS") || Y("DYNAMIC_FTRACE_WITH_REGS")) {
			ft->n = 2, ft->m = 0;
			snprintf(ft->why, sizeof(ft->why), "CONFIG_DYNAMIC_FTRACE_WITH_%s=y",
				 Y("DYNAMIC_FTRACE_WITH_ARGS") ? "ARGS" : "REGS");
		} else {
			ft->kind = BFT_UNKNOWN;
		}
		break;
	case EM_RISCV:
		ft->kind = BFT_AREA;
		ft->n = Y("RISCV_ISA_C") ? 4 : 2, ft->m = 0;
		snprintf(ft->why, sizeof(ft->why), "CONFIG_DYNAMIC_FTRACE=y, %s",
			 Y("RISCV_ISA_C") ? "CONFIG_RISCV_ISA_C=y" : "no CONFIG_RISCV_ISA_C");
		break;
	case EM_PPC64:
		if (Y("ARCH_USING_PATCHABLE_FUNCTION_ENTRY")) {
			ft->kind = BFT_AREA;
			ft->n = 2, ft->m = 0;
			snprintf(ft->why, sizeof(ft->why), "CONFIG_ARCH_USING_PATCHABLE_FUNCTION_ENTRY=y");
		} else if (Y("MPROFILE_KERNEL")) {
			ft->kind = BFT_CALLS;
			snprintf(ft->why, sizeof(ft->why), "CONFIG_MPROFILE_KERNEL=y");
		}
		break;
	case EM_X86_64:
		if (!Y("HAVE_FENTRY"))
			break;
		if ((Y("FTRACE_MCOUNT_USE_CC") && Y("HAVE_NOP_MCOUNT")) ||
		    (Y("FTRACE_MCOUNT_USE_OBJTOOL") && Y("HAVE_OBJTOOL_NOP_MCOUNT"))) {
			ft->kind = BFT_NOP5;
			snprintf(ft->why, sizeof(ft->why), "CONFIG_HAVE_FENTRY=y, CONFIG_%s=y",
				 Y("HAVE_NOP_MCOUNT") ? "HAVE_NOP_MCOUNT" : "HAVE_OBJTOOL_NOP_MCOUNT");
		} else {
			ft->kind = BFT_CALLS;
			snprintf(ft->why, sizeof(ft->why), "CONFIG_HAVE_FENTRY=y");
		}
		break;
	}
#undef Y
	free(t);
	return ft->kind != BFT_UNKNOWN;
}
